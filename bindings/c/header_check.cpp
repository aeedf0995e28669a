/* The C++ twin of header_check.c: gpuu.h must compile as C++11 with
 * -Wall -Wextra -Werror -pedantic beside vulkan.h, in either include order,
 * and its handle types must be the very types vulkan.h declares. */
#ifdef GPUU_VULKAN_FIRST
#include <vulkan/vulkan.h>
#include <gpuu.h>
#else
#include <gpuu.h>
#include <vulkan/vulkan.h>
#endif

/* Assigning without casts proves the types agree. */
int gpuu_header_check(VkInstance instance, VkDevice device, VkSemaphore semaphore, PFN_vkGetInstanceProcAddr gipa);
int gpuu_header_check(VkInstance instance, VkDevice device, VkSemaphore semaphore, PFN_vkGetInstanceProcAddr gipa) {
  gpuu_external_context_desc desc;
  gpuu_vulkan_handles handles;
  gpuu_external_context_desc_init(&desc);
  desc.instance = instance;
  desc.device = device;
  desc.timeline_semaphore = semaphore;
  desc.get_instance_proc_addr = gipa;
  handles.struct_size = sizeof(handles);
  if (gpuu_context_get_vulkan_handles(NULL, &handles) == GPUU_OK) {
    VkDevice back = handles.device;
    VkSemaphore sem = handles.timeline_semaphore;
    return back == device && sem == semaphore;
  }
  return sizeof(gpuu_status) == 4 && sizeof(gpuu_context_mode) == 4 && sizeof(gpuu_log_level) == 4;
}
