// Session: one loaded program made runnable. Each delegate is initialised
// through its backend (which resolves the shared context and makes its own
// command pool); tensors that pass between GPU delegates on one context stay
// in device memory; an execute submits the delegates in plan order, chained
// on the context's timeline semaphore (or as the sync mode says), and the
// host waits only where a CPU-fallback step or the caller needs data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "program/program.h"
#include "runtime/execute_profile.h"

namespace gpuu::runtime {

struct SessionOptions {
  ContextOverrides overrides;  // token, group, mode and sync mode over the file's
  DeviceOptions device;
  // Load-time options of backends (each declares its keys): checked against
  // the declarations before any delegate initialises, every problem named
  // at once; each delegate's backend receives only its own.
  std::vector<backends::BackendOption> backend_options;
  // How long a host wait polls the timeline before it sleeps in the driver:
  // a sleeping wait's wake-up costs 20-60 us on the H100, as much as a small
  // model's GPU time, for one host core kept busy while it polls. 0: always
  // sleep. Negative: 1000 on a GPU, 0 on a CPU device (lavapipe), whose own
  // threads the polling would slow. Where a context's last two waits were
  // longer than this, a wait first sleeps until 300 us (at most this long)
  // before the shorter one's length, then polls: a long execute wakes at
  // once too, for at most that long of a busy core.
  double wait_spin_us = -1;
  // Measure each delegate's GPU time (ExecuteStats::gpu_time_us) with
  // timestamps. Off by default: on a discrete GPU they cost several
  // microseconds per delegate, a third of a small model's execute.
  bool gpu_timing = false;
  // Profile every execute (Session::last_profile): a timestamp after every
  // dispatch (Session::step_times), which serialises the GPU while on, the
  // delegates' GPU times and the CPU-fallback steps' host times. The first
  // profiling session on a context measures the device's peak rates
  // (kernels/device_peaks.h), briefly, once.
  bool profile_steps = false;
  // A program with dims (program::Program::dims): how many sizes a session
  // keeps ready at once. Each is the program specialized there (delegates
  // preprocessed and initialised); the least recently used goes when one
  // more is needed. Their memory is one (SessionMemoryBytes), planned for
  // the dims' upper bounds: the session makes the program there first, as
  // one of them. At least 1.
  size_t max_shape_variants = 4;
  // Device memory the session may take, in bytes; 0: no limit. Checked
  // against the memory plan (runtime/memory_plan.h) before anything is
  // allocated, and against what was made once the delegates exist (a
  // backend's scratch is known only then): kOutOfMemory naming the need,
  // its parts and the limit, with nothing of the session left.
  uint64_t device_memory_limit = 0;
  // Where the device's pipeline cache is kept across processes (gpuu.h's
  // gpuu_session_options.pipeline_cache_path); empty: nowhere. Each delegate
  // seeds its context's cache from it; the session writes it back.
  std::string pipeline_cache_path;
};

struct TensorDesc {
  std::string name;
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
  size_t bytes = 0;
};

// Device memory a session holds: the homes of inputs, outputs and tensors
// between steps, the states', the intermediates the runtime gives delegates
// (the Vulkan backend's arena), the constants its delegates read (weights
// kept once per device, gpu/shared_constants.h, counted once however many
// delegates and sessions read them), what backends allocate themselves, and
// host-readable staging for reading outputs and states. A program with dims
// holds homes and workspaces once for all its sizes (homes for the dims'
// upper bounds, intermediates for the largest size made so far); constants,
// backends' own memory and staging are each size's.
struct SessionMemoryBytes {
  uint64_t tensors = 0;
  uint64_t states = 0;
  uint64_t workspaces = 0;
  uint64_t weights = 0;
  uint64_t staging = 0;
  uint64_t backend_private = 0;
};

struct ExecuteStats {
  uint32_t delegate_submits = 0;  // delegate executes
  uint32_t queue_submits = 0;     // vkQueueSubmit calls: one per context and host wait where delegates share a queue
  uint32_t host_waits = 0;   // times the host blocked on the GPU
  uint32_t host_copies = 0;  // tensors copied through the host between two devices
  double host_wait_us = 0;   // wall time the host spent blocked on the GPU
  // Wall time the host spent in vkQueueSubmit for the batched delegates
  // before its waits (timeline mode): of the host's own time in execute, the
  // driver's share.
  double host_submit_us = 0;
  double gpu_time_us = 0;    // sum of the delegates' GPU times (SessionOptions::gpu_timing), where known
};

class SessionMemory;  // session.cpp

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const program::Program> program,
                                                 const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorDesc>& inputs() const { return input_descs_; }
  const std::vector<TensorDesc>& outputs() const { return output_descs_; }
  // The program's states (program::StateInfo), each this session's own: it
  // starts from the state's initial value and keeps what each execute leaves.
  const std::vector<TensorDesc>& states() const { return state_descs_; }
  SyncMode sync_mode() const { return sync_mode_; }

  // Dynamic sizes (a program with dims). The sizes the next execute runs at,
  // one per program dim, starting at their examples; empty for a static
  // program.
  const std::vector<int64_t>& dims() const { return dims_; }
  // Sets the inputs' shapes for what follows: `shapes[i]` is input i's, or
  // nullopt to leave the dims it alone follows as they are. Each input's
  // rank and fixed axes must be the program's; an axis that is a dim on its
  // own sets it, and every axis that follows dims must then agree. Every
  // problem is named at once (the dim, the inputs that disagree, the
  // bounds); on error nothing changes. New sizes make the session run the
  // program specialized there (made on first use, kept as one of
  // SessionOptions::max_shape_variants): inputs(), outputs() and the byte
  // sizes change with them, the states carry over, input data set before
  // and application buffers bound before do not (set and bind again).
  Status set_input_shapes(const std::vector<std::optional<graph::Shape>>& shapes);
  Status set_input_shape(size_t index, const graph::Shape& shape);
  // How many specialized variants the session holds now (for tests).
  size_t shape_variant_count() const;
  SessionMemoryBytes memory() const;

  // Copies `size` bytes (which must equal the input's byte size) as input `index`.
  Status set_input(size_t index, const void* data, size_t size);
  // Reads input `index` from an application buffer on the delegates' device at
  // each execute, instead of host memory (null buffer: back to host memory).
  // `usage` is what the buffer was created with. With STORAGE_BUFFER usage it
  // is read in place where that can be had: the delegates' recorded work is
  // re-pointed at it (binding slots), once, here. Otherwise (no storage usage,
  // the tensor lives on several devices, a delegate cannot re-point, the
  // offset is not aligned for storage buffers) a GPU copy in each execute's
  // submit moves it, which needs TRANSFER_SRC usage.
  Status bind_input_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                           VkBufferUsageFlags usage = kInPlaceUsage);
  // Writes output `index` to an application buffer at each execute as well,
  // with the same rule (a copy needs TRANSFER_DST usage). An output's range
  // must not overlap another bound one.
  Status bind_output_buffer(size_t index, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                            VkBufferUsageFlags usage = kInPlaceUsage);
  static constexpr VkBufferUsageFlags kInPlaceUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  // Whether the binding is read or written in place (no copy).
  bool input_bound_zero_copy(size_t index) const;
  bool output_bound_zero_copy(size_t index) const;

  Status execute(ExecuteStats* stats = nullptr);
  // Copies output `index` (after an execute) into `data` of exactly its byte
  // size. Outputs stay in device memory; the host reads them through one
  // staging copy, made in the execute's own submit for outputs read after the
  // previous execute, or here, on demand, for the others.
  Status get_output(size_t index, void* data, size_t size) const;

  // The index of the state named `name`; kNotFound naming it and the states there are.
  Result<size_t> state_index(std::string_view name) const;
  // Copies state `index` into `data` of exactly its byte size: its initial
  // value, what set_state wrote, or what the last execute left. A state on a
  // device comes to the host only here, through one staging copy.
  Status get_state(size_t index, void* data, size_t size) const;
  // Replaces state `index` with `size` bytes (its byte size) from `data`,
  // for the next execute to read (to seed a cache, say).
  Status set_state(size_t index, const void* data, size_t size);
  // Every state back to its initial value.
  void reset_state();
  // Whether the delegate computing state `index`'s update writes it into the
  // state's own memory, rather than into a buffer of its own that is copied
  // over after each execute (for tests and logs).
  bool state_updated_in_place(size_t index) const;

  // Per delegate in plan order, each dispatch's GPU time in the last execute
  // (SessionOptions::profile_steps; empty lists otherwise).
  std::vector<std::vector<gpu::TimedStep>> step_times() const;
  // Where the last successful execute's time went (SessionOptions::profile_steps).
  // kFailedPrecondition when the session does not profile or has not
  // executed successfully yet. Valid until the next execute.
  Result<const ExecuteProfile*> last_profile() const;
  bool profiling() const;  // SessionOptions::profile_steps

  // The context the GPU delegates run on (the first delegate's), or null.
  SharedGpuContextPtr primary_context() const;
  size_t delegate_count() const;
  // The delegate handles, in plan order (for tests: pools and contexts).
  std::vector<const backends::DelegateHandle*> delegate_handles() const;

 private:
  struct Impl;
  struct Variants;
  explicit Session(std::unique_ptr<Impl> impl);
  // memory(), the weights in `held_before` left out (on the device before the session came).
  SessionMemoryBytes memory_without(const std::vector<Blob>& held_before) const;
  static Result<std::unique_ptr<Impl>> make_impl(std::shared_ptr<const program::Program> program,
                                                 const SessionOptions& options,
                                                 std::shared_ptr<SessionMemory> memory);
  void describe();  // the descs, from impl_
  // Writes each context's pipeline cache to SessionOptions::pipeline_cache_path, if set.
  void save_pipeline_caches() const;
  Status switch_to(const std::vector<int64_t>& dims);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Variants> variants_;  // a program with dims: the other sizes' sessions
  std::vector<int64_t> dims_;
  std::vector<TensorDesc> input_descs_, output_descs_, state_descs_;
  SyncMode sync_mode_ = SyncMode::kTimeline;
};

}  // namespace gpuu::runtime
