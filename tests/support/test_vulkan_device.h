// A Vulkan device made the way an application makes one (linked against the
// loader, its own instance and debug messenger), for tests of device injection.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <vector>

namespace gpuu_test {

struct AppDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  bool timeline_enabled = false;
  std::string device_name;

  AppDevice() = default;
  AppDevice(const AppDevice&) = delete;
  AppDevice& operator=(const AppDevice&) = delete;
  ~AppDevice() { destroy(); }

  // Creates instance (with validation when GPUU_VALIDATION=1), device and queue.
  // Returns false with `error` set when no device can be made.
  bool create(std::string* error);
  // Destroys whatever is still held; safe to call twice.
  void destroy();
  // Proves the device still works: a command pool, an empty submit, an idle wait.
  bool still_usable(std::string* why) const;
  // Releases the handles without destroying them (ownership went to gpuu).
  // Hands device and instance to gpuu: they are no longer destroyed here. The
  // debug messenger (a child of the instance) is destroyed now, since gpuu will
  // destroy the instance it belongs to.
  void forget_device_and_instance_keep_messenger();
};

// Validation messages gpuu's own instances logged since last taken (a test
// that provokes one on purpose takes it, so it does not fail the test).
std::vector<std::string> take_gpuu_validation_messages();

// Validation messages the application-side messengers received since last taken.
std::vector<std::string> take_app_validation_messages();

// Routes warnings and validation messages of the gpuu under test to on_log:
// through gpuu_set_log_callback for C ABI tests, the internal sink otherwise.
void install_log_hook();
void on_log(int level, const char* component, const char* message);

// True when tests run under the validation layer.
bool validation_enabled();

}  // namespace gpuu_test
