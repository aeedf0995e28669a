/*
 * inject_device: an application that brings its own Vulkan device to gpuu.
 *
 * It creates a VkInstance and VkDevice itself (loading Vulkan at run time, so
 * the only build flags are `pkg-config --cflags --libs gpuu`), registers them
 * under a (token, group) key, then resolves that key with lookup_only, as a
 * delegate of a program would, and prints the device gpuu found.
 *
 *   cc inject_device.c $(pkg-config --cflags --libs gpuu) -o inject_device
 */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpuu.h>

#define CHECK_VK(call)                                                  \
  do {                                                                  \
    VkResult r_ = (call);                                               \
    if (r_ != VK_SUCCESS) {                                             \
      fprintf(stderr, "inject_device: %s failed (%d)\n", #call, (int)r_); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main(void) {
  const char* token = "sample_app";
  const int64_t group = 0;

  /* 1. The application's own Vulkan objects. */
  void* loader = dlopen("libvulkan.so.1", RTLD_NOW);
  if (!loader) {
    fprintf(stderr, "inject_device: no Vulkan loader: %s\n", dlerror());
    return 1;
  }
  PFN_vkGetInstanceProcAddr gipa = NULL;
  *(void**)(&gipa) = dlsym(loader, "vkGetInstanceProcAddr"); /* POSIX's way to take a function from dlsym */
  if (!gipa) {
    fprintf(stderr, "inject_device: the loader has no vkGetInstanceProcAddr\n");
    return 1;
  }
  PFN_vkCreateInstance create_instance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");

  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "inject_device";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  CHECK_VK(create_instance(&instance_info, NULL, &instance));

#define LOAD(name) PFN_##name name = (PFN_##name)gipa(instance, #name)
  LOAD(vkEnumeratePhysicalDevices);
  LOAD(vkGetPhysicalDeviceProperties);
  LOAD(vkGetPhysicalDeviceQueueFamilyProperties);
  LOAD(vkGetPhysicalDeviceFeatures2);
  LOAD(vkCreateDevice);
  LOAD(vkGetDeviceQueue);
  LOAD(vkDestroyDevice);
  LOAD(vkDestroyInstance);
#undef LOAD

  uint32_t count = 0;
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &count, NULL));
  if (count == 0) {
    fprintf(stderr, "inject_device: no Vulkan device (install mesa-vulkan-drivers for lavapipe)\n");
    return 1;
  }
  VkPhysicalDevice* devices = calloc(count, sizeof(VkPhysicalDevice));
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &count, devices));
  VkPhysicalDevice physical = devices[0];
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devices[i], &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) {
      physical = devices[i];
      break;
    }
  }
  free(devices);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, NULL);
  VkQueueFamilyProperties* families = calloc(family_count, sizeof(VkQueueFamilyProperties));
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families);
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < family_count && family == UINT32_MAX; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  }
  free(families);
  if (family == UINT32_MAX) {
    fprintf(stderr, "inject_device: the device has no compute queue\n");
    return 1;
  }

  VkPhysicalDeviceVulkan12Features supported12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &supported12;
  vkGetPhysicalDeviceFeatures2(physical, &supported);
  VkPhysicalDeviceVulkan12Features enable12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enable12.timelineSemaphore = supported12.timelineSemaphore;

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &enable12;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  VkDevice device = VK_NULL_HANDLE;
  CHECK_VK(vkCreateDevice(physical, &device_info, NULL, &device));
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);
  printf("application: created '%s' (VkDevice %p)\n", props.deviceName, (void*)device);

  /* 2. Hand the device to gpuu under (token, group); gpuu owns nothing of it. */
  gpuu_external_context_desc desc;
  gpuu_external_context_desc_init(&desc);
  desc.token = token;
  desc.group_id = group;
  desc.instance = instance;
  desc.physical_device = physical;
  desc.device = device;
  desc.queue = queue;
  desc.queue_family_index = family;
  desc.get_instance_proc_addr = (gpuu_vk_get_instance_proc_addr)gipa;
  desc.ownership = GPUU_OWN_NOTHING;
  desc.enabled_features = enable12.timelineSemaphore ? GPUU_FEATURE_TIMELINE_SEMAPHORE : 0;
  if (gpuu_context_register_external(&desc, NULL) != GPUU_OK) {
    fprintf(stderr, "inject_device: register failed: %s\n", gpuu_last_error());
    return 1;
  }

  /* 3. Resolve it as a delegate with mode lookup_only would. */
  gpuu_context_resolve_options options;
  gpuu_context_resolve_options_init(&options);
  options.token = token;
  options.group_id = group;
  options.mode = GPUU_CONTEXT_LOOKUP_ONLY;
  gpuu_context* context = NULL;
  gpuu_status status = gpuu_context_resolve(&options, &context);
  if (status != GPUU_OK) {
    fprintf(stderr, "inject_device: resolve failed (%s): %s\n", gpuu_status_string(status), gpuu_last_error());
    return 1;
  }
  gpuu_vulkan_handles handles;
  handles.struct_size = sizeof(handles);
  gpuu_context_get_vulkan_handles(context, &handles);
  printf("gpuu %s: resolved '%s' group %lld (lookup_only) -> device '%s' (VkDevice %p), same as the application's: %s\n",
         gpuu_version_string(), gpuu_context_token(context), (long long)gpuu_context_group_id(context),
         gpuu_context_device_name(context), (void*)handles.device, handles.device == device ? "yes" : "NO");
  int same = handles.device == device;

  /* 4. Tear down: gpuu lets go, then the application destroys its own objects. */
  gpuu_context_release(context);
  gpuu_context_unregister(token, group);
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
  dlclose(loader);
  return same ? 0 : 1;
}
