// gpuu graph regions <-> TOSA graphs: lower_to_tosa is what the VGF writer
// encodes (NCHW gpuu ops become NHWC TOSA operators between TRANSPOSEs, ops
// TOSA lacks become decompositions); tosa_to_gpuu maps a TOSA graph back onto
// gpuu ops, so a VGF segment can run on gpuu's own kernels.
#pragma once

#include <set>
#include <string>

#include "base/status.h"
#include "graph/graph.h"
#include "graph/resize_index.h"
#include "vgf/tosa_graph.h"

namespace gpuu::vgf {

// Element types between gpuu and TOSA: false where there is no counterpart
// (gpuu's i64; TOSA's i16 and i48).
bool dtype_to_tosa(graph::DType dtype, TosaElementType* out);
bool tosa_to_dtype(TosaElementType type, graph::DType* out);

// Lowers a whole region (a verified gpuu graph) to one TOSA graph:
//  - graph inputs -> TOSA inputs, descriptor set 0, bindings 0..n-1 in order;
//    graph outputs -> bindings n..n+m-1 (model-converter's numbering); the
//    names carry over to the interface variables;
//  - gpuu constants -> OpGraphConstantARM with data (ids 0.. in order of
//    first use); constants the lowering derives (a pre-transposed weight, index
//    offsets) too when larger than 64 elements, smaller ones inline;
//  - every node the op table takes (vgf/tosa_op_table.h: its entry's form,
//    dtypes and check), lowered by the entry's lowering; every value
//    f32/f16/i32/i8/bool, of rank 1..6 and non-empty.
// Unused operators are dropped and TRANSPOSE chains folded. Errors:
// kUnsupported naming the value ("value 'i' is i64: TOSA 1.0 has no i64
// tensors") or the node and, in the table's words, why ("node 's' (sin): TOSA
// 1.0 has no i32 form of 'sin' (...)"), kInvalidArgument for a graph that
// does not verify.
//
// `model_layout` names constants to read as the model stores them, never
// as a rearranged copy: ones that another reader (another backend's
// region, a gather of a tied embedding) needs in the model's layout, so that
// a copy would store them twice. A linear with such a weight [N, K] computes
// (W x^T)^T: a MATMUL of the weight viewed as [1, N, K] and the transposed
// activations, instead of reading a [1, K, N] copy.
struct TosaLoweringOptions {
  std::set<std::string> model_layout;
};
Result<TosaGraph> lower_to_tosa(const graph::Graph& region, const TosaLoweringOptions& options = {});

// The inverse: a gpuu graph computing what `graph` computes, for every TOSA
// operator lower_to_tosa emits (plus LOGICAL_AND/OR/XOR), with the
// TOSA semantics: NHWC operators run as NCHW gpuu ops between transposes
// (folded away against each other), asymmetric pads become explicit pads,
// CAST float->int rounds half to even and saturates, i8 NEGATE saturates,
// TILE of size-1 dims is an expand, RESIZE becomes the gpuu resize whose
// indices it reproduces (or kUnsupported when none does).
// TOSA's INT profile raises to gpuu's integer ops: RESCALE -> rescale; i8
// CONV2D/DEPTHWISE_CONV2D/TRANSPOSE_CONV2D -> conv2d_int (zero points kept);
// i8 MATMUL -> matmul_int; i8 AVG_POOL2D -> avg_pool2d_int; i8 TABLE -> table;
// i32 MUL with a shift -> mul_shift; ARITHMETIC_RIGHT_SHIFT -> the op of that
// name; i8 CLAMP and MAX_POOL2D -> clamp through i32 / max_pool2d.
// Graph inputs keep their order and names ("input_<i>" when unnamed); graph
// constants need their data (set_graph_constant_data). Errors: kUnsupported
// naming the operator ("operator 3 (FFT2D): no gpuu equivalent", nonzero
// zero points of float operators, nan_mode IGNORE, i16/i48 tensors, an i16
// TABLE), kInvalidArgument for a graph that does not validate or a constant
// without data.
Result<graph::Graph> tosa_to_gpuu(const TosaGraph& graph);

// RESIZE's integer parameters along one axis: scale n/d (an output step is
// d/n input pixels), offset and border.
struct TosaResizeAxis {
  int64_t n = 1, d = 1, offset = 0, border = 0;
};
// Whether a RESIZE axis (within TOSA 1.0's limits) reads, at every output
// position, the input indices and weights gpuu's resize reads with `mode`,
// `align_corners` and `user_scale` (<= 0: none) for `in` -> `out` elements.
bool tosa_resize_axis_matches(graph::ResizeMode mode, bool align_corners, int64_t in, int64_t out, double user_scale,
                              bool tosa_bilinear, const TosaResizeAxis& axis);
// Parameters reproducing gpuu's resize along one axis; false when none do.
bool tosa_resize_axis_for(graph::ResizeMode mode, bool align_corners, int64_t in, int64_t out, double user_scale,
                          TosaResizeAxis* axis);

}  // namespace gpuu::vgf
