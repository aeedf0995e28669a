// Elementwise fusion: chains of unary and arithmetic ops over one output shape
// become one dispatch of shaders/fused_elementwise.comp, their intermediates
// never touching memory. The plan lists what to lower, in order: single nodes
// and fused groups.
#pragma once

#include <vector>

#include "kernels/op_table.h"

namespace gpuu::kernels {

struct LoweringUnit {
  std::vector<graph::NodeId> nodes;  // one node, or a fused group in graph order (the last one's output escapes)
  int movement_chain = -1;           // or a movement chain's nodes (movement.h): its index
  // nodes[0] is a GEMM op (matmul, linear, conv2d) and the rest an
  // elementwise chain that alone reads its output: the chain may fold into
  // the GEMM's store (gemm_epilogue.glsl) where the GEMM lowering takes it.
  bool gemm_epilogue = false;
  // ... and then a layer_norm over the last axis of the chain's result
  // (nodes.back()), which other nodes read too: where the GEMM splits K, its
  // reduction stores that result and normalises each row after it, one
  // dispatch (gemm_split_reduce_norm.comp); else the norm runs on its own.
  bool norm_after = false;
  // nodes are RMSNorm written out (x * x, its mean over the last axis, + eps,
  // rsqrt, times x, and maybe times a weight along the last axis): one row
  // kernel (row_norm.h) instead of four dispatches.
  bool rms_norm = false;
  // nodes are an attention and the transpose of its heads and rows that
  // alone reads its result: the attention kernel writes the transposed
  // layout (attention.h), no copy.
  bool attention_heads_inner = false;
  // nodes are an int8 GEMM (conv2d_int, matmul_int) and the rescale that
  // alone reads its i32 sums: the GEMM kernel may requantize in its store.
  bool int_rescale = false;
  // ... with, between them, the add of an i32 bias along matmul_int's columns
  // (nodes: GEMM, add, rescale, ...).
  bool int_bias = false;
  // ... or, after an a16w8 convolution (i16 input, i64 sums), the second
  // rescale (to i16) that alone reads the first's i32 result (nodes: GEMM,
  // rescale, rescale): the convolution's join may apply both.
  bool int_rescale_twice = false;
  // ... and then, after an a16w8 convolution's rescales, the clamp of their
  // i16 result that alone reads it (a ReLU, the output's bounds): nodes end
  // with it, and the join may clamp to it too.
  bool int_clamp_after = false;
  // ... and then the rescales, add and rescale of a residual block's int8 add
  // (nodes: GEMM, [bias add,] rescale, A, B, add, C: op_table.h's IntResidual).
  bool int_residual = false;
  // nodes are a layer_norm with an elementwise chain that alone makes its x
  // (the first norm_before nodes) and one that alone reads its result (the
  // rest), each of one tensor and scalar constants, either maybe absent: the
  // row kernel applies them as it loads x and stores y (row_norm.h). A
  // quantized model's dequantize, norm and quantize are one dispatch.
  bool norm_chains = false;
  size_t norm_before = 0;
  // A fused unit (fused()) may end in a concat of two equal parts
  // (fused_elementwise.comp's CONCAT_DIM); its other nodes are fusable.
  bool fused() const {
    return movement_chain < 0 && !gemm_epilogue && !rms_norm && !attention_heads_inner && !int_rescale &&
           !norm_chains && nodes.size() > 1;
  }
};

// The lowering order of `graph`'s nodes; with `fuse`, maximal fusable groups
// (<= 4 outside inputs, <= 40 ops, every inner value used only inside) are
// merged, a concat of two equal parts joins the groups making them (a fused
// unit ending in the concat), RMSNorm's nodes are one rms_norm unit, and a
// group (or single fusable node) of <= 8 ops of a GEMM op's output shape that
// alone reads that output (or a reshape of a matmul or linear output that
// keeps its last axis) joins the GEMM's unit; the chains that alone make a
// layer norm's x and alone read its result join the norm's (norm_chains).
// `written_over` (by value, or empty): region_plan.h's; a concat written
// over an input is lowered alone.
std::vector<LoweringUnit> plan_lowering(const graph::Graph& graph, bool fuse,
                                        const std::vector<graph::ValueId>& written_over = {});

// Appends the one dispatch of a fused group (or of one fusable node).
// Outside inputs read through views (LoweringContext::view_of) are read from
// their root at the view's offset and strides: a slice, transpose or reshape
// in front of an elementwise op costs no dispatch (RoPE's halves of q and k).
Status lower_fused_group(LoweringContext& lc, const LoweringUnit& unit);

// OpKernel::takes_view of the fusable elementwise ops: input `slot` of `node`
// (a fusable node, or a concat ending a fused unit) can be read through
// `view` by the fused kernel (offset and strides within its 32-bit indices). A node reading a view lowers through
// lower_fused_group, alone if it is not in a group (but a cast: alone, it
// reads its input as itself, region_plan.cpp).
bool takes_elementwise_view(const graph::Graph& graph, const graph::Node& node, size_t slot, const StridedView& view);

// Whether `node` reads one of its inputs through a view in `lc`.
bool reads_a_view(const LoweringContext& lc, const graph::Node& node);

// The node of an rms_norm unit that multiplies by the weight, or kNone. It
// may read the weight as a view; the unit's other nodes read their inputs as
// themselves.
graph::NodeId rms_norm_weight_node(const graph::Graph& g, const LoweringUnit& unit);

// Lowers an rms_norm unit.
Status lower_rms_norm(LoweringContext& lc, const LoweringUnit& unit);

// Lowers a norm_chains unit: the layer norm's row kernel applying the
// chains as it loads x and stores y.
Status lower_norm_with_chains(LoweringContext& lc, const LoweringUnit& unit);

// Lowers an int_rescale unit: the GEMM requantizing in its store (and adding
// the residual) where its kernel does (LoweringContext::int_rescale,
// int_residual), else the GEMM and then the rest, node by node.
Status lower_int_gemm_with_rescale(LoweringContext& lc, const LoweringUnit& unit);

// Lowers a gemm_epilogue unit: the GEMM with the chain in its store where its
// lowering takes it (a GEMM kernel, inputs each read at the output element,
// its row or column, or once), else the GEMM and then the chain; a
// norm_after unit's norm in the split-K reduction where it takes it, else
// after them.
Status lower_gemm_with_epilogue(LoweringContext& lc, const LoweringUnit& unit);

}  // namespace gpuu::kernels
