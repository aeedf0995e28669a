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
};

// The dispatch of `norm` for graph nodes `nodes` (labelled "a+b+c").
Status add_row_norm(LoweringContext& lc, const std::vector<graph::NodeId>& nodes, const RowNorm& norm);

}  // namespace gpuu::kernels
