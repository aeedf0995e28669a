// Registration of the built-in backends, on first use.
#include "runtime/builtin_backends.h"

#include <mutex>

#include "backends/vulkan/vulkan_backend.h"

namespace gpuu::runtime {

backends::BackendRegistry& backend_registry() {
  static backends::BackendRegistry* registry = [] {
    auto* r = new backends::BackendRegistry();  // never destroyed: delegates may outlive static teardown
    Status s = r->register_backend(std::make_unique<vulkan::VulkanBackend>());
    (void)s;  // a fresh registry cannot hold the id yet
    return r;
  }();
  return *registry;
}

}  // namespace gpuu::runtime
