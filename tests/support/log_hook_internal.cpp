// Log hook for tests linked against the internal libraries.
#include "base/log.h"
#include "support/test_vulkan_device.h"

namespace gpuu_test {
void install_log_hook() {
  gpuu::set_log_sink([](void*, gpuu::LogLevel level, const char* component,
                        const char* message) { on_log(static_cast<int>(level), component, message); },
                     nullptr, gpuu::LogLevel::kWarn);
}
}  // namespace gpuu_test
