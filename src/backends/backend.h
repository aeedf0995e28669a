// The backend contract (after ExecuTorch's backend interface): a backend has a
// unique id and a version, says whether it can run here, turns a processed
// blob into a delegate handle at init, executes that handle, and destroys it
// (the handle's destructor). On the export side it says which nodes it takes
// and lowers a region into its processed blob. Kept deliberately small.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/device_buffer.h"
#include "base/blob.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "context/shared_gpu_context_registry.h"
#include "graph/graph.h"
#include "partition/partition_result.h"
#include "program/subgraph.h"

namespace gpuu::backends {

using vulkan::BufferRange;

// Whether a graph runs natively through VK_ARM_data_graph where the device
// has it (kAuto), must (kNative: init fails, saying why, where it cannot), or
// runs on gpuu's own kernels (kExecutor). A load-time option of the session.
enum class DataGraphPath : uint8_t { kAuto = 0, kNative = 1, kExecutor = 2 };

// What the runtime gives a backend at init.
struct BackendInitContext {
  int32_t delegate_index = 0;
  // The application's load-time overrides of the context keys (they win over
  // the delegate's compile specs).
  ContextOverrides overrides;
  DeviceOptions device;
  DataGraphPath data_graph_path = DataGraphPath::kAuto;
  // Constants the processed blob names, from the program file (no copy).
  program::ConstantLookup constants;
  // Called by the backend once it has its context: the device buffers the
  // delegate must read its inputs from and write its outputs to, in the
  // order of the blob's inputs and outputs (constants excluded). The runtime
  // owns them; they live as long as the delegate.
  std::function<Result<std::pair<std::vector<BufferRange>, std::vector<BufferRange>>>(
      const SharedGpuContextPtr& ctx, const graph::Graph& region)>
      bind_io;
};

// How one execute of a delegate is ordered with the others (RFC sync modes).
// A backend's execute only submits; the runtime does every host wait.
struct ExecuteArgs {
  SyncMode sync_mode = SyncMode::kTimeline;
  VkFence fence = VK_NULL_HANDLE;  // signalled when the submit completes (may be null)
  // timeline: set to the value the submit signals on the context's semaphore
  // (it waits for the context's previous timeline submit first).
  uint64_t* signaled_value = nullptr;
};

class DelegateHandle {
 public:
  virtual ~DelegateHandle() = default;
  virtual const SharedGpuContextPtr& context() const = 0;
  virtual VkCommandPool command_pool() const = 0;
  // GPU time of the last completed execute in microseconds, or -1 if unknown.
  virtual double last_gpu_time_us() const { return -1; }
  // Dispatches one execute records (for logs and benchmarks), or 0 if unknown.
  virtual size_t dispatch_count() const { return 0; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* id() const = 0;        // "VulkanBackend", "VgfBackend"
  virtual const char* log_name() const = 0;  // "Vulkan", "VGF": the tag of its log lines
  virtual uint32_t version() const = 0;
  virtual bool is_available() const = 0;
  // The .so a plugin backend came from; null for a built-in backend.
  virtual const char* plugin_path() const { return nullptr; }

  virtual Result<std::unique_ptr<DelegateHandle>> init(BackendInitContext& context, const Blob& processed,
                                                       const std::vector<CompileSpecEntry>& compile_specs) = 0;
  virtual Status execute(DelegateHandle& handle, const ExecuteArgs& args) = 0;

  // Export side: "" when the backend takes `node`, else why not.
  virtual std::string check(const graph::Graph& graph, const graph::Node& node) const = 0;
  virtual Result<std::vector<uint8_t>> preprocess(const graph::Graph& graph, const partition::Region& region,
                                                  const std::vector<CompileSpecEntry>& compile_specs) const = 0;
};

// Backends by id, in registration order. The runtime registers the built-in
// ones (see runtime/builtin_backends.h); plugins add theirs (src/plugins/).
// Thread-safe; a backend, once registered, lives as long as the registry.
class BackendRegistry {
 public:
  Status register_backend(std::unique_ptr<Backend> backend);  // kAlreadyExists for a taken id
  Backend* find(const std::string& id) const;
  std::vector<std::string> ids() const;
  std::vector<Backend*> backends() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Backend>> backends_;
};

// The shared context a delegate uses, resolved from its compile specs and the
// application's overrides exactly as RFC phases 3 and 4 say (disabled ->
// private, lookup_only, lookup_or_create, create_only). Both GPU backends
// call this, so they agree on which VkDevice they bind to.
Result<SharedGpuContextPtr> resolve_delegate_context(const std::vector<CompileSpecEntry>& compile_specs,
                                                     const BackendInitContext& context, const char* backend_name);

// A region as a standalone graph: its outside inputs become graph inputs,
// the constants it reads come along with their data, its escaping values are
// the outputs. Names are the original graph's.
Result<graph::Graph> region_graph(const graph::Graph& graph, const partition::Region& region);

// "processed=<bytes> compile_specs=<k=v,...>" for init log lines.
std::string describe_init(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs);

// Submits `command_buffer` on the context's queue as `args` says (timeline:
// chained on the context's semaphore). It never blocks: waiting, as
// queue_wait_idle asks after each delegate, is the runtime's job.
Status submit_delegate(const SharedGpuContext& ctx, VkCommandBuffer command_buffer, const ExecuteArgs& args);

}  // namespace gpuu::backends
