// Kernel family 'quant': the integer ops of TOSA's INT profile over i8/i32
// tensors stored as 32-bit words (shaders/int_io.glsl): rescale,
// conv2d_int, matmul_int, avg_pool2d_int, table, mul_shift,
// arithmetic_right_shift, and max_pool2d on i8/i32.
// rescale and avg_pool2d_int compute in 64-bit shader integers and need
// shaderInt64 (refused at lowering where the device lacks it). conv2d_int and
// matmul_int run on the tiled int8 GEMM (int8_gemm.comp) where
// select_int_gemm says it pays, else on their direct kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "graph/op_registry.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// Invocations of an int_io.glsl kernel: one per output word.
uint64_t word_invocations(uint64_t count, DType out) {
  return out == DType::kI8 ? (count + 3) / 4 : out == DType::kI16 ? (count + 1) / 2 : count;
}

// An integer element's bytes, as the int_io.glsl kernels take them.
int32_t int_bytes(DType d) { return static_cast<int32_t>(graph::dtype_size(d)); }

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
      std::string names;
      for (DType a : allowed) names += (names.empty() ? "" : "/") + std::string(graph::dtype_name(a));
      return "Vulkan " + n.op + " kernels take " + names + " tensors, input '" + g.value(id).name + "' is " +
             graph::dtype_name(d);
    }
  }
  return "";
}

std::string check_int(const graph::Graph& g, const graph::Node& n) { return check_dtypes(g, n, {DType::kI8, DType::kI32}); }
// rescale also takes i16 values and an i16 GEMM's i64 (TOSA i48) sums.
std::string check_rescale(const graph::Graph& g, const graph::Node& n) {
  return check_dtypes(g, n, {DType::kI8, DType::kI16, DType::kI32, DType::kI64});
}
// conv2d_int: i8 or i16 activations, i8 weights, an i32 or i64 bias.
std::string check_conv_int(const graph::Graph& g, const graph::Node& n) {
  return check_dtypes(g, n, {DType::kI8, DType::kI16, DType::kI32, DType::kI64});
}

// A rescale's attributes as its kernels take them: zero points, the output
// clamp, double rounding, and the channel axis (-1: one scale for the tensor).
struct RescaleParams {
  int32_t input_zp = 0, output_zp = 0, lo = 0, hi = 0;
  bool input_unsigned = false, double_round = false;
  int64_t axis = -1;
};

RescaleParams rescale_params(const graph::AttrMap& a, const TensorRef& x, const TensorRef& m, const TensorRef& y) {
  RescaleParams r;
  r.input_zp = static_cast<int32_t>(graph::attr_int(a, "input_zp"));
  r.output_zp = static_cast<int32_t>(graph::attr_int(a, "output_zp"));
  const bool out_unsigned = graph::attr_int(a, "output_unsigned") != 0;
  r.lo = y.dtype == DType::kI8 ? (out_unsigned ? 0 : -128) : y.dtype == DType::kI16 ? -32768 : INT32_MIN;
  r.hi = y.dtype == DType::kI8 ? (out_unsigned ? 255 : 127) : y.dtype == DType::kI16 ? 32767 : INT32_MAX;
  r.input_unsigned = graph::attr_int(a, "input_unsigned") != 0;
  r.double_round = graph::attr_int(a, "scale32", 1) != 0 && graph::attr_string(a, "rounding") == "double_round";
  if (m.shape[0] > 1) r.axis = graph::normalize_axis(graph::attr_int(a, "axis", -1), x.shape.size());
  return r;
}

// Appends what rescale.comp pushes for `r` over an input of `x_shape`: the
// channel's stride and count where it scales per channel, the zero points
// and the clamp.
void append_rescale_push(PushConstants& push, const RescaleParams& r, const graph::Shape& x_shape) {
  uint32_t inner = 1, channels = 1;
  if (r.axis >= 0) {
    channels = u32(x_shape[static_cast<size_t>(r.axis)]);
    for (size_t d = static_cast<size_t>(r.axis) + 1; d < x_shape.size(); ++d) inner *= u32(x_shape[d]);
  }
  push.u32(inner).u32(channels);
  push.u32(u32(r.input_zp)).u32(u32(r.output_zp));
  push.u32(static_cast<uint32_t>(r.lo)).u32(static_cast<uint32_t>(r.hi));
}

// rescale.comp's push constants: `count` output elements, then `r`'s.
PushConstants rescale_push(const RescaleParams& r, const graph::Shape& x_shape, uint64_t count) {
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  append_rescale_push(push, r, x_shape);
  return push;
}

Status lower_rescale(LoweringContext& lc, const graph::Node& n) {
  GPUU_RETURN_IF_ERROR(require_int64(lc, n));
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap a, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& m = lc.tensor(n.inputs[1]);
  const TensorRef& s = lc.tensor(n.inputs[2]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const RescaleParams r = rescale_params(a, x, m, y);
  const PushConstants push = rescale_push(r, x.shape, count);
  KernelKey key{"rescale", {int_bytes(x.dtype), int_bytes(y.dtype), r.input_unsigned ? 1 : 0, r.double_round ? 1 : 0},
                4, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {m.range, false}, {s.range, false}, {y.range, true}}, push,
                      word_invocations(count, y.dtype));
}

// The rescale an int8 GEMM on the matrix cores applies in its store
// (LoweringContext::int_rescale): i32 sums to i8, one scale for the tensor or
// one per channel of the GEMM's output (conv2d's axis 1, matmul's last), on
// a device with 64-bit shader integers and 8-bit storage.
struct RescaleStore {
  const graph::Node* node = nullptr;
  RescaleParams params;
  const TensorRef* multiplier = nullptr;
  const TensorRef* shift = nullptr;
  const TensorRef* y = nullptr;
};

std::optional<RescaleStore> rescale_store(const LoweringContext& lc, bool conv) {
  if (!lc.int_rescale || !lc.ctx.has_feature(kFeatureShaderInt64) || !lc.ctx.has_feature(kFeatureStorageBuffer8Bit)) {
    return std::nullopt;
  }
  const graph::Node& n = *lc.int_rescale;
  Result<graph::AttrMap> a = attrs_of(n);
  if (!a.ok()) return std::nullopt;
  RescaleStore store{&n, {}, &lc.tensor(n.inputs[1]), &lc.tensor(n.inputs[2]), &lc.tensor(n.outputs[0])};
  const TensorRef& x = lc.tensor(n.inputs[0]);
  store.params = rescale_params(a.value(), x, *store.multiplier, *store.y);
  const int64_t channel_axis = conv ? 1 : static_cast<int64_t>(x.shape.size()) - 1;
  if (store.y->dtype != DType::kI8 || x.dtype != DType::kI32 || store.params.input_unsigned ||
      (store.params.axis >= 0 && store.params.axis != channel_axis)) {
    return std::nullopt;
  }
  return store;
}

// The residual add the store applies after that rescale
// (LoweringContext::int_residual; int8_requantize.glsl's GPUU_RESIDUAL).
struct ResidualStore {
  const IntResidual* nodes = nullptr;
  RescaleParams a, b, c;
  const TensorRef* skip = nullptr;
  const TensorRef* y = nullptr;
  std::vector<const TensorRef*> scales;  // a's, b's and c's multiplier and shift
};

std::optional<ResidualStore> residual_store(const LoweringContext& lc) {
  if (!lc.int_residual) return std::nullopt;
  const IntResidual& r = *lc.int_residual;
  ResidualStore store;
  store.nodes = &r;
  for (auto [node, params] : {std::pair{r.a, &store.a}, std::pair{r.b, &store.b}, std::pair{r.c, &store.c}}) {
    Result<graph::AttrMap> a = attrs_of(*node);
    if (!a.ok()) return std::nullopt;
    *params = rescale_params(a.value(), lc.tensor(node->inputs[0]), lc.tensor(node->inputs[1]),
                             lc.tensor(node->outputs[0]));
    store.scales.push_back(&lc.tensor(node->inputs[1]));
    store.scales.push_back(&lc.tensor(node->inputs[2]));
  }
  if (store.c.input_unsigned) return std::nullopt;  // the sum is an i32
  store.skip = &lc.tensor(r.b->inputs[0]);
  store.y = &lc.tensor(r.c->outputs[0]);
  return store;
}

// int8_requantize.glsl's residual constants (ids 12..24) and bindings (the
// skip, then a's, b's and c's multiplier and shift).
void add_residual(const ResidualStore& res, std::vector<int32_t>* spec, std::vector<Binding>* bindings) {
  spec->insert(spec->end(), {res.a.input_zp, res.a.output_zp, res.a.input_unsigned ? 1 : 0, res.a.double_round ? 1 : 0,
                             res.b.input_zp, res.b.output_zp, res.b.input_unsigned ? 1 : 0, res.b.double_round ? 1 : 0,
                             res.c.input_zp, res.c.output_zp, res.c.lo, res.c.hi, res.c.double_round ? 1 : 0});
  bindings->push_back({res.skip->range, false});
  for (const TensorRef* t : res.scales) bindings->push_back({t->range, false});
}

// conv2d_int's im2col view of `x` (its GEMM problem `g` and conv form
// `form`, input zero point `zp`), materialized by im2col.comp's GPUU_I8 into
// scratch for the int8 GEMM of `choice`: on GPUs where the GEMM runs on
// matrix cores (there, gathered a byte at a time in the tiles, resnet50's
// convolutions ran at 9-15 TOPS), or where forced (GemmForce::conv_im2col),
// up to kIm2colMaxBytes. Nothing (no view) otherwise.
Result<std::optional<BufferRange>> add_int_im2col(LoweringContext& lc, const graph::Node& n,
                                                  const IntGemmChoice& choice, const GemmProblem& g, int32_t zp,
                                                  const PushConstants& form, const TensorRef& x) {
  const bool cpu_device = lc.ctx.is_cpu_device();
  const uint32_t rows = g.batches * g.k, chunks = (g.n + 15) / 16;  // each chunk 16 bytes of a row
  const uint64_t view_bytes = uint64_t{rows} * chunks * 16;
  if (view_bytes > kIm2colMaxBytes ||
      !lc.gemm_force.conv_im2col.value_or(choice.kernel == IntGemmKernel::kCoopMat && !cpu_device)) {
    return std::optional<BufferRange>{};
  }
  GPUU_ASSIGN_OR_RETURN(BufferRange view, lc.scratch(view_bytes, "im2col view"));
  if (view.offset % 16 != 0) return std::optional<BufferRange>{};  // written and read in uvec4s
  PushConstants push;
  push.u32(rows * chunks).u32(chunks).u32(g.n).u32(g.k).append(form).u32(static_cast<uint32_t>(zp));
  gpu::StepWork work;
  work.ops = n.op;
  work.choice = "im2col view " + std::to_string(rows) + " x " + std::to_string(g.n) + " (i8)";
  work.bytes = x.range.size + view.size;
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, n, KernelKey{"im2col_i8", {}, 2, push.size()},
                                    {{x.range, false}, {view, true}}, push, uint64_t{rows} * chunks,
                                    std::move(work)));
  return std::optional<BufferRange>{view};
}

// The tiled or matrix-core int8 GEMM of `choice` (int8_gemm.comp,
// int8_gemm_coopmat.comp): A and B at bindings 0 and 1, conv2d_int's bias (or
// A, never read) at 2, the i32 output at 3; `form` is the push constants
// after the eight every form takes; `b_vec`: B's runs of 16 along n may be
// read as uvec4s (int8_gemm_coopmat.comp's B_VEC). Under split-K the shares'
// partials go to scratch and int8_gemm_split_reduce.comp adds them into y.
// A convolution that would gather B (not b_vec) may read its im2col view
// materialized first instead (add_int_im2col).
// The matrix-core kernel applies `rq` (may be null) in its store, or its
// reduction does, writing the rescale's i8 output in place of y; `res` (may
// be null; only with rq) comes after it in the reduction, writing the
// residual's output.
Status add_int_gemm_dispatch(LoweringContext& lc, const graph::Node& n, const IntGemmChoice& choice, bool conv,
                             const GemmProblem& g, int32_t a_zp, int32_t b_zp, const PushConstants& form, bool b_vec,
                             const TensorRef& a, const TensorRef& b, const TensorRef* bias, const TensorRef& y,
                             const RescaleStore* rq, const ResidualStore* res) {
  const bool coop = choice.kernel == IntGemmKernel::kCoopMat;
  if (!coop) rq = nullptr;
  if (!rq) res = nullptr;
  const uint32_t tiles_m = choice.tiles(g.m), tiles_n = choice.tiles(g.n);
  const uint64_t tiles = uint64_t{tiles_m} * tiles_n * g.batches * choice.splits;
  const uint64_t outputs = uint64_t{g.m} * g.n * g.batches;
  // The residual add always runs in the reduction, over one share of K where
  // K is not split: in the matrix-core store it made the whole GEMM 2-3x
  // slower on the H100 (resnet50's 1x1 convs ending a block: 38-46 us against
  // 13 for the same conv requantizing alone; the reduction adds ~5 us).
  // Nor does the GEMM finish its own tiles (the last share to arrive adding
  // the others' sums, after integer atomics): bit-exact on the H100 but
  // slower (int8 resnet50 1945 us against 1294, 93304f9), as the requantizing
  // tail then runs in one workgroup per tile at low occupancy, where the
  // reduction spreads it over the GPU, one element per invocation.
  const bool split = choice.splits > 1 || res;
  const uint32_t k_split = choice.splits > 1 ? choice.k_split : g.k;
  const BufferRange& out = res ? res->y->range : rq ? rq->y->range : y.range;
  BufferRange target = out;
  if (split) {
    GPUU_ASSIGN_OR_RETURN(target, lc.scratch(outputs * choice.splits * sizeof(int32_t), "split-K partials"));
  }
  graph::Node labelled = n;
  gpu::StepWork work;
  work.ops = n.op;
  if (rq) {
    lc.int_rescale_taken = true;
    labelled.name += "+" + rq->node->name;
    work.ops += "+" + rq->node->op;
  }
  if (res) {
    lc.int_residual_taken = true;
    for (const graph::Node* node : {res->nodes->a, res->nodes->b, res->nodes->add, res->nodes->c}) {
      labelled.name += "+" + node->name;
      work.ops += "+" + node->op;
    }
  }
  const std::string rq_suffix = res ? "_rqres" : "_rq";
  // The rescale's push constants (RQ_PUSH), multipliers and shifts, and
  // specialization constants 10 and 11 (int8_requantize.glsl).
  PushConstants rq_push;
  std::vector<int32_t> rq_spec;
  std::vector<Binding> rq_bindings;
  if (rq) {
    rq_push.u32(u32(rq->params.input_zp)).u32(u32(rq->params.output_zp));
    rq_push.u32(static_cast<uint32_t>(rq->params.lo)).u32(static_cast<uint32_t>(rq->params.hi));
    rq_spec = {rq->params.axis >= 0 ? 1 : 0, rq->params.double_round ? 1 : 0};
    rq_bindings = {{rq->multiplier->range, false}, {rq->shift->range, false}};
  }
  const bool rq_in_store = rq && !split;
  BufferRange b_range = b.range;
  std::optional<BufferRange> view;
  if (conv && !b_vec) {
    GPUU_ASSIGN_OR_RETURN(view, add_int_im2col(lc, n, choice, g, b_zp, form, b));
    if (view) b_range = *view;
  }
  PushConstants push;
  push.u32(g.m).u32(g.n).u32(g.k).u32(tiles_n).u32(tiles_m).u32(static_cast<uint32_t>(tiles));
  push.u32(static_cast<uint32_t>(a_zp)).u32(static_cast<uint32_t>(b_zp));
  push.append(form);
  std::vector<int32_t> spec;
  std::vector<Binding> bindings = {
      {a.range, false}, {b_range, false}, {bias ? bias->range : a.range, false}, {target, true}};
  if (coop) {
    push.u32(k_split).u32(g.batches);
    spec = {bias ? 1 : 0,
            g.k % 16 == 0 ? 1 : 0,
            b_vec ? 1 : 0,
            a_zp != 0 ? 1 : 0,
            split ? 1 : 0,
            static_cast<int32_t>(choice.cm_m),
            static_cast<int32_t>(choice.cm_n),
            static_cast<int32_t>(choice.cm_k),
            static_cast<int32_t>(choice.tile),
            static_cast<int32_t>(choice.tile)};
    if (rq_in_store) {
      push.append(rq_push);
      spec.insert(spec.end(), rq_spec.begin(), rq_spec.end());
      bindings.insert(bindings.end(), rq_bindings.begin(), rq_bindings.end());
    }
    if (view) {  // CONV_IM2COL is constant 12 (10 and 11 the rescale's)
      spec.resize(12, 0);
      spec.push_back(1);
    }
  } else {
    // A's rows lie on word boundaries (and are read as words) where K is a multiple of 4.
    spec = {bias ? 1 : 0, g.k % 4 == 0 ? 1 : 0};
    if (view) spec.push_back(1);  // CONV_IM2COL
  }
  KernelKey key{choice.shader(conv) + (rq_in_store ? "_rq" : ""), spec, static_cast<uint32_t>(bindings.size()),
                push.size()};
  work.choice = choice.describe() + (view ? ", im2col view materialized" : "") +
                (res  ? ", requantized with the residual add in the reduction"
                 : rq ? (split ? ", requantized in the reduction" : ", requantized in the store")
                      : "");
  work.why = choice.why;
  work.flops = gemm_flops(g.m, g.n, g.k, g.batches);
  work.matrix_cores = coop;
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, labelled, key, std::move(bindings), push, tiles * kWorkgroupSize, work));
  if (!split) return Status::Ok();
  work.flops = 0;
  work.matrix_cores = false;
  work.bytes = target.size + out.size;
  // Four outputs an invocation where rows (conv: and planes) are whole runs of four.
  const uint32_t pixels = conv ? u32(y.shape[2] * y.shape[3]) : 0;
  const bool run4 = g.n % 4 == 0 && (!conv || pixels % 4 == 0);
  PushConstants reduce;
  reduce.u32(static_cast<uint32_t>(outputs)).u32(g.n).u32(choice.splits);
  reduce.u32(pixels).u32(conv ? u32(y.shape[1]) : 0);
  std::vector<int32_t> reduce_spec = {conv ? 1 : 0, run4 ? 1 : 0};
  std::vector<Binding> reduce_bindings = {{target, false}, {out, true}};
  if (rq) {
    reduce.append(rq_push);
    reduce_spec.resize(10, 0);  // the rescale's constants are 10 and 11
    reduce_spec.insert(reduce_spec.end(), rq_spec.begin(), rq_spec.end());
    reduce_bindings.insert(reduce_bindings.end(), rq_bindings.begin(), rq_bindings.end());
    if (res) add_residual(*res, &reduce_spec, &reduce_bindings);
  }
  KernelKey reduce_key{rq ? "int8_gemm_split_reduce" + rq_suffix : "int8_gemm_split_reduce", reduce_spec,
                       static_cast<uint32_t>(reduce_bindings.size()), reduce.size()};
  return add_dispatch(lc, labelled, reduce_key, std::move(reduce_bindings), reduce, run4 ? outputs / 4 : outputs,
                      std::move(work));
}

// The integer bounds of a clamp of i8 or i16 (`dtype`) values: the integers
// inside its [min, max], within the type; crossed bounds give max, as in the
// CPU reference.
std::pair<int32_t, int32_t> narrow_clamp_bounds(const graph::Node& n, DType dtype) {
  const double type_lo = dtype == DType::kI8 ? -128.0 : -32768.0, type_hi = -type_lo - 1.0;
  auto bound = [&](const char* name, double fallback, bool is_max) {
    auto it = n.attrs.find(name);
    double v = it == n.attrs.end()                        ? fallback
               : std::holds_alternative<double>(it->second) ? std::get<double>(it->second)
                                                            : static_cast<double>(std::get<int64_t>(it->second));
    v = is_max ? std::floor(v) : std::ceil(v);
    return static_cast<int32_t>(std::min(std::max(v, type_lo), type_hi));
  };
  int32_t lo = bound("min", type_lo, false), hi = bound("max", type_hi, true);
  if (lo > hi) lo = hi;
  return {lo, hi};
}

// The deepest K whose i32 sums stay exact for both halves of an i16 input
// (int16_parts.comp): |lo| <= 255 and |w - weight_zp| <= 255 per product.
constexpr uint32_t kMaxInt16HalvesDepth = 32768;

// conv2d_int over an i16 input x on the int8 GEMM of `choice`: x split into
// hi = x >> 8 and lo = (x & 255) - 128 (read with input zero point -128, so
// the GEMM sums x & 255), both GEMMs' i32 sums in scratch, joined into y
// (i64) as 256 * hi + lo + bias. A linear (a16w8's linears are 1x1
// convolutions of [rows, K, 1, 1]: rows images of one pixel, whose GEMM
// would gather B a byte at a time K apart) has its halves written transposed,
// [K, stride] as one image of `stride` pixels (rows rounded up to whole
// 16-byte runs, the rest zeros), which the GEMM reads in runs along the rows,
// and its sums [O, stride] transposed back as they are joined.
Status add_int16_halves_dispatches(LoweringContext& lc, const graph::Node& n, IntGemmChoice choice, GemmProblem g,
                                   int32_t weight_zp, PushConstants form, bool b_vec, bool linear,
                                   const TensorRef& x, const TensorRef& w, const TensorRef* bias, const TensorRef& y) {
  constexpr uint32_t kRun = 16;  // bytes the GEMM reads along B's rows as one vector
  const uint32_t rows = linear ? u32(x.shape[0]) : 0;  // the linear's rows (0: not transposed)
  const uint32_t stride = (rows + kRun - 1) / kRun * kRun;
  graph::Shape half_shape = x.shape, sums_shape = y.shape;
  if (linear) {
    half_shape = {1, x.shape[1], 1, stride};
    sums_shape = {1, y.shape[1], 1, stride};
    form = PushConstants{};
    form.u32(u32(x.shape[1])).u32(1).u32(stride);   // C, H, W
    form.u32(u32(w.shape[0])).u32(1).u32(stride);   // O, OH, OW
    form.u32(1).u32(1).u32(1).u32(1);               // kH, kW, strides
    form.u32(0).u32(0).u32(1).u32(1);               // pads, dilations
    form.u32(u32(x.shape[1]));                      // C per group
    g.n = stride;
    b_vec = true;
  }
  const uint64_t half_count = static_cast<uint64_t>(graph::shape_numel(half_shape));
  const uint64_t sums_count = static_cast<uint64_t>(graph::shape_numel(sums_shape));
  const uint64_t half_bytes = (half_count + 3) / 4 * 4;
  GPUU_ASSIGN_OR_RETURN(BufferRange hi_range, lc.scratch(half_bytes, "i16 input's high bytes"));
  GPUU_ASSIGN_OR_RETURN(BufferRange lo_range, lc.scratch(half_bytes, "i16 input's low bytes"));
  GPUU_ASSIGN_OR_RETURN(BufferRange hi_sums, lc.scratch(sums_count * 4, "sums over the high bytes"));
  GPUU_ASSIGN_OR_RETURN(BufferRange lo_sums, lc.scratch(sums_count * 4, "sums over the low bytes"));
  const TensorRef hi{hi_range, DType::kI8, half_shape}, lo{lo_range, DType::kI8, half_shape};
  const TensorRef hi_y{hi_sums, DType::kI32, sums_shape}, lo_y{lo_sums, DType::kI32, sums_shape};
  PushConstants split;
  split.u32(static_cast<uint32_t>(half_count)).u32(rows).u32(stride).u32(linear ? u32(x.shape[1]) : 0);
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, n, KernelKey{"int16_split", {}, 3, split.size()},
                                    {{x.range, false}, {hi_range, true}, {lo_range, true}}, split,
                                    word_invocations(half_count, DType::kI8)));
  choice.why = "16-bit activations as two 8-bit halves" + std::string(linear ? ", transposed" : "") + "; " + choice.why;
  GPUU_RETURN_IF_ERROR(
      add_int_gemm_dispatch(lc, n, choice, true, g, weight_zp, 0, form, b_vec, w, hi, nullptr, hi_y, nullptr, nullptr));
  GPUU_RETURN_IF_ERROR(add_int_gemm_dispatch(lc, n, choice, true, g, weight_zp, -128, form, b_vec, w, lo, nullptr,
                                             lo_y, nullptr, nullptr));
  const uint64_t out_count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  PushConstants join;
  join.u32(u32(y.shape[2] * y.shape[3])).u32(u32(y.shape[1])).u32(stride);
  const BufferRange& bias_range = bias ? bias->range : hi_sums;  // never read without a bias
  // The rescale that alone reads y (LoweringContext::int_rescale) applied as
  // the sums are joined, and the second rescale after it where there is one
  // (int_rescale_next): y, and the first's result, are never stored.
  if (lc.int_rescale && lc.int_rescale->inputs[0] == n.outputs[0]) {
    const graph::Node& rn = *lc.int_rescale;
    GPUU_ASSIGN_OR_RETURN(graph::AttrMap ra, attrs_of(rn));
    const TensorRef& m = lc.tensor(rn.inputs[1]);
    const TensorRef& sh = lc.tensor(rn.inputs[2]);
    const TensorRef& ry = lc.tensor(rn.outputs[0]);
    RescaleParams r = rescale_params(ra, y, m, ry);
    graph::Node labelled = n;
    labelled.name += "+" + rn.name;
    gpu::StepWork work;
    work.ops = n.op + "+" + rn.op;
    std::vector<Binding> bindings = {{hi_sums, false}, {m.range, false},  {sh.range, false},
                                     {ry.range, true}, {lo_sums, false}, {bias_range, false}};
    const graph::Node* next = lc.int_rescale_next;
    const TensorRef* out = &ry;
    RescaleParams r2;  // the second's (all zero and unread where there is none: TWICE 0)
    if (next && next->inputs[0] == rn.outputs[0]) {
      GPUU_ASSIGN_OR_RETURN(graph::AttrMap na, attrs_of(*next));
      const TensorRef& m2 = lc.tensor(next->inputs[1]);
      out = &lc.tensor(next->outputs[0]);
      r2 = rescale_params(na, ry, m2, *out);
      bindings[3] = {out->range, true};
      bindings.push_back({m2.range, false});
      bindings.push_back({lc.tensor(next->inputs[2]).range, false});
      labelled.name += "+" + next->name;
      work.ops += "+" + next->op;
      lc.int_rescale_next_taken = true;
    } else {
      bindings.push_back({m.range, false});
      bindings.push_back({sh.range, false});
    }
    const bool twice = lc.int_rescale_next_taken;
    // The clamp after them (LoweringContext::int_clamp_after) narrows the
    // last rescale's own bounds: clamping to [lo, hi] and then to the
    // clamp's is clamping to their overlap (never empty for a16w8: the
    // rescale's span the i16 type, the clamp's lie inside it; where it were,
    // the clamp would run apart).
    const graph::Node* clamp = lc.int_clamp_after;
    RescaleParams& last = twice ? r2 : r;
    if (clamp && clamp->inputs[0] == (twice ? next : &rn)->outputs[0]) {
      const auto [clamp_lo, clamp_hi] = narrow_clamp_bounds(*clamp, out->dtype);
      const int32_t lo = std::max(last.lo, clamp_lo), hi = std::min(last.hi, clamp_hi);
      if (lo <= hi) {
        last.lo = lo;
        last.hi = hi;
        out = &lc.tensor(clamp->outputs[0]);
        bindings[3] = {out->range, true};
        labelled.name += "+" + clamp->name;
        work.ops += "+" + clamp->op;
        lc.int_clamp_after_taken = true;
      }
    }
    PushConstants push = rescale_push(r, y.shape, out_count);
    push.append(join);
    append_rescale_push(push, r2, ry.shape);
    lc.int_rescale_taken = true;
    return add_dispatch(lc, labelled,
                        KernelKey{"rescale_join",
                                  {8, int_bytes(out->dtype), 0, r.double_round ? 1 : 0, 1, bias ? 1 : 0, twice ? 1 : 0,
                                   twice && r2.double_round ? 1 : 0},
                                  8, push.size()},
                        std::move(bindings), push, word_invocations(out_count, out->dtype), std::move(work));
  }
  PushConstants plain;
  plain.u32(static_cast<uint32_t>(out_count)).append(join);
  return add_dispatch(lc, n, KernelKey{"int16_join", {bias ? 1 : 0}, 4, plain.size()},
                      {{hi_sums, false}, {lo_sums, false}, {bias_range, false}, {y.range, true}}, plain, out_count);
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
  g.conv_channels = u32(w.shape[1]);
  // 16-bit activations (a16w8) sum in i64: on the int8 GEMMs as two i8
  // halves of the input (int16_parts.comp), where K keeps each half's i32
  // sums exact, else on the direct kernel's wide form, conv2d_int16.comp.
  const bool wide = x.dtype == DType::kI16;
  if (wide) GPUU_RETURN_IF_ERROR(require_int64(lc, n));
  IntGemmChoice choice = select_int_gemm(lc.ctx, g, lc.gemm_force);
  if (wide && choice.tiled() && g.k > kMaxInt16HalvesDepth) {
    choice = IntGemmChoice{};
    choice.why = "16-bit activations over " + std::to_string(g.k) + " deep: the int8 GEMMs' i32 sums of their halves " +
                 "could overflow past " + std::to_string(kMaxInt16HalvesDepth) + "; the direct kernel's 64-bit sums";
  } else if (wide && !choice.tiled()) {
    choice.why = "16-bit activations: the direct kernel's 64-bit sums" + (choice.why.empty() ? "" : "; " + choice.why);
  }
  if (choice.tiled()) {
    PushConstants form;
    form.u32(u32(x.shape[1])).u32(u32(x.shape[2])).u32(u32(x.shape[3]));
    form.u32(u32(w.shape[0])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
    form.u32(u32(w.shape[2])).u32(u32(w.shape[3])).u32(u32(stride[0])).u32(u32(stride[1]));
    form.u32(u32(pad[0])).u32(u32(pad[2])).u32(u32(dilation[0])).u32(u32(dilation[1]));
    form.u32(u32(w.shape[1]));
    // A pointwise convolution reads the input as it lies: runs of 16 pixels
    // are whole uvec4s where an image's pixels are a multiple of 16.
    const bool pointwise = w.shape[2] == 1 && w.shape[3] == 1 && stride[0] == 1 && stride[1] == 1 && pad[0] == 0 &&
                           pad[1] == 0 && pad[2] == 0 && pad[3] == 0 && x.shape[2] == y.shape[2] &&
                           x.shape[3] == y.shape[3];
    const bool b_vec = pointwise && (y.shape[2] * y.shape[3]) % 16 == 0;
    if (wide) {
      const bool linear = pointwise && groups == 1 && x.shape[2] == 1 && x.shape[3] == 1;
      return add_int16_halves_dispatches(lc, n, choice, g, weight_zp, form, b_vec, linear, x, w, bias, y);
    }
    const std::optional<RescaleStore> rq = rescale_store(lc, true);
    const std::optional<ResidualStore> res = residual_store(lc);
    return add_int_gemm_dispatch(lc, n, choice, true, g, weight_zp, input_zp, form, b_vec, w, x, bias, y,
                                 rq ? &*rq : nullptr, res ? &*res : nullptr);
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
  KernelKey key{wide ? "conv2d_int16" : "conv2d_int", {bias ? 1 : 0}, 4, push.size()};
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
  if (choice.tiled()) {
    const std::optional<RescaleStore> rq = rescale_store(lc, false);
    const std::optional<ResidualStore> res = residual_store(lc);
    // The bias add before the rescale goes with it into the matrix-core store.
    const TensorRef* bias = nullptr;
    graph::Node labelled = n;
    if (rq && lc.int_bias_add && choice.kernel == IntGemmKernel::kCoopMat) {
      const graph::Node& add = *lc.int_bias_add;
      bias = &lc.tensor(add.inputs[add.inputs[0] == n.outputs[0] ? 1 : 0]);
      labelled.name += "+" + add.name;
      labelled.op += "+" + add.op;
    }
    return add_int_gemm_dispatch(lc, labelled, choice, false, g, a_zp, b_zp, {}, g.n % 16 == 0, A, B, bias, y,
                                 rq ? &*rq : nullptr, res ? &*res : nullptr);
  }
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

// avg_pool2d_int (i8), and max_pool2d on i8/i16/i32 (symmetric padding, dilation).
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
  KernelKey key{is_max ? "pool2d_int_max" : "pool2d_int",
                {is_max ? 1 : 0, static_cast<int32_t>(graph::dtype_size(x.dtype))}, 2, push.size()};
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

// A clamp of i8 or i16 values (a quantized activation's bounds, as a ReLU
// after an i16 GEMM's rescale): rescale.comp unscaled, bounds [lo, hi].
Status lower_narrow_int_clamp(LoweringContext& lc, const graph::Node& n) {
  GPUU_RETURN_IF_ERROR(require_int64(lc, n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const auto [lo, hi] = narrow_clamp_bounds(n, x.dtype);
  PushConstants push;
  push.u32(static_cast<uint32_t>(count)).u32(1).u32(1).u32(0).u32(0);
  push.u32(static_cast<uint32_t>(lo)).u32(static_cast<uint32_t>(hi));
  KernelKey key{"rescale", {int_bytes(x.dtype), int_bytes(y.dtype), 0, 0, 0}, 4, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {x.range, false}, {x.range, false}, {y.range, true}}, push,
                      word_invocations(count, y.dtype));
}


std::string check_int_pool2d(const graph::Graph& g, const graph::Node& n) {
  return n.op == "max_pool2d" ? check_dtypes(g, n, {DType::kI8, DType::kI16, DType::kI32}) : check_int(g, n);
}
Status lower_int_pool2d(LoweringContext& lc, const graph::Node& n) { return lower_pool2d_int(lc, n); }

void add_quant_kernels(std::vector<OpKernel>& table) {
  table.insert(table.end(), {{"rescale", kI8DType | kI16DType | kI32DType | dtype_bit(DType::kI64), check_rescale,
                              lower_rescale},
                             {"conv2d_int", kI8DType | kI16DType, check_conv_int, lower_conv2d_int},
                             {"matmul_int", kI8DType, check_int, lower_matmul_int},
                             {"avg_pool2d_int", kI8DType, check_int, lower_pool2d_int},
                             {"table", kI8DType, check_int, lower_table},
                             {"mul_shift", kI32DType, check_i32, lower_int_shift},
                             {"arithmetic_right_shift", kI32DType, check_i32, lower_int_shift}});
}

}  // namespace gpuu::kernels
