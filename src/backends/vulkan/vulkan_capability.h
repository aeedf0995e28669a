// VulkanBackend's declaration to the partitioner, read from the kernel op
// table (kernels/op_table.h): the backend takes exactly what its kernels do.
#pragma once

#include "partition/backend_capability.h"

namespace gpuu::vulkan {

const partition::BackendCapability& vulkan_capability();

}  // namespace gpuu::vulkan
