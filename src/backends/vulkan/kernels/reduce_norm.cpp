// Kernel family 'reduce_norm': being written; registers nothing yet.
#include "backends/vulkan/vulkan_ops.h"

namespace gpuu::vulkan {

void add_reduce_norm_kernels(std::vector<OpKernel>&) {}

}  // namespace gpuu::vulkan
