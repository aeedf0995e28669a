// Vulkan bootstrap: gpuu's own instance, device choice, compute queue and
// timeline semaphore, for contexts that no application supplied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "context/shared_gpu_context.h"
#include "context/shared_gpu_context_registry.h"

namespace gpuu {

struct PhysicalDeviceInfo {
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
};

// The devices the system loader sees, in enumeration order.
Result<std::vector<PhysicalDeviceInfo>> enumerate_physical_devices();

// Picks an index: `selector` (or GPUU_DEVICE when empty) as a decimal index or a
// case-insensitive name substring; otherwise discrete, integrated, virtual,
// then CPU devices, earliest first within a kind.
Result<size_t> choose_physical_device(const std::vector<PhysicalDeviceInfo>& devices, const std::string& selector);

// A context that owns everything it holds (instance, device, semaphore).
Result<SharedGpuContextPtr> create_vulkan_context(const std::string& token, int64_t group_id,
                                                  const DeviceOptions& options);

// The ContextFactory that create_vulkan_context() makes with `options`.
ContextFactory vulkan_context_factory(const DeviceOptions& options);

// Validation-layer messages (warnings and errors) seen so far in this process.
uint64_t validation_message_count();

// True when VK_LAYER_KHRONOS_validation is installed.
bool validation_layer_available();

}  // namespace gpuu
