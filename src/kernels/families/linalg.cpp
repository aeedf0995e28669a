// Kernel family 'linalg': matmul (batch dims broadcast) and linear (x W^T + b)
// for f32 and f16, on the GEMM kernel select_gemm picks (gemm_select.h).
#include "kernels/gemm_dispatch.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

// gemm.comp's batch dims (batch_shape[4]): the table's rank limit
// (check_tensor_limits) leaves matmul at most 4 batch dims.
constexpr size_t kMaxBatchRank = kMaxRank - 2;

// One GEMM dispatch: y[batch] = a[batch] (M x K, row-major) x b[batch] (K x N
// read as b[k * b_stride_k + n * b_stride_n]) (+ bias[n]).
struct Gemm {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t b_stride_k = 0, b_stride_n = 1;
  bool b_k_contiguous = false;
  std::vector<uint32_t> batch_shape;  // output batch dims
  std::vector<uint32_t> a_batch_strides, b_batch_strides;
};

Status dispatch_gemm(LoweringContext& lc, const graph::Node& n, const Gemm& g, const TensorRef& a, const TensorRef& b,
                     const TensorRef* bias, const TensorRef& y) {
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  if (graph::shape_numel(y.shape) == 0) return Status::Ok();  // nothing to write
  uint64_t batches = 1;
  for (uint32_t d : g.batch_shape) batches *= d;
  const GemmChoice choice = select_gemm(lc.ctx, y.dtype, lc.gemm_force,
                                        GemmProblem{false, g.m, g.n, g.k, static_cast<uint32_t>(batches), g.b_k_contiguous});
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
  const bool b_vec = (g.b_k_contiguous ? g.k : g.n) % vec == 0 && b.range.offset % 16 == 0;
  // Whole tiles and slices with vector reads: the shader drops those bounds
  // checks (ALIGNED in gemm_common.glsl).
  if (a_vec && b_vec) {
    d.aligned = (g.m % choice.tile_m == 0 ? 1 : 0) | (g.n % choice.tile_n == 0 && g.k % choice.depth == 0 ? 2 : 0);
  }
  d.b_k_contiguous = g.b_k_contiguous ? 1 : 0;
  d.a_vec = a_vec ? 1 : 0;
  d.b_vec = b_vec ? 1 : 0;
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

Status lower_linear(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? &lc.tensor(n.inputs[2]) : nullptr;
  const TensorRef& y = lc.tensor(n.outputs[0]);
  // Leading dims of x flatten into the GEMM's rows; the weight [N, K] is B
  // transposed, read along k.
  Gemm gemm;
  gemm.k = static_cast<uint32_t>(x.shape.back());
  gemm.n = static_cast<uint32_t>(w.shape[0]);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.shape.size(); ++d) rows *= x.shape[d];
  gemm.m = static_cast<uint32_t>(rows);
  gemm.b_stride_k = 1;
  gemm.b_stride_n = gemm.k;
  gemm.b_k_contiguous = true;
  return dispatch_gemm(lc, n, gemm, x, w, bias, y);
}

}  // namespace

void add_linalg_kernels(std::vector<OpKernel>& table) {
  add_kernels(table, kFloatDTypes, check_float_inputs, {{"matmul", lower_matmul}, {"linear", lower_linear}});
}

}  // namespace gpuu::kernels
