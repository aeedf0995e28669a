// Kernel family 'conv_pool': being written; registers nothing yet.
#include "backends/vulkan/vulkan_ops.h"

namespace gpuu::vulkan {

void add_conv_pool_kernels(std::vector<OpKernel>&) {}

}  // namespace gpuu::vulkan
