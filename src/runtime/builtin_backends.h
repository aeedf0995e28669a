// The backends gpuu ships, registered once in the process-wide registry.
#pragma once

#include "backends/backend.h"

namespace gpuu::runtime {

// The registry with VulkanBackend (and every other built-in backend) in it.
backends::BackendRegistry& backend_registry();

}  // namespace gpuu::runtime
