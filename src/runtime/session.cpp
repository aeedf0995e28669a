// Session: delegate init through the backend registry, tensor homes on each
// context, plan execution with the three sync modes, CPU-fallback steps.
#include "runtime/session.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <map>

#include "backends/cpu/cpu_kernels.h"
#include "base/log.h"
#include "runtime/builtin_backends.h"

namespace gpuu::runtime {
namespace {

using vulkan::DeviceBuffer;
using vulkan::MemoryKind;

// A tensor's storage on one context: host-visible (device-local where the
// device offers it) so that the host can fill inputs, read outputs and serve
// CPU steps without staging copies.
struct Home {
  SharedGpuContextPtr ctx;
  DeviceBuffer buffer;
  bool fresh = false;  // holds the tensor's current value in this execute
};

struct TensorSlot {
  program::TensorInfo info;
  size_t bytes = 0;
  std::vector<std::unique_ptr<Home>> homes;
  cpu::HostTensor host;
  bool host_fresh = false;
  bool is_input = false;
  bool input_set = false;
  // The host reads it (a graph output, an input of a CPU step): its homes
  // live in host-cached memory, since reads of device memory mapped through
  // the PCIe BAR are uncached and slow; otherwise device-local host-visible
  // memory where offered, which the host only writes.
  bool host_reads = false;
  Home* home_on(const SharedGpuContext* ctx) {
    for (auto& h : homes) {
      if (h->ctx.get() == ctx) return h.get();
    }
    return nullptr;
  }
};

struct DelegateSlot {
  int32_t index = 0;
  backends::Backend* backend = nullptr;
  std::unique_ptr<backends::DelegateHandle> handle;
  std::vector<int32_t> inputs, outputs;  // program tensors bound to the region's inputs/outputs
};

struct CpuStep {
  graph::Graph graph;  // one node; values mirror the program tensors it touches
  std::vector<int32_t> inputs, outputs;
  std::vector<int32_t> constant_inputs;  // per node input: index into graph constants, or -1
};

// Where the host must wait for each context, and how far its work has gone.
struct ContextTrack {
  SharedGpuContextPtr ctx;
  uint64_t last_signal = 0;
  bool pending = false;
  VkCommandPool pool = VK_NULL_HANDLE;  // for copies to and from application buffers
};

// A copy between an application buffer and a tensor home, recorded once.
struct AppCopy {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, size = 0;
  Home* home = nullptr;
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
};

}  // namespace

struct Session::Impl {
  std::shared_ptr<const program::Program> program;
  SessionOptions options;
  SyncMode sync_mode = SyncMode::kTimeline;
  std::vector<TensorSlot> tensors;
  std::vector<DelegateSlot> delegates;        // by program delegate index
  std::vector<std::unique_ptr<CpuStep>> cpu_steps;  // by plan index (null for delegate steps)
  std::vector<ContextTrack> contexts;
  std::map<size_t, AppCopy> input_copies, output_copies;  // by graph input/output index
  bool executed = false;

  ~Impl();
  ContextTrack& track(const SharedGpuContextPtr& ctx);
  Result<Home*> home_for(int32_t tensor, const SharedGpuContextPtr& ctx);
  Status init_delegate(int32_t index);
  Status build_cpu_step(size_t plan_index);
  Status wait_host(ContextTrack& t, ExecuteStats& stats);
  Status make_fresh_on(int32_t tensor, Home* home, ExecuteStats& stats);
  Status make_host_fresh(int32_t tensor, ExecuteStats& stats);
  // Runs `submit` with the arguments the sync mode calls for and records that
  // the context now has work in flight.
  Status submit_chained(ContextTrack& t, ExecuteStats& stats,
                        const std::function<Status(const backends::ExecuteArgs&)>& submit);
  Status submit_copy(AppCopy& copy, ExecuteStats& stats);
  Result<AppCopy> record_app_copy(Home* home, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                  bool to_home);
  void free_app_copy(AppCopy& copy);
  Status execute(ExecuteStats& stats);
};

Session::Impl::~Impl() {
  // Nothing may still run when buffers and pools go.
  for (ContextTrack& t : contexts) {
    if (t.pending) t.ctx->queue_wait_idle();
  }
  for (auto& entry : input_copies) free_app_copy(entry.second);
  for (auto& entry : output_copies) free_app_copy(entry.second);
  for (ContextTrack& t : contexts) {
    if (t.pool) t.ctx->destroy_command_pool(t.pool);
  }
  delegates.clear();  // each handle destroys its pool and drops its context reference
}

ContextTrack& Session::Impl::track(const SharedGpuContextPtr& ctx) {
  for (ContextTrack& t : contexts) {
    if (t.ctx == ctx) return t;
  }
  contexts.push_back(ContextTrack{ctx});
  return contexts.back();
}

Result<Home*> Session::Impl::home_for(int32_t tensor, const SharedGpuContextPtr& ctx) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (Home* h = slot.home_on(ctx.get())) return h;
  auto home = std::make_unique<Home>();
  home->ctx = ctx;
  std::string what = "tensor '" + slot.info.name + "'";
  MemoryKind kind = slot.host_reads ? MemoryKind::kReadback : MemoryKind::kShared;
  GPUU_ASSIGN_OR_RETURN(home->buffer, DeviceBuffer::create(*ctx, slot.bytes, kind, what.c_str()));
  slot.homes.push_back(std::move(home));
  track(ctx);
  return slot.homes.back().get();
}

Status Session::Impl::init_delegate(int32_t index) {
  const program::DelegateInfo& info = program->delegates()[static_cast<size_t>(index)];
  DelegateSlot& slot = delegates[static_cast<size_t>(index)];
  slot.index = index;
  slot.backend = backend_registry().find(info.backend_id);
  if (!slot.backend) {
    std::string known;
    for (const auto& id : backend_registry().ids()) known += (known.empty() ? "" : ", ") + id;
    return err(StatusCode::kUnsupported, "delegate ", index, " needs backend '", info.backend_id,
               "', which this build does not have (have: ", known, ")");
  }
  if (!slot.backend->is_available()) {
    return err(StatusCode::kUnsupported, "delegate ", index, ": backend '", info.backend_id,
               "' is not available here (no Vulkan loader or device)");
  }
  backends::BackendInitContext init;
  init.delegate_index = index;
  init.overrides = options.overrides;
  init.device = options.device;
  init.data_graph_path = options.data_graph_path;
  init.constants = program::program_constant_lookup(program);
  init.bind_io = [this, &slot](const SharedGpuContextPtr& ctx, const graph::Graph& region)
      -> Result<std::pair<std::vector<backends::BufferRange>, std::vector<backends::BufferRange>>> {
    std::pair<std::vector<backends::BufferRange>, std::vector<backends::BufferRange>> io;
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<graph::ValueId>& ids = pass == 0 ? region.inputs() : region.outputs();
      for (graph::ValueId id : ids) {
        const graph::Value& v = region.value(id);
        int32_t t = program->find_tensor(v.name);
        if (t < 0) {
          return err(StatusCode::kInvalidFormat, "delegate ", slot.index, " names tensor '", v.name,
                     "', which the program does not have");
        }
        const program::TensorInfo& ti = program->tensors()[static_cast<size_t>(t)];
        if (ti.dtype != v.dtype || ti.shape != v.shape) {
          return err(StatusCode::kInvalidFormat, "delegate ", slot.index, " sees tensor '", v.name, "' as ",
                     graph::dtype_name(v.dtype), graph::shape_to_string(v.shape), " but the program declares ",
                     graph::dtype_name(ti.dtype), graph::shape_to_string(ti.shape));
        }
        GPUU_ASSIGN_OR_RETURN(Home * home, home_for(t, ctx));
        backends::BufferRange r{home->buffer.buffer(), 0, home->buffer.size(), home->buffer.memory(), 0,
                                home->buffer.allocation_size(), home->buffer.mapped()};
        (pass == 0 ? io.first : io.second).push_back(r);
        (pass == 0 ? slot.inputs : slot.outputs).push_back(t);
      }
    }
    return io;
  };
  Result<std::unique_ptr<backends::DelegateHandle>> handle =
      slot.backend->init(init, program->processed_blob(index), info.compile_specs);
  if (!handle.ok()) return handle.status();
  slot.handle = std::move(handle).value();
  track(slot.handle->context());
  return Status::Ok();
}

Status Session::Impl::build_cpu_step(size_t plan_index) {
  const program::CpuNodeInfo& node = program->plan()[plan_index].cpu_node;
  auto step = std::make_unique<CpuStep>();
  graph::Node n;
  n.name = node.name;
  n.op = node.op;
  n.attrs = node.attrs;
  for (int32_t t : node.inputs) {
    if (t < 0) {  // an absent optional input
      n.inputs.push_back(graph::kNone);
      continue;
    }
    const program::TensorInfo& ti = program->tensors()[static_cast<size_t>(t)];
    graph::ValueId id = ti.is_constant()
                            ? step->graph.add_constant(ti.name, ti.dtype, ti.shape, program->constant_data(t))
                            : step->graph.add_input(ti.name, ti.dtype, ti.shape);
    n.inputs.push_back(id);
    step->inputs.push_back(ti.is_constant() ? -1 : t);
  }
  for (int32_t t : node.outputs) {
    const program::TensorInfo& ti = program->tensors()[static_cast<size_t>(t)];
    n.outputs.push_back(step->graph.add_value(graph::Value{ti.name, ti.dtype, ti.shape}));
    step->outputs.push_back(t);
  }
  step->graph.add_node(std::move(n));
  if (!cpu::cpu_supports_op(node.op)) {
    return err(StatusCode::kUnsupported, "CPU-fallback step '", node.name, "': op '", node.op,
               "' has no CPU kernel");
  }
  cpu_steps[plan_index] = std::move(step);
  return Status::Ok();
}

Status Session::Impl::wait_host(ContextTrack& t, ExecuteStats& stats) {
  if (!t.pending) return Status::Ok();
  auto start = std::chrono::steady_clock::now();
  if (sync_mode == SyncMode::kTimeline) {
    VkSemaphore sem = t.ctx->timeline_semaphore();
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &sem;
    wait.pValues = &t.last_signal;
    GPUU_VK_RETURN_IF_ERROR(t.ctx->vkd().vkWaitSemaphores(t.ctx->device(), &wait, UINT64_MAX), "vkWaitSemaphores");
  } else {
    GPUU_VK_RETURN_IF_ERROR(t.ctx->queue_wait_idle(), "vkQueueWaitIdle");
  }
  t.pending = false;
  ++stats.host_waits;
  stats.host_wait_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

Status Session::Impl::submit_chained(ContextTrack& t, ExecuteStats& stats,
                                     const std::function<Status(const backends::ExecuteArgs&)>& submit) {
  backends::ExecuteArgs args;
  args.sync_mode = sync_mode;
  args.signaled_value = &t.last_signal;
  GPUU_RETURN_IF_ERROR(submit(args));
  t.pending = true;
  ++stats.delegate_submits;
  // queue_wait_idle: the conservative mode waits after every delegate.
  if (sync_mode == SyncMode::kQueueWaitIdle) GPUU_RETURN_IF_ERROR(wait_host(t, stats));
  return Status::Ok();
}

Status Session::Impl::make_fresh_on(int32_t tensor, Home* home, ExecuteStats& stats) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (home->fresh) return Status::Ok();
  if (slot.host_fresh) {
    std::memcpy(home->buffer.mapped(), slot.host.bytes.data(), slot.bytes);
    home->fresh = true;
    return Status::Ok();
  }
  for (auto& other : slot.homes) {
    if (!other->fresh) continue;
    GPUU_RETURN_IF_ERROR(wait_host(track(other->ctx), stats));
    std::memcpy(home->buffer.mapped(), other->buffer.mapped(), slot.bytes);
    home->fresh = true;
    ++stats.host_copies;
    return Status::Ok();
  }
  return err(StatusCode::kInternal, "tensor '", slot.info.name, "' is read before anything wrote it");
}

Status Session::Impl::make_host_fresh(int32_t tensor, ExecuteStats& stats) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (slot.host_fresh) return Status::Ok();
  for (auto& home : slot.homes) {
    if (!home->fresh) continue;
    GPUU_RETURN_IF_ERROR(wait_host(track(home->ctx), stats));
    std::memcpy(slot.host.bytes.data(), home->buffer.mapped(), slot.bytes);
    slot.host_fresh = true;
    return Status::Ok();
  }
  return err(StatusCode::kInternal, "tensor '", slot.info.name, "' is read before anything wrote it");
}

Result<AppCopy> Session::Impl::record_app_copy(Home* home, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                               bool to_home) {
  ContextTrack& t = track(home->ctx);
  const auto& vk = t.ctx->vkd();
  if (!t.pool) GPUU_VK_RETURN_IF_ERROR(t.ctx->create_command_pool(&t.pool), "vkCreateCommandPool");
  AppCopy copy{buffer, offset, size, home, VK_NULL_HANDLE, t.pool};
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = t.pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  GPUU_VK_RETURN_IF_ERROR(vk.vkAllocateCommandBuffers(t.ctx->device(), &alloc, &copy.command_buffer),
                          "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(copy.command_buffer, &begin), "vkBeginCommandBuffer");
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(copy.command_buffer, stages, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0,
                          nullptr);
  VkBufferCopy region{to_home ? offset : 0, to_home ? 0 : offset, size};
  if (to_home) {
    vk.vkCmdCopyBuffer(copy.command_buffer, buffer, home->buffer.buffer(), 1, &region);
  } else {
    vk.vkCmdCopyBuffer(copy.command_buffer, home->buffer.buffer(), buffer, 1, &region);
  }
  VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(copy.command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, stages | VK_PIPELINE_STAGE_HOST_BIT, 0,
                          1, &after, 0, nullptr, 0, nullptr);
  GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(copy.command_buffer), "vkEndCommandBuffer");
  return copy;
}

Status Session::Impl::submit_copy(AppCopy& copy, ExecuteStats& stats) {
  ContextTrack& t = track(copy.home->ctx);
  return submit_chained(t, stats, [&](const backends::ExecuteArgs& args) {
    return backends::submit_delegate(*t.ctx, copy.command_buffer, args);
  });
}

void Session::Impl::free_app_copy(AppCopy& copy) {
  if (copy.command_buffer && copy.home) {
    copy.home->ctx->vkd().vkFreeCommandBuffers(copy.home->ctx->device(), copy.pool, 1, &copy.command_buffer);
  }
  copy.command_buffer = VK_NULL_HANDLE;
}

Status Session::Impl::execute(ExecuteStats& stats) {
  const std::vector<int32_t>& graph_inputs = program->inputs();
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    TensorSlot& slot = tensors[static_cast<size_t>(graph_inputs[i])];
    if (!slot.input_set && !input_copies.count(i)) {
      return err(StatusCode::kFailedPrecondition, "input ", i, " ('", slot.info.name,
                 "') was never set: call set_input or bind a buffer before execute");
    }
  }
  for (TensorSlot& slot : tensors) {
    slot.host_fresh = slot.is_input && slot.input_set;
    for (auto& h : slot.homes) h->fresh = false;
  }
  for (ContextTrack& t : contexts) t.pending = false;
  // Application buffers feed their homes on the GPU, first in the chain.
  for (auto& entry : input_copies) {
    AppCopy& c = entry.second;
    GPUU_RETURN_IF_ERROR(submit_copy(c, stats));
    c.home->fresh = true;
    TensorSlot& slot = tensors[static_cast<size_t>(graph_inputs[entry.first])];
    slot.host_fresh = false;
    for (auto& h : slot.homes) {
      if (h.get() != c.home) GPUU_RETURN_IF_ERROR(make_fresh_on(graph_inputs[entry.first], h.get(), stats));
    }
  }

  const auto& plan = program->plan();
  for (size_t p = 0; p < plan.size(); ++p) {
    if (plan[p].kind == program::PlanStep::Kind::kDelegate) {
      DelegateSlot& d = delegates[static_cast<size_t>(plan[p].delegate)];
      const SharedGpuContextPtr& ctx = d.handle->context();
      for (int32_t t : d.inputs) {
        GPUU_RETURN_IF_ERROR(make_fresh_on(t, tensors[static_cast<size_t>(t)].home_on(ctx.get()), stats));
      }
      GPUU_RETURN_IF_ERROR(submit_chained(track(ctx), stats, [&](const backends::ExecuteArgs& args) {
        return d.backend->execute(*d.handle, args);
      }));
      for (int32_t t : d.outputs) {
        TensorSlot& slot = tensors[static_cast<size_t>(t)];
        for (auto& h : slot.homes) h->fresh = h->ctx == ctx;
        slot.host_fresh = false;
      }
    } else {
      CpuStep& step = *cpu_steps[p];
      std::vector<const cpu::HostTensor*> ins;
      std::vector<cpu::HostTensor> constants;
      constants.reserve(step.inputs.size());
      const graph::Node& node = step.graph.node(0);
      for (size_t k = 0, in = 0; k < node.inputs.size(); ++k) {
        if (node.inputs[k] == graph::kNone) {
          ins.push_back(nullptr);
          continue;
        }
        int32_t t = step.inputs[in++];
        if (t < 0) {  // a constant: the program's bytes
          const graph::Value& v = step.graph.value(node.inputs[k]);
          const Blob& data = step.graph.constants()[static_cast<size_t>(v.constant)].data;
          GPUU_ASSIGN_OR_RETURN(cpu::HostTensor c, cpu::HostTensor::from_blob(v.dtype, v.shape, data));
          constants.push_back(std::move(c));
          ins.push_back(&constants.back());
          continue;
        }
        GPUU_RETURN_IF_ERROR(make_host_fresh(t, stats));
        ins.push_back(&tensors[static_cast<size_t>(t)].host);
      }
      std::vector<cpu::HostTensor> outs;
      Status ran = cpu::run_node(step.graph, node, ins, &outs);
      if (!ran.ok()) return err(ran.code(), "CPU-fallback step '", node.name, "': ", ran.message());
      log(LogLevel::kInfo, "CPU", "execute: node=", node.name, " op=", node.op);
      for (size_t k = 0; k < step.outputs.size(); ++k) {
        TensorSlot& slot = tensors[static_cast<size_t>(step.outputs[k])];
        slot.host = std::move(outs[k]);
        slot.host_fresh = true;
        for (auto& h : slot.homes) h->fresh = false;
      }
    }
  }

  // Outputs bound to application buffers are copied on the GPU, last in the chain.
  for (auto& entry : output_copies) {
    int32_t t = program->outputs()[entry.first];
    GPUU_RETURN_IF_ERROR(make_fresh_on(t, entry.second.home, stats));
    GPUU_RETURN_IF_ERROR(submit_copy(entry.second, stats));
  }
  for (int32_t t : program->outputs()) GPUU_RETURN_IF_ERROR(make_host_fresh(t, stats));
  // Leave nothing running: the next set_input writes memory the GPU reads.
  for (ContextTrack& t : contexts) GPUU_RETURN_IF_ERROR(wait_host(t, stats));
  for (const DelegateSlot& d : delegates) {
    double us = d.handle ? d.handle->last_gpu_time_us() : -1;
    if (us > 0) stats.gpu_time_us += us;
  }
  executed = true;
  return Status::Ok();
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const program::Program> program,
                                                 const SessionOptions& options) {
  if (!program) return err(StatusCode::kInvalidArgument, "session: no program");
  GPUU_RETURN_IF_ERROR(validate_overrides(options.overrides));
  auto impl = std::make_unique<Impl>();
  impl->program = program;
  impl->options = options;

  // One sync mode for the whole program: the first delegate's (after overrides).
  impl->sync_mode = options.overrides.sync_mode.value_or(SyncMode::kTimeline);
  if (!program->delegates().empty() && !options.overrides.sync_mode) {
    Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(program->delegates()[0].compile_specs);
    if (!spec.ok()) return err(spec.status().code(), "delegate 0: ", spec.status().message());
    impl->sync_mode = spec->sync_mode;
  }

  impl->tensors.resize(program->tensors().size());
  for (size_t t = 0; t < program->tensors().size(); ++t) {
    TensorSlot& slot = impl->tensors[t];
    slot.info = program->tensors()[t];
    slot.bytes = static_cast<size_t>(graph::shape_numel(slot.info.shape)) * graph::dtype_size(slot.info.dtype);
    slot.host = cpu::HostTensor::zeros(slot.info.dtype, slot.info.shape);
  }
  for (int32_t t : program->inputs()) impl->tensors[static_cast<size_t>(t)].is_input = true;
  for (int32_t t : program->outputs()) impl->tensors[static_cast<size_t>(t)].host_reads = true;
  for (const program::PlanStep& step : program->plan()) {
    if (step.kind != program::PlanStep::Kind::kCpuNode) continue;
    for (int32_t t : step.cpu_node.inputs) {
      if (t >= 0) impl->tensors[static_cast<size_t>(t)].host_reads = true;
    }
  }

  impl->delegates.resize(program->delegates().size());
  impl->cpu_steps.resize(program->plan().size());
  for (size_t p = 0; p < program->plan().size(); ++p) {
    const program::PlanStep& step = program->plan()[p];
    if (step.kind == program::PlanStep::Kind::kDelegate) {
      GPUU_RETURN_IF_ERROR(impl->init_delegate(step.delegate));
    } else {
      GPUU_RETURN_IF_ERROR(impl->build_cpu_step(p));
    }
  }
  for (const ContextTrack& t : impl->contexts) {
    if (impl->sync_mode == SyncMode::kTimeline && !t.ctx->timeline_semaphore()) {
      return err(StatusCode::kUnsupported, "sync mode timeline needs timeline semaphores, which the context on '",
                 t.ctx->device_name(), "' lacks (choose queue_wait_idle)");
    }
  }

  std::unique_ptr<Session> session(new Session(std::move(impl)));
  session->sync_mode_ = session->impl_->sync_mode;
  for (int pass = 0; pass < 2; ++pass) {
    for (int32_t t : pass == 0 ? program->inputs() : program->outputs()) {
      const TensorSlot& slot = session->impl_->tensors[static_cast<size_t>(t)];
      (pass == 0 ? session->input_descs_ : session->output_descs_)
          .push_back(TensorDesc{slot.info.name, slot.info.dtype, slot.info.shape, slot.bytes});
    }
  }
  log(LogLevel::kDebug, "runtime", "session: ", program->delegates().size(), " delegates, ",
      session->impl_->contexts.size(), " context(s), sync ", to_string(session->sync_mode_));
  return session;
}

Status Session::set_input(size_t index, const void* data, size_t size) {
  if (index >= input_descs_.size()) {
    return err(StatusCode::kInvalidArgument, "input index ", index, " is out of range (the program has ",
               input_descs_.size(), " inputs)");
  }
  const TensorDesc& d = input_descs_[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, "input ", index, " ('", d.name, "', ", graph::dtype_name(d.dtype),
               graph::shape_to_string(d.shape), ") takes ", d.bytes, " bytes, got ", size);
  }
  if (!data && size) return err(StatusCode::kInvalidArgument, "input ", index, " ('", d.name, "'): data is null");
  TensorSlot& slot = impl_->tensors[static_cast<size_t>(impl_->program->inputs()[index])];
  if (size) std::memcpy(slot.host.bytes.data(), data, size);
  slot.input_set = true;
  return Status::Ok();
}

Status Session::bind_input_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) {
  if (index >= input_descs_.size()) {
    return err(StatusCode::kInvalidArgument, "input index ", index, " is out of range (", input_descs_.size(),
               " inputs)");
  }
  if (!buffer) {
    auto old = impl_->input_copies.find(index);
    if (old != impl_->input_copies.end()) {
      impl_->free_app_copy(old->second);
      impl_->input_copies.erase(old);
    }
    return Status::Ok();
  }
  const TensorDesc& d = input_descs_[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, "input ", index, " ('", d.name, "') takes ", d.bytes,
               " bytes, the bound range has ", size);
  }
  TensorSlot& slot = impl_->tensors[static_cast<size_t>(impl_->program->inputs()[index])];
  if (slot.homes.empty()) {
    return err(StatusCode::kFailedPrecondition, "input ", index, " ('", d.name,
               "') is read only by CPU-fallback steps: set it from host memory");
  }
  GPUU_ASSIGN_OR_RETURN(AppCopy copy, impl_->record_app_copy(slot.homes.front().get(), buffer, offset, size, true));
  auto old = impl_->input_copies.find(index);  // replaced only once the new one is ready
  if (old != impl_->input_copies.end()) impl_->free_app_copy(old->second);
  impl_->input_copies[index] = copy;
  return Status::Ok();
}

Status Session::bind_output_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) {
  if (index >= output_descs_.size()) {
    return err(StatusCode::kInvalidArgument, "output index ", index, " is out of range (", output_descs_.size(),
               " outputs)");
  }
  if (!buffer) {
    auto old = impl_->output_copies.find(index);
    if (old != impl_->output_copies.end()) {
      impl_->free_app_copy(old->second);
      impl_->output_copies.erase(old);
    }
    return Status::Ok();
  }
  const TensorDesc& d = output_descs_[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, "output ", index, " ('", d.name, "') takes ", d.bytes,
               " bytes, the bound range has ", size);
  }
  int32_t t = impl_->program->outputs()[index];
  SharedGpuContextPtr ctx = primary_context();
  if (!ctx) {
    return err(StatusCode::kFailedPrecondition, "output ", index, " ('", d.name,
               "'): the program has no GPU delegate, so there is no device to copy on");
  }
  GPUU_ASSIGN_OR_RETURN(Home * home, impl_->home_for(t, ctx));
  GPUU_ASSIGN_OR_RETURN(AppCopy copy, impl_->record_app_copy(home, buffer, offset, size, false));
  auto old = impl_->output_copies.find(index);
  if (old != impl_->output_copies.end()) impl_->free_app_copy(old->second);
  impl_->output_copies[index] = copy;
  return Status::Ok();
}

Status Session::execute(ExecuteStats* stats) {
  ExecuteStats local;
  Status s = impl_->execute(stats ? *stats : local);
  if (!s.ok()) {
    // Leave the session usable: let whatever was submitted finish.
    for (ContextTrack& t : impl_->contexts) {
      if (t.pending) {
        t.ctx->queue_wait_idle();
        t.pending = false;
      }
    }
    impl_->executed = false;
  }
  return s;
}

Status Session::get_output(size_t index, void* data, size_t size) const {
  if (index >= output_descs_.size()) {
    return err(StatusCode::kInvalidArgument, "output index ", index, " is out of range (the program has ",
               output_descs_.size(), " outputs)");
  }
  const TensorDesc& d = output_descs_[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, "output ", index, " ('", d.name, "', ", graph::dtype_name(d.dtype),
               graph::shape_to_string(d.shape), ") has ", d.bytes, " bytes, the destination ", size);
  }
  if (!impl_->executed) return err(StatusCode::kFailedPrecondition, "no successful execute yet: no outputs to read");
  if (!data && size) return err(StatusCode::kInvalidArgument, "output ", index, ": destination is null");
  const TensorSlot& slot = impl_->tensors[static_cast<size_t>(impl_->program->outputs()[index])];
  if (size) std::memcpy(data, slot.host.bytes.data(), size);
  return Status::Ok();
}

SharedGpuContextPtr Session::primary_context() const {
  for (const DelegateSlot& d : impl_->delegates) {
    if (d.handle) return d.handle->context();
  }
  return nullptr;
}

size_t Session::delegate_count() const { return impl_->delegates.size(); }

std::vector<const backends::DelegateHandle*> Session::delegate_handles() const {
  std::vector<const backends::DelegateHandle*> out;
  for (const auto& step : impl_->program->plan()) {
    if (step.kind == program::PlanStep::Kind::kDelegate) {
      out.push_back(impl_->delegates[static_cast<size_t>(step.delegate)].handle.get());
    }
  }
  return out;
}

}  // namespace gpuu::runtime
