// Session: delegate init through the backend registry, tensor homes on each
// context, plan execution with the three sync modes, CPU-fallback steps.
#include "runtime/session.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "base/log.h"
#include "gpu/device_buffer.h"
#include "gpu/shared_constants.h"
#include "kernels/device_peaks.h"
#include "program/specialize.h"
#include "runtime/builtin_backends.h"
#include "runtime/memory_plan.h"

namespace gpuu::runtime {
namespace {

using gpu::BufferRange;
using gpu::DeviceBuffer;
using gpu::MemoryKind;

}  // namespace

// The device memory of a session's tensors and of its delegates'
// intermediates, shared by the program's sizes: a program with dims makes
// its delegates again at each size, and those never run at once (an execute
// leaves nothing running). A tensor's home is made for the dims' upper
// bounds, so that every size fits in it and a state stays where it is when
// the size changes; tensors only GPU delegates touch take homes by turns
// where their lives do not meet (plan_shared_homes). The delegates on one
// context share one workspace, as large as the largest of them at any size
// made so far needed: they run one after another on the context's queue,
// each ordered after the work before it, and keep nothing in it between
// executes. A larger need replaces a
// buffer; delegates made on the old one are made again (make_impl) and the
// sizes built on it dropped (Session::switch_to): one of each lives.
class SessionMemory {
 public:
  // `share_homes`: tensors may take homes by turns (plan_shared_homes); not
  // where the session puts each delegate on a private context.
  SessionMemory(const program::Program& program, bool share_homes) {
    std::vector<int64_t> upper;
    for (const graph::SymbolicDim& d : program.dims()) upper.push_back(d.max);
    for (const program::TensorInfo& t : program.tensors()) {
      graph::Shape shape = t.shape;
      for (const graph::AxisExpr& ax : t.dim_exprs) shape[ax.axis] = ax.size.eval(upper);
      upper_bytes_.push_back(static_cast<VkDeviceSize>(graph::shape_numel(shape)) * graph::dtype_size(t.dtype));
    }
    if (share_homes) shared_homes_ = plan_shared_homes(program, upper_bytes_);
    shared_homes_.home_of.resize(upper_bytes_.size(), -1);
  }
  Result<std::shared_ptr<DeviceBuffer>> home(int32_t tensor, const SharedGpuContextPtr& ctx, MemoryKind kind,
                                             VkDeviceSize bytes, bool state, const std::string& what) {
    const int32_t shared = shared_homes_.home_of[static_cast<size_t>(tensor)];
    if (shared >= 0 && !state) {
      const VkDeviceSize upper = std::max(bytes, shared_homes_.home_bytes[static_cast<size_t>(shared)]);
      return find_or_make(Entry{Use::kSharedHome, shared, ctx, kind, nullptr}, bytes, upper,
                          str_cat("tensors taking turns (", what, " first)"));
    }
    VkDeviceSize upper = std::max(bytes, upper_bytes_[static_cast<size_t>(tensor)]);
    return find_or_make(Entry{state ? Use::kState : Use::kTensor, tensor, ctx, kind, nullptr}, bytes, upper, what);
  }
  Result<std::shared_ptr<DeviceBuffer>> workspace(const SharedGpuContextPtr& ctx, VkDeviceSize bytes) {
    return find_or_make(Entry{Use::kWorkspace, 0, ctx, MemoryKind::kDevice, nullptr}, bytes, bytes,
                        "the delegates' intermediates");
  }
  // Whether `buffer` is still the one its tensor or delegate uses.
  bool current(const DeviceBuffer* buffer) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.buffer.get() == buffer; });
  }
  SessionMemoryBytes bytes() const {
    SessionMemoryBytes b;
    for (const Entry& e : entries_) {
      (e.use == Use::kState ? b.states : e.use == Use::kWorkspace ? b.workspaces : b.tensors) += e.buffer->size();
    }
    return b;
  }

 private:
  enum class Use { kTensor, kSharedHome, kState, kWorkspace };
  struct Entry {
    Use use;
    int32_t key;  // the tensor, the shared home; 0 for the workspace
    SharedGpuContextPtr ctx;
    MemoryKind kind;
    std::shared_ptr<DeviceBuffer> buffer;
  };
  Result<std::shared_ptr<DeviceBuffer>> find_or_make(Entry want, VkDeviceSize bytes, VkDeviceSize planned,
                                                     const std::string& what) {
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return e.use == want.use && e.key == want.key && e.ctx == want.ctx && e.kind == want.kind;
    });
    if (it != entries_.end() && it->buffer->size() >= bytes) return it->buffer;
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer made, DeviceBuffer::create(*want.ctx, planned, want.kind, what.c_str()));
    want.buffer = std::make_shared<DeviceBuffer>(std::move(made));
    if (it != entries_.end()) entries_.erase(it);
    entries_.push_back(want);
    return want.buffer;
  }
  std::vector<VkDeviceSize> upper_bytes_;  // per program tensor, at the dims' upper bounds
  SharedHomes shared_homes_;               // planned at the upper bounds
  std::vector<Entry> entries_;
};

namespace {

// A tensor's storage on one context: host-visible (device-local where the
// device offers it) so that the host can fill inputs and serve CPU steps
// without staging copies. An application buffer bound zero-copy takes its
// place: the delegates on that context read or write it in place.
struct Home {
  SharedGpuContextPtr ctx;
  std::shared_ptr<DeviceBuffer> buffer;  // SessionMemory's, maybe larger than the tensor
  VkDeviceSize bytes = 0;                // the tensor's, at this size
  BufferRange app;  // the application's buffer used instead, when bound zero-copy
  // A state's update written in place: the state's home on this context,
  // whose memory this home is (its own buffer stays empty).
  const Home* shares = nullptr;
  bool fresh = false;  // holds the tensor's current value in this execute
  BufferRange range() const {
    if (shares) return shares->range();
    if (app.buffer) return app;
    BufferRange r = buffer->whole_range();
    r.size = std::min(r.size, (bytes + 3) / 4 * 4);  // DeviceBuffer's rounding, not the upper bound's size
    return r;
  }
  bool host_readable() const { return shares ? shares->host_readable() : !app.buffer && buffer->host_readable(); }
  void* host_writable() const { return shares ? shares->host_writable() : app.buffer ? nullptr : buffer->mapped(); }
};

// A copy recorded once into its own command buffer, submitted in an execute's
// batch: an application buffer to or from a home (where zero-copy cannot be
// had), or a home into a staging buffer the host reads.
struct RecordedCopy {
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  BufferRange from, to;
};

// Host reads of a tensor whose home the host cannot read fast (device-local
// memory, an application's buffer): one GPU copy into host-cached memory.
struct Staging {
  DeviceBuffer buffer;
  RecordedCopy copy;
  bool fresh = false;
};

struct TensorSlot {
  program::TensorInfo info;
  size_t bytes = 0;
  std::vector<std::unique_ptr<Home>> homes;
  // The host copy, made when first needed: most tensors never need one (the
  // program's weights are its tensors too, hundreds of MB for a model).
  backends::HostTensor host;
  uint8_t* host_bytes() {
    if (host.bytes.size() != bytes) host = backends::HostTensor::zeros(info.dtype, info.shape);
    return host.bytes.data();
  }
  bool host_fresh = false;
  bool is_input = false;
  // A state's tensor: its value lasts from one execute to the next (where it
  // is fresh is kept, not reset when an execute begins).
  bool is_state = false;
  bool input_set = false;
  bool input_in_home = false;  // set_input wrote straight into the one home
  // A CPU step reads it mid-execute: its homes live in host-cached memory.
  // Other tensors (graph outputs included) stay device-local where offered,
  // read on the host through `staging`.
  bool cpu_reads = false;
  std::unique_ptr<Staging> staging;
  Home* home_on(const SharedGpuContext* ctx) {
    for (auto& h : homes) {
      if (h->ctx.get() == ctx) return h.get();
    }
    return nullptr;
  }
  Home* fresh_home() {
    for (auto& h : homes) {
      if (h->fresh) return h.get();
    }
    return nullptr;
  }
};

struct DelegateSlot {
  int32_t index = 0;
  backends::Backend* backend = nullptr;
  std::unique_ptr<backends::DelegateHandle> handle;
  std::vector<int32_t> inputs, outputs;  // program tensors bound to the region's inputs/outputs
  std::vector<std::shared_ptr<gpu::DeviceBuffer>> workspaces;  // the workspace it was given (per context asked)
};

struct CpuStep {
  graph::Graph graph;  // one node; values mirror the program tensors it touches
  std::vector<int32_t> inputs, outputs;
  std::vector<int32_t> constant_inputs;  // per node input: index into graph constants, or -1
  double host_us = 0;  // the node's run in the last execute (profiles)
};

// Where the host must wait for each context, how far its work has gone, and
// the work gathered for its next queue submission.
struct ContextTrack {
  SharedGpuContextPtr ctx;
  uint64_t last_signal = 0;
  bool pending = false;
  VkCommandPool pool = VK_NULL_HANDLE;  // for the runtime's own copies
  std::unique_ptr<gpu::SubmitBatch> batch;
  VkCommandBuffer host_barrier = VK_NULL_HANDLE;  // the batch's tail: every write visible to the host
  // The last two host waits' lengths (us): the shorter says how long the
  // next one likely is (wait_host sleeps through most of a long one).
  double wait_us[2] = {0, 0};
};

// How long before a wait's likely end wait_host stops sleeping and polls:
// more than a sleeping wait's wake-up (20-60 us on the H100).
constexpr double kWakeUpMarginUs = 300;

// A program state in a session: read as tensor `tensor` in an execute,
// carried over from tensor `update` when the plan ends. In place: the
// delegate computing the update writes it into the state's own memory on
// `ctx` (nothing to carry). Otherwise a GPU copy (`carry`, recorded once) or,
// where the update is not on a device that holds the state, a host copy.
struct StateSlot {
  int32_t tensor = -1;
  int32_t update = -1;
  Blob initial;
  bool in_place = false;
  SharedGpuContextPtr ctx;  // where `carry` was recorded, or the in-place home lives
  RecordedCopy carry;
};

// An application buffer bound to a graph input or output.
struct AppBinding {
  BufferRange range;
  bool zero_copy = false;  // the delegates use it in place; else `copy` runs each execute
  RecordedCopy copy;
  Home* home = nullptr;    // the home it stands in for, or copies to or from
};

// The index check of set_input, get_output and the state calls; `what` is
// "input", "output" or "state".
Status index_in_range(const char* what, size_t index, size_t count) {
  if (index < count) return Status::Ok();
  return err(StatusCode::kInvalidArgument, what, " index ", index, " is out of range (the program has ", count, " ",
             what, "s)");
}

// The checks of a host copy into `what` `index` of `descs` (set_input,
// set_state: `size` bytes at `data`).
Status check_host_source(const char* what, const std::vector<TensorDesc>& descs, size_t index, const void* data,
                         size_t size) {
  GPUU_RETURN_IF_ERROR(index_in_range(what, index, descs.size()));
  const TensorDesc& d = descs[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, what, " ", index, " ('", d.name, "', ", graph::dtype_name(d.dtype),
               graph::shape_to_string(d.shape), ") takes ", d.bytes, " bytes, got ", size);
  }
  if (!data && size) return err(StatusCode::kInvalidArgument, what, " ", index, " ('", d.name, "'): data is null");
  return Status::Ok();
}

// ... and out of it (get_output, get_state: into `size` bytes at `data`).
Status check_host_destination(const char* what, const std::vector<TensorDesc>& descs, size_t index, size_t size) {
  GPUU_RETURN_IF_ERROR(index_in_range(what, index, descs.size()));
  const TensorDesc& d = descs[index];
  if (size == d.bytes) return Status::Ok();
  return err(StatusCode::kInvalidArgument, what, " ", index, " ('", d.name, "', ", graph::dtype_name(d.dtype),
             graph::shape_to_string(d.shape), ") has ", d.bytes, " bytes, the destination ", size);
}

// kOutOfMemory where a session's memory passes `limit`
// (SessionOptions::device_memory_limit), naming it, its parts and the limit,
// each part in the unit of the whole: "the session needs 2.1 MiB of device
// memory (2202112 bytes: weights 1.0, tensors 0.6, ...) but
// device_memory_limit is 1.0 MiB (1048576 bytes)". Delegates whose backend
// could not plan theirs are named: they count nothing.
Status check_budget(const char* verb, uint64_t weights, uint64_t tensors, uint64_t states, uint64_t workspaces,
                    uint64_t backend_private, uint64_t limit, const std::vector<DelegateMemoryPlan>& delegates) {
  const uint64_t need = weights + tensors + states + workspaces + backend_private;
  if (need <= limit) return Status::Ok();
  uint64_t unit = 1;
  const char* unit_name = "bytes";
  for (auto [size, name] : {std::pair<uint64_t, const char*>{uint64_t{1} << 10, "KiB"},
                            {uint64_t{1} << 20, "MiB"}, {uint64_t{1} << 30, "GiB"}}) {
    if (need >= size) {
      unit = size;
      unit_name = name;
    }
  }
  auto in_unit = [&](uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / static_cast<double>(unit));
    return std::string(text);
  };
  std::string unplanned;
  for (const DelegateMemoryPlan& d : delegates) {
    if (!d.unknown.empty()) unplanned += str_cat("; delegate ", d.index, " not counted: ", d.unknown);
  }
  return err(StatusCode::kOutOfMemory, "the session ", verb, " ", in_unit(need), " ", unit_name,
             " of device memory (", need, " bytes: weights ", in_unit(weights), ", tensors ", in_unit(tensors),
             ", states ", in_unit(states), ", workspaces ", in_unit(workspaces), ", backends' own ",
             in_unit(backend_private), " ", unit_name, ") but device_memory_limit is ", format_bytes(limit), " (",
             limit, " bytes)", unplanned);
}

}  // namespace

struct Session::Impl {
  std::shared_ptr<const program::Program> program;
  SessionOptions options;
  std::shared_ptr<SessionMemory> memory;  // the homes' and workspaces', shared with the program's other sizes
  SyncMode sync_mode = SyncMode::kTimeline;
  std::vector<TensorSlot> tensors;
  std::vector<StateSlot> states;              // by program state index
  std::vector<DelegateSlot> delegates;        // by program delegate index
  std::vector<std::unique_ptr<CpuStep>> cpu_steps;  // by plan index (null for delegate steps)
  std::vector<std::unique_ptr<ContextTrack>> contexts;
  std::map<size_t, AppBinding> input_bindings, output_bindings;  // by graph input/output index
  // Per graph output: get_output read it since the last execute. Then the
  // next execute stages it for the host in its own submit (the host likely
  // reads it again); otherwise it stays on the device until asked for.
  std::vector<bool> output_read;
  bool executed = false;
  // Profiles (SessionOptions::profile_steps): the devices the delegates run
  // on with their measured peaks, and the last successful execute's profile.
  std::vector<ProfileDevice> profile_devices;
  std::vector<SharedGpuContextPtr> profile_contexts;  // profile_devices' contexts
  std::optional<ExecuteProfile> profile;
  ExecuteStats scratch_stats;
  ExecuteStats* stats = &scratch_stats;  // the running execute's, else scratch

  ~Impl();
  ContextTrack& track(const SharedGpuContextPtr& ctx);
  SharedGpuContextPtr primary_context() const;  // the first delegate's, or null
  Result<Home*> home_for(int32_t tensor, const SharedGpuContextPtr& ctx);
  // For each state, the in-place update it may take (see StateSlot): offered
  // to the backend of the delegate that computes the update where that
  // delegate also reads the state, given without asking where it does not.
  // Empty where none: a later step reads the state, or the update is a
  // graph input, a CPU step's, or several states'.
  std::vector<std::optional<backends::InPlaceUpdate>> in_place_candidates() const;
  std::vector<std::optional<backends::InPlaceUpdate>> in_place;  // in_place_candidates(), once
  // The state whose update `tensor` is, taken in place by `delegate`, or -1.
  int32_t in_place_state(int32_t tensor, int32_t delegate, const std::vector<backends::InPlaceUpdate>& taken) const;
  // Where each state's value is when the plan ends: its update's.
  Status carry_states();
  // Writes `size` bytes as the value of state `index` (host copy, or the one home the host can write).
  void write_state(size_t index, const void* data, size_t size);
  // The states' values handed to `next` (the program at other sizes) by GPU
  // copies, where a state is fresh on a GPU and `next` keeps it on that
  // context: the values never cross to the host. The copies go in one batch
  // per context and one wait. (*carried)[i] 0: state i was not carried, the
  // caller goes through the host.
  Status carry_states_on_device(Impl& next, std::vector<char>* carried);
  Status init_delegate(int32_t index);
  // Whether every buffer it was built on is still SessionMemory's (else a
  // larger size replaced one, and this size must be made again to run).
  bool on_current_memory() const;
  bool on_current_workspace(const DelegateSlot& d) const;  // the same for one delegate's workspace
  // After a change of size: nothing of the last execute at this size is
  // trusted (its memory served the other sizes since), states aside.
  void forget_values();
  Status build_cpu_step(size_t plan_index);
  Status wait_host(ContextTrack& t);
  Status wait_all();
  // Where the host sees the tensor's current value: its host copy, a home
  // the host reads fast, or its staging buffer (copied there now if needed).
  Result<const void*> host_view(int32_t tensor);
  Status make_fresh_on(int32_t tensor, Home* home);
  Status make_host_fresh(int32_t tensor);
  Status record_host_barrier(ContextTrack& t);
  // Runs `submit` with the arguments the sync mode calls for (gathering into
  // the context's batch unless every delegate must be waited for) and records
  // that the context now has work in flight.
  Status submit_chained(ContextTrack& t, const std::function<Status(const backends::ExecuteArgs&)>& submit);
  Status submit_copy(ContextTrack& t, RecordedCopy& copy);
  Status record_copy(ContextTrack& t, const BufferRange& from, const BufferRange& to, RecordedCopy* copy);
  void free_copy(const SharedGpuContextPtr& ctx, RecordedCopy& copy);
  Status stage(int32_t tensor, Home* home);
  // Binding slots: every delegate on the home's context that reads or writes
  // `tensor` runs against the homes' current ranges.
  Status rebind_delegates(int32_t tensor, Home* home);
  Status bind(bool output, size_t index, const BufferRange& range, VkBufferUsageFlags usage);
  void unbind(bool output, size_t index);
  // bind_input_buffer/bind_output_buffer: the index and size checked against
  // `descs` (the session's inputs or outputs); a null buffer unbinds.
  Status bind_checked(bool output, const std::vector<TensorDesc>& descs, size_t index, VkBuffer buffer,
                      VkDeviceSize offset, VkDeviceSize size, VkBufferUsageFlags usage);
  Status execute(ExecuteStats& stats);
  // Adds what this size's delegates hold (constants, backends' own memory)
  // and its staging to `b`; a weight whose bytes are in `seen` is not counted again.
  void add_own_memory(SessionMemoryBytes* b, std::set<std::pair<const void*, size_t>>* seen) const;
  // Measures the peaks of every context a delegate runs on (once per context).
  Status prepare_profiles();
  ExecuteProfile collect_profile() const;
};

Session::Impl::~Impl() {
  // Nothing may still run when buffers and pools go.
  for (auto& t : contexts) {
    if (t->pending || (t->batch && !t->batch->empty())) t->ctx->queue_wait_idle();
  }
  for (auto* bindings : {&input_bindings, &output_bindings}) {
    for (auto& entry : *bindings) {
      if (entry.second.home) free_copy(entry.second.home->ctx, entry.second.copy);
    }
  }
  for (TensorSlot& slot : tensors) {
    if (slot.staging && !slot.homes.empty()) free_copy(slot.homes.front()->ctx, slot.staging->copy);
  }
  for (StateSlot& state : states) {
    if (state.ctx) free_copy(state.ctx, state.carry);
  }
  for (auto& t : contexts) {
    if (t->pool) t->ctx->destroy_command_pool(t->pool);
  }
  delegates.clear();  // each handle destroys its pool and drops its context reference
}

ContextTrack& Session::Impl::track(const SharedGpuContextPtr& ctx) {
  for (auto& t : contexts) {
    if (t->ctx == ctx) return *t;
  }
  auto t = std::make_unique<ContextTrack>();
  t->ctx = ctx;
  t->batch = std::make_unique<gpu::SubmitBatch>(*ctx, sync_mode, &t->last_signal);
  contexts.push_back(std::move(t));
  return *contexts.back();
}

Result<Home*> Session::Impl::home_for(int32_t tensor, const SharedGpuContextPtr& ctx) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (Home* h = slot.home_on(ctx.get())) return h;
  auto home = std::make_unique<Home>();
  home->ctx = ctx;
  std::string what = "tensor '" + slot.info.name + "'";
  MemoryKind kind = slot.cpu_reads ? MemoryKind::kReadback : MemoryKind::kShared;
  GPUU_ASSIGN_OR_RETURN(home->buffer, memory->home(tensor, ctx, kind, slot.bytes, slot.is_state, what));
  home->bytes = slot.bytes;
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
  // Overrides were validated when the session began: this cannot fail.
  GPUU_ASSIGN_OR_RETURN(init.shared, apply_overrides(info.shared, options.overrides));
  init.device = options.device;
  init.options = backends::option_values(*slot.backend, options.backend_options);
  // A profile needs each delegate's GPU time, also where it has no dispatches to time.
  init.gpu_timing = options.gpu_timing || options.profile_steps;
  // Batched submits end with the track's host barrier; queue_wait_idle
  // submits each delegate alone, so there each keeps its own.
  init.runtime_makes_host_visible = sync_mode != SyncMode::kQueueWaitIdle;
  init.profile_steps = options.profile_steps;
  init.pipeline_cache_path = options.pipeline_cache_path;
  init.constants = program::program_constant_lookup(program);
  for (const auto& offer : in_place) {
    if (!offer) continue;
    const program::StateInfo& st = program->states()[static_cast<size_t>(&offer - in_place.data())];
    if (std::count(info.outputs.begin(), info.outputs.end(), st.update) &&
        std::count(info.inputs.begin(), info.inputs.end(), st.tensor)) {
      init.in_place_offers.push_back(*offer);
    }
  }
  init.bind_io = [this, &slot, &init](const SharedGpuContextPtr& ctx, const graph::Graph& region,
                                      const std::vector<backends::InPlaceUpdate>& taken)
      -> Result<std::pair<std::vector<backends::BufferRange>, std::vector<backends::BufferRange>>> {
    for (const backends::InPlaceUpdate& t : taken) {
      if (!std::count(init.in_place_offers.begin(), init.in_place_offers.end(), t)) {
        return err(StatusCode::kInternal, "delegate ", slot.index, " updates '", t.input, "' in place as '",
                   t.output, "', which the runtime did not offer");
      }
    }
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
        int32_t state = pass == 1 ? in_place_state(t, slot.index, taken) : -1;
        if (state >= 0 && !tensors[static_cast<size_t>(t)].home_on(ctx.get())) {
          // The update's home on this context is the state's own memory.
          StateSlot& st = states[static_cast<size_t>(state)];
          GPUU_ASSIGN_OR_RETURN(Home * own, home_for(st.tensor, ctx));
          auto alias = std::make_unique<Home>();
          alias->ctx = ctx;
          alias->shares = own;
          tensors[static_cast<size_t>(t)].homes.push_back(std::move(alias));
          st.in_place = true;
          st.ctx = ctx;
        }
        GPUU_ASSIGN_OR_RETURN(Home * home, home_for(t, ctx));
        (pass == 0 ? io.first : io.second).push_back(home->range());
        (pass == 0 ? slot.inputs : slot.outputs).push_back(t);
      }
    }
    return io;
  };
  init.workspace = [this, &slot](const SharedGpuContextPtr& ctx, VkDeviceSize bytes) -> Result<BufferRange> {
    GPUU_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> buffer, memory->workspace(ctx, bytes));
    slot.workspaces.push_back(buffer);
    return buffer->whole_range();
  };
  Result<std::unique_ptr<backends::DelegateHandle>> handle =
      slot.backend->init(init, program->processed_blob(index), info.compile_specs);
  if (!handle.ok()) return handle.status();
  slot.handle = std::move(handle).value();
  track(slot.handle->context());
  return Status::Ok();
}

bool Session::Impl::on_current_memory() const {
  for (const TensorSlot& slot : tensors) {
    for (const auto& h : slot.homes) {
      if (h->buffer && !memory->current(h->buffer.get())) return false;
    }
  }
  return std::all_of(delegates.begin(), delegates.end(), [&](const DelegateSlot& d) { return on_current_workspace(d); });
}

bool Session::Impl::on_current_workspace(const DelegateSlot& d) const {
  return std::all_of(d.workspaces.begin(), d.workspaces.end(),
                     [&](const std::shared_ptr<DeviceBuffer>& w) { return memory->current(w.get()); });
}

void Session::Impl::forget_values() {
  for (TensorSlot& slot : tensors) {
    if (slot.is_state) continue;
    slot.input_set = slot.input_in_home = slot.host_fresh = false;
    for (auto& h : slot.homes) h->fresh = false;
    if (slot.staging) slot.staging->fresh = false;
  }
  executed = false;
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
  if (!host_executor().supports(node.op)) {
    return err(StatusCode::kUnsupported, "CPU-fallback step '", node.name, "': op '", node.op,
               "' has no CPU kernel");
  }
  cpu_steps[plan_index] = std::move(step);
  return Status::Ok();
}

Status Session::Impl::wait_host(ContextTrack& t) {
  if (!t.batch->empty()) {
    const auto submitting = std::chrono::steady_clock::now();
    GPUU_RETURN_IF_ERROR(t.batch->flush(&stats->queue_submits));
    stats->host_submit_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - submitting).count();
  }
  if (!t.pending) return Status::Ok();
  auto start = std::chrono::steady_clock::now();
  if (sync_mode == SyncMode::kTimeline) {
    VkSemaphore sem = t.ctx->timeline_semaphore();
    const auto& vk = t.ctx->vkd();
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &sem;
    wait.pValues = &t.last_signal;
    bool done = false;
    // A wait likely longer than the polling (as the last two were): sleep
    // in the driver until shortly before its end, then poll, so that the
    // wake-up's latency falls inside the execute, not after it. On the H100
    // this took the f32 models' wall-over-GPU from 64-110 us to 42-76; what
    // is left (2-55 us, varying between runs) is not the wake-up.
    const double likely_us = std::min(t.wait_us[0], t.wait_us[1]);
    if (options.wait_spin_us > 0 && likely_us > options.wait_spin_us) {
      const double sleep_us = likely_us - std::min(options.wait_spin_us, kWakeUpMarginUs);
      const VkResult slept = vk.vkWaitSemaphores(t.ctx->device(), &wait, static_cast<uint64_t>(sleep_us * 1000));
      if (slept != VK_TIMEOUT) GPUU_VK_RETURN_IF_ERROR(slept, "vkWaitSemaphores");
      done = slept == VK_SUCCESS;
    }
    // Poll a little before sleeping: a blocking wait's wake-up costs tens of
    // microseconds, as much as a small model's whole GPU time.
    const auto polling = std::chrono::steady_clock::now();
    uint64_t value = 0;
    while (!done && std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - polling).count() <
                        options.wait_spin_us) {
      GPUU_VK_RETURN_IF_ERROR(vk.vkGetSemaphoreCounterValue(t.ctx->device(), sem, &value),
                              "vkGetSemaphoreCounterValue");
      done = value >= t.last_signal;
    }
    if (!done) {
      GPUU_VK_RETURN_IF_ERROR(vk.vkWaitSemaphores(t.ctx->device(), &wait, UINT64_MAX), "vkWaitSemaphores");
    }
    t.wait_us[0] = t.wait_us[1];
    t.wait_us[1] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  } else {
    GPUU_VK_RETURN_IF_ERROR(t.ctx->queue_wait_idle(), "vkQueueWaitIdle");
  }
  t.pending = false;
  ++stats->host_waits;
  stats->host_wait_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

Status Session::Impl::wait_all() {
  for (auto& t : contexts) GPUU_RETURN_IF_ERROR(wait_host(*t));
  return Status::Ok();
}

Status Session::Impl::submit_chained(ContextTrack& t,
                                     const std::function<Status(const backends::ExecuteArgs&)>& submit) {
  backends::ExecuteArgs args;
  args.sync_mode = sync_mode;
  args.signaled_value = &t.last_signal;
  // queue_wait_idle: the conservative mode submits and waits for each delegate.
  if (sync_mode != SyncMode::kQueueWaitIdle) {
    if (!t.host_barrier) GPUU_RETURN_IF_ERROR(record_host_barrier(t));
    args.batch = t.batch.get();
  }
  GPUU_RETURN_IF_ERROR(submit(args));
  if (!args.batch) ++stats->queue_submits;
  t.pending = true;
  if (sync_mode == SyncMode::kQueueWaitIdle) GPUU_RETURN_IF_ERROR(wait_host(t));
  return Status::Ok();
}

Status Session::Impl::record_host_barrier(ContextTrack& t) {
  const auto& vk = t.ctx->vkd();
  if (!t.pool) GPUU_VK_RETURN_IF_ERROR(t.ctx->create_command_pool(&t.pool), "vkCreateCommandPool");
  VkCommandBuffer cb = VK_NULL_HANDLE;
  GPUU_VK_RETURN_IF_ERROR(t.ctx->allocate_command_buffer(t.pool, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  // It ends every flush: a second flush in one execute (a device plugin's
  // own submit cuts the batch) may submit it again while the first is pending.
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                          nullptr, 0, nullptr);
  GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  t.host_barrier = cb;
  t.batch->set_tail(cb);
  return Status::Ok();
}

Status Session::Impl::record_copy(ContextTrack& t, const BufferRange& from, const BufferRange& to,
                                  RecordedCopy* copy) {
  const auto& vk = t.ctx->vkd();
  if (!t.pool) GPUU_VK_RETURN_IF_ERROR(t.ctx->create_command_pool(&t.pool), "vkCreateCommandPool");
  if (!copy->command_buffer) {
    GPUU_VK_RETURN_IF_ERROR(t.ctx->allocate_command_buffer(t.pool, &copy->command_buffer), "vkAllocateCommandBuffers");
  } else {
    GPUU_VK_RETURN_IF_ERROR(vk.vkResetCommandBuffer(copy->command_buffer, 0), "vkResetCommandBuffer");
  }
  copy->from = from;
  copy->to = to;
  VkCommandBuffer cb = copy->command_buffer;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(cb, stages, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0, nullptr);
  VkBufferCopy region{from.offset, to.offset, std::min(from.size, to.size)};
  vk.vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
  VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0,
                          nullptr, 0, nullptr);
  GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  return Status::Ok();
}

Status Session::Impl::submit_copy(ContextTrack& t, RecordedCopy& copy) {
  return submit_chained(
      t, [&](const backends::ExecuteArgs& args) { return gpu::submit_recorded(*t.ctx, copy.command_buffer, args); });
}

void Session::Impl::free_copy(const SharedGpuContextPtr& ctx, RecordedCopy& copy) {
  if (copy.command_buffer) {
    ctx->vkd().vkFreeCommandBuffers(ctx->device(), track(ctx).pool, 1, &copy.command_buffer);
  }
  copy.command_buffer = VK_NULL_HANDLE;
}

static bool same_range(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.size == b.size;
}

// Adds to `t`'s batch the copy of the tensor's fresh home into its staging
// buffer (made and recorded on first use, re-recorded when the home moved).
Status Session::Impl::stage(int32_t tensor, Home* home) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  ContextTrack& t = track(home->ctx);
  if (!slot.staging) {
    slot.staging = std::make_unique<Staging>();
    std::string what = "host copy of '" + slot.info.name + "'";
    GPUU_ASSIGN_OR_RETURN(slot.staging->buffer,
                          DeviceBuffer::create(*home->ctx, slot.bytes, MemoryKind::kReadback, what.c_str()));
  }
  Staging& st = *slot.staging;
  if (!st.copy.command_buffer || !same_range(st.copy.from, home->range())) {
    GPUU_RETURN_IF_ERROR(record_copy(t, home->range(), st.buffer.whole_range(), &st.copy));
  }
  GPUU_RETURN_IF_ERROR(submit_copy(t, st.copy));
  st.fresh = true;
  return Status::Ok();
}

Result<const void*> Session::Impl::host_view(int32_t tensor) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (slot.host_fresh) return static_cast<const void*>(slot.host.bytes.data());
  Home* home = slot.fresh_home();
  if (!home) return err(StatusCode::kInternal, "tensor '", slot.info.name, "' is read before anything wrote it");
  for (auto& h : slot.homes) {
    if (h->fresh && h->host_readable()) home = h.get();
  }
  if (!home->host_readable() && !(slot.staging && slot.staging->fresh)) GPUU_RETURN_IF_ERROR(stage(tensor, home));
  GPUU_RETURN_IF_ERROR(wait_host(track(home->ctx)));
  if (home->host_readable()) return static_cast<const void*>(home->host_writable());
  return static_cast<const void*>(slot.staging->buffer.mapped());
}

Status Session::Impl::make_fresh_on(int32_t tensor, Home* home) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (home->fresh) return Status::Ok();
  void* dst = home->host_writable();
  if (!dst) {
    return err(StatusCode::kUnsupported, "tensor '", slot.info.name,
               "' lives in an application buffer the host cannot write");
  }
  bool from_device = !slot.host_fresh;
  GPUU_ASSIGN_OR_RETURN(const void* src, host_view(tensor));
  std::memcpy(dst, src, slot.bytes);
  home->fresh = true;
  if (from_device) ++stats->host_copies;
  return Status::Ok();
}

Status Session::Impl::make_host_fresh(int32_t tensor) {
  TensorSlot& slot = tensors[static_cast<size_t>(tensor)];
  if (slot.host_fresh) return Status::Ok();
  GPUU_ASSIGN_OR_RETURN(const void* src, host_view(tensor));
  std::memcpy(slot.host_bytes(), src, slot.bytes);
  slot.host_fresh = true;
  return Status::Ok();
}

Status Session::Impl::rebind_delegates(int32_t tensor, Home* home) {
  for (DelegateSlot& d : delegates) {
    if (!d.handle || d.handle->context() != home->ctx) continue;
    bool touches = std::count(d.inputs.begin(), d.inputs.end(), tensor) ||
                   std::count(d.outputs.begin(), d.outputs.end(), tensor);
    if (!touches) continue;
    std::vector<BufferRange> ins, outs;
    for (int32_t t : d.inputs) ins.push_back(tensors[static_cast<size_t>(t)].home_on(home->ctx.get())->range());
    for (int32_t t : d.outputs) outs.push_back(tensors[static_cast<size_t>(t)].home_on(home->ctx.get())->range());
    GPUU_RETURN_IF_ERROR(d.handle->rebind_io(ins, outs));
  }
  return Status::Ok();
}

// Zero-copy where it can be had: the tensor has one home, every delegate
// touching it there re-points its slots, and (for an output) a delegate, not
// the host, writes it. Otherwise a GPU copy to or from the home runs in each
// execute's submit.
Status Session::Impl::bind(bool output, size_t index, const BufferRange& range, VkBufferUsageFlags usage) {
  auto& bindings = output ? output_bindings : input_bindings;
  int32_t t = (output ? program->outputs() : program->inputs())[index];
  TensorSlot& slot = tensors[static_cast<size_t>(t)];
  // How every message names the binding: "output 0 ('y')".
  const std::string what = std::string(output ? "output " : "input ") + std::to_string(index) + " ('" +
                           slot.info.name + "')";
  const VkBufferUsageFlags copy_usage = output ? VK_BUFFER_USAGE_TRANSFER_DST_BIT : VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  const bool storage = (usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0;
  if (!storage && !(usage & copy_usage)) {
    return err(StatusCode::kInvalidArgument, what, ": the buffer's usage (0x", std::hex, usage, std::dec,
               ") has neither STORAGE_BUFFER (used in place) nor ", output ? "TRANSFER_DST" : "TRANSFER_SRC",
               " (copied)");
  }
  for (auto* other : {&input_bindings, &output_bindings}) {
    for (auto& [i, b] : *other) {
      if (other == &bindings && i == index) continue;
      if (gpu::overlaps(b.range, range) && (output || other == &output_bindings)) {
        return err(StatusCode::kInvalidArgument, what, ": the bound range overlaps the one bound to ",
                   other == &output_bindings ? "output " : "input ", i,
                   "; an output must not share memory with another bound tensor");
      }
    }
  }
  unbind(output, index);
  SharedGpuContextPtr ctx = primary_context();
  if (!ctx) {
    return err(StatusCode::kFailedPrecondition, what,
               ": the program has no GPU delegate, so there is no device to bind a buffer on");
  }
  bool written_by_delegate = false;
  for (const DelegateSlot& d : delegates) {
    if (d.handle && d.handle->context() == ctx && std::count(d.outputs.begin(), d.outputs.end(), t)) {
      written_by_delegate = true;
    }
  }
  AppBinding b;
  b.range = range;
  // A state's update written in place stays in the state's memory: copied out.
  if (storage && slot.homes.size() == 1 && slot.homes.front()->ctx == ctx && !slot.homes.front()->shares &&
      (output ? written_by_delegate : !slot.cpu_reads)) {
    Home* home = slot.homes.front().get();
    home->app = range;
    Status s = rebind_delegates(t, home);
    if (s.ok()) {
      b.zero_copy = true;
      b.home = home;
      bindings[index] = b;
      log(LogLevel::kDebug, "runtime", what, " bound zero-copy");
      return Status::Ok();
    }
    home->app = BufferRange{};
    GPUU_RETURN_IF_ERROR(rebind_delegates(t, home));  // back to the home's own buffer
    log(LogLevel::kDebug, "runtime", what, " bound through a copy: ", s.message());
  }
  if (!output && slot.homes.empty()) {
    return err(StatusCode::kFailedPrecondition, what, " is read only by CPU-fallback steps: set it from host memory");
  }
  if (!(usage & copy_usage)) {
    return err(StatusCode::kInvalidArgument, what, " cannot be used in place here, and copying it needs ",
               output ? "TRANSFER_DST" : "TRANSFER_SRC", " usage, which the buffer lacks");
  }
  Home* home = nullptr;
  if (output) {
    GPUU_ASSIGN_OR_RETURN(home, home_for(t, ctx));
  } else {
    home = slot.homes.front().get();
  }
  b.home = home;
  ContextTrack& track_of_home = track(home->ctx);
  BufferRange own = home->range();
  own.size = range.size;
  GPUU_RETURN_IF_ERROR(
      output ? record_copy(track_of_home, own, range, &b.copy) : record_copy(track_of_home, range, own, &b.copy));
  bindings[index] = b;
  return Status::Ok();
}

void Session::Impl::unbind(bool output, size_t index) {
  auto& bindings = output ? output_bindings : input_bindings;
  auto it = bindings.find(index);
  if (it == bindings.end()) return;
  AppBinding& b = it->second;
  if (b.zero_copy) {
    b.home->app = BufferRange{};
    int32_t t = (output ? program->outputs() : program->inputs())[index];
    // Pointing back at buffers the delegates were built on cannot fail.
    Status s = rebind_delegates(t, b.home);
    if (!s.ok()) log(LogLevel::kError, "runtime", "unbinding: ", s.message());
  } else if (b.home) {
    free_copy(b.home->ctx, b.copy);
  }
  bindings.erase(it);
}

Status Session::Impl::execute(ExecuteStats& run_stats) {
  stats = &run_stats;
  const std::vector<int32_t>& graph_inputs = program->inputs();
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    TensorSlot& slot = tensors[static_cast<size_t>(graph_inputs[i])];
    if (!slot.input_set && !input_bindings.count(i)) {
      return err(StatusCode::kFailedPrecondition, "input ", i, " ('", slot.info.name,
                 "') was never set: call set_input or bind a buffer before execute");
    }
  }
  for (TensorSlot& slot : tensors) {
    if (slot.is_state) continue;  // where a state's value is lasts from the last execute
    slot.host_fresh = slot.is_input && slot.input_set && !slot.input_in_home;
    for (auto& h : slot.homes) h->fresh = false;
    if (slot.is_input && slot.input_set && slot.input_in_home) slot.homes.front()->fresh = true;
    if (slot.staging) slot.staging->fresh = false;
  }
  for (auto& t : contexts) t->pending = false;
  // Bound application buffers hold the inputs: in place, or copied to their
  // homes on the GPU, first in the submit.
  for (auto& [i, b] : input_bindings) {
    TensorSlot& slot = tensors[static_cast<size_t>(graph_inputs[i])];
    if (!b.zero_copy) GPUU_RETURN_IF_ERROR(submit_copy(track(b.home->ctx), b.copy));
    slot.host_fresh = false;
    for (auto& h : slot.homes) h->fresh = h.get() == b.home;
    for (auto& h : slot.homes) {
      if (h.get() != b.home) GPUU_RETURN_IF_ERROR(make_fresh_on(graph_inputs[i], h.get()));
    }
  }

  const auto& plan = program->plan();
  for (size_t p = 0; p < plan.size(); ++p) {
    if (plan[p].kind == program::PlanStep::Kind::kDelegate) {
      DelegateSlot& d = delegates[static_cast<size_t>(plan[p].delegate)];
      const SharedGpuContextPtr& ctx = d.handle->context();
      for (int32_t t : d.inputs) {
        GPUU_RETURN_IF_ERROR(make_fresh_on(t, tensors[static_cast<size_t>(t)].home_on(ctx.get())));
      }
      GPUU_RETURN_IF_ERROR(submit_chained(track(ctx), [&](const backends::ExecuteArgs& args) {
        return d.backend->execute(*d.handle, args);
      }));
      ++stats->delegate_submits;
      for (int32_t t : d.outputs) {
        TensorSlot& slot = tensors[static_cast<size_t>(t)];
        for (auto& h : slot.homes) h->fresh = h->ctx == ctx;
        slot.host_fresh = false;
        if (slot.staging) slot.staging->fresh = false;
      }
    } else {
      CpuStep& step = *cpu_steps[p];
      std::vector<const backends::HostTensor*> ins;
      std::vector<backends::HostTensor> constants;
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
          GPUU_ASSIGN_OR_RETURN(backends::HostTensor c, backends::HostTensor::from_blob(v.dtype, v.shape, data));
          constants.push_back(std::move(c));
          ins.push_back(&constants.back());
          continue;
        }
        GPUU_RETURN_IF_ERROR(make_host_fresh(t));
        ins.push_back(&tensors[static_cast<size_t>(t)].host);
      }
      std::vector<backends::HostTensor> outs;
      const backends::HostExecutor& host = host_executor();
      const auto started = std::chrono::steady_clock::now();
      Status ran = host.run_node(step.graph, node, ins, &outs);
      step.host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
      if (!ran.ok()) return err(ran.code(), "CPU-fallback step '", node.name, "': ", ran.message());
      log(LogLevel::kInfo, host.log_name(), "execute: node=", node.name, " op=", node.op);
      for (size_t k = 0; k < step.outputs.size(); ++k) {
        TensorSlot& slot = tensors[static_cast<size_t>(step.outputs[k])];
        slot.host = std::move(outs[k]);
        slot.host_fresh = true;
        for (auto& h : slot.homes) h->fresh = false;
        if (slot.staging) slot.staging->fresh = false;
      }
    }
  }

  GPUU_RETURN_IF_ERROR(carry_states());

  // Outputs bound to application buffers: written in place, or copied there
  // on the GPU, last in the submit. Outputs the host will likely read are
  // staged for it in the same submit.
  const std::vector<int32_t>& graph_outputs = program->outputs();
  for (auto& [i, b] : output_bindings) {
    if (b.zero_copy) continue;
    GPUU_RETURN_IF_ERROR(make_fresh_on(graph_outputs[i], b.home));
    GPUU_RETURN_IF_ERROR(submit_copy(track(b.home->ctx), b.copy));
  }
  for (size_t i = 0; i < graph_outputs.size(); ++i) {
    TensorSlot& slot = tensors[static_cast<size_t>(graph_outputs[i])];
    Home* home = slot.host_fresh ? nullptr : slot.fresh_home();
    bool likely_read = executed ? output_read[i] : !output_bindings.count(i);
    output_read[i] = false;
    if (likely_read && home && !home->host_readable() && !(slot.staging && slot.staging->fresh)) {
      GPUU_RETURN_IF_ERROR(stage(graph_outputs[i], home));
    }
  }
  // Leave nothing running: the next set_input writes memory the GPU reads.
  GPUU_RETURN_IF_ERROR(wait_all());
  for (const DelegateSlot& d : delegates) {
    double us = d.handle ? d.handle->last_gpu_time_us() : -1;
    if (us > 0) stats->gpu_time_us += us;
  }
  if (options.profile_steps) profile = collect_profile();
  executed = true;
  return Status::Ok();
}

std::vector<std::optional<backends::InPlaceUpdate>> Session::Impl::in_place_candidates() const {
  const auto& plan = program->plan();
  const auto& states_of = program->states();
  std::vector<std::optional<backends::InPlaceUpdate>> out(states_of.size());
  for (size_t s = 0; s < states_of.size(); ++s) {
    const program::StateInfo& st = states_of[s];
    size_t updates_of_it = 0;
    for (const program::StateInfo& other : states_of) updates_of_it += other.update == st.update ? 1 : 0;
    if (updates_of_it != 1) continue;  // one tensor's memory cannot be two states'
    // The step that computes the update (a delegate), and the last that reads the state.
    int64_t writer = -1, last_read = -1;
    for (size_t p = 0; p < plan.size(); ++p) {
      const bool delegate = plan[p].kind == program::PlanStep::Kind::kDelegate;
      const program::DelegateInfo* d =
          delegate ? &program->delegates()[static_cast<size_t>(plan[p].delegate)] : nullptr;
      const std::vector<int32_t>& reads = d ? d->inputs : plan[p].cpu_node.inputs;
      const std::vector<int32_t>& writes = d ? d->outputs : plan[p].cpu_node.outputs;
      if (std::count(reads.begin(), reads.end(), st.tensor)) last_read = static_cast<int64_t>(p);
      if (std::count(writes.begin(), writes.end(), st.update)) writer = delegate ? static_cast<int64_t>(p) : -1;
    }
    if (writer < 0 || last_read > writer) continue;
    const auto& tensor_info = program->tensors();
    out[s] = backends::InPlaceUpdate{tensor_info[static_cast<size_t>(st.tensor)].name,
                                     tensor_info[static_cast<size_t>(st.update)].name};
  }
  return out;
}

int32_t Session::Impl::in_place_state(int32_t tensor, int32_t delegate,
                                      const std::vector<backends::InPlaceUpdate>& taken) const {
  const program::DelegateInfo& d = program->delegates()[static_cast<size_t>(delegate)];
  for (size_t s = 0; s < states.size(); ++s) {
    if (states[s].update != tensor || !in_place[s]) continue;
    // A delegate that does not read the state writes the update anywhere it likes: no need to ask.
    bool reads = std::count(d.inputs.begin(), d.inputs.end(), states[s].tensor) > 0;
    if (!reads || std::count(taken.begin(), taken.end(), *in_place[s])) return static_cast<int32_t>(s);
  }
  return -1;
}

Status Session::Impl::carry_states() {
  for (StateSlot& st : states) {
    TensorSlot& state = tensors[static_cast<size_t>(st.tensor)];
    TensorSlot& update = tensors[static_cast<size_t>(st.update)];
    if (state.staging) state.staging->fresh = false;
    Home* from = update.host_fresh ? nullptr : update.fresh_home();
    Home* to = from ? state.home_on(from->ctx.get()) : nullptr;
    if (st.in_place && from && from->shares == to) {
      for (auto& h : state.homes) h->fresh = h.get() == to;
      state.host_fresh = false;
      continue;
    }
    if (to) {  // ping-pong on the device: the update's memory into the state's
      ContextTrack& t = track(to->ctx);
      if (!st.carry.command_buffer || !same_range(st.carry.from, from->range()) ||
          !same_range(st.carry.to, to->range())) {
        GPUU_RETURN_IF_ERROR(record_copy(t, from->range(), to->range(), &st.carry));
        st.ctx = to->ctx;
      }
      GPUU_RETURN_IF_ERROR(submit_copy(t, st.carry));
      for (auto& h : state.homes) h->fresh = h.get() == to;
      state.host_fresh = false;
      continue;
    }
    // The update is on the host (a CPU step's, a graph input) or on a device
    // that does not hold the state: through the host.
    GPUU_ASSIGN_OR_RETURN(const void* src, host_view(st.update));
    std::memcpy(state.host_bytes(), src, state.bytes);
    state.host_fresh = true;
    for (auto& h : state.homes) h->fresh = false;
  }
  return Status::Ok();
}

void Session::Impl::write_state(size_t index, const void* data, size_t size) {
  TensorSlot& slot = tensors[static_cast<size_t>(states[index].tensor)];
  // Straight into the memory the GPU reads where there is one such home
  // (nothing runs between executes), else into the host copy. Not where the
  // update is written in place: that memory also holds the last execute's
  // update, which get_output still reads where it is an output.
  void* home = slot.homes.size() == 1 && !states[index].in_place ? slot.homes.front()->host_writable() : nullptr;
  if (size) std::memcpy(home ? home : slot.host_bytes(), data, size);
  slot.host_fresh = home == nullptr;
  for (auto& h : slot.homes) h->fresh = home != nullptr;
  if (slot.staging) slot.staging->fresh = false;
}

Status Session::Impl::carry_states_on_device(Impl& next, std::vector<char>* carried) {
  carried->assign(states.size(), 0);
  struct Carry {
    SharedGpuContextPtr ctx;
    RecordedCopy copy;
    size_t state = 0;
    Home* to = nullptr;
  };
  std::vector<Carry> carries;
  Status done = Status::Ok();
  for (size_t i = 0; i < states.size() && done.ok(); ++i) {
    TensorSlot& from_slot = tensors[static_cast<size_t>(states[i].tensor)];
    Home* from = from_slot.host_fresh ? nullptr : from_slot.fresh_home();
    if (!from) continue;
    TensorSlot& to_slot = next.tensors[static_cast<size_t>(next.states[i].tensor)];
    Home* to = to_slot.home_on(from->ctx.get());
    if (!to || to->range().size < from_slot.bytes || to_slot.bytes != from_slot.bytes) continue;
    carries.push_back(Carry{from->ctx, RecordedCopy{}, i, to});
    if (same_range(from->range(), to->range())) continue;  // one memory (SessionMemory): nothing to copy
    ContextTrack& t = track(from->ctx);
    done = record_copy(t, from->range(), to->range(), &carries.back().copy);
    if (done.ok()) done = submit_copy(t, carries.back().copy);
  }
  // One wait per context: a second wait on one finds nothing pending.
  for (Carry& c : carries) {
    if (done.ok() && c.copy.command_buffer) done = wait_host(track(c.ctx));
  }
  for (Carry& c : carries) free_copy(c.ctx, c.copy);
  GPUU_RETURN_IF_ERROR(done);
  for (const Carry& c : carries) {
    TensorSlot& to_slot = next.tensors[static_cast<size_t>(next.states[c.state].tensor)];
    to_slot.host_fresh = false;
    for (auto& h : to_slot.homes) h->fresh = h.get() == c.to;
    if (to_slot.staging) to_slot.staging->fresh = false;
    (*carried)[c.state] = 1;
  }
  return Status::Ok();
}

Status Session::Impl::prepare_profiles() {
  for (const DelegateSlot& d : delegates) {
    if (!d.handle) continue;
    const SharedGpuContextPtr& ctx = d.handle->context();
    if (std::find(profile_contexts.begin(), profile_contexts.end(), ctx) != profile_contexts.end()) continue;
    Result<DevicePeaks> peaks = kernels::device_peaks(ctx);
    if (!peaks.ok()) {
      return err(peaks.status().code(), "profiling: measuring the peaks of device '", ctx->device_name(),
                 "': ", peaks.status().message());
    }
    profile_contexts.push_back(ctx);
    profile_devices.push_back(ProfileDevice{ctx->device_name(), std::move(peaks).value()});
  }
  return Status::Ok();
}

ExecuteProfile Session::Impl::collect_profile() const {
  ExecuteProfile p;
  p.devices = profile_devices;
  const auto& plan = program->plan();
  for (size_t i = 0; i < plan.size(); ++i) {
    PlanStepProfile step;
    if (plan[i].kind != program::PlanStep::Kind::kDelegate) {
      step.cpu = true;
      const graph::Node& node = cpu_steps[i]->graph.node(0);
      step.cpu_step = CpuStepProfile{node.name, node.op, cpu_steps[i]->host_us};
      p.plan.push_back(std::move(step));
      continue;
    }
    const DelegateSlot& d = delegates[static_cast<size_t>(plan[i].delegate)];
    DelegateProfile& dp = step.delegate;
    dp.index = d.index;
    dp.backend = d.backend->id();
    dp.device = static_cast<size_t>(std::find(profile_contexts.begin(), profile_contexts.end(), d.handle->context()) -
                                    profile_contexts.begin());
    dp.dispatches = d.handle->step_times();
    if (dp.dispatches.empty()) {
      dp.gpu_us = d.handle->last_gpu_time_us();
    } else {
      dp.gpu_us = 0;
      for (const gpu::TimedStep& t : dp.dispatches) dp.gpu_us += t.us;
    }
    p.plan.push_back(std::move(step));
  }
  return p;
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() { save_pipeline_caches(); }

Result<std::unique_ptr<Session::Impl>> Session::make_impl(std::shared_ptr<const program::Program> program,
                                                         const SessionOptions& options,
                                                         std::shared_ptr<SessionMemory> memory) {
  auto impl = std::make_unique<Impl>();
  impl->program = program;
  impl->options = options;
  impl->memory = std::move(memory);

  // The one sync policy of every execute: the program's (all its delegates
  // agree), unless the application overrides it.
  impl->sync_mode = options.overrides.sync_mode.value_or(program->sync_mode());

  impl->tensors.resize(program->tensors().size());
  for (size_t t = 0; t < program->tensors().size(); ++t) {
    TensorSlot& slot = impl->tensors[t];
    slot.info = program->tensors()[t];
    slot.bytes = static_cast<size_t>(graph::shape_numel(slot.info.shape)) * graph::dtype_size(slot.info.dtype);
    slot.host.dtype = slot.info.dtype;
    slot.host.shape = slot.info.shape;
  }
  for (int32_t t : program->inputs()) impl->tensors[static_cast<size_t>(t)].is_input = true;
  for (size_t s = 0; s < program->states().size(); ++s) {
    const program::StateInfo& info = program->states()[s];
    StateSlot st;
    st.tensor = info.tensor;
    st.update = info.update;
    st.initial = program->state_initial_data(static_cast<int32_t>(s));
    TensorSlot& slot = impl->tensors[static_cast<size_t>(info.tensor)];
    slot.is_state = true;
    std::memcpy(slot.host_bytes(), st.initial.data(), slot.bytes);  // the loader checked the size
    slot.host_fresh = true;
    impl->states.push_back(std::move(st));
  }
  impl->in_place = impl->in_place_candidates();
  for (const program::PlanStep& step : program->plan()) {
    if (step.kind != program::PlanStep::Kind::kCpuNode) continue;
    for (int32_t t : step.cpu_node.inputs) {
      if (t >= 0) impl->tensors[static_cast<size_t>(t)].cpu_reads = true;
    }
  }
  impl->output_read.assign(program->outputs().size(), false);

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
  // A delegate made before a later one grew the workspace they share is made
  // again on the grown one, so that the smaller buffer goes.
  for (DelegateSlot& d : impl->delegates) {
    if (!d.handle || impl->on_current_workspace(d)) continue;
    d.handle.reset();
    d.inputs.clear();
    d.outputs.clear();
    d.workspaces.clear();
    log(LogLevel::kDebug, "runtime", "session: delegate ", d.index, " made again on the grown workspace");
    GPUU_RETURN_IF_ERROR(impl->init_delegate(d.index));
  }
  for (const auto& t : impl->contexts) {
    if (impl->sync_mode == SyncMode::kTimeline && !t->ctx->timeline_semaphore()) {
      return err(StatusCode::kUnsupported, "sync mode timeline needs timeline semaphores, which the context on '",
                 t->ctx->device_name(), "' lacks (choose queue_wait_idle)");
    }
  }

  if (impl->options.profile_steps) GPUU_RETURN_IF_ERROR(impl->prepare_profiles());

  if (impl->options.wait_spin_us < 0) {
    SharedGpuContextPtr ctx = impl->contexts.empty() ? nullptr : impl->contexts.front()->ctx;
    bool cpu_device = ctx && ctx->is_cpu_device();
    impl->options.wait_spin_us = cpu_device ? 0 : 1000;
  }
  log(LogLevel::kDebug, "runtime", "session: ", program->delegates().size(), " delegates, ", impl->contexts.size(),
      " context(s), sync ", to_string(impl->sync_mode));
  return impl;
}

// A program with dims: the program itself (specialized again at each new set
// of sizes) and the sessions of sizes used before, least recently used first.
struct Session::Variants {
  std::shared_ptr<const program::Program> program;
  SessionOptions options;
  std::vector<std::pair<std::vector<int64_t>, std::unique_ptr<Impl>>> parked;
};

void Session::save_pipeline_caches() const {
  if (!impl_ || impl_->options.pipeline_cache_path.empty()) return;
  std::vector<const SharedGpuContext*> saved;
  auto save = [&](const Impl& impl) {
    for (const auto& track : impl.contexts) {
      if (std::count(saved.begin(), saved.end(), track->ctx.get())) continue;
      saved.push_back(track->ctx.get());
      track->ctx->pipeline_cache().save(impl_->options.pipeline_cache_path);
    }
  };
  save(*impl_);
  if (variants_) {
    for (const auto& parked : variants_->parked) save(*parked.second);
  }
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const program::Program> program,
                                                 const SessionOptions& options) {
  if (!program) return err(StatusCode::kInvalidArgument, "session: no program");
  GPUU_RETURN_IF_ERROR(validate_overrides(options.overrides));
  GPUU_RETURN_IF_ERROR(
      backends::options_status(backends::option_problems(backend_registry().backends(), options.backend_options)));
  if (options.max_shape_variants < 1) {
    return err(StatusCode::kInvalidArgument, "session: max_shape_variants must be at least 1");
  }
  const bool private_contexts = options.overrides.context_mode == ContextMode::kDisabled;
  auto memory = std::make_shared<SessionMemory>(*program, !private_contexts);
  // A program with dims: its memory planned for their upper bounds, by
  // making it there first (kept as one of the sizes), so that every other
  // size runs in that memory. Where it cannot be made there, memory grows
  // with the sizes used instead (SessionMemory).
  std::vector<int64_t> examples, upper;
  for (const graph::SymbolicDim& d : program->dims()) {
    examples.push_back(d.example);
    upper.push_back(d.max);
  }
  Result<std::shared_ptr<const program::Program>> specialized = program;
  if (upper != examples) specialized = program::specialize(program, upper, builtin_program_preprocessors());
  // The budget, before anything is allocated: the plan where the session's memory is planned.
  const uint64_t limit = options.device_memory_limit;
  std::optional<MemoryPlan> plan;
  if (limit) {
    GPUU_ASSIGN_OR_RETURN(plan, plan_session_memory(program, specialized.ok() ? specialized.value() : program));
    GPUU_RETURN_IF_ERROR(check_budget("needs", plan->new_weights, plan->tensors, plan->states, plan->workspaces,
                                      plan->backend_private, limit, plan->delegates));
  }
  std::unique_ptr<Impl> at_upper;
  if (upper != examples) {
    Result<std::unique_ptr<Impl>> made =
        specialized.ok() ? make_impl(std::move(specialized).value(), options, memory) : specialized.status();
    if (made.ok()) {
      at_upper = std::move(made).value();
    } else {
      log(LogLevel::kWarn, "runtime", "session: the program at its dims' upper bounds failed (",
          made.status().message(), "): memory follows the sizes used");
    }
  }
  // A program with dims starts at their examples, which its own blobs hold.
  GPUU_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, make_impl(program, options, memory));
  std::unique_ptr<Session> session(new Session(std::move(impl)));
  if (!program->dims().empty()) {
    session->variants_ = std::make_unique<Variants>();
    session->variants_->program = program;
    session->variants_->options = options;
    session->dims_ = examples;
    if (at_upper && options.max_shape_variants > 1) session->variants_->parked.emplace_back(upper, std::move(at_upper));
  }
  session->describe();
  if (limit) {
    // What backends decide only as they build (unit scratch, the native VGF
    // path's memory) may take more than the plan: the session goes again.
    const SessionMemoryBytes made = session->memory_without(plan->held_weights);
    GPUU_RETURN_IF_ERROR(check_budget("holds, once its delegates were made,", made.weights, made.tensors,
                                      made.states, made.workspaces, made.backend_private, limit, {}));
  }
  // Now, not only at destroy: a process that never destroys its session (or
  // dies) still leaves the pipelines of its start for the next one.
  session->save_pipeline_caches();
  return session;
}

void Session::describe() {
  sync_mode_ = impl_->sync_mode;
  input_descs_.clear();
  output_descs_.clear();
  state_descs_.clear();
  for (int pass = 0; pass < 2; ++pass) {
    for (int32_t t : pass == 0 ? impl_->program->inputs() : impl_->program->outputs()) {
      const TensorSlot& slot = impl_->tensors[static_cast<size_t>(t)];
      (pass == 0 ? input_descs_ : output_descs_)
          .push_back(TensorDesc{slot.info.name, slot.info.dtype, slot.info.shape, slot.bytes});
    }
  }
  for (const StateSlot& st : impl_->states) {
    const TensorSlot& slot = impl_->tensors[static_cast<size_t>(st.tensor)];
    state_descs_.push_back(TensorDesc{slot.info.name, slot.info.dtype, slot.info.shape, slot.bytes});
  }
}

Status Session::set_input_shape(size_t index, const graph::Shape& shape) {
  GPUU_RETURN_IF_ERROR(index_in_range("input", index, input_descs_.size()));
  std::vector<std::optional<graph::Shape>> shapes(input_descs_.size());
  shapes[index] = shape;
  return set_input_shapes(shapes);
}

Status Session::set_input_shapes(const std::vector<std::optional<graph::Shape>>& shapes) {
  if (shapes.size() != input_descs_.size()) {
    return err(StatusCode::kInvalidArgument, shapes.size(), " input shapes for ", input_descs_.size(), " inputs");
  }
  const program::Program& program = variants_ ? *variants_->program : *impl_->program;
  const std::vector<graph::SymbolicDim>& declared = program.dims();
  std::vector<int64_t> dims = dims_;
  std::vector<std::string> problems;
  std::vector<std::string> set_by(dims.size());  // "input 'x' axis 0": what set each dim in this call
  auto axis_name = [&](size_t i, size_t a) { return str_cat("input '", input_descs_[i].name, "' axis ", a); };
  // Fixed axes and dims on their own first, then the axes that follow several.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (!shapes[i]) continue;
      const program::TensorInfo& t = program.tensors()[static_cast<size_t>(program.inputs()[i])];
      const graph::Shape& shape = *shapes[i];
      if (shape.size() != t.shape.size()) {
        if (pass == 0) {
          problems.push_back(str_cat("input '", t.name, "' has rank ", shape.size(), ", the program's is ",
                                     t.shape.size()));
        }
        continue;
      }
      for (size_t a = 0; a < shape.size(); ++a) {
        const graph::DimExpr* e = nullptr;
        for (const graph::AxisExpr& ax : t.dim_exprs) {
          if (ax.axis == a) e = &ax.size;
        }
        const int32_t single = e ? e->single_dim() : -1;
        if (pass == 0 && !e && shape[a] != t.shape[a]) {
          problems.push_back(str_cat(axis_name(i, a), " is ", shape[a], " but the program fixes it at ", t.shape[a]));
        } else if (pass == 0 && single >= 0) {
          const size_t d = static_cast<size_t>(single);
          if (!set_by[d].empty() && dims[d] != shape[a]) {
            problems.push_back(str_cat("dim '", declared[d].name, "' is ", dims[d], " by ", set_by[d], " but ",
                                       shape[a], " by ", axis_name(i, a)));
          } else if (set_by[d].empty()) {
            dims[d] = shape[a];
            set_by[d] = axis_name(i, a);
          }
        } else if (pass == 1 && e && single < 0 && e->eval(dims) != shape[a]) {
          problems.push_back(str_cat(axis_name(i, a), " is ", shape[a], " but follows ", e->to_string(declared),
                                     ", which is ", e->eval(dims), " at these sizes"));
        }
      }
    }
    if (pass == 0) {
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < declared[d].min || dims[d] > declared[d].max) {
          problems.push_back(str_cat("dim '", declared[d].name, "' = ", dims[d], " (", set_by[d], ") is ",
                                     dims[d] < declared[d].min ? "below" : "above", " its bounds [", declared[d].min,
                                     ", ", declared[d].max, "]"));
        }
      }
    }
  }
  if (!problems.empty()) {
    std::string msg = "input shapes: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    return Status(StatusCode::kInvalidArgument, msg);
  }
  if (dims == dims_) return Status::Ok();
  return switch_to(dims);
}

Status Session::switch_to(const std::vector<int64_t>& dims) {
  std::unique_ptr<Impl> next;
  auto& parked = variants_->parked;
  for (auto it = parked.begin(); it != parked.end(); ++it) {
    if (it->first == dims) {
      next = std::move(it->second);
      parked.erase(it);
      break;
    }
  }
  if (!next) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point started = Clock::now();
    Result<std::shared_ptr<const program::Program>> specialized =
        program::specialize(variants_->program, dims, builtin_program_preprocessors());
    if (!specialized.ok()) return specialized.status();
    const Clock::time_point specialized_at = Clock::now();
    // Room first: the least recently used sizes give their pipelines and recordings back.
    while (!parked.empty() && parked.size() + 1 >= variants_->options.max_shape_variants) parked.erase(parked.begin());
    GPUU_ASSIGN_OR_RETURN(next, make_impl(std::move(specialized).value(), variants_->options, impl_->memory));
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::string at;
    for (size_t d = 0; d < dims.size(); ++d) {
      at += str_cat(d ? ", " : "", variants_->program->dims()[d].name, "=", dims[d]);
    }
    log(LogLevel::kInfo, "runtime", "session: made the program at ", at, " in ", ms(started, Clock::now()),
        " ms (specialize ", ms(started, specialized_at), ", delegates ", ms(specialized_at, Clock::now()), ")");
  }
  next->forget_values();
  // The states carry over (their shapes do not follow dims): nothing to do
  // where both sizes keep a state in the same memory, else by a GPU copy
  // where both keep it on the same device, else through the host.
  std::vector<char> carried;
  GPUU_RETURN_IF_ERROR(impl_->carry_states_on_device(*next, &carried));
  for (size_t i = 0; i < impl_->states.size(); ++i) {
    if (carried[i]) continue;
    GPUU_ASSIGN_OR_RETURN(const void* value, impl_->host_view(impl_->states[i].tensor));
    next->write_state(i, value, state_descs_[i].bytes);
  }
  parked.emplace_back(dims_, std::move(impl_));
  // Sizes built on memory a larger size replaced would hold it on: made again when next used.
  parked.erase(std::remove_if(parked.begin(), parked.end(), [](const auto& p) { return !p.second->on_current_memory(); }),
               parked.end());
  while (parked.size() >= variants_->options.max_shape_variants) parked.erase(parked.begin());
  impl_ = std::move(next);
  dims_ = dims;
  describe();
  return Status::Ok();
}

size_t Session::shape_variant_count() const { return 1 + (variants_ ? variants_->parked.size() : 0); }

void Session::Impl::add_own_memory(SessionMemoryBytes* b, std::set<std::pair<const void*, size_t>>* seen) const {
  for (const DelegateSlot& d : delegates) {
    if (!d.handle) continue;
    const backends::DelegateMemory m = d.handle->memory();
    for (const Blob& w : m.shared_constants) {
      if (seen->insert({w.data(), w.size()}).second) b->weights += gpu::shared_constant_bytes(w);
    }
    b->weights += m.constant_bytes;
    b->backend_private += m.private_bytes;
  }
  for (const TensorSlot& slot : tensors) {
    if (slot.staging) b->staging += slot.staging->buffer.size();
  }
}

SessionMemoryBytes Session::memory_without(const std::vector<Blob>& held_before) const {
  SessionMemoryBytes b = impl_->memory->bytes();
  std::set<std::pair<const void*, size_t>> seen;
  for (const Blob& w : held_before) seen.insert({w.data(), w.size()});
  impl_->add_own_memory(&b, &seen);
  if (variants_) {
    for (const auto& p : variants_->parked) p.second->add_own_memory(&b, &seen);
  }
  return b;
}

SessionMemoryBytes Session::memory() const { return memory_without({}); }

Status Session::set_input(size_t index, const void* data, size_t size) {
  GPUU_RETURN_IF_ERROR(check_host_source("input", input_descs_, index, data, size));
  TensorSlot& slot = impl_->tensors[static_cast<size_t>(impl_->program->inputs()[index])];
  // One host copy: straight into the memory the GPU reads where there is one
  // such home (nothing runs between executes), else into the host copy.
  void* home = slot.homes.size() == 1 ? slot.homes.front()->host_writable() : nullptr;
  slot.input_in_home = home != nullptr;
  if (size) std::memcpy(home ? home : slot.host_bytes(), data, size);
  slot.input_set = true;
  return Status::Ok();
}

Status Session::bind_input_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                  VkBufferUsageFlags usage) {
  return impl_->bind_checked(false, input_descs_, index, buffer, offset, size, usage);
}

Status Session::bind_output_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                   VkBufferUsageFlags usage) {
  return impl_->bind_checked(true, output_descs_, index, buffer, offset, size, usage);
}

Status Session::Impl::bind_checked(bool output, const std::vector<TensorDesc>& descs, size_t index, VkBuffer buffer,
                                   VkDeviceSize offset, VkDeviceSize size, VkBufferUsageFlags usage) {
  const char* what = output ? "output" : "input";
  if (index >= descs.size()) {
    return err(StatusCode::kInvalidArgument, what, " index ", index, " is out of range (", descs.size(), " ", what,
               "s)");
  }
  if (!buffer) {
    unbind(output, index);
    return Status::Ok();
  }
  const TensorDesc& d = descs[index];
  if (size != d.bytes) {
    return err(StatusCode::kInvalidArgument, what, " ", index, " ('", d.name, "') takes ", d.bytes,
               " bytes, the bound range has ", size);
  }
  return bind(output, index, BufferRange{buffer, offset, size}, usage);
}

bool Session::output_bound_zero_copy(size_t index) const {
  auto it = impl_->output_bindings.find(index);
  return it != impl_->output_bindings.end() && it->second.zero_copy;
}

bool Session::input_bound_zero_copy(size_t index) const {
  auto it = impl_->input_bindings.find(index);
  return it != impl_->input_bindings.end() && it->second.zero_copy;
}

Status Session::execute(ExecuteStats* stats) {
  ExecuteStats local;
  Status s = impl_->execute(stats ? *stats : local);
  if (!s.ok()) {
    // Leave the session usable: submit what was gathered (its command
    // buffers must not stay half-owned by a batch) and let it all finish.
    for (auto& t : impl_->contexts) {
      if (!t->batch->empty()) (void)t->batch->flush();
      if (t->pending) t->ctx->queue_wait_idle();
      t->pending = false;
    }
    impl_->executed = false;
  }
  impl_->stats = &impl_->scratch_stats;
  return s;
}

Status Session::get_output(size_t index, void* data, size_t size) const {
  GPUU_RETURN_IF_ERROR(check_host_destination("output", output_descs_, index, size));
  if (!impl_->executed) return err(StatusCode::kFailedPrecondition, "no successful execute yet: no outputs to read");
  if (!data && size) return err(StatusCode::kInvalidArgument, "output ", index, ": destination is null");
  // One host copy from wherever the host sees the value (staged by the
  // execute, or now, for an output that stayed on the device).
  GPUU_ASSIGN_OR_RETURN(const void* src, impl_->host_view(impl_->program->outputs()[index]));
  if (size) std::memcpy(data, src, size);
  impl_->output_read[index] = true;
  return Status::Ok();
}

Result<size_t> Session::state_index(std::string_view name) const {
  for (size_t i = 0; i < state_descs_.size(); ++i) {
    if (state_descs_[i].name == name) return i;
  }
  std::string known;
  for (const TensorDesc& d : state_descs_) known += (known.empty() ? "'" : ", '") + d.name + "'";
  return err(StatusCode::kNotFound, "no state named '", name, "' (the program's states: ",
             known.empty() ? "none" : known, ")");
}

Status Session::get_state(size_t index, void* data, size_t size) const {
  GPUU_RETURN_IF_ERROR(check_host_destination("state", state_descs_, index, size));
  if (!data && size) return err(StatusCode::kInvalidArgument, "state ", index, ": destination is null");
  // One host copy from wherever the host sees it (staged now for a state on the device).
  GPUU_ASSIGN_OR_RETURN(const void* src, impl_->host_view(impl_->states[index].tensor));
  if (size) std::memcpy(data, src, size);
  return Status::Ok();
}

Status Session::set_state(size_t index, const void* data, size_t size) {
  GPUU_RETURN_IF_ERROR(check_host_source("state", state_descs_, index, data, size));
  impl_->write_state(index, data, size);
  return Status::Ok();
}

void Session::reset_state() {
  for (size_t i = 0; i < impl_->states.size(); ++i) {
    const Blob& initial = impl_->states[i].initial;
    impl_->write_state(i, initial.data(), initial.size());
  }
}

bool Session::state_updated_in_place(size_t index) const {
  return index < impl_->states.size() && impl_->states[index].in_place;
}

SharedGpuContextPtr Session::Impl::primary_context() const {
  for (const DelegateSlot& d : delegates) {
    if (d.handle) return d.handle->context();
  }
  return nullptr;
}

SharedGpuContextPtr Session::primary_context() const { return impl_->primary_context(); }

std::vector<std::vector<gpu::TimedStep>> Session::step_times() const {
  std::vector<std::vector<gpu::TimedStep>> out;
  for (const backends::DelegateHandle* h : delegate_handles()) {
    out.push_back(h ? h->step_times() : std::vector<gpu::TimedStep>{});
  }
  return out;
}

Result<const ExecuteProfile*> Session::last_profile() const {
  if (!impl_->options.profile_steps) {
    return err(StatusCode::kFailedPrecondition, "the session does not profile (SessionOptions::profile_steps)");
  }
  if (!impl_->executed || !impl_->profile) {
    return err(StatusCode::kFailedPrecondition, "no successful execute yet: nothing to profile");
  }
  return &*impl_->profile;
}

bool Session::profiling() const { return impl_->options.profile_steps; }

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
