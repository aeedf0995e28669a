// Kernel family 'linalg': matmul (batch dims broadcast), linear (x W^T + b)
// and linear_dequant (W 8- or 4-bit integers with scales) for f32 and f16, on
// the GEMM kernel select_gemm picks (gemm_select.h).
#include "kernels/gemm_dispatch.h"
#include "graph/op_registry.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

// gemm.comp's batch dims (batch_shape[4]): the table's rank limit
// (check_tensor_limits) leaves matmul at most 4 batch dims.
constexpr size_t kMaxBatchRank = kMaxRank - 2;

// linear_dequant's x, scales and bias are float (its weight i8: the registry checked).
std::string check_dequant_inputs(const graph::Graph& g, const graph::Node& n) { return check_float_inputs_but(g, n, 1); }

// One GEMM dispatch: y[batch] = a[batch] (M x K, row-major) x b[batch] (K x N
// read as b[k * b_stride_k + n * b_stride_n]) (+ bias[n]).
struct Gemm {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t b_stride_k = 0, b_stride_n = 1;
  bool b_k_contiguous = false;
  std::vector<uint32_t> batch_shape;  // output batch dims
  std::vector<uint32_t> a_batch_strides, b_batch_strides;
  // linear_dequant's weight: integer width (0: float B), scale group, scales.
  uint32_t weight_bits = 0, weight_group = 0;
  const TensorRef* scales = nullptr;
};

Status dispatch_gemm(LoweringContext& lc, const graph::Node& n, const Gemm& g, const TensorRef& a, const TensorRef& b,
                     const TensorRef* bias, const TensorRef& y) {
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  if (graph::shape_numel(y.shape) == 0) return Status::Ok();  // nothing to write
  uint64_t batches = 1;
  for (uint32_t d : g.batch_shape) batches *= d;
  GemmProblem problem{false, g.m, g.n, g.k, static_cast<uint32_t>(batches), g.b_k_contiguous, g.weight_bits};
  // Tensor addressing (batch strides, multiples of the rows, follow the rows).
  const uint32_t b_unit = g.b_k_contiguous ? g.b_stride_k : g.b_stride_n;
  const uint32_t b_row = g.b_k_contiguous ? g.b_stride_n : g.b_stride_k;
  const TensorRef& stored = lc.epilogue ? *lc.epilogue->output : y;
  problem.tensor_addressable =
      tensor_addressable(g.k, g.n, b_unit, b_row,
                         a.range.offset % 16 == 0 && b.range.offset % 16 == 0 && stored.range.offset % 16 == 0,
                         !lc.epilogue || lc.epilogue->plane == 0);
  const GemmChoice choice = select_gemm(lc.ctx, y.dtype, lc.gemm_force, problem);
  GemmDispatch d;
  d.m = g.m;
  d.n = g.n;
  d.k = g.k;
  d.batches = static_cast<uint32_t>(batches);
  d.push.u32(static_cast<uint32_t>(g.batch_shape.size())).u32(g.b_stride_k).u32(g.b_stride_n);
  d.push.u32_array(g.batch_shape, kMaxBatchRank);
  d.push.u32_array(g.a_batch_strides, kMaxBatchRank);
  d.push.u32_array(g.b_batch_strides, kMaxBatchRank);
  // Vector reads where rows are whole chunks (the batch strides, multiples of
  // M*K and K*N, follow) and the bindings start on 16 bytes.
  const uint32_t vec = choice.vector;
  const bool a_vec = g.k % vec == 0 && a.range.offset % 16 == 0;
  // A quantized weight's chunk is one word's bytes or nibbles under one scale.
  const bool b_vec = g.weight_bits ? g.k % 4 == 0 && g.weight_group % 4 == 0
                                   : (g.b_k_contiguous ? g.k : g.n) % vec == 0 && b.range.offset % 16 == 0;
  // Whole tiles and slices with vector reads: the shader drops those bounds
  // checks (ALIGNED in gemm_common.glsl).
  if (a_vec && b_vec) {
    d.aligned = (g.m % choice.tile_m == 0 ? 1 : 0) | (g.n % choice.tile_n == 0 && g.k % choice.depth == 0 ? 2 : 0);
  }
  d.b_k_contiguous = g.b_k_contiguous ? 1 : 0;
  d.a_vec = a_vec ? 1 : 0;
  d.b_vec = b_vec ? 1 : 0;
  d.weight_bits = g.weight_bits;
  d.weight_group = g.weight_group;
  if (g.scales) d.scales = g.scales->range;
  // A decode step's column lines read a quantized weight a uvec4 at a time
  // where K and the scale group are whole uvec4s of it.
  if (g.weight_bits && choice.kernel == GemmKernel::kGemv && choice.lines_are_columns && a_vec) {
    const uint32_t per_uvec4 = 128 / g.weight_bits;
    d.qw_wide = g.k % per_uvec4 == 0 && g.weight_group % per_uvec4 == 0 && b.range.offset % 16 == 0;
  }
  return add_gemm_dispatch(lc, n, choice, d, a.range, b.range, GemmOutput{&y, bias});
}

Status lower_matmul(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& a = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const size_t ra = a.shape.size(), rb = b.shape.size();
  Gemm gemm;
  gemm.m = static_cast<uint32_t>(a.shape[ra - 2]);
  gemm.k = static_cast<uint32_t>(a.shape[ra - 1]);
  gemm.n = static_cast<uint32_t>(b.shape[rb - 1]);
  gemm.b_stride_k = gemm.n;
  gemm.b_stride_n = 1;
  graph::Shape batch(y.shape.begin(), y.shape.end() - 2);
  gemm.batch_shape = to_u32(batch);
  // Per-batch-dim strides in matrices, scaled to elements; 0 where an input broadcasts.
  gemm.a_batch_strides = broadcast_strides(graph::Shape(a.shape.begin(), a.shape.end() - 2), batch);
  gemm.b_batch_strides = broadcast_strides(graph::Shape(b.shape.begin(), b.shape.end() - 2), batch);
  for (uint32_t& s : gemm.a_batch_strides) s *= gemm.m * gemm.k;
  for (uint32_t& s : gemm.b_batch_strides) s *= gemm.k * gemm.n;
  return dispatch_gemm(lc, n, gemm, a, b, nullptr, y);
}

// Leading dims of x flatten into the GEMM's rows; the weight [N, K] is B
// transposed, read along k.
Gemm linear_gemm(const TensorRef& x, const TensorRef& w) {
  Gemm gemm;
  gemm.k = static_cast<uint32_t>(x.shape.back());
  gemm.n = static_cast<uint32_t>(w.shape[0]);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.shape.size(); ++d) rows *= x.shape[d];
  gemm.m = static_cast<uint32_t>(rows);
  gemm.b_stride_k = 1;
  gemm.b_stride_n = gemm.k;
  gemm.b_k_contiguous = true;
  return gemm;
}

Status lower_linear(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? &lc.tensor(n.inputs[2]) : nullptr;
  const TensorRef& y = lc.tensor(n.outputs[0]);
  return dispatch_gemm(lc, n, linear_gemm(x, w), x, w, bias, y);
}

// x dequantize(W)^T + b: linear's GEMM with B's integers dequantized as the
// kernels read them (GPUU_QW in gemm_common.glsl).
Status lower_linear_dequant(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef& scales = lc.tensor(n.inputs[2]);
  const TensorRef* bias = n.inputs.size() > 3 && n.inputs[3] >= 0 ? &lc.tensor(n.inputs[3]) : nullptr;
  const TensorRef& y = lc.tensor(n.outputs[0]);
  Gemm gemm = linear_gemm(x, w);
  gemm.weight_bits = static_cast<uint32_t>(graph::attr_int(attrs, "bits", 8));
  gemm.weight_group = static_cast<uint32_t>(graph::attr_int(attrs, "group_size", 0));
  gemm.scales = &scales;
  return dispatch_gemm(lc, n, gemm, x, w, bias, y);
}

}  // namespace

void add_linalg_kernels(std::vector<OpKernel>& table) {
  add_kernels(table, kFloatDTypes, check_float_inputs, {{"matmul", lower_matmul}, {"linear", lower_linear}});
  // i8 in the set: the weight is stored as i8 (x, the deciding input, is float: the check).
  add_kernels(table, kFloatDTypes | kI8DType, check_dequant_inputs, {{"linear_dequant", lower_linear_dequant}});
}

}  // namespace gpuu::kernels
