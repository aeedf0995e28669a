// VK_ARM_tensors and VK_ARM_data_graph, the extensions the VGF backend's
// native path runs on. Vulkan headers older than these extensions (Debian 12
// ships 1.3.239) lack them: this header then declares, from the values the
// Vulkan registry publishes, the types, enums and entry points gpuu uses, and
// nothing else. Where the system headers have them, theirs are used.
#pragma once

#include <vector>

#include "context/vulkan_api.h"

namespace gpuu::vk {

inline constexpr const char* kTensorsExtension = "VK_ARM_tensors";
inline constexpr const char* kDataGraphExtension = "VK_ARM_data_graph";
inline constexpr const char* kDataGraphTosaExtension = "VK_ARM_data_graph_instruction_set_tosa";

}  // namespace gpuu::vk

#ifndef VK_ARM_tensors
#define VK_ARM_tensors 1
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkTensorARM)
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkTensorViewARM)

typedef enum VkTensorTilingARM {
  VK_TENSOR_TILING_OPTIMAL_ARM = 0,
  VK_TENSOR_TILING_LINEAR_ARM = 1,
  VK_TENSOR_TILING_MAX_ENUM_ARM = 0x7FFFFFFF
} VkTensorTilingARM;
typedef VkFlags64 VkTensorCreateFlagsARM;
typedef VkFlags64 VkTensorUsageFlagsARM;
typedef VkFlags64 VkTensorViewCreateFlagsARM;
static const VkTensorUsageFlagsARM VK_TENSOR_USAGE_SHADER_BIT_ARM = 0x00000002ULL;
static const VkTensorUsageFlagsARM VK_TENSOR_USAGE_TRANSFER_SRC_BIT_ARM = 0x00000004ULL;
static const VkTensorUsageFlagsARM VK_TENSOR_USAGE_TRANSFER_DST_BIT_ARM = 0x00000008ULL;
static const VkTensorUsageFlagsARM VK_TENSOR_USAGE_DATA_GRAPH_BIT_ARM = 0x00000020ULL;

#define VK_STRUCTURE_TYPE_TENSOR_CREATE_INFO_ARM static_cast<VkStructureType>(1000460000)
#define VK_STRUCTURE_TYPE_TENSOR_VIEW_CREATE_INFO_ARM static_cast<VkStructureType>(1000460001)
#define VK_STRUCTURE_TYPE_BIND_TENSOR_MEMORY_INFO_ARM static_cast<VkStructureType>(1000460002)
#define VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_TENSOR_ARM static_cast<VkStructureType>(1000460003)
#define VK_STRUCTURE_TYPE_TENSOR_DESCRIPTION_ARM static_cast<VkStructureType>(1000460006)
#define VK_STRUCTURE_TYPE_TENSOR_MEMORY_REQUIREMENTS_INFO_ARM static_cast<VkStructureType>(1000460007)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TENSOR_FEATURES_ARM static_cast<VkStructureType>(1000460009)
#define VK_DESCRIPTOR_TYPE_TENSOR_ARM static_cast<VkDescriptorType>(1000460000)
#define VK_FORMAT_R8_BOOL_ARM static_cast<VkFormat>(1000460000)

typedef struct VkTensorDescriptionARM {
  VkStructureType sType;
  const void* pNext;
  VkTensorTilingARM tiling;
  VkFormat format;
  uint32_t dimensionCount;
  const int64_t* pDimensions;
  const int64_t* pStrides;
  VkTensorUsageFlagsARM usage;
} VkTensorDescriptionARM;

typedef struct VkTensorCreateInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkTensorCreateFlagsARM flags;
  const VkTensorDescriptionARM* pDescription;
  VkSharingMode sharingMode;
  uint32_t queueFamilyIndexCount;
  const uint32_t* pQueueFamilyIndices;
} VkTensorCreateInfoARM;

typedef struct VkTensorViewCreateInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkTensorViewCreateFlagsARM flags;
  VkTensorARM tensor;
  VkFormat format;
} VkTensorViewCreateInfoARM;

typedef struct VkTensorMemoryRequirementsInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkTensorARM tensor;
} VkTensorMemoryRequirementsInfoARM;

typedef struct VkBindTensorMemoryInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkTensorARM tensor;
  VkDeviceMemory memory;
  VkDeviceSize memoryOffset;
} VkBindTensorMemoryInfoARM;

typedef struct VkWriteDescriptorSetTensorARM {
  VkStructureType sType;
  const void* pNext;
  uint32_t tensorViewCount;
  const VkTensorViewARM* pTensorViews;
} VkWriteDescriptorSetTensorARM;

typedef struct VkPhysicalDeviceTensorFeaturesARM {
  VkStructureType sType;
  void* pNext;
  VkBool32 tensorNonPacked;
  VkBool32 shaderTensorAccess;
  VkBool32 shaderStorageTensorArrayDynamicIndexing;
  VkBool32 shaderStorageTensorArrayNonUniformIndexing;
  VkBool32 descriptorBindingStorageTensorUpdateAfterBind;
  VkBool32 tensors;
} VkPhysicalDeviceTensorFeaturesARM;

typedef VkResult(VKAPI_PTR* PFN_vkCreateTensorARM)(VkDevice, const VkTensorCreateInfoARM*,
                                                   const VkAllocationCallbacks*, VkTensorARM*);
typedef void(VKAPI_PTR* PFN_vkDestroyTensorARM)(VkDevice, VkTensorARM, const VkAllocationCallbacks*);
typedef VkResult(VKAPI_PTR* PFN_vkCreateTensorViewARM)(VkDevice, const VkTensorViewCreateInfoARM*,
                                                       const VkAllocationCallbacks*, VkTensorViewARM*);
typedef void(VKAPI_PTR* PFN_vkDestroyTensorViewARM)(VkDevice, VkTensorViewARM, const VkAllocationCallbacks*);
typedef void(VKAPI_PTR* PFN_vkGetTensorMemoryRequirementsARM)(VkDevice, const VkTensorMemoryRequirementsInfoARM*,
                                                              VkMemoryRequirements2*);
typedef VkResult(VKAPI_PTR* PFN_vkBindTensorMemoryARM)(VkDevice, uint32_t, const VkBindTensorMemoryInfoARM*);
#endif  // VK_ARM_tensors

#ifndef VK_ARM_data_graph
#define VK_ARM_data_graph 1
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkDataGraphPipelineSessionARM)

typedef enum VkDataGraphPipelineSessionBindPointARM {
  VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_TRANSIENT_ARM = 0,
  VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_MAX_ENUM_ARM = 0x7FFFFFFF
} VkDataGraphPipelineSessionBindPointARM;
typedef enum VkDataGraphPipelineSessionBindPointTypeARM {
  VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_TYPE_MEMORY_ARM = 0,
  VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_TYPE_MAX_ENUM_ARM = 0x7FFFFFFF
} VkDataGraphPipelineSessionBindPointTypeARM;
typedef VkFlags64 VkDataGraphPipelineSessionCreateFlagsARM;
typedef VkFlags64 VkDataGraphPipelineDispatchFlagsARM;

#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CREATE_INFO_ARM static_cast<VkStructureType>(1000507000)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_CREATE_INFO_ARM static_cast<VkStructureType>(1000507001)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_RESOURCE_INFO_ARM static_cast<VkStructureType>(1000507002)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CONSTANT_ARM static_cast<VkStructureType>(1000507003)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_MEMORY_REQUIREMENTS_INFO_ARM \
  static_cast<VkStructureType>(1000507004)
#define VK_STRUCTURE_TYPE_BIND_DATA_GRAPH_PIPELINE_SESSION_MEMORY_INFO_ARM static_cast<VkStructureType>(1000507005)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DATA_GRAPH_FEATURES_ARM static_cast<VkStructureType>(1000507006)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SHADER_MODULE_CREATE_INFO_ARM static_cast<VkStructureType>(1000507007)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENTS_INFO_ARM \
  static_cast<VkStructureType>(1000507011)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENT_ARM static_cast<VkStructureType>(1000507012)
#define VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_DISPATCH_INFO_ARM static_cast<VkStructureType>(1000507014)
#define VK_PIPELINE_BIND_POINT_DATA_GRAPH_ARM static_cast<VkPipelineBindPoint>(1000507000)
#define VK_QUEUE_DATA_GRAPH_BIT_ARM static_cast<VkQueueFlagBits>(0x00000400)

typedef struct VkPhysicalDeviceDataGraphFeaturesARM {
  VkStructureType sType;
  void* pNext;
  VkBool32 dataGraph;
  VkBool32 dataGraphUpdateAfterBind;
  VkBool32 dataGraphSpecializationConstants;
  VkBool32 dataGraphDescriptorBuffer;
  VkBool32 dataGraphShaderModule;
} VkPhysicalDeviceDataGraphFeaturesARM;

typedef struct VkDataGraphPipelineConstantARM {
  VkStructureType sType;
  const void* pNext;
  uint32_t id;
  const void* pConstantData;
} VkDataGraphPipelineConstantARM;

typedef struct VkDataGraphPipelineResourceInfoARM {
  VkStructureType sType;
  const void* pNext;
  uint32_t descriptorSet;
  uint32_t binding;
  uint32_t arrayElement;
} VkDataGraphPipelineResourceInfoARM;

typedef struct VkDataGraphPipelineCreateInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkFlags64 flags;  // VkPipelineCreateFlags2
  VkPipelineLayout layout;
  uint32_t resourceInfoCount;
  const VkDataGraphPipelineResourceInfoARM* pResourceInfos;
} VkDataGraphPipelineCreateInfoARM;

typedef struct VkDataGraphPipelineShaderModuleCreateInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkShaderModule module;
  const char* pName;
  const VkSpecializationInfo* pSpecializationInfo;
  uint32_t constantCount;
  const VkDataGraphPipelineConstantARM* pConstants;
} VkDataGraphPipelineShaderModuleCreateInfoARM;

typedef struct VkDataGraphPipelineSessionCreateInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkDataGraphPipelineSessionCreateFlagsARM flags;
  VkPipeline dataGraphPipeline;
} VkDataGraphPipelineSessionCreateInfoARM;

typedef struct VkDataGraphPipelineSessionBindPointRequirementsInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkDataGraphPipelineSessionARM session;
} VkDataGraphPipelineSessionBindPointRequirementsInfoARM;

typedef struct VkDataGraphPipelineSessionBindPointRequirementARM {
  VkStructureType sType;
  void* pNext;
  VkDataGraphPipelineSessionBindPointARM bindPoint;
  VkDataGraphPipelineSessionBindPointTypeARM bindPointType;
  uint32_t numObjects;
} VkDataGraphPipelineSessionBindPointRequirementARM;

typedef struct VkDataGraphPipelineSessionMemoryRequirementsInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkDataGraphPipelineSessionARM session;
  VkDataGraphPipelineSessionBindPointARM bindPoint;
  uint32_t objectIndex;
} VkDataGraphPipelineSessionMemoryRequirementsInfoARM;

typedef struct VkBindDataGraphPipelineSessionMemoryInfoARM {
  VkStructureType sType;
  const void* pNext;
  VkDataGraphPipelineSessionARM session;
  VkDataGraphPipelineSessionBindPointARM bindPoint;
  uint32_t objectIndex;
  VkDeviceMemory memory;
  VkDeviceSize memoryOffset;
} VkBindDataGraphPipelineSessionMemoryInfoARM;

typedef struct VkDataGraphPipelineDispatchInfoARM {
  VkStructureType sType;
  void* pNext;
  VkDataGraphPipelineDispatchFlagsARM flags;
} VkDataGraphPipelineDispatchInfoARM;

typedef VkResult(VKAPI_PTR* PFN_vkCreateDataGraphPipelinesARM)(VkDevice, VkDeferredOperationKHR, VkPipelineCache,
                                                               uint32_t, const VkDataGraphPipelineCreateInfoARM*,
                                                               const VkAllocationCallbacks*, VkPipeline*);
typedef VkResult(VKAPI_PTR* PFN_vkCreateDataGraphPipelineSessionARM)(VkDevice,
                                                                     const VkDataGraphPipelineSessionCreateInfoARM*,
                                                                     const VkAllocationCallbacks*,
                                                                     VkDataGraphPipelineSessionARM*);
typedef VkResult(VKAPI_PTR* PFN_vkGetDataGraphPipelineSessionBindPointRequirementsARM)(
    VkDevice, const VkDataGraphPipelineSessionBindPointRequirementsInfoARM*, uint32_t*,
    VkDataGraphPipelineSessionBindPointRequirementARM*);
typedef void(VKAPI_PTR* PFN_vkGetDataGraphPipelineSessionMemoryRequirementsARM)(
    VkDevice, const VkDataGraphPipelineSessionMemoryRequirementsInfoARM*, VkMemoryRequirements2*);
typedef VkResult(VKAPI_PTR* PFN_vkBindDataGraphPipelineSessionMemoryARM)(
    VkDevice, uint32_t, const VkBindDataGraphPipelineSessionMemoryInfoARM*);
typedef void(VKAPI_PTR* PFN_vkDestroyDataGraphPipelineSessionARM)(VkDevice, VkDataGraphPipelineSessionARM,
                                                                  const VkAllocationCallbacks*);
typedef void(VKAPI_PTR* PFN_vkCmdDispatchDataGraphARM)(VkCommandBuffer, VkDataGraphPipelineSessionARM,
                                                       const VkDataGraphPipelineDispatchInfoARM*);
#endif  // VK_ARM_data_graph

namespace gpuu::vk {

// The tensor and data-graph entry points the native VGF path calls, through
// vkGetDeviceProcAddr of a device that enabled both extensions.
#define GPUU_VK_ARM_DEVICE_FUNCTIONS(X)                   \
  X(vkCreateDataGraphPipelinesARM)                        \
  X(vkCreateDataGraphPipelineSessionARM)                  \
  X(vkGetDataGraphPipelineSessionBindPointRequirementsARM) \
  X(vkGetDataGraphPipelineSessionMemoryRequirementsARM)   \
  X(vkBindDataGraphPipelineSessionMemoryARM)              \
  X(vkDestroyDataGraphPipelineSessionARM)                 \
  X(vkCmdDispatchDataGraphARM)                            \
  X(vkCreateTensorARM)                                    \
  X(vkDestroyTensorARM)                                   \
  X(vkCreateTensorViewARM)                                \
  X(vkDestroyTensorViewARM)                               \
  X(vkGetTensorMemoryRequirementsARM)                     \
  X(vkBindTensorMemoryARM)

struct ArmDeviceFunctions {
  GPUU_VK_ARM_DEVICE_FUNCTIONS(GPUU_VK_DECLARE)
};

// Their names, for checking that a device which enabled the extensions has them all.
inline const std::vector<const char*>& arm_device_entry_points() {
#define GPUU_VK_NAME(name) #name,
  static const std::vector<const char*> names = {GPUU_VK_ARM_DEVICE_FUNCTIONS(GPUU_VK_NAME)};
#undef GPUU_VK_NAME
  return names;
}

}  // namespace gpuu::vk
