// The backend contract (after ExecuTorch's backend interface): a backend has a
// unique id and a version, declares the load-time options it takes, says
// whether it can run here, turns a processed blob into a delegate handle at
// init, executes that handle, and destroys it (the handle's destructor). On
// the export side it says which nodes it takes and lowers a region into its
// processed blob. Kept deliberately small.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend_options.h"
#include "base/blob.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "context/shared_gpu_context_registry.h"
#include "gpu/device_buffer.h"
#include "gpu/gpu_timer.h"
#include "gpu/submission.h"
#include "graph/graph.h"
#include "partition/backend_capability.h"
#include "partition/partition_result.h"
#include "program/program_writer.h"
#include "program/subgraph.h"

namespace gpuu::backends {

using gpu::BufferRange;

// A program state whose region both reads it (`input`) and computes its
// update (`output`): tensor names of the region.
struct InPlaceUpdate {
  std::string input;
  std::string output;
  bool operator==(const InPlaceUpdate& o) const { return input == o.input && output == o.output; }
};

// What the runtime gives a backend at init.
struct BackendInitContext {
  int32_t delegate_index = 0;
  // The delegate's shared keys, parsed once when the program was loaded, with
  // the application's load-time overrides applied (they win over the file).
  // Its sync_mode is the session's one sync policy.
  SharedGpuCompileSpec shared;
  DeviceOptions device;
  // The backend's own load-time options: every key of its
  // declared_options(), with the application's value (checked against the
  // declaration before any delegate initialised) or the default.
  OptionValues options;
  // Bracket each execute with GPU timestamps (DelegateHandle::last_gpu_time_us);
  // they serialise the GPU, so only when the application profiles.
  bool gpu_timing = false;
  // The runtime ends every submit with a barrier that makes all writes
  // visible to the host, so a delegate's own recorded work needs none.
  bool runtime_makes_host_visible = false;
  // A timestamp after every dispatch (DelegateHandle::step_times), for profiles.
  bool profile_steps = false;
  // A file the context's pipeline cache is seeded from before the delegate
  // makes pipelines (resolve_delegate_context does it); empty: none.
  std::string pipeline_cache_path;
  // Constants the processed blob names, from the program file (no copy).
  program::ConstantLookup constants;
  // States the runtime can keep in one buffer while this delegate updates
  // them (no later step reads their old value): an update written in place,
  // without a second buffer and a copy after each execute.
  std::vector<InPlaceUpdate> in_place_offers;
  // Called by the backend once it has its context: the device buffers the
  // delegate must read its inputs from and write its outputs to, in the
  // order of the blob's inputs and outputs (constants excluded). The runtime
  // owns them; they live as long as the delegate. `in_place` lists the
  // offers the backend takes: it can write each output over its input's
  // memory (every other read of the input done before, the kernel writing it
  // safe in place), and gets one buffer for both.
  std::function<Result<std::pair<std::vector<BufferRange>, std::vector<BufferRange>>>(
      const SharedGpuContextPtr& ctx, const graph::Graph& region, const std::vector<InPlaceUpdate>& in_place)>
      bind_io;
  // Device memory for the delegate's intermediates, where the runtime offers
  // it (null: the backend makes its own): `bytes` on `ctx`, the runtime's for
  // as long as the delegate lives. The runtime hands the same memory to every
  // delegate of a session on `ctx`, and to the delegate made at each size of
  // a program with dims, so a session holds one set of intermediates per
  // device, not one per delegate and size. So a delegate keeps nothing in it
  // between executes, and orders its first access after the work submitted
  // before it on the queue (a barrier from all earlier writes and reads).
  std::function<Result<BufferRange>(const SharedGpuContextPtr& ctx, VkDeviceSize bytes)> workspace;
};

// Device memory of a delegate beyond the buffers the runtime gives it
// (bind_io's, the workspace): for a session's report and its budget.
struct DelegateMemory {
  // Weights kept once per device (gpu/shared_constants.h), by the bytes they
  // are made from: one that several delegates or sessions read counts once.
  std::vector<Blob> shared_constants;
  uint64_t constant_bytes = 0;   // constants of the delegate's own (packed small ones, index maps)
  uint64_t workspace_bytes = 0;  // a plan's: what it would ask BackendInitContext::workspace for
  uint64_t private_bytes = 0;    // intermediates the backend allocates itself
};

// How one execute of a delegate is ordered with the others (RFC sync modes).
// A backend's execute only submits (gpu::submit_recorded, which gathers into
// args.batch when the runtime gives one); the runtime does every host wait.
using ExecuteArgs = gpu::SubmitArgs;

class DelegateHandle {
 public:
  virtual ~DelegateHandle() = default;
  virtual const SharedGpuContextPtr& context() const = 0;
  virtual VkCommandPool command_pool() const = 0;
  // GPU time of the last completed execute in microseconds, or -1 if unknown.
  virtual double last_gpu_time_us() const { return -1; }
  // Dispatches one execute records (for logs and benchmarks), or 0 if unknown.
  virtual size_t dispatch_count() const { return 0; }
  // Each dispatch's GPU time in the last completed execute, where the
  // delegate was initialised to profile them; else empty.
  virtual std::vector<gpu::TimedStep> step_times() const { return {}; }
  // Binding slots (zero-copy I/O, after IREE's reusable command buffers): run
  // from now on against `inputs` and `outputs`, in bind_io's order, instead of
  // the buffers bind_io gave; recorded work is re-pointed here, once, never
  // per execute. Called only while nothing of the delegate runs. The default
  // is kUnsupported: the runtime then copies between the application's
  // buffers and its own, on the GPU, in the same submit.
  virtual Status rebind_io(const std::vector<BufferRange>& inputs, const std::vector<BufferRange>& outputs);
  // The device memory it holds (workspace_bytes aside: the runtime's). The
  // default, for a backend that does not say: none.
  virtual DelegateMemory memory() const { return {}; }
};

class Backend {
 public:
  Backend();
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual const char* id() const = 0;        // "VulkanBackend", "VgfBackend"
  virtual const char* log_name() const = 0;  // "Vulkan", "VGF": the tag of its log lines
  virtual uint32_t version() const = 0;
  virtual bool is_available() const = 0;
  // The .so a plugin backend came from; null for a built-in backend.
  virtual const char* plugin_path() const { return nullptr; }
  // The load-time options it takes (BackendInitContext::options); none by default.
  virtual const std::vector<OptionDecl>& declared_options() const;

  virtual Result<std::unique_ptr<DelegateHandle>> init(BackendInitContext& context, const Blob& processed,
                                                       const std::vector<CompileSpecEntry>& compile_specs) = 0;
  virtual Status execute(DelegateHandle& handle, const ExecuteArgs& args) = 0;
  // What init would allocate for `processed`, known without a device (a
  // session's budget is checked before anything is allocated; gpuu-inspect
  // --memory has no device). The default: kUnsupported, the backend cannot say.
  virtual Result<DelegateMemory> plan_memory(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs,
                                             const program::ConstantLookup& constants) const;

  // Export side: "" when the backend takes `node`, else why not.
  virtual std::string check(const graph::Graph& graph, const graph::Node& node) const = 0;
  // What the partitioner knows of this backend: its id, default cost, check
  // and per-op declaration. The default declares no op and takes what check()
  // takes at cost 2 (a GPU dispatch per op), so every registered backend is
  // partitionable; a backend with a table of its own returns that.
  virtual const partition::BackendCapability& capability() const;
  virtual Result<std::vector<uint8_t>> preprocess(const graph::Graph& graph, const partition::Region& region,
                                                  const std::vector<CompileSpecEntry>& compile_specs) const = 0;
  // The region's blob for a program file, where the backend may leave
  // constants to the program's store (read back at init through
  // BackendInitContext::constants) rather than hold a copy. The default is
  // preprocess(), every constant as the blob has it.
  virtual Result<program::PreprocessedRegion> preprocess_for_program(
      const graph::Graph& graph, const partition::Region& region, const program::RegionIo& io,
      const std::vector<CompileSpecEntry>& compile_specs) const;

 private:
  std::unique_ptr<partition::BackendCapability> checked_;  // the default capability()
};

// A capability whose check() is the backend's own check(): refusals are
// kBackendRefused with the backend's reason. The default capability() of a
// backend (cost 2, no op declared); a plugin declares its cost and ops on top.
class CheckedCapability : public partition::BackendCapability {
 public:
  CheckedCapability(const Backend& backend, double default_cost) : backend_(backend), cost_(default_cost) {}
  const char* id() const override { return backend_.id(); }
  double default_cost() const override { return cost_; }
  partition::Verdict check(const graph::Graph& graph, graph::NodeId node) const override;
  std::string describe(const graph::Graph& graph, graph::NodeId node, const partition::Verdict&) const override;
  std::vector<graph::DType> declared_dtypes(std::string_view) const override { return {}; }

 private:
  const Backend& backend_;  // its owner
  double cost_;
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
Result<SharedGpuContextPtr> resolve_delegate_context(const BackendInitContext& context, const char* backend_name);

// A region as a standalone graph: its outside inputs become graph inputs,
// the constants it reads come along with their data, its escaping values are
// the outputs. Names are the original graph's.
Result<graph::Graph> region_graph(const graph::Graph& graph, const partition::Region& region);

// "processed=<bytes> compile_specs=<k=v,...>" for init log lines.
std::string describe_init(const Blob& processed, const std::vector<CompileSpecEntry>& compile_specs);
// "compile_specs=key=value,...", non-printable value bytes as '?'.
std::string describe_compile_specs(const std::vector<CompileSpecEntry>& compile_specs);

}  // namespace gpuu::backends
