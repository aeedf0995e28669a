// VgfBackend's declaration to the partitioner: what TOSA 1.0 expresses
// (reference/tosa-ops.md). Its own home, next to the exporter that lowers it.
#pragma once

#include "partition/backend_capability.h"

namespace gpuu::vgf {

// The TOSA 1.0 table: f32/f16/i32/i8/bool tensors only, rank <= 6,
// per-operator dtype limits, GATHER indices i32.
const partition::BackendCapability& vgf_capability();

}  // namespace gpuu::vgf
