// SharedGpuContext: the Vulkan objects that every delegate of one
// (token, group_id) shares: instance, physical device, device, one queue and
// its family, an optional timeline semaphore. It destroys only what it owns.
// Every use of the queue goes through its lock; command pools are never
// shared: each delegate makes its own with create_command_pool().
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "context/pipeline_cache.h"
#include "context/vulkan_api.h"

namespace gpuu {

// Optional device features a backend may rely on; what is enabled on the device.
enum DeviceFeature : uint32_t {
  kFeatureTimelineSemaphore = 1u << 0,
  kFeatureShaderFloat16 = 1u << 1,
  kFeatureStorageBuffer16Bit = 1u << 2,
  kFeatureShaderInt64 = 1u << 3,
  kFeatureShaderInt8 = 1u << 4,
  kFeatureStorageBuffer8Bit = 1u << 5,
  // VK_ARM_tensors + VK_ARM_data_graph (+ its TOSA instruction set) enabled
  // with their tensors / dataGraph features, on a queue family that runs
  // data-graph work: the VGF backend's native path.
  kFeatureDataGraph = 1u << 6,
  kFeatureVulkanMemoryModel = 1u << 7,
  // VK_KHR_cooperative_matrix enabled with its cooperativeMatrix feature
  // (cleared at create() where the extension is not among the enabled ones).
  kFeatureCooperativeMatrix = 1u << 8,
  // shaderIntegerDotProduct (Vulkan 1.3, or VK_KHR_shader_integer_dot_product)
  // enabled: the int8 GEMM kernels use OpSDot on packed 4 x i8 words.
  kFeatureShaderIntegerDotProduct = 1u << 9,
  // VK_NV_cooperative_matrix2 enabled with its cooperativeMatrixWorkgroupScope,
  // cooperativeMatrixFlexibleDimensions, cooperativeMatrixTensorAddressing
  // and cooperativeMatrixPerElementOperations features (with
  // kFeatureCooperativeMatrix): GEMMs on workgroup-scope matrices.
  kFeatureCooperativeMatrixWorkgroup = 1u << 10,
};

// One matrix shape the device multiplies on its matrix cores
// (VkCooperativeMatrixPropertiesKHR; component types as VkComponentTypeKHR,
// scope as VkScopeKHR).
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a_type = 0, b_type = 0, c_type = 0, result_type = 0;
  bool saturating = false;
  uint32_t scope = 0;
  // Flexible (workgroup-scope) shapes: m, n, k are granularities, and the
  // workgroup must have this many invocations (0: any).
  uint32_t workgroup_invocations = 0;
};

// VK_NV_cooperative_matrix2's limits, where kFeatureCooperativeMatrixWorkgroup.
struct CooperativeMatrixWorkgroupLimits {
  uint32_t max_workgroup_size = 0;
  uint32_t max_dimension = 0;
  uint32_t reserved_shared_bytes = 0;  // shared memory the driver keeps for its staging
  std::vector<CooperativeMatrixShape> shapes;  // flexible shapes (granularities)
};

// What a device does at most, which Vulkan does not report: measured on the
// context by the kernel library (kernels/device_peaks.h) the first time a
// profile asks, then kept. 0: unknown.
struct DevicePeaks {
  double bytes_per_s = 0;             // memory bandwidth: bytes read + written by a large copy
  double f32_flops_per_s = 0;         // vector FMAs (an FMA counts two)
  double f16_matrix_flops_per_s = 0;  // cooperative matrices: f16 inputs, f32 accumulation
  std::string f16_matrix_unknown_why;  // why that one is unknown, where it is
  double measure_ms = 0;               // host time the measurement took
};

// An application's own queue lock, for a queue it also submits to.
struct ExternalQueueLock {
  void (*lock)(void* user_data) = nullptr;
  void (*unlock)(void* user_data) = nullptr;
  void* user_data = nullptr;
  bool set() const { return lock && unlock; }
};

struct SharedGpuContextCreateInfo {
  std::string token;
  int64_t group_id = 0;

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  VkSemaphore timeline_semaphore = VK_NULL_HANDLE;  // null: made here if the feature is enabled

  bool owns_instance = false;
  bool owns_device = false;
  bool owns_timeline_semaphore = false;
  VkDebugUtilsMessengerEXT debug_messenger = VK_NULL_HANDLE;  // always owned

  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;  // null: the system loader
  ExternalQueueLock external_queue_lock;
  std::vector<std::string> enabled_device_extensions;
  uint32_t enabled_features = 0;  // DeviceFeature bits

  // Called once, after the owned Vulkan objects are destroyed (tests observe it).
  std::function<void()> on_destroy;
};

class SharedGpuContext {
 public:
  // Loads the entry points, reads the device's properties, and makes the
  // timeline semaphore when none was given and the feature is enabled.
  // On failure nothing in `info` is destroyed, owned or not: the caller keeps it.
  static Result<std::shared_ptr<SharedGpuContext>> create(SharedGpuContextCreateInfo info);

  ~SharedGpuContext();
  SharedGpuContext(const SharedGpuContext&) = delete;
  SharedGpuContext& operator=(const SharedGpuContext&) = delete;

  bool is_valid() const { return info_.device != VK_NULL_HANDLE && info_.queue != VK_NULL_HANDLE; }
  const std::string& token() const { return info_.token; }
  int64_t group_id() const { return info_.group_id; }
  VkInstance instance() const { return info_.instance; }
  VkPhysicalDevice physical_device() const { return info_.physical_device; }
  VkDevice device() const { return info_.device; }
  VkQueue queue() const { return info_.queue; }
  uint32_t queue_family_index() const { return info_.queue_family_index; }
  VkSemaphore timeline_semaphore() const { return info_.timeline_semaphore; }
  bool owns_instance() const { return info_.owns_instance; }
  bool owns_device() const { return info_.owns_device; }
  bool owns_timeline_semaphore() const { return info_.owns_timeline_semaphore; }
  uint32_t enabled_features() const { return info_.enabled_features; }
  bool has_feature(DeviceFeature f) const { return (info_.enabled_features & f) != 0; }
  const std::vector<std::string>& enabled_device_extensions() const { return info_.enabled_device_extensions; }
  bool has_extension(const std::string& name) const;
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
  std::string device_name() const { return properties_.deviceName; }
  // A Vulkan implementation on the CPU (lavapipe): kernel choices that pay
  // only on a GPU (matrix cores, wide tiles, materialized views) are skipped.
  bool is_cpu_device() const { return properties_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }
  uint32_t subgroup_size() const { return subgroup_size_; }
  // Compute shaders may use subgroup arithmetic (subgroupAdd, ...), or
  // shuffles (subgroupShuffleXor, ...).
  bool subgroup_arithmetic() const { return (subgroup_operations_ & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0; }
  bool subgroup_shuffle() const { return (subgroup_operations_ & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0; }
  // The device's multiprocessors (NVIDIA SMs, AMD compute units), where the
  // driver reports them (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties);
  // 0 where it does not. Kernel selectors size their grids by it: a dispatch
  // of fewer workgroups than this leaves part of the GPU idle.
  uint32_t compute_units() const { return compute_units_; }
  // What vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR reports, read at
  // create() where kFeatureCooperativeMatrix is enabled and compute shaders
  // may use it; empty otherwise.
  const std::vector<CooperativeMatrixShape>& cooperative_matrix_shapes() const { return coopmat_shapes_; }
  const CooperativeMatrixWorkgroupLimits& cooperative_matrix_workgroup() const { return coopmat_workgroup_; }

  // The device's peak rates: what `measure` gave the first time it
  // succeeded on this context (callers meanwhile wait for it), measured once.
  Result<DevicePeaks> peaks(const std::function<Result<DevicePeaks>()>& measure) const;

  // The device's one pipeline cache: every pipeline gpuu makes here goes
  // through it, so delegates, sessions and (through its files) processes
  // share the driver's work.
  PipelineCache& pipeline_cache() const { return *pipeline_cache_; }

  // What a layer above keeps for the device's whole life under `name` (the
  // kernel layer's compiled pipelines), made by `make` on first request:
  // so a session, program or test that comes after the last one closed
  // finds it made. Destroyed first when the context is, while the device
  // lives; whatever holds one must also hold the context.
  std::shared_ptr<void> kept(const std::string& name, const std::function<std::shared_ptr<void>()>& make) const;

  const vk::InstanceFunctions& vki() const { return instance_fns_; }
  // What the context's entry points were loaded through (plugins load theirs too).
  PFN_vkGetInstanceProcAddr get_instance_proc_addr() const { return global_fns_.vkGetInstanceProcAddr; }
  const vk::DeviceFunctions& vkd() const { return device_fns_; }

  // Holds the queue lock (the application's, when it gave one) while alive.
  class QueueGuard {
   public:
    explicit QueueGuard(const SharedGpuContext& ctx);
    ~QueueGuard();
    QueueGuard(const QueueGuard&) = delete;
    QueueGuard& operator=(const QueueGuard&) = delete;

   private:
    const SharedGpuContext& ctx_;
  };
  QueueGuard lock_queue() const { return QueueGuard(*this); }

  // vkQueueSubmit / vkQueueWaitIdle under the queue lock.
  VkResult submit(uint32_t count, const VkSubmitInfo* submits, VkFence fence) const;
  VkResult queue_wait_idle() const;

  // One pool per delegate instance, never shared (RFC). The caller destroys it
  // with destroy_command_pool() before it drops its reference to the context.
  VkResult create_command_pool(VkCommandPool* command_pool) const;
  void destroy_command_pool(VkCommandPool command_pool) const;
  // One primary command buffer from `command_pool` (freed with the pool).
  VkResult allocate_command_buffer(VkCommandPool command_pool, VkCommandBuffer* command_buffer) const;

  // Submits `command_buffer` chained on the timeline semaphore: it waits for
  // the value the previous timeline submit on this context signals and
  // signals the next one, which it returns. Every gpuu submit on the context
  // goes through this chain under the queue lock, so signalled values only
  // grow, whichever session or delegate submits (the spec requires it).
  Result<uint64_t> submit_timeline(VkCommandBuffer command_buffer, VkFence fence) const {
    return submit_timeline(command_buffer ? 1 : 0, &command_buffer, fence);
  }
  // The same for `count` command buffers in one submit: they run in order and
  // signal once (how the runtime makes an execute one queue submission).
  Result<uint64_t> submit_timeline(uint32_t count, const VkCommandBuffer* command_buffers, VkFence fence) const;
  // The value the last timeline submit will signal (0 before the first).
  uint64_t last_timeline_value() const;

 private:
  explicit SharedGpuContext(SharedGpuContextCreateInfo info) : info_(std::move(info)) {}

  SharedGpuContextCreateInfo info_;
  vk::GlobalFunctions global_fns_;
  vk::InstanceFunctions instance_fns_;
  vk::DeviceFunctions device_fns_;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  uint32_t subgroup_size_ = 0;
  VkSubgroupFeatureFlags subgroup_operations_ = 0;  // in compute shaders (none where they have no subgroups)
  uint32_t compute_units_ = 0;
  std::vector<CooperativeMatrixShape> coopmat_shapes_;
  CooperativeMatrixWorkgroupLimits coopmat_workgroup_;
  std::unique_ptr<PipelineCache> pipeline_cache_;  // destroyed before the device
  mutable std::mutex kept_mutex_;
  mutable std::vector<std::pair<std::string, std::shared_ptr<void>>> kept_;  // destroyed last made first
  mutable std::mutex peaks_mutex_;  // held while measuring
  mutable std::optional<DevicePeaks> peaks_;
  mutable std::mutex queue_mutex_;
  mutable uint64_t last_timeline_value_ = 0;  // guarded by the queue lock
};

using SharedGpuContextPtr = std::shared_ptr<SharedGpuContext>;

}  // namespace gpuu
