// Appending a GEMM-kernel dispatch (matmul, linear, conv2d's implicit GEMM)
// for a GemmChoice: the specialization and push constants every form shares,
// and, where the choice splits K, the partials' scratch and the reduction.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm_select.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {

// An elementwise chain folded into the GEMM's store (gemm_epilogue.glsl):
// instructions in fused_elementwise.comp's encoding over registers 0 = the
// GEMM's result, 1..3 = `inputs`, each read as `modes` says (2 bits each:
// 0 the output element, 1 its row (conv2d: output channel), 2 its column,
// 3 element 0), 4..7 = `immediates` (the chain's one-element constants,
// compiled in); `output` is written instead of the GEMM's own output.
struct GemmEpilogue {
  static constexpr size_t kMaxInstructions = 8;
  static constexpr size_t kMaxInputs = 3;
  static constexpr size_t kMaxImmediates = 4;
  enum Mode : int32_t { kFull = 0, kRow = 1, kColumn = 2, kScalar = 3 };
  std::vector<int32_t> instructions;
  std::vector<const TensorRef*> inputs;
  std::vector<Mode> modes;
  std::vector<float> immediates;
  const TensorRef* output = nullptr;
  // Nonzero: the chain transposes the GEMM's last axis to axis 1, and the
  // store writes that layout, this many pixels per image (gemm_epilogue.glsl).
  uint32_t plane = 0;
  std::string label;  // the chain's nodes, for the dispatch's label
  std::string ops;    // and their ops, for profiles
};

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
  // (has_bias, B_K_CONTIGUOUS, A_VEC, B_VEC, ALIGNED), and conv2d's CONV_B.
  int32_t b_k_contiguous = 0, a_vec = 0, b_vec = 0, aligned = 0;
  // conv2d: how the im2col view is read (gemm_common.glsl's CONV_B).
  enum ConvB : int32_t { kGathered = 0, kPointwise = 1, kPatches = 2, kIm2col = 3 };
  ConvB conv_b = kGathered;
  // The form's push constants up to (not including) k_split and batches.
  PushConstants push;
  // linear_dequant: B's integer width (8 or 4; 0 for a float B), the group of
  // K one scale covers (0: all of K) and the scales [N, K / group].
  uint32_t weight_bits = 0, weight_group = 0;
  BufferRange scales;
  // gemv.comp's QW_WIDE (constant 7): a column line reads its weights a
  // uvec4 at a time (128 / weight_bits of K under one scale).
  bool qw_wide = false;
};

// The epilogue's specialization constants (gemm_epilogue.glsl, from EPI_ID on:
// counts, modes, instructions, immediates) appended to `spec`, and its three
// input bindings to `bindings` (padded with `any`, never read then); `epi`
// may be null (no epilogue).
void add_epilogue(const GemmEpilogue* epi, const BufferRange& any, std::vector<int32_t>* spec,
                  std::vector<Binding>* bindings);

// The dispatch of `choice`'s shader over its tiles (and K shares), A and B
// bound at 0 and 1; under split-K the partials go to a scratch buffer and a
// gemm_split_reduce dispatch adds them into `out`.
Status add_gemm_dispatch(LoweringContext& lc, const graph::Node& node, const GemmChoice& choice,
                         const GemmDispatch& gemm, const BufferRange& a, const BufferRange& b, const GemmOutput& out);

}  // namespace gpuu::kernels
