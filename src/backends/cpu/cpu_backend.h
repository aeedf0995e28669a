// The CPU fallback's door: the host executor over the reference kernels
// (cpu_kernels.h), which runtime/builtin_backends hands to the runtime.
#pragma once

#include "backends/host_executor.h"

namespace gpuu::cpu {

// The process's one CPU host executor (stateless; lives forever).
const backends::HostExecutor& cpu_host_executor();

}  // namespace gpuu::cpu
