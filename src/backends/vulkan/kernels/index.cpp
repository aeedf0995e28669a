// Kernel family 'index': being written; registers nothing yet.
#include "backends/vulkan/vulkan_ops.h"

namespace gpuu::vulkan {

void add_index_kernels(std::vector<OpKernel>&) {}

}  // namespace gpuu::vulkan
