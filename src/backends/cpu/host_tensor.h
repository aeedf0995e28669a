// The CPU kernels' names for the contract's host tensor (backends/host_tensor.h),
// so that the kernels and their tests keep spelling it cpu::HostTensor.
#pragma once

#include "backends/host_tensor.h"

namespace gpuu::cpu {

using backends::DTypeOf;
using backends::HostTensor;
using backends::store_double;
using backends::type_string;

}  // namespace gpuu::cpu
