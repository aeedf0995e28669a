// The one home of each growable struct's first-release size: the end of its
// last field in 0.2, the ABI baseline (or in the release that added it). The library accepts any struct_size from
// there up; a size here never changes once released (new fields go after).
#pragma once

#include <cstddef>

#include "gpuu.h"

namespace gpuu::capi {

template <typename T>
struct FirstRelease;  // only the structs listed below are growable

#define GPUU_FIRST_RELEASE(T, last_field)                                         \
  template <>                                                                     \
  struct FirstRelease<T> {                                                        \
    static constexpr size_t size = offsetof(T, last_field) + sizeof(T::last_field); \
  }

GPUU_FIRST_RELEASE(gpuu_compile_spec, value_size);
GPUU_FIRST_RELEASE(gpuu_context_overrides, sync_mode);
GPUU_FIRST_RELEASE(gpuu_shared_spec, present);
GPUU_FIRST_RELEASE(gpuu_device_options, enable_validation);
GPUU_FIRST_RELEASE(gpuu_context_resolve_options, device);
GPUU_FIRST_RELEASE(gpuu_external_context_desc, enabled_features);
GPUU_FIRST_RELEASE(gpuu_vulkan_handles, enabled_features);
GPUU_FIRST_RELEASE(gpuu_attr, count);
GPUU_FIRST_RELEASE(gpuu_program_write_options, sync_mode);
GPUU_FIRST_RELEASE(gpuu_session_options, vgf_path);
GPUU_FIRST_RELEASE(gpuu_tensor_info, byte_size);
GPUU_FIRST_RELEASE(gpuu_execute_stats, host_copies);
GPUU_FIRST_RELEASE(gpuu_partition_deny, op);
GPUU_FIRST_RELEASE(gpuu_partition_pin, backend);
GPUU_FIRST_RELEASE(gpuu_partition_op_cost, cost);
GPUU_FIRST_RELEASE(gpuu_partition_options, backend_count);
GPUU_FIRST_RELEASE(gpuu_backend_compile_specs, count);  // added in 0.3
GPUU_FIRST_RELEASE(gpuu_backend_option, value);  // added in 0.6
GPUU_FIRST_RELEASE(gpuu_session_memory, workspace_bytes);  // added in 0.8

#undef GPUU_FIRST_RELEASE

}  // namespace gpuu::capi
