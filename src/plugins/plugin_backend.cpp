// PluginBackend: graph views in C types for check/preprocess, the I/O
// signature in front of the plugin's blob, and delegate handles that hand a
// plugin host pointers (host plugins) or Vulkan handles (device plugins).
#include "plugins/plugin_backend.h"

#include <cstring>

#include "base/log.h"
#include "gpu/submission.h"

namespace gpuu::plugins {
namespace {

constexpr size_t kErrorCapacity = 1024;
constexpr uint32_t kSignatureMagic = 0x4F495047;  // "GPIO"

// A graph in gpuu_backend.h's C types; it borrows the graph's strings and
// constant bytes, so it must not outlive the graph.
class GraphView {
 public:
  explicit GraphView(const graph::Graph& g) {
    for (const graph::Value& v : g.values()) {
      gpuu_plugin_value cv{};
      cv.name = v.name.c_str();
      cv.dtype = static_cast<gpuu_plugin_dtype>(v.dtype);
      cv.rank = static_cast<uint32_t>(v.shape.size());
      cv.dims = v.shape.data();
      if (v.constant != graph::kNone) {
        const Blob& data = g.constants()[static_cast<size_t>(v.constant)].data;
        cv.constant_data = data.data();
        cv.constant_size = data.size();
      }
      values_.push_back(cv);
    }
    attrs_.resize(g.nodes().size());
    for (size_t n = 0; n < g.nodes().size(); ++n) {
      for (const auto& [name, value] : g.nodes()[n].attrs) attrs_[n].push_back(attr_view(name, value));
    }
    for (size_t n = 0; n < g.nodes().size(); ++n) {
      const graph::Node& node = g.nodes()[n];
      gpuu_plugin_node cn{};
      cn.struct_size = sizeof(cn);
      cn.name = node.name.c_str();
      cn.op = node.op.c_str();
      cn.input_count = node.inputs.size();
      cn.inputs = node.inputs.data();
      cn.output_count = node.outputs.size();
      cn.outputs = node.outputs.data();
      cn.attr_count = attrs_[n].size();
      cn.attrs = attrs_[n].data();
      nodes_.push_back(cn);
    }
    view_.struct_size = sizeof(view_);
    view_.value_count = values_.size();
    view_.values = values_.data();
    view_.node_count = nodes_.size();
    view_.nodes = nodes_.data();
    view_.input_count = g.inputs().size();
    view_.inputs = g.inputs().data();
    view_.output_count = g.outputs().size();
    view_.outputs = g.outputs().data();
  }
  const gpuu_plugin_graph& graph() const { return view_; }
  const gpuu_plugin_node& node(size_t index) const { return nodes_[index]; }

 private:
  static gpuu_plugin_attr attr_view(const std::string& name, const graph::AttrValue& value) {
    gpuu_plugin_attr a{};
    a.name = name.c_str();
    if (auto* i = std::get_if<int64_t>(&value)) {
      a.kind = GPUU_PLUGIN_ATTR_INT, a.i = *i;
    } else if (auto* f = std::get_if<double>(&value)) {
      a.kind = GPUU_PLUGIN_ATTR_FLOAT, a.f = *f;
    } else if (auto* s = std::get_if<std::string>(&value)) {
      a.kind = GPUU_PLUGIN_ATTR_STRING, a.s = s->c_str();
    } else if (auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      a.kind = GPUU_PLUGIN_ATTR_INTS, a.ints = is->data(), a.count = is->size();
    } else if (auto* fs = std::get_if<std::vector<double>>(&value)) {
      a.kind = GPUU_PLUGIN_ATTR_FLOATS, a.floats = fs->data(), a.count = fs->size();
    }
    return a;
  }

  std::vector<gpuu_plugin_value> values_;
  std::vector<std::vector<gpuu_plugin_attr>> attrs_;
  std::vector<gpuu_plugin_node> nodes_;
  gpuu_plugin_graph view_{};
};

std::vector<gpuu_plugin_compile_spec> spec_views(const std::vector<CompileSpecEntry>& specs) {
  std::vector<gpuu_plugin_compile_spec> out;
  for (const CompileSpecEntry& e : specs) out.push_back({e.key.c_str(), e.value.data(), e.value.size()});
  return out;
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

// The region's inputs then outputs: name, dtype, shape. The runtime needs them
// to bind tensors; the plugin's own bytes follow.
std::vector<uint8_t> encode_signature(const graph::Graph& region) {
  std::vector<uint8_t> out;
  put(out, kSignatureMagic);
  for (const auto* ids : {&region.inputs(), &region.outputs()}) {
    put(out, static_cast<uint32_t>(ids->size()));
    for (graph::ValueId id : *ids) {
      const graph::Value& v = region.value(id);
      put(out, static_cast<uint32_t>(v.name.size()));
      out.insert(out.end(), v.name.begin(), v.name.end());
      put(out, static_cast<uint32_t>(v.dtype));
      put(out, static_cast<uint32_t>(v.shape.size()));
      for (int64_t d : v.shape) put(out, d);
    }
  }
  return out;
}

// The inverse of encode_signature: a graph with just the inputs and outputs,
// and where the plugin's bytes start.
Result<graph::Graph> decode_signature(const Blob& blob, size_t* plugin_offset) {
  size_t at = 0;
  auto read = [&](void* dst, size_t n) {
    if (blob.size() - at < n) return false;
    std::memcpy(dst, blob.data() + at, n);
    at += n;
    return true;
  };
  auto bad = [&](const char* what) {
    return err(StatusCode::kInvalidFormat, "plugin delegate blob: ", what, " at byte ", at);
  };
  uint32_t magic = 0;
  if (!read(&magic, 4) || magic != kSignatureMagic) return bad("no I/O signature (not written by a plugin backend)");
  graph::Graph g;
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t count = 0;
    if (!read(&count, 4)) return bad("truncated tensor count");
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t len = 0, dtype = 0, rank = 0;
      if (!read(&len, 4) || len > blob.size() - at) return bad("truncated tensor name");
      std::string name(reinterpret_cast<const char*>(blob.data() + at), len);
      at += len;
      if (!read(&dtype, 4) || dtype >= graph::kDTypeCount) return bad("bad dtype");
      if (!read(&rank, 4) || rank > graph::kMaxRank) return bad("bad rank");
      graph::Shape shape(rank);
      for (int64_t& d : shape) {
        if (!read(&d, 8)) return bad("truncated shape");
      }
      if (!graph::shape_problem(shape).empty()) return bad("bad shape");
      auto dt = static_cast<graph::DType>(dtype);
      if (pass == 0) {
        g.add_input(name, dt, shape);
      } else {
        g.mark_output(g.add_value(graph::Value{name, dt, shape}));
      }
    }
  }
  *plugin_offset = at;
  return g;
}

class PluginDelegate : public backends::DelegateHandle {
 public:
  PluginDelegate(const gpuu_backend_plugin* plugin, SharedGpuContextPtr ctx) : plugin_(plugin), ctx_(std::move(ctx)) {}
  ~PluginDelegate() override {
    if (handle_) plugin_->destroy(handle_);
    if (pool_) ctx_->destroy_command_pool(pool_);  // frees the command buffer too
  }
  const SharedGpuContextPtr& context() const override { return ctx_; }
  VkCommandPool command_pool() const override { return pool_; }

  // An empty command buffer: what a host plugin "submits", so the timeline
  // and the runtime's bookkeeping advance as for any delegate.
  Status record_empty() {
    const auto& vk = ctx_->vkd();
    GPUU_VK_RETURN_IF_ERROR(ctx_->create_command_pool(&pool_), "vkCreateCommandPool");
    GPUU_VK_RETURN_IF_ERROR(ctx_->allocate_command_buffer(pool_, &empty_), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(empty_, &begin), "vkBeginCommandBuffer");
    GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(empty_), "vkEndCommandBuffer");
    return Status::Ok();
  }

  // A device plugin's submit during execute: chained as the runtime asked.
  static int submit(void* runtime, void* command_buffer, char* error, size_t capacity) {
    auto* self = static_cast<PluginDelegate*>(runtime);
    if (!self->args_) {
      std::snprintf(error, capacity, "submit outside execute");
      return 1;
    }
    // A plugin's command buffer carries no barrier of gpuu's: it gets a
    // submit of its own, chained on the timeline after what came before
    // (the gathered delegates go first), as the plugin ABI has always said.
    gpu::SubmitArgs own = *self->args_;
    Status s = own.batch ? own.batch->flush() : Status::Ok();
    own.batch = nullptr;
    if (s.ok()) s = gpu::submit_recorded(*self->ctx_, static_cast<VkCommandBuffer>(command_buffer), own);
    if (!s.ok()) {
      std::snprintf(error, capacity, "%s", s.message().c_str());
      return 1;
    }
    ++self->submits_;
    return 0;
  }

  const gpuu_backend_plugin* plugin_;
  SharedGpuContextPtr ctx_;
  void* handle_ = nullptr;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer empty_ = VK_NULL_HANDLE;
  gpuu_plugin_vulkan vulkan_{};
  const backends::ExecuteArgs* args_ = nullptr;
  int submits_ = 0;
};

// Everything queued on the context so far has finished: what a host plugin
// waits for before it reads inputs a GPU delegate wrote.
Status wait_for_producers(const SharedGpuContext& ctx, SyncMode mode) {
  if (mode == SyncMode::kTimeline) {
    VkSemaphore sem = ctx.timeline_semaphore();
    uint64_t value = ctx.last_timeline_value();
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &sem;
    wait.pValues = &value;
    GPUU_VK_RETURN_IF_ERROR(ctx.vkd().vkWaitSemaphores(ctx.device(), &wait, UINT64_MAX), "vkWaitSemaphores");
    return Status::Ok();
  }
  GPUU_VK_RETURN_IF_ERROR(ctx.queue_wait_idle(), "vkQueueWaitIdle");
  return Status::Ok();
}

}  // namespace

namespace {

static_assert(GPUU_PLUGIN_DTYPE_F32 == static_cast<int>(graph::DType::kF32) &&
                  GPUU_PLUGIN_DTYPE_F16 == static_cast<int>(graph::DType::kF16) &&
                  GPUU_PLUGIN_DTYPE_I32 == static_cast<int>(graph::DType::kI32) &&
                  GPUU_PLUGIN_DTYPE_I64 == static_cast<int>(graph::DType::kI64) &&
                  GPUU_PLUGIN_DTYPE_I8 == static_cast<int>(graph::DType::kI8) &&
                  GPUU_PLUGIN_DTYPE_BOOL == static_cast<int>(graph::DType::kBool) &&
                  GPUU_PLUGIN_DTYPE_I16 == static_cast<int>(graph::DType::kI16),
              "gpuu_plugin_dtype mirrors graph::DType");

// The capability of a plugin: its descriptor's declarations, its check().
class PluginCapability final : public backends::CheckedCapability {
 public:
  explicit PluginCapability(const PluginBackend& backend)
      : CheckedCapability(backend, backend.descriptor().default_node_cost), backend_(backend) {}
  std::vector<graph::DType> declared_dtypes(std::string_view op) const override {
    const gpuu_backend_plugin& d = backend_.descriptor();
    bool declared = false;
    for (size_t i = 0; i < d.op_count && !declared; ++i) declared = d.ops[i] && op == d.ops[i];
    std::vector<graph::DType> dtypes;
    if (!declared) return dtypes;
    // gpuu_plugin_dtype mirrors graph::DType's numbering.
    for (uint32_t t = 0; t < static_cast<uint32_t>(graph::kDTypeCount); ++t) {
      if (d.dtype_mask & (1u << t)) dtypes.push_back(static_cast<graph::DType>(t));
    }
    return dtypes;
  }

 private:
  const PluginBackend& backend_;
};

}  // namespace

Result<std::vector<backends::OptionDecl>> plugin_option_decls(const gpuu_backend_plugin& plugin) {
  std::vector<backends::OptionDecl> out;
  if (plugin.struct_size < offsetof(gpuu_backend_plugin, option_count) + sizeof(plugin.option_count) ||
      plugin.option_count == 0) {
    return out;  // a 1.0 descriptor, or no options
  }
  auto bad = [](size_t i, const std::string& why) {
    return err(StatusCode::kInvalidArgument, "option declaration ", i, ": ", why);
  };
  if (!plugin.options) return bad(0, "options is NULL but option_count is " + std::to_string(plugin.option_count));
  constexpr size_t kFirstDeclSize = offsetof(gpuu_plugin_option_decl, description) + sizeof(const char*);
  const uint32_t stride = plugin.options[0].struct_size;
  if (stride < kFirstDeclSize) {
    return bad(0, str_cat("struct_size ", stride, " is below API 1.1's ", kFirstDeclSize));
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(plugin.options);
  for (size_t i = 0; i < plugin.option_count; ++i) {
    const auto& d = *reinterpret_cast<const gpuu_plugin_option_decl*>(bytes + i * stride);
    if (d.struct_size != stride) return bad(i, str_cat("struct_size ", d.struct_size, ", element 0's is ", stride));
    if (!d.key || !*d.key) return bad(i, "empty key");
    backends::OptionDecl decl;
    decl.key = d.key;
    for (const backends::OptionDecl& earlier : out) {
      if (earlier.key == decl.key) return bad(i, "key '" + decl.key + "' is declared twice");
    }
    if (d.value_count && !d.values) return bad(i, "'" + decl.key + "': values is NULL but value_count is not 0");
    for (size_t v = 0; v < d.value_count; ++v) {
      if (!d.values[v]) return bad(i, str_cat("'", decl.key, "': value ", v, " is NULL"));
      decl.allowed.emplace_back(d.values[v]);
    }
    if (!d.default_value) return bad(i, "'" + decl.key + "': no default value");
    decl.default_value = d.default_value;
    bool default_allowed = decl.allowed.empty();
    for (const std::string& v : decl.allowed) default_allowed = default_allowed || v == decl.default_value;
    if (!default_allowed) return bad(i, "'" + decl.key + "': the default '" + decl.default_value + "' is not one of its values");
    decl.description = d.description ? d.description : "";
    out.push_back(std::move(decl));
  }
  return out;
}

PluginBackend::PluginBackend(const gpuu_backend_plugin* plugin, std::string path,
                             std::vector<backends::OptionDecl> options)
    : plugin_(plugin),
      path_(std::move(path)),
      options_(std::move(options)),
      capability_(std::make_unique<PluginCapability>(*this)) {}

std::string PluginBackend::check(const graph::Graph& graph, const graph::Node& node) const {
  GraphView view(graph);
  size_t index = static_cast<size_t>(&node - graph.nodes().data());
  if (index >= graph.nodes().size()) return "node is not in the graph";
  const char* why = plugin_->check(&view.graph(), &view.node(index));
  return why ? (*why ? why : "refused (no reason given)") : "";
}

Result<std::vector<uint8_t>> PluginBackend::preprocess(const graph::Graph& graph, const partition::Region& region,
                                                       const std::vector<CompileSpecEntry>& compile_specs) const {
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(graph, region));
  GraphView view(sub);
  std::vector<gpuu_plugin_compile_spec> specs = spec_views(compile_specs);
  gpuu_plugin_bytes bytes{};
  char error[kErrorCapacity] = "";
  if (plugin_->preprocess(&view.graph(), specs.data(), specs.size(), &bytes, error, sizeof(error)) != 0) {
    return err(StatusCode::kUnsupported, id(), " preprocess: ", error[0] ? error : "failed (no reason given)");
  }
  std::vector<uint8_t> out = encode_signature(sub);
  if (bytes.data) out.insert(out.end(), bytes.data, bytes.data + bytes.size);
  plugin_->free_bytes(&bytes);
  return out;
}

Result<std::unique_ptr<backends::DelegateHandle>> PluginBackend::init(
    backends::BackendInitContext& context, const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs) {
  size_t offset = 0;
  GPUU_ASSIGN_OR_RETURN(graph::Graph signature, decode_signature(processed, &offset));
  GPUU_ASSIGN_OR_RETURN(SharedGpuContextPtr ctx, backends::resolve_delegate_context(context, id()));
  auto delegate = std::make_unique<PluginDelegate>(plugin_, ctx);
  GPUU_RETURN_IF_ERROR(delegate->record_empty());
  auto io = context.bind_io(ctx, signature, {});
  if (!io.ok()) return io.status();
  std::vector<gpuu_plugin_tensor> tensors[2];
  for (int pass = 0; pass < 2; ++pass) {
    for (const backends::BufferRange& r : pass == 0 ? io->first : io->second) {
      if (runs_on_host() && !r.host) {
        return err(StatusCode::kInternal, id(), " delegate ", context.delegate_index,
                   ": the runtime gave a host plugin a tensor the host cannot see");
      }
      tensors[pass].push_back({r.host, reinterpret_cast<uint64_t>(r.buffer), r.offset, r.size});
    }
  }
  gpuu_plugin_vulkan& vk = delegate->vulkan_;
  vk.struct_size = sizeof(vk);
  vk.instance = ctx->instance();
  vk.physical_device = ctx->physical_device();
  vk.device = ctx->device();
  vk.queue = ctx->queue();
  vk.queue_family_index = ctx->queue_family_index();
  vk.get_instance_proc_addr = reinterpret_cast<gpuu_plugin_get_instance_proc_addr>(ctx->get_instance_proc_addr());
  vk.runtime = delegate.get();
  vk.submit = &PluginDelegate::submit;
  std::vector<gpuu_plugin_compile_spec> specs = spec_views(compile_specs);
  std::vector<gpuu_plugin_option> options;  // context.options is a map: in key order
  for (const auto& [key, value] : context.options) options.push_back({key.c_str(), value.c_str()});
  gpuu_plugin_init_args args{};
  args.struct_size = sizeof(args);
  args.blob = processed.data() + offset;
  args.blob_size = processed.size() - offset;
  args.compile_specs = specs.data();
  args.compile_spec_count = specs.size();
  args.vulkan = &vk;
  args.inputs = tensors[0].data();
  args.input_count = tensors[0].size();
  args.outputs = tensors[1].data();
  args.output_count = tensors[1].size();
  args.options = options.data();
  args.option_count = options.size();
  char error[kErrorCapacity] = "";
  if (plugin_->init(&args, &delegate->handle_, error, sizeof(error)) != 0) {
    delegate->handle_ = nullptr;  // a failed init owns nothing
    return err(StatusCode::kInvalidFormat, id(), " delegate ", context.delegate_index, " init: ",
               error[0] ? error : "failed (no reason given)");
  }
  log(LogLevel::kInfo, id(), "init: delegate=", context.delegate_index, " ", backends::describe_init(processed, compile_specs));
  return std::unique_ptr<backends::DelegateHandle>(std::move(delegate));
}

Status PluginBackend::execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) {
  auto& d = static_cast<PluginDelegate&>(handle);
  if (runs_on_host()) {
    // The host reads what earlier delegates write: their gathered work goes first.
    if (args.batch) GPUU_RETURN_IF_ERROR(args.batch->flush());
    GPUU_RETURN_IF_ERROR(wait_for_producers(*d.ctx_, args.sync_mode));
  }
  d.args_ = &args;
  d.submits_ = 0;
  char error[kErrorCapacity] = "";
  int rc = d.plugin_->execute(d.handle_, error, sizeof(error));
  d.args_ = nullptr;
  if (rc != 0) return err(StatusCode::kInternal, id(), " execute: ", error[0] ? error : "failed (no reason given)");
  // One submit per execute, so the runtime's chain has something to wait on.
  if (d.submits_ == 0) return gpu::submit_recorded(*d.ctx_, d.empty_, args);
  if (d.submits_ > 1) return err(StatusCode::kInternal, id(), " execute: submitted ", d.submits_, " times (at most once)");
  return Status::Ok();
}

}  // namespace gpuu::plugins
