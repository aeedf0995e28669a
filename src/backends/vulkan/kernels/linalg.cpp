// Kernel family 'linalg': being written; registers nothing yet.
#include "backends/vulkan/vulkan_ops.h"

namespace gpuu::vulkan {

void add_linalg_kernels(std::vector<OpKernel>&) {}

}  // namespace gpuu::vulkan
