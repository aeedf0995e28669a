// Reduction and normalization kernels: reduce_sum / _mean / _max / _min / _prod
// over any axes (f32/f16 with f32 accumulation; i32/i64 and bool any/all in
// reduce_int.comp), argmax/argmin, cumsum and topk along one axis, softmax
// along one axis, layer_norm over trailing dims. Short rows take one
// invocation each, long ones a workgroup with a shared-memory tree
// (shaders/workgroup_reduce.glsl).
#include <algorithm>

#include "graph/op_registry.h"
#include "kernels/op_table.h"
#include "kernels/row_norm.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

// Below this many elements per row an invocation walks the row alone: a
// workgroup would leave most of its 256 invocations idle. Unless the outputs
// are too few to fill the GPU that way: a global average pool's 960 channels
// of 49 pixels took 59 us on the H100 with one invocation per channel.
constexpr uint32_t kPerThreadBelow = 128;
constexpr uint32_t kPerThreadMinOutputs = 8192;
// Rows this short go one per invocation however few they are: a tree over a
// workgroup costs more than the walk.
constexpr uint32_t kPerThreadAlwaysBelow = 8;
// layer_norm: rows shorter than kLayerNormLineBelow take a line of
// kLayerNormLine invocations each (rows under a quarter of a line, one
// invocation), where they are short of kPerThreadBelow or number at least
// kLayerNormLineMinRows; longer rows, or fewer, a workgroup.
constexpr uint32_t kLayerNormLine = 32;
constexpr uint32_t kLayerNormLineBelow = 1024;
constexpr uint32_t kLayerNormLineMinRows = 2048;
// layer_norm_rows.comp's MAX_PER: elements an invocation holds in registers.
constexpr uint64_t kLayerNormMaxPer = 32;
// A reduction this long over few outputs is split into chunks of at least this
// many elements (f32 partials, then a second pass), to fill the GPU.
constexpr uint32_t kMinChunk = 2048;
constexpr uint32_t kTargetWorkgroups = 256;

// Groups for `workgroups` workgroups, as invocations for add_dispatch.
uint64_t workgroup_invocations(uint64_t workgroups) { return workgroups * kWorkgroupSize; }

// One reduce_axes pass: n_out outputs, each over the elements at
// kept_offset(o) + reduced_offset(r), r < n_red, split into n_chunks chunks.
struct ReducePass {
  std::string shader;
  int32_t op = op_codes::kReduceSum;
  uint32_t n_out = 0, n_red = 0, n_chunks = 1;
  float divisor = 1.0f;
  bool empty_mean = false;
  std::vector<uint32_t> kept_shape, kept_strides, red_shape, red_strides;
};

Status add_reduce_pass(LoweringContext& lc, const graph::Node& n, const ReducePass& r, const BufferRange& in,
                       const BufferRange& out) {
  // With the innermost dim kept, neighbouring invocations read neighbouring
  // elements, so many outputs go one per invocation even over longer rows.
  bool inner_kept = !r.kept_strides.empty() && r.kept_strides.back() == 1;
  bool per_thread = r.n_chunks == 1 && ((r.n_red < kPerThreadBelow && r.n_out >= kPerThreadMinOutputs) ||
                                        r.n_red < kPerThreadAlwaysBelow || (inner_kept && r.n_out >= 4096));
  uint32_t chunk = (r.n_red + r.n_chunks - 1) / r.n_chunks;
  PushConstants push;
  push.u32(r.n_out).u32(r.n_red).u32(chunk).u32(r.n_chunks).f32(r.divisor);
  push.u32(static_cast<uint32_t>(r.kept_shape.size()) | static_cast<uint32_t>(r.red_shape.size()) << 8 |
           (r.empty_mean ? 1u << 16 : 0u));
  push.u32_array(r.kept_shape, kMaxRank).u32_array(r.kept_strides, kMaxRank);
  push.u32_array(r.red_shape, kMaxRank).u32_array(r.red_strides, kMaxRank);
  KernelKey key{r.shader, {r.op, per_thread ? 1 : 0}, 2, push.size()};
  uint64_t invocations =
      per_thread ? r.n_out : workgroup_invocations(static_cast<uint64_t>(r.n_out) * r.n_chunks);
  return add_dispatch(lc, n, key, {{in, false}, {out, true}}, push, invocations);
}

int32_t reduce_op_code(const std::string& op) {
  if (op == "reduce_max") return op_codes::kReduceMax;
  if (op == "reduce_min") return op_codes::kReduceMin;
  if (op == "reduce_prod") return op_codes::kReduceProd;
  if (op == "reduce_any") return op_codes::kReduceAny;
  if (op == "reduce_all") return op_codes::kReduceAll;
  return op_codes::kReduceSum;  // sum, mean
}

// One reduce_int.comp pass: r.n_out * r.n_chunks results.
Status add_int_reduce_pass(LoweringContext& lc, const graph::Node& n, const ReducePass& r, const char* shader,
                           int32_t in_size, int32_t out_size, const BufferRange& in, const BufferRange& out) {
  uint32_t chunk = (r.n_red + r.n_chunks - 1) / r.n_chunks;
  const uint32_t n_res = r.n_out * r.n_chunks;
  PushConstants push;
  push.u32(n_res).u32(r.n_red).u32(chunk).u32(r.n_chunks);
  push.u32(static_cast<uint32_t>(r.kept_shape.size()) | static_cast<uint32_t>(r.red_shape.size()) << 8);
  push.u32_array(r.kept_shape, kMaxRank).u32_array(r.kept_strides, kMaxRank);
  push.u32_array(r.red_shape, kMaxRank).u32_array(r.red_strides, kMaxRank);
  KernelKey key{shader, {r.op, in_size, out_size}, 2, push.size()};
  uint64_t invocations = out_size == 1 ? (static_cast<uint64_t>(n_res) + 3) / 4 : n_res;
  return add_dispatch(lc, n, key, {{in, false}, {out, true}}, push, invocations);
}

// Integer and bool reductions (shaders/reduce_int.comp): one invocation per
// output; a long reduction over few outputs is split into chunks whose
// partials (i32, or i64 for i64) a second pass reduces, so no invocation
// walks more than a few thousand elements.
Status lower_int_reduce(LoweringContext& lc, const graph::Node& n, ReducePass r, const TensorRef& x,
                        const TensorRef& y) {
  GPUU_RETURN_IF_ERROR(require_int64_support(lc, n, x.dtype));
  const bool wide = x.dtype == DType::kI64;
  const char* shader = wide ? "reduce_int_i64" : "reduce_int_i32";
  const auto esize = static_cast<int32_t>(graph::dtype_size(x.dtype));
  const int32_t partial_size = wide ? 8 : 4;
  uint64_t chunks = 1;
  if (r.n_red >= 2 * kMinChunk && r.n_out < kTargetWorkgroups * kWorkgroupSize) {
    chunks = (r.n_red + kMinChunk - 1) / kMinChunk;
  }
  if (chunks <= 1) return add_int_reduce_pass(lc, n, r, shader, esize, esize, x.range, y.range);
  r.n_chunks = static_cast<uint32_t>(chunks);
  GPUU_ASSIGN_OR_RETURN(BufferRange partials,
                        lc.scratch(static_cast<VkDeviceSize>(r.n_out) * chunks * partial_size, "reduction partials"));
  GPUU_RETURN_IF_ERROR(add_int_reduce_pass(lc, n, r, shader, esize, partial_size, x.range, partials));
  ReducePass finish;
  finish.op = r.op;
  finish.n_out = r.n_out;
  finish.n_red = r.n_chunks;
  finish.kept_shape = {r.n_out};
  finish.kept_strides = {r.n_chunks};
  finish.red_shape = {r.n_chunks};
  finish.red_strides = {1};
  return add_int_reduce_pass(lc, n, finish, shader, partial_size, esize, partials, y.range);
}

Status lower_reduce(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, x.dtype));
  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t axis : graph::attr_ints(attrs, "axes")) {
    reduced[static_cast<size_t>(graph::normalize_axis(axis, x.shape.size()))] = true;
  }
  // Runs of neighbouring dims of one kind (kept or reduced) merge into one dim;
  // size-1 dims drop out. Kept dims stay in order, so the output's row-major
  // order is the order of kept offsets.
  ReducePass pass;
  uint64_t n_red = 1, n_out = 1;
  int last_kind = -1;  // 0 kept, 1 reduced
  uint32_t stride = 1;
  for (size_t d = x.shape.size(); d-- > 0;) {
    const auto dim = static_cast<uint32_t>(x.shape[d]);
    (reduced[d] ? n_red : n_out) *= dim;
    if (dim != 1) {
      int kind = reduced[d] ? 1 : 0;
      auto& shape = kind ? pass.red_shape : pass.kept_shape;
      auto& strides = kind ? pass.red_strides : pass.kept_strides;
      if (kind == last_kind) {
        shape.front() *= dim;
      } else {
        shape.insert(shape.begin(), dim);
        strides.insert(strides.begin(), stride);
      }
      last_kind = kind;
    }
    stride *= dim;
  }
  if ((n.op == "reduce_max" || n.op == "reduce_min") && n_red == 0 && n_out > 0) {
    return err(StatusCode::kInvalidArgument, "node '", n.name, "' (", n.op, "): cannot take the ",
               n.op == "reduce_max" ? "max" : "min", " over zero elements");
  }
  const bool f16 = x.dtype == DType::kF16;
  pass.op = reduce_op_code(n.op);
  pass.n_out = static_cast<uint32_t>(n_out);
  pass.n_red = static_cast<uint32_t>(n_red);
  if (!is_float(x.dtype)) return lower_int_reduce(lc, n, pass, x, y);
  const bool mean = n.op == "reduce_mean";
  const float divisor = mean && n_red > 0 ? static_cast<float>(n_red) : 1.0f;

  // Few outputs over a long reduction: chunks write f32 partials first.
  uint64_t chunks = 1;
  if (n_red >= 2 * kMinChunk && n_out < kTargetWorkgroups) {
    chunks = std::min<uint64_t>((n_red + kMinChunk - 1) / kMinChunk, (kTargetWorkgroups + n_out - 1) / n_out);
  }
  if (chunks <= 1) {
    pass.shader = std::string("reduce_axes") + float_suffix(x.dtype);
    pass.divisor = divisor;
    pass.empty_mean = mean && n_red == 0;
    return add_reduce_pass(lc, n, pass, x.range, y.range);
  }
  pass.shader = f16 ? "reduce_axes_f16_to_f32" : "reduce_axes_f32";
  pass.n_chunks = static_cast<uint32_t>(chunks);
  GPUU_ASSIGN_OR_RETURN(BufferRange partials, lc.scratch(n_out * chunks * sizeof(float), "reduction partials"));
  GPUU_RETURN_IF_ERROR(add_reduce_pass(lc, n, pass, x.range, partials));
  // Partials are [n_out, chunks]: the second pass reduces each row.
  ReducePass finish;
  finish.shader = f16 ? "reduce_axes_f32_to_f16" : "reduce_axes_f32";
  finish.op = pass.op;
  finish.n_out = pass.n_out;
  finish.n_red = static_cast<uint32_t>(chunks);
  finish.divisor = divisor;
  finish.kept_shape = {pass.n_out};
  finish.kept_strides = {static_cast<uint32_t>(chunks)};
  finish.red_shape = {static_cast<uint32_t>(chunks)};
  finish.red_strides = {1};
  return add_reduce_pass(lc, n, finish, partials, y.range);
}

// outer, axis length and inner of `x` around `axis`.
struct AxisSplit {
  uint64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at(const graph::Shape& shape, size_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < axis; ++d) s.outer *= static_cast<uint64_t>(shape[d]);
  s.len = static_cast<uint64_t>(shape[axis]);
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= static_cast<uint64_t>(shape[d]);
  return s;
}

Status lower_arg_reduce(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x.shape.size()));
  AxisSplit s = split_at(x.shape, axis);
  PushConstants push;
  push.u32(static_cast<uint32_t>(s.outer * s.inner)).u32(static_cast<uint32_t>(s.len));
  push.u32(static_cast<uint32_t>(s.inner)).u32(static_cast<uint32_t>(x.dtype));
  KernelKey key{"arg_reduce", {n.op == "argmax" ? 1 : 0}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, s.outer * s.inner);
}

// A kernel that walks each (outer, inner) line of input 0 along attribute
// "axis", one invocation a line (cumsum_axis.comp, topk_axis.comp): the
// line count and the push constants (lines, len, inner) they begin with.
struct LineWalk {
  uint64_t lines = 0;
  PushConstants push;
};
Result<LineWalk> line_walk(LoweringContext& lc, const graph::Node& n, const graph::AttrMap& attrs) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, x.dtype));
  GPUU_RETURN_IF_ERROR(require_int64_support(lc, n, x.dtype));
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x.shape.size()));
  AxisSplit s = split_at(x.shape, axis);
  LineWalk walk;
  walk.lines = s.outer * s.inner;
  walk.push.u32(static_cast<uint32_t>(walk.lines)).u32(static_cast<uint32_t>(s.len)).u32(static_cast<uint32_t>(s.inner));
  return walk;
}

Status lower_cumsum(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  GPUU_ASSIGN_OR_RETURN(LineWalk walk, line_walk(lc, n, attrs));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  KernelKey key{std::string("cumsum_axis_") + graph::dtype_name(x.dtype), {}, 2, walk.push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {lc.tensor(n.outputs[0]).range, true}}, walk.push, walk.lines);
}

Status lower_topk(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  GPUU_ASSIGN_OR_RETURN(LineWalk walk, line_walk(lc, n, attrs));
  walk.push.u32(static_cast<uint32_t>(graph::attr_int(attrs, "k")));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  KernelKey key{std::string("topk_axis_") + graph::dtype_name(x.dtype), {graph::attr_int(attrs, "largest") ? 1 : 0},
                3, walk.push.size()};
  return add_dispatch(lc, n, key,
                      {{x.range, false}, {lc.tensor(n.outputs[0]).range, true}, {lc.tensor(n.outputs[1]).range, true}},
                      walk.push, walk.lines);
}

// The dtypes of input 0 each reduction's kernels take.
// The dtypes each reduction's kernels take for input 0.
DTypeSet reduce_dtypes(const std::string& op) {
  if (op == "reduce_any" || op == "reduce_all") return kBoolDType;
  if (op == "reduce_mean") return kFloatDTypes;
  return kFloatDTypes | kIntDTypes;
}

std::string reduce_check(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& x = g.value(n.inputs[0]);
  DTypeSet takes = reduce_dtypes(n.op);
  if (takes & dtype_bit(x.dtype)) return "";
  const char* words = takes == kBoolDType ? "bool" : takes == kFloatDTypes ? "f32/f16" : "f32/f16/i32/i64";
  return std::string("Vulkan ") + n.op + " kernels take " + words + " tensors, input '" + x.name + "' is " +
         graph::dtype_name(x.dtype);
}

Status lower_softmax(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, x.dtype));
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x.shape.size()));
  uint64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<uint64_t>(x.shape[d]);
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= static_cast<uint64_t>(x.shape[d]);
  const auto len = static_cast<uint32_t>(x.shape[axis]);
  const uint64_t rows = outer * inner;
  // Strided rows (inner > 1) read coalesced when neighbouring invocations take
  // neighbouring rows, so many of them go one per invocation too.
  bool per_thread = len < kPerThreadBelow || (inner > 1 && rows >= 4096);
  PushConstants push;
  push.u32(static_cast<uint32_t>(rows)).u32(len).u32(static_cast<uint32_t>(inner));
  KernelKey key{std::string("softmax_axis") + float_suffix(x.dtype), {per_thread ? 1 : 0}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push,
                      per_thread ? rows : workgroup_invocations(rows));
}

// OpKernel::takes_view: x (slot 0) through a view whose rows row_layout
// addresses, for a norm over the last dim alone.
bool layer_norm_takes_view(const graph::Graph& g, const graph::Node& n, size_t slot, const StridedView& view) {
  if (slot != 0) return false;
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok() || graph::attr_int(attrs.value(), "normalized_ndim") != 1) return false;
  return row_layout(g.value(n.inputs[0]).shape, view).has_value();
}

Status lower_layer_norm(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(RowNorm norm, layer_norm_of(lc, n));
  return add_row_norm(lc, {lc.graph.value(n.outputs[0]).producer}, norm);
}

}  // namespace

Result<NormRows> layer_norm_rows(const graph::Graph& g, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const graph::Shape& shape = g.value(n.inputs[0]).shape;
  const auto nd = static_cast<size_t>(graph::attr_int(attrs, "normalized_ndim"));
  NormRows r;
  for (size_t d = 0; d < shape.size(); ++d) (d + nd < shape.size() ? r.rows : r.size) *= static_cast<uint64_t>(shape[d]);
  return r;
}

Result<RowNorm> layer_norm_of(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  RowNorm norm;
  norm.x = &lc.tensor(n.inputs[0]);
  norm.y = &lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, norm.x->dtype));
  GPUU_ASSIGN_OR_RETURN(const NormRows rows, layer_norm_rows(lc.graph, n));
  norm.rows = rows.rows;
  norm.size = rows.size;
  norm.eps = static_cast<float>(graph::attr_float(attrs, "eps", 1e-5));
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) norm.weight = lc.tensor(n.inputs[1]).range;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) norm.bias = lc.tensor(n.inputs[2]).range;
  if (lc.has_view(n.inputs[0])) {
    const StridedView view = lc.view_of(n.inputs[0]);
    norm.x_layout = row_layout(norm.x->shape, view);
    if (!norm.x_layout) {
      return err(StatusCode::kInternal, "node '", n.name, "' (layer_norm): x has a layout the kernel cannot read");
    }
    norm.x = &lc.tensor(view.root);
  }
  return norm;
}

std::optional<RowNorm::Layout> row_layout(const graph::Shape& shape, const StridedView& view) {
  const size_t r = shape.size();
  if (r == 0 || view.strides.size() != r || !view_in_32_bits(view)) return std::nullopt;
  RowNorm::Layout layout;
  layout.offset = static_cast<uint64_t>(view.offset);
  layout.element_stride = static_cast<uint64_t>(view.strides[r - 1]);
  // The leading dims as at most two evenly strided runs of rows.
  const MergedDims runs = merge_dims(shape, view.strides, r - 1);
  const size_t count = runs.dims.size();
  if (count > 2) return std::nullopt;
  layout.inner_rows = count ? static_cast<uint64_t>(runs.dims.back()) : 1;
  layout.inner_stride = count ? static_cast<uint64_t>(runs.steps.back()) : 0;
  layout.outer_stride = count == 2 ? static_cast<uint64_t>(runs.steps.front()) : 0;
  return layout;
}

Status add_row_norm(LoweringContext& lc, const std::vector<graph::NodeId>& nodes, const RowNorm& norm) {
  const TensorRef& x = *norm.x;
  // An absent weight or bias binds x in its place; the shader never reads it.
  const BufferRange weight = norm.weight.value_or(x.range);
  const BufferRange bias = norm.bias.value_or(x.range);
  const uint64_t rows = norm.rows, size = norm.size;
  // Invocations per row: one for short rows, a line of 32 for rows up to a
  // thousand elements where there are rows enough to fill the GPU that way
  // (convnext's 96 channels over 3136 pixels), else the workgroup.
  const uint32_t row_width = size < kLayerNormLine / 4 ? 1u
                             : size < kLayerNormLineBelow && (size < kPerThreadBelow || rows >= kLayerNormLineMinRows)
                                 ? kLayerNormLine
                                 : kWorkgroupSize;
  const RowNorm::Layout at = norm.x_layout.value_or(RowNorm::Layout{0, rows, 0, size, 1});
  PushConstants push;
  push.u32(static_cast<uint32_t>(rows)).u32(static_cast<uint32_t>(size)).f32(norm.eps);
  push.u32(norm.weight_offset).u32(norm.weight_stride);
  push.u32(static_cast<uint32_t>(at.offset)).u32(static_cast<uint32_t>(std::max<uint64_t>(at.inner_rows, 1)));
  push.u32(static_cast<uint32_t>(at.outer_stride)).u32(static_cast<uint32_t>(at.inner_stride));
  push.u32(static_cast<uint32_t>(at.element_stride));
  // ROW_WIDTH, HAS_WEIGHT, HAS_BIAS, RMS, X_BYTES, Y_BYTES, N_BEFORE, N_AFTER, B0..B7, A0..A7, IMM0..IMM3.
  auto int_bytes = [](graph::DType t) { return is_float(t) ? 0 : static_cast<int32_t>(graph::dtype_size(t)); };
  std::vector<int32_t> spec = {static_cast<int32_t>(row_width), norm.weight ? 1 : 0, norm.bias ? 1 : 0,
                               norm.rms ? 1 : 0, int_bytes(x.dtype), int_bytes(norm.y->dtype),
                               static_cast<int32_t>(norm.before.size()), static_cast<int32_t>(norm.after.size())};
  for (const std::vector<int32_t>* chain : {&norm.before, &norm.after}) {
    for (size_t k = 0; k < kNormChainMaxInstructions; ++k) spec.push_back(k < chain->size() ? (*chain)[k] : 0);
  }
  for (size_t j = 0; j < kNormChainMaxImmediates; ++j) {
    spec.push_back(j < norm.immediates.size() ? float_bits(norm.immediates[j]) : 0);
  }
  // PER: each invocation's elements held in registers, where at most 32;
  // SUBGROUP_LINES: a line's sums as subgroup sums, where a line is one.
  const uint64_t per = (size + row_width - 1) / row_width;
  spec.push_back(per <= kLayerNormMaxPer ? static_cast<int32_t>(per) : 0);
  const bool subgroup_lines = row_width > 1 && row_width == lc.ctx.subgroup_size() && lc.ctx.subgroup_arithmetic();
  spec.push_back(subgroup_lines ? 1 : 0);
  // VEC4: float rows four elements at a time, where every row and weight
  // starts on a multiple of four elements (and every binding on 16 bytes)
  // and its quads split evenly over the row's invocations (H100, GPT-2's
  // 2048 x 768 norms: see layer_norm_rows.comp).
  const bool quads = is_float(x.dtype) && norm.y->dtype == x.dtype && row_width > 1 &&
                     norm.before.empty() && norm.after.empty() && at.element_stride == 1 &&
                     size % (4 * row_width) == 0 && per <= kLayerNormMaxPer && at.offset % 4 == 0 &&
                     at.inner_stride % 4 == 0 && at.outer_stride % 4 == 0 &&
                     (!norm.weight || (norm.weight_stride == 1 && norm.weight_offset % 4 == 0)) &&
                     x.range.offset % 16 == 0 && weight.offset % 16 == 0 && bias.offset % 16 == 0 &&
                     norm.y->range.offset % 16 == 0;
  spec.push_back(quads ? 1 : 0);
  const graph::DType computed = is_float(x.dtype) ? x.dtype : graph::DType::kF32;  // integer x: a chain's edge
  KernelKey key{std::string("layer_norm_rows") + float_suffix(computed), std::move(spec), 4, push.size()};
  gpu::StepWork work;
  work.choice = row_width == 1 ? "a row per invocation"
                : row_width == kLayerNormLine
                    ? std::string("a row per line of ") + std::to_string(row_width) + (subgroup_lines ? ", subgroup sums" : "")
                    : "a row per workgroup";
  if (quads) work.choice += ", four at a time";
  return add_dispatch(lc, nodes, key, {{x.range, false}, {weight, false}, {bias, false}, {norm.y->range, true}}, push,
                      rows * row_width, std::move(work));
}

void add_reduce_norm_kernels(std::vector<OpKernel>& table) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
                         "reduce_all"}) {
    table.push_back(OpKernel{op, reduce_dtypes(op), reduce_check, lower_reduce});
  }
  table.insert(table.end(), {{"argmax", reduce_dtypes("argmax"), reduce_check, lower_arg_reduce},
                             {"argmin", reduce_dtypes("argmin"), reduce_check, lower_arg_reduce},
                             {"cumsum", reduce_dtypes("cumsum"), reduce_check, lower_cumsum},
                             {"topk", reduce_dtypes("topk"), reduce_check, lower_topk},
                             {"softmax", kFloatDTypes, check_float_inputs, lower_softmax},
                             {"layer_norm", kFloatDTypes, check_float_inputs, lower_layer_norm, 0,
                              layer_norm_takes_view}});
}

}  // namespace gpuu::kernels
