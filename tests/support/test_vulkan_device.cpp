// Application-side device creation for tests: plain Vulkan through the loader.
#include "support/test_vulkan_device.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gpuu_test {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_messages;

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_messages.emplace_back(std::string("[app instance] ") + (data && data->pMessage ? data->pMessage : ""));
  return VK_FALSE;
}

}  // namespace

bool validation_enabled() {
  const char* v = std::getenv("GPUU_VALIDATION");
  return v && std::strcmp(v, "1") == 0;
}

std::vector<std::string> take_app_validation_messages() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> out;
  out.swap(g_messages);
  return out;
}

bool AppDevice::create(std::string* error) {
  bool validation = validation_enabled();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuu-test-app";
  app.apiVersion = VK_API_VERSION_1_2;
  const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char* exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_message;
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  features.pNext = &messenger_info;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  if (validation) {
    info.pNext = &features;
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = exts;
  }
  if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) {
    *error = "vkCreateInstance failed";
    return false;
  }
  if (validation) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger) create_messenger(instance, &messenger_info, nullptr, &messenger);
  }
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (devices.empty()) {
    *error = "no physical device";
    return false;
  }
  physical_device = devices[0];
  for (VkPhysicalDevice d : devices) {  // the same preference as gpuu: a GPU, else the CPU device
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) {
      physical_device = d;
      break;
    }
  }
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_device, &props);
  device_name = props.deviceName;
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
  bool found = false;
  for (uint32_t i = 0; i < family_count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      queue_family_index = i;
      found = true;
      break;
    }
  }
  if (!found) {
    *error = "no compute queue";
    return false;
  }
  VkPhysicalDeviceVulkan12Features supported12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &supported12;
  vkGetPhysicalDeviceFeatures2(physical_device, &supported);
  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enable12.timelineSemaphore = supported12.timelineSemaphore;
  timeline_enabled = supported12.timelineSemaphore == VK_TRUE;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = queue_family_index;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &enable12;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  if (vkCreateDevice(physical_device, &device_info, nullptr, &device) != VK_SUCCESS) {
    *error = "vkCreateDevice failed";
    return false;
  }
  vkGetDeviceQueue(device, queue_family_index, 0, &queue);
  return true;
}

bool AppDevice::still_usable(std::string* why) const {
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = queue_family_index;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (vkCreateCommandPool(device, &pool_info, nullptr, &pool) != VK_SUCCESS) {
    *why = "vkCreateCommandPool failed";
    return false;
  }
  vkDestroyCommandPool(device, pool, nullptr);
  if (vkQueueSubmit(queue, 0, nullptr, VK_NULL_HANDLE) != VK_SUCCESS) {
    *why = "vkQueueSubmit failed";
    return false;
  }
  if (vkDeviceWaitIdle(device) != VK_SUCCESS) {
    *why = "vkDeviceWaitIdle failed";
    return false;
  }
  return true;
}

void AppDevice::forget_device_and_instance_keep_messenger() {
  if (messenger) {
    auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy_messenger) destroy_messenger(instance, messenger, nullptr);
  }
  messenger = VK_NULL_HANDLE;
  device = VK_NULL_HANDLE;
  instance = VK_NULL_HANDLE;
}

void AppDevice::destroy() {
  if (device) vkDestroyDevice(device, nullptr);
  device = VK_NULL_HANDLE;
  if (messenger) {
    auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy_messenger) destroy_messenger(instance, messenger, nullptr);
  }
  messenger = VK_NULL_HANDLE;
  if (instance) vkDestroyInstance(instance, nullptr);
  instance = VK_NULL_HANDLE;
}

}  // namespace gpuu_test
