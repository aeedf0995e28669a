// SharedGpuContext: entry-point loading, the queue lock, command pools and
// ordered destruction of what the context owns.
#include "context/shared_gpu_context.h"

#include <algorithm>

#include "base/log.h"
#include "context/vulkan_arm.h"
#include "context/vulkan_coopmat.h"

namespace gpuu {
namespace {

// The device extensions the physical device offers (empty if it cannot say).
std::vector<std::string> device_extensions(const vk::InstanceFunctions& fns, VkPhysicalDevice physical_device) {
  uint32_t count = 0;
  std::vector<std::string> names;
  if (fns.vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr) != VK_SUCCESS) return names;
  std::vector<VkExtensionProperties> list(count);
  if (fns.vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, list.data()) != VK_SUCCESS) {
    return names;
  }
  for (uint32_t i = 0; i < count; ++i) names.emplace_back(list[i].extensionName);
  return names;
}

// Every record of a two-call physical-device query (the count, then the
// records, each made with `stype`); none where the entry point is missing or
// a call fails.
template <typename Record, typename Query>
std::vector<Record> query_records(Query query, VkPhysicalDevice physical_device, VkStructureType stype) {
  uint32_t count = 0;
  if (!query || query(physical_device, &count, nullptr) != VK_SUCCESS) return {};
  std::vector<Record> records(count, Record{stype});
  if (query(physical_device, &count, records.data()) != VK_SUCCESS) return {};
  records.resize(count);
  return records;
}

}  // namespace

Result<std::shared_ptr<SharedGpuContext>> SharedGpuContext::create(SharedGpuContextCreateInfo info) {
  if (info.token.empty()) return err(StatusCode::kInvalidArgument, "shared GPU context: the token is empty");
  if (!info.instance || !info.physical_device || !info.device || !info.queue) {
    return err(StatusCode::kInvalidArgument, "shared GPU context '", info.token, "': instance (",
               info.instance ? "set" : "null", "), physical device (", info.physical_device ? "set" : "null",
               "), device (", info.device ? "set" : "null", ") and queue (", info.queue ? "set" : "null",
               ") must all be given");
  }
  if ((info.external_queue_lock.lock == nullptr) != (info.external_queue_lock.unlock == nullptr)) {
    return err(StatusCode::kInvalidArgument, "shared GPU context '", info.token,
               "': queue_lock and queue_unlock must be given together");
  }
  vk::GlobalFunctions global;
  if (info.get_instance_proc_addr) {
    GPUU_ASSIGN_OR_RETURN(global, vk::load_global(info.get_instance_proc_addr));
  } else {
    GPUU_ASSIGN_OR_RETURN(global, vk::system_loader());
  }
  GPUU_ASSIGN_OR_RETURN(vk::InstanceFunctions instance_fns, vk::load_instance(global, info.instance));

  // Validate the queue family against the physical device before trusting it.
  uint32_t family_count = 0;
  instance_fns.vkGetPhysicalDeviceQueueFamilyProperties(info.physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  instance_fns.vkGetPhysicalDeviceQueueFamilyProperties(info.physical_device, &family_count, families.data());
  if (info.queue_family_index >= family_count) {
    return err(StatusCode::kInvalidArgument, "shared GPU context '", info.token, "': queue family ",
               info.queue_family_index, " does not exist (the device has ", family_count, ")");
  }
  if (!(families[info.queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
    return err(StatusCode::kInvalidArgument, "shared GPU context '", info.token, "': queue family ",
               info.queue_family_index, " has no compute support");
  }
  GPUU_ASSIGN_OR_RETURN(vk::DeviceFunctions device_fns, vk::load_device(instance_fns, info.device));
  // The data-graph path needs the three ARM extensions enabled on the device
  // and a queue that runs data-graph work; an application's device qualifies
  // only if it enabled them (and the tensors / dataGraph features, which gpuu
  // cannot read back from a device it did not create).
  auto enabled = [&info](const char* name) {
    return std::find(info.enabled_device_extensions.begin(), info.enabled_device_extensions.end(), name) !=
           info.enabled_device_extensions.end();
  };
  bool data_graph_extensions = true;
  for (const char* name : {vk::kTensorsExtension, vk::kDataGraphExtension, vk::kDataGraphTosaExtension}) {
    data_graph_extensions = data_graph_extensions && enabled(name);
  }
  bool data_graph_queue = (families[info.queue_family_index].queueFlags & VK_QUEUE_DATA_GRAPH_BIT_ARM) != 0;
  if (data_graph_extensions && data_graph_queue) {
    info.enabled_features |= kFeatureDataGraph;
  } else {
    info.enabled_features &= ~static_cast<uint32_t>(kFeatureDataGraph);
  }
  // The matrix-core kernels need the extension enabled (an application's
  // device says so through its extension list and feature bits).
  if (!enabled(vk::kCooperativeMatrixExtension)) {
    info.enabled_features &= ~static_cast<uint32_t>(kFeatureCooperativeMatrix);
  }
  // Workgroup-scope matrices: their extension enabled too, and the first one.
  if (!(info.enabled_features & kFeatureCooperativeMatrix) || !enabled(vk::kCooperativeMatrix2Extension)) {
    info.enabled_features &= ~static_cast<uint32_t>(kFeatureCooperativeMatrixWorkgroup);
  }
  // So do the dot-product instructions on a device before Vulkan 1.3.
  if ((info.enabled_features & kFeatureShaderIntegerDotProduct) &&
      !enabled(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
    VkPhysicalDeviceProperties props;
    instance_fns.vkGetPhysicalDeviceProperties(info.physical_device, &props);
    if (props.apiVersion < VK_API_VERSION_1_3) {
      info.enabled_features &= ~static_cast<uint32_t>(kFeatureShaderIntegerDotProduct);
    }
  }
  if ((info.enabled_features & kFeatureTimelineSemaphore) &&
      (!device_fns.vkWaitSemaphores || !device_fns.vkSignalSemaphore || !device_fns.vkGetSemaphoreCounterValue)) {
    return err(StatusCode::kUnsupported, "shared GPU context '", info.token,
               "': timeline semaphores are marked enabled but vkWaitSemaphores is unavailable (Vulkan 1.2 needed)");
  }

  bool made_semaphore = false;
  if (!info.timeline_semaphore && (info.enabled_features & kFeatureTimelineSemaphore)) {
    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type_info.initialValue = 0;
    VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sem_info.pNext = &type_info;
    GPUU_VK_RETURN_IF_ERROR(device_fns.vkCreateSemaphore(info.device, &sem_info, nullptr, &info.timeline_semaphore),
                            "vkCreateSemaphore(timeline)");
    info.owns_timeline_semaphore = true;
    made_semaphore = true;
  } else if (info.timeline_semaphore) {
    info.enabled_features |= kFeatureTimelineSemaphore;
  }

  std::shared_ptr<SharedGpuContext> ctx(new SharedGpuContext(std::move(info)));
  ctx->global_fns_ = global;
  ctx->instance_fns_ = instance_fns;
  ctx->device_fns_ = device_fns;
  instance_fns.vkGetPhysicalDeviceProperties(ctx->info_.physical_device, &ctx->properties_);
  instance_fns.vkGetPhysicalDeviceMemoryProperties(ctx->info_.physical_device, &ctx->memory_properties_);
  ctx->pipeline_cache_ = std::make_unique<PipelineCache>(ctx->device_fns_, ctx->info_.device, ctx->properties_);
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceCooperativeMatrixPropertiesKHR coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  // Each structure is chained only where the device has its extension: older
  // drivers need not know the others.
  void** tail = &props2.pNext;
  auto chain = [&tail](auto* s) {
    *tail = s;
    tail = &s->pNext;
  };
  chain(&subgroup);
  const bool has_coopmat = (ctx->info_.enabled_features & kFeatureCooperativeMatrix) != 0;
  if (has_coopmat) chain(&coopmat);
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV coopmat2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  const bool has_coopmat2 = (ctx->info_.enabled_features & kFeatureCooperativeMatrixWorkgroup) != 0;
  if (has_coopmat2) chain(&coopmat2);
  const std::vector<std::string> offered = device_extensions(instance_fns, ctx->info_.physical_device);
  auto offers = [&offered](const char* name) {
    return std::find(offered.begin(), offered.end(), name) != offered.end();
  };
  if (offers(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) chain(&sm);
  if (offers(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) chain(&amd);
  instance_fns.vkGetPhysicalDeviceProperties2(ctx->info_.physical_device, &props2);
  ctx->subgroup_size_ = subgroup.subgroupSize;
  if (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ctx->subgroup_operations_ = subgroup.supportedOperations;
  if (sm.shaderSMCount) {
    ctx->compute_units_ = sm.shaderSMCount;
  } else if (amd.shaderEngineCount) {
    ctx->compute_units_ = amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray;
  }
  auto get_shapes = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      global.vkGetInstanceProcAddr(ctx->info_.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (has_coopmat && (coopmat.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
    for (const VkCooperativeMatrixPropertiesKHR& p : query_records<VkCooperativeMatrixPropertiesKHR>(
             get_shapes, ctx->info_.physical_device, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR)) {
      ctx->coopmat_shapes_.push_back(CooperativeMatrixShape{
          p.MSize, p.NSize, p.KSize, static_cast<uint32_t>(p.AType), static_cast<uint32_t>(p.BType),
          static_cast<uint32_t>(p.CType), static_cast<uint32_t>(p.ResultType), p.saturatingAccumulation != VK_FALSE,
          static_cast<uint32_t>(p.scope)});
    }
  }
  auto get_flexible = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
      global.vkGetInstanceProcAddr(ctx->info_.instance,
                                   "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
  if (has_coopmat2 && get_flexible) {
    CooperativeMatrixWorkgroupLimits& wg = ctx->coopmat_workgroup_;
    wg.max_workgroup_size = coopmat2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    wg.max_dimension = coopmat2.cooperativeMatrixFlexibleDimensionsMaxDimension;
    wg.reserved_shared_bytes = coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
    for (const VkCooperativeMatrixFlexibleDimensionsPropertiesNV& p :
         query_records<VkCooperativeMatrixFlexibleDimensionsPropertiesNV>(
             get_flexible, ctx->info_.physical_device,
             VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV)) {
      wg.shapes.push_back(CooperativeMatrixShape{
          p.MGranularity, p.NGranularity, p.KGranularity, static_cast<uint32_t>(p.AType),
          static_cast<uint32_t>(p.BType), static_cast<uint32_t>(p.CType), static_cast<uint32_t>(p.ResultType),
          p.saturatingAccumulation != VK_FALSE, static_cast<uint32_t>(p.scope), p.workgroupInvocations});
    }
  }
  if (ctx->info_.timeline_semaphore) {
    uint64_t current = 0;
    if (device_fns.vkGetSemaphoreCounterValue &&
        device_fns.vkGetSemaphoreCounterValue(ctx->info_.device, ctx->info_.timeline_semaphore, &current) ==
            VK_SUCCESS) {
      ctx->last_timeline_value_ = current;  // an application's semaphore may be past zero
    }
  }
  log(LogLevel::kDebug, "context", "context '", ctx->token(), "' group ", ctx->group_id(), " on ",
      ctx->device_name(), made_semaphore ? " (own timeline semaphore)" : "");
  return ctx;
}

SharedGpuContext::~SharedGpuContext() {
  log(LogLevel::kDebug, "context", "destroying context '", info_.token, "' group ", info_.group_id,
      " (owns device: ", info_.owns_device ? "yes" : "no", ")");
  // Only a device we own may be waited on as a whole: the application may be
  // using its own device from other threads. Delegates finish their own work
  // before they drop their references.
  if (info_.device && info_.owns_device) device_fns_.vkDeviceWaitIdle(info_.device);
  while (!kept_.empty()) kept_.pop_back();
  pipeline_cache_.reset();
  if (info_.owns_timeline_semaphore && info_.timeline_semaphore) {
    device_fns_.vkDestroySemaphore(info_.device, info_.timeline_semaphore, nullptr);
  }
  if (info_.owns_device && info_.device) device_fns_.vkDestroyDevice(info_.device, nullptr);
  if (info_.debug_messenger && instance_fns_.vkDestroyDebugUtilsMessengerEXT) {
    instance_fns_.vkDestroyDebugUtilsMessengerEXT(info_.instance, info_.debug_messenger, nullptr);
  }
  if (info_.owns_instance && info_.instance) instance_fns_.vkDestroyInstance(info_.instance, nullptr);
  if (info_.on_destroy) info_.on_destroy();
}

std::shared_ptr<void> SharedGpuContext::kept(const std::string& name,
                                             const std::function<std::shared_ptr<void>()>& make) const {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  for (const auto& entry : kept_) {
    if (entry.first == name) return entry.second;
  }
  kept_.emplace_back(name, make());
  return kept_.back().second;
}

bool SharedGpuContext::has_extension(const std::string& name) const {
  const auto& exts = info_.enabled_device_extensions;
  return std::find(exts.begin(), exts.end(), name) != exts.end();
}

SharedGpuContext::QueueGuard::QueueGuard(const SharedGpuContext& ctx) : ctx_(ctx) {
  if (ctx_.info_.external_queue_lock.set()) {
    ctx_.info_.external_queue_lock.lock(ctx_.info_.external_queue_lock.user_data);
  } else {
    ctx_.queue_mutex_.lock();
  }
}

SharedGpuContext::QueueGuard::~QueueGuard() {
  if (ctx_.info_.external_queue_lock.set()) {
    ctx_.info_.external_queue_lock.unlock(ctx_.info_.external_queue_lock.user_data);
  } else {
    ctx_.queue_mutex_.unlock();
  }
}

VkResult SharedGpuContext::submit(uint32_t count, const VkSubmitInfo* submits, VkFence fence) const {
  QueueGuard guard(*this);
  return device_fns_.vkQueueSubmit(info_.queue, count, submits, fence);
}

Result<uint64_t> SharedGpuContext::submit_timeline(uint32_t count, const VkCommandBuffer* command_buffers,
                                                   VkFence fence) const {
  if (!info_.timeline_semaphore) {
    return err(StatusCode::kUnsupported, "context '", info_.token, "' on '", device_name(),
               "' has no timeline semaphore");
  }
  QueueGuard guard(*this);
  uint64_t wait_value = last_timeline_value_;
  uint64_t signal_value = wait_value + 1;
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.waitSemaphoreValueCount = wait_value ? 1 : 0;
  timeline.pWaitSemaphoreValues = &wait_value;
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = wait_value ? 1 : 0;
  submit.pWaitSemaphores = &info_.timeline_semaphore;
  submit.pWaitDstStageMask = &wait_stage;
  submit.commandBufferCount = count;
  submit.pCommandBuffers = command_buffers;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &info_.timeline_semaphore;
  GPUU_VK_RETURN_IF_ERROR(device_fns_.vkQueueSubmit(info_.queue, 1, &submit, fence), "vkQueueSubmit");
  last_timeline_value_ = signal_value;
  return signal_value;
}

Result<DevicePeaks> SharedGpuContext::peaks(const std::function<Result<DevicePeaks>()>& measure) const {
  std::lock_guard<std::mutex> lock(peaks_mutex_);
  if (!peaks_) {
    GPUU_ASSIGN_OR_RETURN(DevicePeaks measured, measure());
    peaks_ = std::move(measured);
  }
  return *peaks_;
}

uint64_t SharedGpuContext::last_timeline_value() const {
  QueueGuard guard(*this);
  return last_timeline_value_;
}

VkResult SharedGpuContext::queue_wait_idle() const {
  QueueGuard guard(*this);
  return device_fns_.vkQueueWaitIdle(info_.queue);
}

VkResult SharedGpuContext::create_command_pool(VkCommandPool* command_pool) const {
  if (!is_valid() || !command_pool) return VK_ERROR_INITIALIZATION_FAILED;
  VkCommandPoolCreateInfo create_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  create_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  create_info.queueFamilyIndex = info_.queue_family_index;
  return device_fns_.vkCreateCommandPool(info_.device, &create_info, nullptr, command_pool);
}

VkResult SharedGpuContext::allocate_command_buffer(VkCommandPool command_pool, VkCommandBuffer* command_buffer) const {
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  return device_fns_.vkAllocateCommandBuffers(info_.device, &alloc, command_buffer);
}

void SharedGpuContext::destroy_command_pool(VkCommandPool command_pool) const {
  if (command_pool) device_fns_.vkDestroyCommandPool(info_.device, command_pool, nullptr);
}

}  // namespace gpuu
