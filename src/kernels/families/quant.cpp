// Kernel family 'quant': the integer ops of TOSA's INT profile over i8/i32
// tensors stored as 32-bit words (shaders/int_io.glsl): rescale,
// conv2d_int, matmul_int, avg_pool2d_int, table, mul_shift,
// arithmetic_right_shift, and max_pool2d on i8/i32.
// rescale and avg_pool2d_int compute in 64-bit shader integers and need
// shaderInt64 (refused at lowering where the device lacks it). conv2d_int and
// matmul_int run on the tiled int8 GEMM (int8_gemm.comp) where
// select_int_gemm says it pays, else on their direct kernels.
#include <cstdint>
#include <utility>

#include "graph/op_registry.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// Invocations of an int_io.glsl kernel: one per output word.
uint64_t word_invocations(uint64_t count, DType out) { return out == DType::kI8 ? (count + 3) / 4 : count; }

Status require_int64(const LoweringContext& lc, const graph::Node& n) {
  if (lc.ctx.has_feature(kFeatureShaderInt64)) return Status::Ok();
  return err(StatusCode::kUnsupported, "node '", n.name, "' (", n.op, ") computes in 64-bit integers but device '",
             lc.ctx.device_name(), "' lacks shaderInt64");
}

Result<graph::AttrMap> attrs_of(const graph::Node& n) { return graph::resolve_attrs(n); }

// The registry has checked dtypes; these say what the kernels store.
std::string check_dtypes(const graph::Graph& g, const graph::Node& n, std::initializer_list<DType> allowed) {
  for (graph::ValueId id : n.inputs) {
    if (id < 0) continue;
    DType d = g.value(id).dtype;
    bool ok = false;
    for (DType a : allowed) ok = ok || a == d;
    if (!ok) {
      return "Vulkan " + n.op + " kernels take i8/i32 tensors, input '" + g.value(id).name + "' is " +
             graph::dtype_name(d);
    }
  }
  return "";
}

std::string check_int(const graph::Graph& g, const graph::Node& n) { return check_dtypes(g, n, {DType::kI8, DType::kI32}); }

Status lower_rescale(LoweringContext& lc, const graph::Node& n) {
  GPUU_RETURN_IF_ERROR(require_int64(lc, n));
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& m = lc.tensor(n.inputs[1]);
  const TensorRef& s = lc.tensor(n.inputs[2]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  uint32_t inner = 1, channels = 1;
  if (m.shape[0] > 1) {
    size_t axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(a, "axis", -1), x.shape.size()));
    channels = u32(x.shape[axis]);
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= u32(x.shape[d]);
  }
  const bool out_unsigned = graph::attr_int(a, "output_unsigned") != 0;
  int32_t lo = y.dtype == DType::kI8 ? (out_unsigned ? 0 : -128) : INT32_MIN;
  int32_t hi = y.dtype == DType::kI8 ? (out_unsigned ? 255 : 127) : INT32_MAX;
  const bool double_round = graph::attr_int(a, "scale32", 1) != 0 && graph::attr_string(a, "rounding") == "double_round";
  PushConstants push;
  push.u32(static_cast<uint32_t>(count)).u32(inner).u32(channels);
  push.u32(u32(graph::attr_int(a, "input_zp"))).u32(u32(graph::attr_int(a, "output_zp")));
  push.u32(static_cast<uint32_t>(lo)).u32(static_cast<uint32_t>(hi));
  KernelKey key{"rescale",
                {x.dtype == DType::kI8 ? 1 : 4, y.dtype == DType::kI8 ? 1 : 4,
                 graph::attr_int(a, "input_unsigned") != 0 ? 1 : 0, double_round ? 1 : 0},
                4, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {m.range, false}, {s.range, false}, {y.range, true}}, push,
                      word_invocations(count, y.dtype));
}

// The tiled int8 GEMM (int8_gemm.comp) of `choice`: A and B at bindings 0
// and 1, conv2d_int's bias (or A, never read) at 2, the i32 output at 3;
// `form` is the push constants after the six every form takes.
Status add_int_gemm_dispatch(LoweringContext& lc, const graph::Node& n, const IntGemmChoice& choice, bool conv,
                             const GemmProblem& g, int32_t a_zp, int32_t b_zp, const PushConstants& form,
                             const TensorRef& a, const TensorRef& b, const TensorRef* bias, const TensorRef& y) {
  const uint32_t tiles_m = choice.tiles(g.m), tiles_n = choice.tiles(g.n);
  const uint64_t tiles = uint64_t{tiles_m} * tiles_n * g.batches;
  PushConstants push;
  push.u32(g.m).u32(g.n).u32(g.k).u32(tiles_n).u32(tiles_m).u32(static_cast<uint32_t>(tiles));
  push.u32(static_cast<uint32_t>(a_zp)).u32(static_cast<uint32_t>(b_zp));
  push.append(form);
  // A's rows lie on word boundaries (and are read as words) where K is a multiple of 4.
  KernelKey key{choice.shader(conv), {bias ? 1 : 0, g.k % 4 == 0 ? 1 : 0}, 4, push.size()};
  gpu::StepWork work;
  work.choice = choice.describe();
  work.why = choice.why;
  work.flops = gemm_flops(g.m, g.n, g.k, g.batches);
  return add_dispatch(lc, n, key, {{a.range, false}, {b.range, false}, {bias ? bias->range : a.range, false},
                                   {y.range, true}},
                      push, tiles * kWorkgroupSize, work);
}

Status lower_conv2d_int(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? &lc.tensor(n.inputs[2]) : nullptr;
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  std::vector<int64_t> stride = graph::attr_ints(a, "stride");
  std::vector<int64_t> pad = graph::attr_ints(a, "padding");
  std::vector<int64_t> dilation = graph::attr_ints(a, "dilation");
  const int64_t groups = graph::attr_int(a, "groups", 1);
  const int32_t input_zp = static_cast<int32_t>(graph::attr_int(a, "input_zp"));
  const int32_t weight_zp = static_cast<int32_t>(graph::attr_int(a, "weight_zp"));
  // Per group: [O/groups, C/groups*kH*kW] weight rows x the im2col view
  // [C/groups*kH*kW, batch*OH*OW] of the input.
  GemmProblem g{true, u32(w.shape[0] / groups), u32(y.shape[0] * y.shape[2] * y.shape[3]),
                u32(w.shape[1] * w.shape[2] * w.shape[3]), u32(groups)};
  const IntGemmChoice choice = select_int_gemm(lc.ctx, g, lc.gemm_force);
  if (choice.tiled()) {
    PushConstants form;
    form.u32(u32(x.shape[1])).u32(u32(x.shape[2])).u32(u32(x.shape[3]));
    form.u32(u32(w.shape[0])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
    form.u32(u32(w.shape[2])).u32(u32(w.shape[3])).u32(u32(stride[0])).u32(u32(stride[1]));
    form.u32(u32(pad[0])).u32(u32(pad[2])).u32(u32(dilation[0])).u32(u32(dilation[1]));
    form.u32(u32(w.shape[1]));
    return add_int_gemm_dispatch(lc, n, choice, true, g, weight_zp, input_zp, form, w, x, bias, y);
  }
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push.u32(u32(x.shape[1])).u32(u32(x.shape[2])).u32(u32(x.shape[3]));
  push.u32(u32(w.shape[0])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
  push.u32(u32(w.shape[2])).u32(u32(w.shape[3])).u32(u32(stride[0])).u32(u32(stride[1]));
  push.u32(u32(pad[0])).u32(u32(pad[2])).u32(u32(dilation[0])).u32(u32(dilation[1]));
  push.u32(u32(w.shape[1])).u32(u32(w.shape[0] / groups));
  push.u32(static_cast<uint32_t>(input_zp)).u32(static_cast<uint32_t>(weight_zp));
  // Without a bias, binding 2 still needs a buffer: the weight's, never read there.
  BufferRange bias_range = bias ? bias->range : w.range;
  KernelKey key{"conv2d_int", {bias ? 1 : 0}, 4, push.size()};
  gpu::StepWork work;
  work.choice = choice.describe();
  work.why = choice.why;
  work.flops = gemm_flops(g.m, g.n, g.k, g.batches);
  return add_dispatch(lc, n, key, {{x.range, false}, {w.range, false}, {bias_range, false}, {y.range, true}}, push,
                      count, work);
}

// matmul_int and the lowerings below open alike (tensors, element count, a
// leading count push constant) and stay apart: the rest of each is its own
// shader's push-constant layout and bindings, which a shared opener cannot hold.
Status lower_matmul_int(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const TensorRef& A = lc.tensor(n.inputs[0]);
  const TensorRef& B = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const int32_t a_zp = static_cast<int32_t>(graph::attr_int(a, "a_zp"));
  const int32_t b_zp = static_cast<int32_t>(graph::attr_int(a, "b_zp"));
  GemmProblem g{false, u32(A.shape[1]), u32(B.shape[2]), u32(A.shape[2]), u32(A.shape[0])};
  const IntGemmChoice choice = select_int_gemm(lc.ctx, g, lc.gemm_force);
  if (choice.tiled()) return add_int_gemm_dispatch(lc, n, choice, false, g, a_zp, b_zp, {}, A, B, nullptr, y);
  PushConstants push;
  push.u32(static_cast<uint32_t>(count)).u32(g.m).u32(g.k).u32(g.n);
  push.u32(static_cast<uint32_t>(a_zp)).u32(static_cast<uint32_t>(b_zp));
  KernelKey key{"matmul_int", {}, 3, push.size()};
  gpu::StepWork work;
  work.choice = choice.describe();
  work.why = choice.why;
  work.flops = gemm_flops(g.m, g.n, g.k, g.batches);
  return add_dispatch(lc, n, key, {{A.range, false}, {B.range, false}, {y.range, true}}, push, count, work);
}

// avg_pool2d_int (i8), and max_pool2d on i8/i32 (symmetric padding, dilation).
Status lower_pool2d_int(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const bool is_max = n.op == "max_pool2d";
  if (!is_max) GPUU_RETURN_IF_ERROR(require_int64(lc, n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  std::vector<int64_t> kernel = graph::attr_ints(a, "kernel");
  std::vector<int64_t> stride = graph::attr_ints(a, "stride");
  std::vector<int64_t> pad = graph::attr_ints(a, "padding");
  std::vector<int64_t> dilation = is_max ? graph::attr_ints(a, "dilation") : std::vector<int64_t>{1, 1};
  // max_pool2d pads (height, width) on both sides; avg_pool2d_int (top, bottom, left, right).
  int64_t pad_top = pad[0], pad_left = is_max ? pad[1] : pad[2];
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push.u32(u32(x.shape[2])).u32(u32(x.shape[3])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
  push.u32(u32(kernel[0])).u32(u32(kernel[1])).u32(u32(stride[0])).u32(u32(stride[1]));
  push.u32(u32(pad_top)).u32(u32(pad_left)).u32(u32(dilation[0])).u32(u32(dilation[1]));
  push.u32(u32(graph::attr_int(a, "input_zp"))).u32(u32(graph::attr_int(a, "output_zp")));
  KernelKey key{is_max ? "pool2d_int_max" : "pool2d_int", {is_max ? 1 : 0, x.dtype == DType::kI8 ? 1 : 4}, 2,
                push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, word_invocations(count, y.dtype));
}

Status lower_table(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& t = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  KernelKey key{"table_lookup", {}, 3, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {t.range, false}, {y.range, true}}, push,
                      word_invocations(count, DType::kI8));
}

std::string check_i32(const graph::Graph& g, const graph::Node& n) { return check_dtypes(g, n, {DType::kI32}); }

// mul_shift and arithmetic_right_shift: i32 operands broadcast to the output.
Status lower_int_shift(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  PushConstants push;
  push.u32(static_cast<uint32_t>(count)).u32(static_cast<uint32_t>(y.shape.size()));
  push.u32_array(to_u32(y.shape), kMaxRank);
  push.u32_array(broadcast_strides(x.shape, y.shape), kMaxRank);
  push.u32_array(broadcast_strides(b.shape, y.shape), kMaxRank);
  push.u32(u32(graph::attr_int(a, "shift")));
  const bool is_mul = n.op == "mul_shift";
  const int32_t op = is_mul ? op_codes::kShiftMulShift : op_codes::kShiftArithmeticRightShift;
  KernelKey key{"int_shift", {op, graph::attr_int(a, "round") != 0 ? 1 : 0}, 3, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {b.range, false}, {y.range, true}}, push, count);
}

}  // namespace

std::string check_int_pool2d(const graph::Graph& g, const graph::Node& n) { return check_int(g, n); }
Status lower_int_pool2d(LoweringContext& lc, const graph::Node& n) { return lower_pool2d_int(lc, n); }

void add_quant_kernels(std::vector<OpKernel>& table) {
  table.insert(table.end(), {{"rescale", kI8DType | kI32DType, check_int, lower_rescale},
                             {"conv2d_int", kI8DType, check_int, lower_conv2d_int},
                             {"matmul_int", kI8DType, check_int, lower_matmul_int},
                             {"avg_pool2d_int", kI8DType, check_int, lower_pool2d_int},
                             {"table", kI8DType, check_int, lower_table},
                             {"mul_shift", kI32DType, check_i32, lower_int_shift},
                             {"arithmetic_right_shift", kI32DType, check_i32, lower_int_shift}});
}

}  // namespace gpuu::kernels
