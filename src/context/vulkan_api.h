// Vulkan entry points, loaded at run time through a vkGetInstanceProcAddr:
// the system loader's (dlopen'd, so libgpuu loads even where Vulkan is absent)
// or the application's own. Each context carries its own tables.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "base/status.h"

namespace gpuu::vk {

// Functions callable without an instance.
#define GPUU_VK_GLOBAL_FUNCTIONS(X)      \
  X(vkCreateInstance)                    \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)  \
  X(vkEnumerateInstanceVersion)

#define GPUU_VK_INSTANCE_FUNCTIONS(X)             \
  X(vkDestroyInstance)                            \
  X(vkEnumeratePhysicalDevices)                   \
  X(vkGetPhysicalDeviceProperties)                \
  X(vkGetPhysicalDeviceProperties2)               \
  X(vkGetPhysicalDeviceFeatures2)                 \
  X(vkGetPhysicalDeviceQueueFamilyProperties)     \
  X(vkGetPhysicalDeviceMemoryProperties)          \
  X(vkEnumerateDeviceExtensionProperties)         \
  X(vkEnumerateDeviceLayerProperties)             \
  X(vkCreateDevice)                               \
  X(vkGetDeviceProcAddr)

// Optional instance functions (an extension may be absent).
#define GPUU_VK_INSTANCE_OPTIONAL_FUNCTIONS(X) \
  X(vkCreateDebugUtilsMessengerEXT)            \
  X(vkDestroyDebugUtilsMessengerEXT)

#define GPUU_VK_DEVICE_FUNCTIONS(X)   \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkDeviceWaitIdle)                 \
  X(vkQueueSubmit)                    \
  X(vkQueueWaitIdle)                  \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkResetCommandPool)               \
  X(vkAllocateCommandBuffers)         \
  X(vkFreeCommandBuffers)             \
  X(vkBeginCommandBuffer)             \
  X(vkResetCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkCmdPipelineBarrier)             \
  X(vkCmdDispatch)                    \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdCopyBuffer)                  \
  X(vkCmdFillBuffer)                  \
  X(vkCmdWriteTimestamp)              \
  X(vkCmdResetQueryPool)              \
  X(vkCreateSemaphore)                \
  X(vkDestroySemaphore)               \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkWaitForFences)                  \
  X(vkResetFences)                    \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkGetBufferMemoryRequirements)    \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkBindBufferMemory)               \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkFlushMappedMemoryRanges)        \
  X(vkInvalidateMappedMemoryRanges)   \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreatePipelineCache)            \
  X(vkDestroyPipelineCache)           \
  X(vkGetPipelineCacheData)           \
  X(vkMergePipelineCaches)            \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkAllocateDescriptorSets)         \
  X(vkUpdateDescriptorSets)           \
  X(vkCreateQueryPool)                \
  X(vkDestroyQueryPool)               \
  X(vkGetQueryPoolResults)

// Vulkan 1.2 timeline-semaphore entry points: absent on older devices.
#define GPUU_VK_DEVICE_OPTIONAL_FUNCTIONS(X) \
  X(vkWaitSemaphores)                        \
  X(vkSignalSemaphore)                       \
  X(vkGetSemaphoreCounterValue)

#define GPUU_VK_DECLARE(name) PFN_##name name = nullptr;

struct GlobalFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  GPUU_VK_GLOBAL_FUNCTIONS(GPUU_VK_DECLARE)
};

struct InstanceFunctions {
  GPUU_VK_INSTANCE_FUNCTIONS(GPUU_VK_DECLARE)
  GPUU_VK_INSTANCE_OPTIONAL_FUNCTIONS(GPUU_VK_DECLARE)
};

struct DeviceFunctions {
  GPUU_VK_DEVICE_FUNCTIONS(GPUU_VK_DECLARE)
  GPUU_VK_DEVICE_OPTIONAL_FUNCTIONS(GPUU_VK_DECLARE)
};

// The system loader's global functions (libvulkan.so.1, opened once and kept).
// kUnsupported with a clear message when no loader is installed.
Result<GlobalFunctions> system_loader();

// Global functions through a given vkGetInstanceProcAddr.
Result<GlobalFunctions> load_global(PFN_vkGetInstanceProcAddr get_instance_proc_addr);
Result<InstanceFunctions> load_instance(const GlobalFunctions& global, VkInstance instance);
Result<DeviceFunctions> load_device(const InstanceFunctions& instance_fns, VkDevice device);

// A Status for a failed Vulkan call: "vkCreateDevice failed: VK_ERROR_..."
Status vk_status(VkResult result, const char* call);
const char* vk_result_name(VkResult result);

}  // namespace gpuu::vk

#define GPUU_VK_RETURN_IF_ERROR(call_expr, name)               \
  do {                                                         \
    VkResult gpuu_vk_result_ = (call_expr);                    \
    if (gpuu_vk_result_ != VK_SUCCESS) return ::gpuu::vk::vk_status(gpuu_vk_result_, name); \
  } while (0)
