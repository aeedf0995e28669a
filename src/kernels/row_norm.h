// Normalising rows in one dispatch (layer_norm_rows.comp): the layer_norm op,
// and RMSNorm written out as elementwise ops and a mean, which the kernel
// graph finds (fusion.h: LoweringUnit::rms_norm) and lowers here instead of
// four dispatches (square, mean, add + rsqrt, scale).
#pragma once

#include <optional>
#include <vector>

#include "kernels/op_table.h"

namespace gpuu::kernels {

struct RowNorm {
  const TensorRef* x = nullptr;
  const TensorRef* y = nullptr;
  uint64_t rows = 0, size = 0;  // rows of `size` trailing elements
  float eps = 1e-5f;
  bool rms = false;  // x / sqrt(mean(x^2) + eps): no mean subtracted, no bias
  // The weight's memory, read at element offset + j * stride for column j
  // (stride 0: one value for every column, as a broadcast or expanded [1]).
  std::optional<BufferRange> weight;
  uint32_t weight_offset = 0, weight_stride = 1;
  std::optional<BufferRange> bias;
  // How x's rows lie in x's memory (y's are row-major): element j of row r at
  // offset + (r / inner_rows) * outer_stride + (r % inner_rows) * inner_stride
  // + j * element_stride. The defaults: row-major. A layer_norm over the last
  // dim of a permuted value (convnext's NCHW read as NHWC) reads it so, in
  // place (row_layout), with no transpose copy before it.
  struct Layout {
    uint64_t offset = 0, inner_rows = 0, outer_stride = 0, inner_stride = 0, element_stride = 1;
  };
  std::optional<Layout> x_layout;
  // Elementwise chains applied as x is loaded and as y is stored (f32 norms:
  // LoweringUnit::norm_chains), fused_apply's instruction words over
  // registers 0 (the value), 1..4 (`immediates`), 5 + k (instruction k's
  // result); x and y may then be i8/i16, loaded and stored converted.
  std::vector<int32_t> before, after;
  std::vector<float> immediates;
};

// The most instructions a norm's chain takes, and immediates both take.
inline constexpr size_t kNormChainMaxInstructions = 8;
inline constexpr size_t kNormChainMaxImmediates = 4;

// Layer_norm node `n`'s rows and their length (its last normalized_ndim
// dims), from its input's shape: what the kernel and the planner both size.
struct NormRows {
  uint64_t rows = 1, size = 1;
};
Result<NormRows> layer_norm_rows(const graph::Graph& g, const graph::Node& n);

// The norm of layer_norm node `n` (normalized over its last dims), x read
// through its view where it has one.
Result<RowNorm> layer_norm_of(LoweringContext& lc, const graph::Node& n);

// The rows of a value of `shape` read through `view`, normalised over its
// last dim, as RowNorm::Layout: its leading dims must make at most two runs
// of evenly strided rows; nullopt where they do not.
std::optional<RowNorm::Layout> row_layout(const graph::Shape& shape, const StridedView& view);

// The dispatch of `norm` for graph nodes `nodes` (labelled "a+b+c").
Status add_row_norm(LoweringContext& lc, const std::vector<graph::NodeId>& nodes, const RowNorm& norm);

}  // namespace gpuu::kernels
