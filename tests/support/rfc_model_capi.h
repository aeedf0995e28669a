// The RFC's UnifiedVgfVulkanModel built through the C graph-builder API alone,
// plus a host reference of its forward pass, for tests of every component
// that consumes a graph (partitioner, program writer, runtime).
#pragma once

#include "gpuu.h"

#ifdef __cplusplus
extern "C" {  // C clients use it too (tests/abi/compat_client.c)
#endif

// x f32 [1,3,8,8] -> transpose_0 -> avg_pool2d_0 -> index_select_0 (channel_index)
// -> gather_0 (col_gather_index) -> index_select_1 (row_index) -> sin_0, cos_0
// -> reciprocal_0 (of cos) -> mul_0 (sin * reciprocal) -> transpose_1 -> the one
// output, f32 [1,3,4,4]. Returns a new graph (release with gpuu_graph_destroy)
// that passes gpuu_graph_verify, or NULL with gpuu_last_error() saying which
// call failed.
gpuu_graph* gpuu_test_build_rfc_model(void);

// The same forward pass computed on the host in double precision, straight
// from the torch semantics (not from gpuu's kernels): x is 1*3*8*8 floats,
// y receives 1*3*4*4 floats, both row-major.
void gpuu_test_rfc_model_reference(const float* x, float* y);

#ifdef __cplusplus
}
#endif
