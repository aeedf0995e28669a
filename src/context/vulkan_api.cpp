// Loading of Vulkan entry points and naming of VkResult values.
#include "context/vulkan_api.h"

#include <dlfcn.h>

#include <mutex>

namespace gpuu::vk {

const char* vk_result_name(VkResult result) {
  switch (result) {
#define GPUU_VK_RESULT_CASE(r) \
  case r:                      \
    return #r;
    GPUU_VK_RESULT_CASE(VK_SUCCESS)
    GPUU_VK_RESULT_CASE(VK_NOT_READY)
    GPUU_VK_RESULT_CASE(VK_TIMEOUT)
    GPUU_VK_RESULT_CASE(VK_INCOMPLETE)
    GPUU_VK_RESULT_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    GPUU_VK_RESULT_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    GPUU_VK_RESULT_CASE(VK_ERROR_INITIALIZATION_FAILED)
    GPUU_VK_RESULT_CASE(VK_ERROR_DEVICE_LOST)
    GPUU_VK_RESULT_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    GPUU_VK_RESULT_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    GPUU_VK_RESULT_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    GPUU_VK_RESULT_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    GPUU_VK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    GPUU_VK_RESULT_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    GPUU_VK_RESULT_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    GPUU_VK_RESULT_CASE(VK_ERROR_FRAGMENTED_POOL)
    GPUU_VK_RESULT_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    GPUU_VK_RESULT_CASE(VK_ERROR_UNKNOWN)
#undef GPUU_VK_RESULT_CASE
    default:
      return "VkResult(?)";
  }
}

Status vk_status(VkResult result, const char* call) {
  StatusCode code = StatusCode::kVulkan;
  if (result == VK_ERROR_DEVICE_LOST) code = StatusCode::kDeviceLost;
  if (result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY) {
    code = StatusCode::kOutOfMemory;
  }
  if (result == VK_ERROR_EXTENSION_NOT_PRESENT || result == VK_ERROR_FEATURE_NOT_PRESENT ||
      result == VK_ERROR_INCOMPATIBLE_DRIVER || result == VK_ERROR_LAYER_NOT_PRESENT) {
    code = StatusCode::kUnsupported;
  }
  return err(code, call, " failed: ", vk_result_name(result), " (", static_cast<int>(result), ")");
}

Result<GlobalFunctions> load_global(PFN_vkGetInstanceProcAddr gipa) {
  if (!gipa) return err(StatusCode::kInvalidArgument, "vkGetInstanceProcAddr is null");
  GlobalFunctions g;
  g.vkGetInstanceProcAddr = gipa;
#define GPUU_VK_LOAD_GLOBAL(name) g.name = reinterpret_cast<PFN_##name>(gipa(VK_NULL_HANDLE, #name));
  GPUU_VK_GLOBAL_FUNCTIONS(GPUU_VK_LOAD_GLOBAL)
#undef GPUU_VK_LOAD_GLOBAL
  if (!g.vkCreateInstance) return err(StatusCode::kUnsupported, "the Vulkan loader has no vkCreateInstance");
  return g;
}

Result<GlobalFunctions> system_loader() {
  static std::once_flag once;
  static void* library = nullptr;
  static std::string open_error;
  std::call_once(once, [] {
    library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* e = dlerror();
      open_error = e ? e : "unknown dlopen error";
    }
  });
  if (!library) {
    return err(StatusCode::kUnsupported, "no Vulkan loader (libvulkan.so.1) could be opened: ", open_error);
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (!gipa) return err(StatusCode::kUnsupported, "libvulkan.so.1 has no vkGetInstanceProcAddr");
  return load_global(gipa);
}

Result<InstanceFunctions> load_instance(const GlobalFunctions& global, VkInstance instance) {
  InstanceFunctions f;
#define GPUU_VK_LOAD_INSTANCE(name)                                                      \
  f.name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name)); \
  if (!f.name) return err(StatusCode::kUnsupported, "Vulkan instance function " #name " is unavailable");
  GPUU_VK_INSTANCE_FUNCTIONS(GPUU_VK_LOAD_INSTANCE)
#undef GPUU_VK_LOAD_INSTANCE
#define GPUU_VK_LOAD_OPTIONAL(name) \
  f.name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name));
  GPUU_VK_INSTANCE_OPTIONAL_FUNCTIONS(GPUU_VK_LOAD_OPTIONAL)
#undef GPUU_VK_LOAD_OPTIONAL
  return f;
}

// The shape of load_instance above: another table, filled through vkGetDeviceProcAddr.
Result<DeviceFunctions> load_device(const InstanceFunctions& instance_fns, VkDevice device) {
  DeviceFunctions f;
#define GPUU_VK_LOAD_DEVICE(name)                                                         \
  f.name = reinterpret_cast<PFN_##name>(instance_fns.vkGetDeviceProcAddr(device, #name)); \
  if (!f.name) return err(StatusCode::kUnsupported, "Vulkan device function " #name " is unavailable");
  GPUU_VK_DEVICE_FUNCTIONS(GPUU_VK_LOAD_DEVICE)
#undef GPUU_VK_LOAD_DEVICE
#define GPUU_VK_LOAD_DEVICE_OPTIONAL(name) \
  f.name = reinterpret_cast<PFN_##name>(instance_fns.vkGetDeviceProcAddr(device, #name));
  GPUU_VK_DEVICE_OPTIONAL_FUNCTIONS(GPUU_VK_LOAD_DEVICE_OPTIONAL)
#undef GPUU_VK_LOAD_DEVICE_OPTIONAL
  return f;
}

}  // namespace gpuu::vk
