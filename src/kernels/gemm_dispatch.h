// Appending a GEMM-kernel dispatch (matmul, linear, conv2d's implicit GEMM)
// for a GemmChoice: the specialization and push constants every form shares,
// and, where the choice splits K, the partials' scratch and the reduction.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm_select.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {

// Where and how the GEMM's result is stored.
struct GemmOutput {
  const TensorRef* y = nullptr;
  const TensorRef* bias = nullptr;  // per column (GEMM) or per row (conv2d); may be null
  bool conv = false;                // NCHW: rows are output channels, columns batch x pixels
  uint32_t pixels = 0;              // conv: output pixels per image
  uint32_t out_channels = 0;        // conv: all groups' output channels
};

struct GemmDispatch {
  uint32_t m = 0, n = 0, k = 0, batches = 1;
  // The five specialization constants every GEMM shader takes first
  // (has_bias, B_K_CONTIGUOUS, A_VEC, B_VEC, ALIGNED), and conv2d's POINTWISE.
  int32_t b_k_contiguous = 0, a_vec = 0, b_vec = 0, aligned = 0, pointwise = 0;
  // The form's push constants up to (not including) k_split and batches.
  PushConstants push;
};

// The dispatch of `choice`'s shader over its tiles (and K shares), A and B
// bound at 0 and 1; under split-K the partials go to a scratch buffer and a
// gemm_split_reduce dispatch adds them into `out`.
Status add_gemm_dispatch(LoweringContext& lc, const graph::Node& node, const GemmChoice& choice,
                         const GemmDispatch& gemm, const BufferRange& a, const BufferRange& b, const GemmOutput& out);

}  // namespace gpuu::kernels
