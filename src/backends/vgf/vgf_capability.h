// VgfBackend's declaration to the partitioner: what TOSA 1.0 expresses
// (reference/tosa-ops.md), as the op table beside the lowering states it.
#pragma once

#include "partition/backend_capability.h"

namespace gpuu::vgf {

// TOSA 1.0's limits (f32/f16/i32/i8/bool tensors, rank <= 6), then each op's
// entry of the op table that lower_to_tosa dispatches through
// (vgf/tosa_op_table.h).
const partition::BackendCapability& vgf_capability();

}  // namespace gpuu::vgf
