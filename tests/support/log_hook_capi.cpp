// Log hook for tests linked against libgpuu.so only.
#include "gpuu.h"
#include "support/test_vulkan_device.h"

namespace gpuu_test {
void install_log_hook() {
  gpuu_set_log_callback([](void*, gpuu_log_level level, const char* component,
                           const char* message) { on_log(static_cast<int>(level), component, message); },
                        nullptr, GPUU_LOG_WARN);
}
}  // namespace gpuu_test
