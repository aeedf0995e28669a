// KernelCache: compute pipelines built once per device from the embedded
// shaders, keyed by shader name and specialization constants, through the
// context's VkPipelineCache so repeated shapes of a kernel reuse driver work
// (and a session's pipeline cache file keeps it across processes). Every
// delegate on a context shares one (KernelCache::shared): a program's other
// sizes, its other sessions and other programs take the pipelines made
// before instead of compiling them again. Pipelines are compiled on a few
// worker threads while the caller goes on lowering, since compiling is most
// of a delegate's init; Kernel::wait() joins one before it is recorded.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "context/shared_gpu_context.h"

namespace gpuu::kernels {

struct KernelKey {
  std::string shader;                  // embedded shader name, e.g. "unary_f32"
  std::vector<int32_t> spec_constants;  // constant_id 0, 1, ... in order
  uint32_t bindings = 0;               // storage buffers at set 0, bindings 0..n-1
  uint32_t push_constant_bytes = 0;
  std::string entry_point = "main";

  bool operator<(const KernelKey& o) const {
    return std::tie(shader, spec_constants, bindings, push_constant_bytes, entry_point) <
           std::tie(o.shader, o.spec_constants, o.bindings, o.push_constant_bytes, o.entry_point);
  }
};

struct Kernel {
  KernelKey key;
  VkPipeline pipeline = VK_NULL_HANDLE;  // read it only after wait() succeeded
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  // Blocks until the pipeline is made; why not, where it could not be.
  Status wait() const { return made.get(); }
  std::shared_future<Status> made;
};

// Thread-safe: sessions on several threads may build delegates at once.
class KernelCache {
 public:
  // Owned by `ctx` (shared()), or by an object that also holds ctx (device
  // peaks' calibration keeps its probes' pipelines to itself): ctx outlives it.
  explicit KernelCache(const SharedGpuContext& ctx) : ctx_(&ctx) {}
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The cache every delegate on `ctx` shares, kept as long as the context
  // (SharedGpuContext::kept), so pipelines outlive the sessions that made them.
  static std::shared_ptr<KernelCache> shared(const SharedGpuContextPtr& ctx);
  // Pipelines created by every cache of the process so far (for tests).
  static size_t pipelines_created();

  // Makes SPIR-V that is not built in (a custom shader's) known as `name`,
  // which must name its content (a hash of the words); or, under a built-in
  // kernel's name, replaces that kernel in this cache for pipelines made
  // from now on (benchmarks' variants; those made before stay as they are).
  void add_spirv(const std::string& name, std::vector<uint32_t> words);

  // The kernel for `key`: its layouts at once, its pipeline compiled on a
  // worker on first request (Kernel::wait()).
  Result<const Kernel*> get(const KernelKey& key);
  size_t size() const;

 private:
  Status make_pipeline(Kernel& kernel, VkShaderModule module);  // on a worker
  void work();                                                  // a worker's loop

  mutable std::mutex mutex_;  // guards everything below
  const SharedGpuContext* ctx_;
  std::map<KernelKey, std::unique_ptr<Kernel>> kernels_;
  std::map<std::string, VkShaderModule> modules_;
  std::map<std::string, std::vector<uint32_t>> custom_spirv_;
  // Pipelines to compile, and the workers (started on the first), which
  // leave when stopping_ is set and the queue is empty.
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  std::condition_variable work_ready_;
  bool stopping_ = false;
};

}  // namespace gpuu::kernels
