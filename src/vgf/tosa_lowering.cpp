// lower_to_tosa: gpuu region -> TOSA graph. One function per gpuu op family,
// each named by its ops' entries in the op table at the end of this file, which
// lower_to_tosa dispatches through. TOSA's own rules shape the output: NHWC
// convolutions and pools, equal ranks for broadcasting (RESHAPE to leading
// 1s), one axis per REDUCE_*, i8 arithmetic through i32 where TOSA has no i8
// form, window sizes that divide exactly (pads adjusted or the input cropped),
// attribute constants per tosa-ops.md. TRANSPOSE chains fold as they are
// built; unused operators are dropped at the end.
#include "vgf/tosa_lowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "graph/resize_index.h"
#include "graph/verifier.h"
#include "vgf/tosa_op_table.h"

namespace gpuu::vgf {

namespace {

using graph::AttrMap;
using graph::DType;
using graph::Graph;
using graph::Node;
using graph::ValueId;
using Shape = std::vector<int64_t>;
using Perm = std::vector<int64_t>;
using E = TosaElementType;

// Constants the lowering derives stay inline up to this many elements.
constexpr int64_t kInlineLimit = 64;
const Perm kToNhwc = {0, 2, 3, 1};
const Perm kToNchw = {0, 3, 1, 2};

// TOSA window ops cover exactly (out - 1) * stride + k_eff padded cells, where
// gpuu floors (dropping leftover cells) or, with ceil_mode, overhangs. The
// leftover comes off the trailing pad, then off the input (crop); an
// overhang goes onto the trailing pad.
struct WindowFit {
  int64_t pad_before = 0, pad_after = 0, crop = 0;
};
WindowFit fit_window(int64_t in, int64_t k_eff, int64_t stride, int64_t pad_before, int64_t pad_after, int64_t out) {
  int64_t needed = (out - 1) * stride + k_eff;
  int64_t have = pad_before + in + pad_after;
  WindowFit f{pad_before, pad_after, 0};
  if (have > needed) {
    int64_t excess = have - needed;
    int64_t cut = std::min(excess, pad_after);
    f.pad_after -= cut;
    f.crop = excess - cut;
  } else {
    f.pad_after += needed - have;
  }
  return f;
}

// AVG_POOL2D over NCHW `in` -> `out`. TOSA never counts padding in the
// divisor, so torch's counted padding becomes explicit zeros first; the
// window then fits what is left.
struct AvgPoolFit {
  Shape zero_pads = {0, 0};  // explicit zeros on both sides of H and of W
  WindowFit fh, fw;
};
AvgPoolFit fit_avg_pool(const Shape& in, const Shape& out, const AttrMap& attrs) {
  Shape kernel = graph::attr_ints(attrs, "kernel"), stride = graph::attr_ints(attrs, "stride"),
        padding = graph::attr_ints(attrs, "padding");
  AvgPoolFit f;
  if (graph::attr_int(attrs, "count_include_pad", 1) != 0 && (padding[0] || padding[1])) {
    f.zero_pads = padding;
    padding = {0, 0};
  }
  f.fh = fit_window(in[2] + 2 * f.zero_pads[0], kernel[0], stride[0], padding[0], padding[0], out[2]);
  f.fw = fit_window(in[3] + 2 * f.zero_pads[1], kernel[1], stride[1], padding[1], padding[1], out[3]);
  return f;
}

// RESIZE's parameters for a gpuu resize of NCHW `in` to `out`, per spatial
// axis: "" or why none reproduces torch's indices.
std::string fit_resize(const Shape& in, const Shape& out, const AttrMap& attrs, TosaResizeAxis axes[2]) {
  graph::ResizeMode mode = graph::ResizeMode::kNearest;
  graph::parse_resize_mode(graph::attr_string(attrs, "mode"), &mode);
  bool align = graph::attr_int(attrs, "align_corners") != 0;
  std::vector<double> scales = graph::attr_floats(attrs, "scales");
  const char* names[2] = {"height", "width"};
  for (size_t d = 0; d < 2; ++d) {
    double user = scales.size() == 2 ? scales[d] : 0.0;
    if (!tosa_resize_axis_for(mode, align, in[2 + d], out[2 + d], user, &axes[d])) {
      return str_cat("no TOSA RESIZE scale/offset/border reproduces torch's ", graph::attr_string(attrs, "mode"),
                     align ? " (align_corners)" : "", " indices along the ", names[d], " (", in[2 + d], " -> ",
                     out[2 + d], user > 0 ? ", scale " + std::to_string(user) : std::string(), ")");
    }
  }
  return "";
}

// ---- the op table's checks: what a node's attributes and shapes allow ----

std::string check_avg_pool2d(const Graph& g, const Node& node, const AttrMap& attrs) {
  AvgPoolFit f = fit_avg_pool(g.value(node.inputs[0]).shape, g.value(node.outputs[0]).shape, attrs);
  Shape kernel = graph::attr_ints(attrs, "kernel");
  if (f.fh.pad_after < kernel[0] && f.fw.pad_after < kernel[1]) return "";
  return str_cat("ceil_mode needs a trailing pad of ", std::max(f.fh.pad_after, f.fw.pad_after),
                 ", but TOSA's AVG_POOL2D pads must be smaller than the kernel");
}

std::string check_conv_transpose2d(const Graph&, const Node&, const AttrMap& attrs) {
  Shape dilation = graph::attr_ints(attrs, "dilation");
  if (dilation == Shape{1, 1}) return "";
  return str_cat("TOSA 1.0 TRANSPOSE_CONV2D has no dilation (dilation is ", graph::shape_to_string(dilation), ")");
}

std::string check_resize(const Graph& g, const Node& node, const AttrMap& attrs) {
  TosaResizeAxis axes[2];
  return fit_resize(g.value(node.inputs[0]).shape, g.value(node.outputs[0]).shape, attrs, axes);
}

std::string check_table(const Graph& g, const Node& node, const AttrMap&) {
  const graph::Value& table = g.value(node.inputs[1]);
  if (table.constant != graph::kNone) return "";
  return str_cat("TOSA's TABLE takes its table as a constant; '", table.name, "' is not one");
}

// gather's flat row numbers are i32.
std::string check_gather(const Graph& g, const Node& node, const AttrMap&) {
  if (graph::shape_numel(g.value(node.inputs[0]).shape) <= INT32_MAX) return "";
  return "the input has more elements than i32 row numbers reach";
}

// index_put is SCATTER where it writes (TOSA has no reduction) rows that
// can all be distinct (SCATTER forbids writing a row twice).
std::string check_index_put(const Graph& g, const Node& node, const AttrMap& attrs) {
  std::string reduce = graph::attr_string(attrs, "reduce");
  if (reduce != "none") return str_cat("TOSA 1.0 SCATTER writes rows and has no reduction (reduce is \"", reduce, "\")");
  const Shape& x = g.value(node.inputs[0]).shape;
  const int64_t rows = g.value(node.inputs[1]).shape[0];
  const auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x.size()));
  if (rows == 0) return "there are no rows to write (TOSA tensors have no empty dims)";
  if (rows > x[axis]) {
    return str_cat("it writes ", rows, " rows into ", x[axis], ", so some row twice, which TOSA 1.0 SCATTER forbids");
  }
  return "";
}

}  // namespace

class TosaLowering {
 public:
  TosaLowering(const Graph& src, const TosaLoweringOptions& options) : src_(src), options_(options) {}
  friend const std::vector<TosaOpEntry>& tosa_op_table();  // points at the lower_* members

  Result<TosaGraph> run() {
    GPUU_RETURN_IF_ERROR(graph::verify(src_));
    value_.assign(src_.values().size(), -1);
    consumers_ = src_.consumers();
    for (size_t i = 0; i < src_.values().size(); ++i) {
      GPUU_RETURN_IF_ERROR(check_value(static_cast<ValueId>(i)));
    }
    uint32_t binding = 0;
    for (ValueId in : src_.inputs()) {
      const graph::Value& v = src_.value(in);
      E t = E::kF32;
      value_type(in, &t);
      value_[static_cast<size_t>(in)] = g_.add_input(t, v.shape, 0, binding++, v.name);
    }
    for (size_t n = 0; n < src_.nodes().size(); ++n) {
      const Node& node = src_.node(static_cast<graph::NodeId>(n));
      node_ = &node;
      GPUU_ASSIGN_OR_RETURN(attrs_, graph::resolve_attrs(node));
      GPUU_RETURN_IF_ERROR(lower_node(node));
      for (ValueId out : node.outputs) {
        TosaTensorId t = value_[static_cast<size_t>(out)];
        const graph::Value& v = src_.value(out);
        E want = E::kF32;
        value_type(out, &want);
        if (t < 0 || g_.tensor(t).type != want || g_.tensor(t).shape != v.shape) {
          return err(StatusCode::kInternal, where(), "lowered to ", t < 0 ? std::string("nothing") : tosa_type_string(g_.tensor(t)),
                     " but the node's output is ", tosa_element_type_name(want), tosa_shape_string(v.shape));
        }
      }
    }
    for (ValueId out : src_.outputs()) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId t, value(out));
      g_.add_output(t, 0, binding++, src_.value(out).name);
    }
    TosaGraph pruned = canonicalize_tosa_graph(prune(g_));
    Status valid = validate_tosa_graph(pruned);
    if (!valid.ok()) return err(StatusCode::kInternal, "lower_to_tosa built an invalid TOSA graph: ", valid.message());
    return pruned;
  }

 private:
  // ---- errors and values ----

  std::string where() const { return tosa_node_label(*node_); }
  template <typename... Parts>
  Status unsupported(const Parts&... parts) const {
    return err(StatusCode::kUnsupported, where(), parts...);
  }

  Status check_value(ValueId id) const {
    const graph::Value& v = src_.value(id);
    E t = E::kF32;
    if (!value_type(id, &t)) {
      return err(StatusCode::kUnsupported, "value '", v.name, "' is ", graph::dtype_name(v.dtype),
                 ": TOSA 1.0 has no i64 tensors");
    }
    if (v.shape.empty() || v.shape.size() > kTosaMaxRank) {
      return err(StatusCode::kUnsupported, "value '", v.name, "' has rank ", v.shape.size(),
                 ": TOSA graph tensors have rank 1..", kTosaMaxRank);
    }
    for (int64_t d : v.shape) {
      if (d < 1) return err(StatusCode::kUnsupported, "value '", v.name, "' ", graph::shape_to_string(v.shape), " is empty");
    }
    return Status::Ok();
  }

  // A value's TOSA type: dtype_to_tosa's, or i48 for an i64 that is TOSA's
  // accumulator wherever it is made and read (carries_i48).
  bool value_type(ValueId id, E* out) const {
    const graph::Value& v = src_.value(id);
    if (v.dtype != graph::DType::kI64) return dtype_to_tosa(v.dtype, out);
    if (v.producer != graph::kNone) {
      const Node& p = src_.node(v.producer);
      size_t slot = static_cast<size_t>(std::find(p.outputs.begin(), p.outputs.end(), id) - p.outputs.begin());
      if (!carries_i48(p.op, true, slot)) return false;
    }
    for (graph::NodeId c : consumers_[static_cast<size_t>(id)]) {
      const Node& n = src_.node(c);
      for (size_t slot = 0; slot < n.inputs.size(); ++slot) {
        if (n.inputs[slot] == id && !carries_i48(n.op, false, slot)) return false;
      }
    }
    *out = E::kI48;
    return true;
  }

  bool is_constant(ValueId id) const { return src_.value(id).constant != graph::kNone; }
  const Blob& constant_data(ValueId id) const {
    return src_.constants()[static_cast<size_t>(src_.value(id).constant)].data;
  }

  // The TOSA tensor of a gpuu value; a gpuu constant becomes a graph constant on first use.
  Result<TosaTensorId> value(ValueId id) {
    TosaTensorId& t = value_[static_cast<size_t>(id)];
    if (t >= 0) return t;
    if (!is_constant(id)) return err(StatusCode::kInternal, "value ", id, " was used before it was lowered");
    const graph::Value& v = src_.value(id);
    E type = E::kF32;
    value_type(id, &type);
    t = g_.add_graph_constant(type, v.shape, next_graph_constant_++, constant_data(id), v.name);
    return t;
  }
  Result<TosaTensorId> in(size_t i) { return value(node_->inputs[i]); }
  bool has_in(size_t i) const { return i < node_->inputs.size() && node_->inputs[i] != graph::kNone; }
  void set_out(TosaTensorId t) { value_[static_cast<size_t>(node_->outputs[0])] = t; }
  const graph::Value& out_value() const { return src_.value(node_->outputs[0]); }
  E out_type() const {
    E t = E::kF32;
    value_type(node_->outputs[0], &t);
    return t;
  }

  E type(TosaTensorId t) const { return g_.tensor(t).type; }
  Shape shape(TosaTensorId t) const { return g_.tensor(t).shape; }
  size_t rank(TosaTensorId t) const { return g_.tensor(t).shape.size(); }

  // ---- TOSA building blocks ----

  TosaTensorId emit(TosaOp op, std::vector<TosaAttribute> attrs, std::vector<TosaTensorId> inputs, E type, Shape shape) {
    return g_.add_operator(op, std::move(attrs), std::move(inputs), {{type, std::move(shape)}});
  }

  TosaTensorId reshape(TosaTensorId x, const Shape& s) {
    auto inner = reshaped_.find(x);
    if (inner != reshaped_.end()) x = inner->second;  // reshape(reshape(v)) = reshape(v)
    if (shape(x) == s) return x;
    TosaTensorId y = emit(TosaOp::kReshape, {TosaAttribute::shape(s)}, {x}, type(x), s);
    reshaped_[y] = x;
    return y;
  }

  TosaTensorId align_rank(TosaTensorId x, size_t r) {
    Shape s = shape(x);
    if (s.size() >= r) return x;
    s.insert(s.begin(), r - s.size(), 1);
    return reshape(x, s);
  }

  TosaTensorId transpose(TosaTensorId x, const Perm& perm) {
    if (graph::is_identity_perm(perm)) return x;
    auto inner = transposed_.find(x);
    if (inner != transposed_.end()) {
      return transpose(inner->second.first, graph::compose_perms(inner->second.second, perm));
    }
    Shape s = shape(x), out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = s[static_cast<size_t>(perm[i])];
    TosaTensorId y = emit(TosaOp::kTranspose, {TosaAttribute::shape(perm)}, {x}, type(x), out);
    transposed_[y] = {x, perm};
    return y;
  }

  TosaTensorId slice(TosaTensorId x, const Shape& start, const Shape& size) {
    if (size == shape(x)) return x;
    return emit(TosaOp::kSlice, {TosaAttribute::shape(start), TosaAttribute::shape(size)}, {x}, type(x), size);
  }

  TosaAttribute scalar_attr(E t, double v) const {
    return tosa_is_float(t) ? TosaAttribute::float_tensor(t, {v})
                            : TosaAttribute::int_tensor(t, {static_cast<int64_t>(v)});
  }

  // PAD by [before0, after0, ...] with `value`.
  TosaTensorId pad(TosaTensorId x, const Shape& pads, double value) {
    bool any = false;
    for (int64_t p : pads) any = any || p != 0;
    if (!any) return x;
    Shape s = shape(x);
    for (size_t d = 0; d < s.size(); ++d) s[d] += pads[2 * d] + pads[2 * d + 1];
    return emit(TosaOp::kPad, {TosaAttribute::shape(pads), scalar_attr(type(x), value)}, {x}, type(x), s);
  }

  // A constant tensor: inline when small, else a graph constant.
  TosaTensorId constant(E t, const Shape& s, std::vector<uint8_t> bytes, std::string name = "") {
    if (tosa_numel(s) <= kInlineLimit) return g_.add_inline_constant(t, s, Blob::take(std::move(bytes)), std::move(name));
    return g_.add_graph_constant(t, s, next_graph_constant_++, Blob::take(std::move(bytes)), std::move(name));
  }

  // A [1]*rank constant holding `v` (cached).
  TosaTensorId scalar(E t, double v, size_t r) {
    std::vector<uint8_t> bytes(tosa_element_size(t));
    tosa_store_element(t, v, bytes.data(), 0);
    auto key = std::make_tuple(static_cast<int>(t), bytes, r);
    auto it = scalars_.find(key);
    if (it != scalars_.end()) return it->second;
    TosaTensorId id = g_.add_inline_constant(t, Shape(r, 1), Blob::take(bytes));
    scalars_.emplace(key, id);
    return id;
  }

  // Elementwise op on operands broadcast to one rank (TOSA broadcasts only
  // size-1 dims of equal ranks).
  TosaTensorId elementwise(TosaOp op, std::vector<TosaAttribute> attrs, std::vector<TosaTensorId> xs, E out) {
    size_t r = 0;
    for (TosaTensorId x : xs) r = std::max(r, rank(x));
    Shape s(r, 1);
    for (TosaTensorId& x : xs) {
      x = align_rank(x, r);
      Shape xs_shape = shape(x);
      for (size_t d = 0; d < r; ++d) s[d] = std::max(s[d], xs_shape[d]);
    }
    return emit(op, std::move(attrs), std::move(xs), out, s);
  }
  TosaTensorId binary(TosaOp op, TosaTensorId a, TosaTensorId b) { return elementwise(op, {}, {a, b}, type(a)); }
  TosaTensorId mul(TosaTensorId a, TosaTensorId b) {
    E out = type(a) == E::kI8 || type(a) == E::kI16 ? E::kI32 : type(a);
    return elementwise(TosaOp::kMul, {}, {a, b}, out, TosaAttribute::zero_point(E::kI8));
  }
  TosaTensorId elementwise(TosaOp op, std::vector<TosaAttribute> attrs, std::vector<TosaTensorId> xs, E out,
                           TosaAttribute trailing) {
    attrs.push_back(std::move(trailing));
    return elementwise(op, std::move(attrs), std::move(xs), out);
  }
  TosaTensorId nan_binary(TosaOp op, TosaTensorId a, TosaTensorId b) {
    return elementwise(op, {TosaAttribute::u32(static_cast<uint32_t>(TosaNanPropagationMode::kPropagate))}, {a, b},
                       type(a));
  }
  // A one-input elementwise op commutes with a transpose: apply it before the
  // transpose, so the transpose can still cancel against a later one
  // (conv -> relu -> pool stays NHWC throughout).
  template <typename Fn>
  TosaTensorId pointwise(TosaTensorId x, Fn fn) {
    auto it = transposed_.find(x);
    if (it == transposed_.end()) return fn(x);
    std::pair<TosaTensorId, Perm> source = it->second;
    return transpose(fn(source.first), source.second);
  }
  TosaTensorId unary(TosaOp op, TosaTensorId x) {
    return pointwise(x, [&](TosaTensorId v) { return emit(op, {}, {v}, type(v), shape(v)); });
  }
  TosaTensorId cast(TosaTensorId x, E to) {
    if (type(x) == to) return x;
    return pointwise(x, [&](TosaTensorId v) { return emit(TosaOp::kCast, {}, {v}, to, shape(v)); });
  }
  TosaTensorId compare(TosaOp op, TosaTensorId a, TosaTensorId b) { return elementwise(op, {}, {a, b}, E::kBool); }
  TosaTensorId select(TosaTensorId c, TosaTensorId a, TosaTensorId b) {
    return elementwise(TosaOp::kSelect, {}, {c, a, b}, type(a));
  }
  TosaTensorId negate(TosaTensorId x) {
    return pointwise(x, [&](TosaTensorId v) {
      return emit(TosaOp::kNegate, {TosaAttribute::zero_point(type(v)), TosaAttribute::zero_point(type(v))}, {v},
                  type(v), shape(v));
    });
  }
  TosaTensorId reduce(TosaOp op, TosaTensorId x, int64_t axis) {
    Shape s = shape(x);
    s[static_cast<size_t>(axis)] = 1;
    std::vector<TosaAttribute> attrs = {TosaAttribute::u32(static_cast<uint32_t>(axis))};
    if (op == TosaOp::kReduceMax || op == TosaOp::kReduceMin) {
      attrs.push_back(TosaAttribute::u32(static_cast<uint32_t>(TosaNanPropagationMode::kPropagate)));
    }
    return emit(op, std::move(attrs), {x}, type(x), s);
  }

  // i8 arithmetic TOSA only has for i32: widen, compute, narrow (CAST i32->i8
  // keeps the low bits, the wrap-around gpuu's kernels have).
  template <typename Fn>
  TosaTensorId via_i32(std::vector<TosaTensorId> xs, Fn fn) {
    E t = type(xs[0]);
    if (t != E::kI8) return fn(xs);
    for (TosaTensorId& x : xs) x = cast(x, E::kI32);
    return cast(fn(xs), E::kI8);
  }

  // Every step-th element along `axis` (from 0), `count` of them: TOSA SLICE
  // has no step, so view the axis as [count, step] and keep column 0.
  TosaTensorId stride_select(TosaTensorId x, size_t axis, int64_t step, int64_t count) {
    Shape s = shape(x);
    if (step == 1) {
      Shape start(s.size(), 0), size = s;
      size[axis] = count;
      return slice(x, start, size);
    }
    int64_t needed = count * step;
    if (s[axis] > needed) {
      Shape start(s.size(), 0), size = s;
      size[axis] = needed;
      x = slice(x, start, size);
    } else if (s[axis] < needed) {
      Shape pads(2 * s.size(), 0);
      pads[2 * axis + 1] = needed - s[axis];
      x = pad(x, pads, 0.0);
    }
    int64_t pre = 1, post = 1;
    for (size_t d = 0; d < axis; ++d) pre *= s[d];
    for (size_t d = axis + 1; d < s.size(); ++d) post *= s[d];
    TosaTensorId v = reshape(x, {pre, count, step, post});
    v = slice(v, {0, 0, 0, 0}, {pre, count, 1, post});
    Shape out = s;
    out[axis] = count;
    return reshape(v, out);
  }

  // A gpuu operand viewed as `view` (same elements) and permuted by `perm`:
  // constants are rearranged here, other values get RESHAPE + TRANSPOSE.
  Result<TosaTensorId> rearranged(ValueId v, const Shape& view, const Perm& perm) {
    if (is_constant(v) && value_[static_cast<size_t>(v)] < 0) {
      E t = E::kF32;
      value_type(v, &t);
      std::vector<uint8_t> bytes = graph::permute_bytes(constant_data(v).data(), tosa_element_size(t), view, perm);
      Shape out(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) out[i] = view[static_cast<size_t>(perm[i])];
      TosaTensorId c = constant(t, out, std::move(bytes), src_.value(v).name);
      g_.constants.back().source_view = view;
      g_.constants.back().source_perm = perm;
      return c;
    }
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, value(v));
    return transpose(reshape(x, view), perm);
  }

  // ---- per op ----

  // The node's entry in the op table decides whether it lowers, then lowers it.
  Status lower_node(const Node& node) {
    TosaRefusal refusal = check_tosa_node(src_, node, TosaDTypeRule::kLowered);
    if (!refusal.ok()) return unsupported(describe_tosa_refusal(src_, node, refusal));
    const TosaOpEntry* entry = find_tosa_op(node.op);
    if (!entry->lower) return unsupported(entry->tosa, ", not a TOSA operator");
    return (this->*entry->lower)();
  }

  template <TosaOp kOp>
  Status lower_unary() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    set_out(unary(kOp, x));
    return Status::Ok();
  }

  Status lower_sqrt() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    set_out(binary(TosaOp::kPow, x, scalar(type(x), 0.5, rank(x))));
    return Status::Ok();
  }

  // tan = sin / cos; cosh = (e + 1/e) / 2; trunc picks floor or ceil by
  // sign; round adds 1 to floor(x) above the half and at the half when
  // floor(x) is odd (ties to even). Every step is exact but the first two's.
  Status lower_float_compositions() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    size_t r = rank(x);
    const std::string& op = node_->op;
    if (op == "tan") {
      set_out(mul(unary(TosaOp::kSin, x), unary(TosaOp::kReciprocal, unary(TosaOp::kCos, x))));
    } else if (op == "cosh") {
      TosaTensorId e = unary(TosaOp::kExp, x);
      set_out(mul(binary(TosaOp::kAdd, e, unary(TosaOp::kReciprocal, e)), scalar(t, 0.5, r)));
    } else if (op == "trunc") {
      set_out(select(compare(TosaOp::kGreaterEqual, x, scalar(t, 0.0, r)), unary(TosaOp::kFloor, x),
                     unary(TosaOp::kCeil, x)));
    } else {
      TosaTensorId f = unary(TosaOp::kFloor, x);
      TosaTensorId frac = binary(TosaOp::kSub, x, f);
      TosaTensorId half = scalar(t, 0.5, r);
      TosaTensorId halves = unary(TosaOp::kFloor, mul(f, half));
      TosaTensorId odd = binary(TosaOp::kSub, f, mul(halves, scalar(t, 2.0, r)));  // 0 or 1
      TosaTensorId zero = scalar(t, 0.0, r);
      TosaTensorId at_half = select(compare(TosaOp::kEqual, frac, half), odd, zero);
      TosaTensorId up = select(compare(TosaOp::kGreater, frac, half), scalar(t, 1.0, r), at_half);
      set_out(binary(TosaOp::kAdd, f, up));
    }
    return Status::Ok();
  }

  // sign: 1 above 0, -1 below, else x itself (zeros, and NaN for floats).
  Status lower_sign() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    size_t r = rank(x);
    TosaTensorId zero = scalar(t, 0.0, r);
    TosaTensorId below = select(compare(TosaOp::kGreater, zero, x), scalar(t, -1.0, r), x);
    set_out(select(compare(TosaOp::kGreater, x, zero), scalar(t, 1.0, r), below));
    return Status::Ok();
  }

  // x != 0 as bool (NaN is true), as gpuu's logical ops read their inputs.
  TosaTensorId truth(TosaTensorId x) {
    if (type(x) == E::kBool) return x;
    TosaTensorId w = cast(x, type(x) == E::kI8 ? E::kI32 : type(x));
    return unary(TosaOp::kLogicalNot, compare(TosaOp::kEqual, w, scalar(type(w), 0.0, rank(w))));
  }

  Status lower_predicate() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const std::string& op = node_->op;
    if (op == "logical_not") {
      set_out(unary(TosaOp::kLogicalNot, truth(x)));
      return Status::Ok();
    }
    if (op == "isnan") {
      set_out(unary(TosaOp::kLogicalNot, compare(TosaOp::kEqual, x, x)));
    } else {
      set_out(compare(TosaOp::kEqual, unary(TosaOp::kAbs, x), scalar(type(x), INFINITY, rank(x))));
    }
    return Status::Ok();
  }

  Status lower_logical() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    const std::string& op = node_->op;
    TosaOp top = op == "logical_and" ? TosaOp::kLogicalAnd : op == "logical_or" ? TosaOp::kLogicalOr : TosaOp::kLogicalXor;
    set_out(elementwise(top, {}, {truth(a), truth(b)}, E::kBool));
    return Status::Ok();
  }

  // i32: TOSA's BITWISE_*; bool: the LOGICAL_* ones.
  Status lower_bitwise() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    const std::string& op = node_->op;
    bool logical = type(a) == E::kBool;
    if (op == "bitwise_not") {
      set_out(unary(logical ? TosaOp::kLogicalNot : TosaOp::kBitwiseNot, a));
      return Status::Ok();
    }
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    TosaOp top;
    if (op == "bitwise_and") {
      top = logical ? TosaOp::kLogicalAnd : TosaOp::kBitwiseAnd;
    } else if (op == "bitwise_or") {
      top = logical ? TosaOp::kLogicalOr : TosaOp::kBitwiseOr;
    } else {
      top = logical ? TosaOp::kLogicalXor : TosaOp::kBitwiseXor;
    }
    set_out(binary(top, a, b));
    return Status::Ok();
  }

  // i32 remainder / fmod / floor_divide through INTDIV (truncating). INTDIV
  // is undefined for a zero divisor and for MIN / -1, so those divide by 1
  // and gpuu's defined results (0; -a for floor_divide by -1) are selected.
  Status lower_int_division() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    size_t r = std::max(rank(a), rank(b));
    a = align_rank(a, r);
    b = align_rank(b, r);
    TosaTensorId zero = scalar(E::kI32, 0, r), one = scalar(E::kI32, 1, r), minus_one = scalar(E::kI32, -1, r);
    TosaTensorId by_zero = compare(TosaOp::kEqual, b, zero);
    TosaTensorId by_minus_one = compare(TosaOp::kEqual, b, minus_one);
    TosaTensorId special = elementwise(TosaOp::kLogicalOr, {}, {by_zero, by_minus_one}, E::kBool);
    TosaTensorId safe_b = select(special, one, b);
    TosaTensorId q = binary(TosaOp::kIntdiv, a, safe_b);
    TosaTensorId rem = binary(TosaOp::kSub, a, mul(q, safe_b));  // C's %: the dividend's sign
    const std::string& op = node_->op;
    if (op == "fmod") {
      set_out(select(special, zero, rem));
      return Status::Ok();
    }
    // The floor differs from the truncation when the remainder is nonzero and its sign is not the divisor's.
    TosaTensorId signs_differ = elementwise(TosaOp::kLogicalXor, {}, {compare(TosaOp::kGreater, zero, rem),
                                                                       compare(TosaOp::kGreater, zero, safe_b)},
                                            E::kBool);
    TosaTensorId adjust = elementwise(TosaOp::kLogicalAnd, {},
                                      {unary(TosaOp::kLogicalNot, compare(TosaOp::kEqual, rem, zero)), signs_differ},
                                      E::kBool);
    if (op == "remainder") {
      set_out(select(special, zero, select(adjust, binary(TosaOp::kAdd, rem, b), rem)));
    } else {
      TosaTensorId floor_q = select(adjust, binary(TosaOp::kSub, q, one), q);
      set_out(select(by_zero, zero, select(by_minus_one, binary(TosaOp::kSub, zero, a), floor_q)));
    }
    return Status::Ok();
  }

  Status lower_sign_ops() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const std::string& op = node_->op;
    if (op == "abs") {
      set_out(via_i32({x}, [&](const std::vector<TosaTensorId>& v) { return unary(TosaOp::kAbs, v[0]); }));
    } else if (op == "neg") {
      // TOSA's i8 NEGATE saturates (-(-128) = 127); gpuu wraps: go through i32.
      set_out(via_i32({x}, [&](const std::vector<TosaTensorId>& v) { return negate(v[0]); }));
    } else if (type(x) == E::kI32) {  // relu: TOSA's CLAMP has no i32 form
      set_out(nan_binary(TosaOp::kMaximum, x, scalar(E::kI32, 0, rank(x))));
    } else {
      double hi = type(x) == E::kI8 ? 127.0 : INFINITY;
      set_out(clamp(x, 0.0, hi));
    }
    return Status::Ok();
  }

  TosaTensorId clamp(TosaTensorId x, double lo, double hi) {
    E t = type(x);
    TosaAttribute a = tosa_is_float(t) ? TosaAttribute::float_scalar(t, lo) : TosaAttribute::int_scalar(t, static_cast<int64_t>(lo));
    TosaAttribute b = tosa_is_float(t) ? TosaAttribute::float_scalar(t, hi) : TosaAttribute::int_scalar(t, static_cast<int64_t>(hi));
    return pointwise(x, [&](TosaTensorId v) {
      return emit(TosaOp::kClamp, {a, b, TosaAttribute::u32(static_cast<uint32_t>(TosaNanPropagationMode::kPropagate))},
                  {v}, t, shape(v));
    });
  }

  Status lower_clamp() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    bool has_min = graph::has_attr(attrs_, "min"), has_max = graph::has_attr(attrs_, "max");
    double lo = graph::attr_float(attrs_, "min"), hi = graph::attr_float(attrs_, "max");
    E t = type(x);
    if (tosa_is_float(t)) {
      set_out(clamp(x, has_min ? lo : -INFINITY, has_max ? hi : INFINITY));
      return Status::Ok();
    }
    // Integers clamp to ceil(min) and floor(max), like the CPU kernel; the min
    // applies first, so max wins when they cross.
    int64_t type_lo = 0, type_hi = 0;
    tosa_int_range(t, &type_lo, &type_hi);
    double tmin = static_cast<double>(type_lo), tmax = static_cast<double>(type_hi);
    double ilo = has_min ? std::min(std::max(std::ceil(lo), tmin), tmax) : tmin;
    double ihi = has_max ? std::min(std::max(std::floor(hi), tmin), tmax) : tmax;
    if (ilo > ihi) ilo = ihi;
    if (t == E::kI8 || t == E::kI16) {
      set_out(clamp(x, ilo, ihi));
    } else {  // CLAMP has no i32 form
      TosaTensorId y = x;
      if (has_min) y = nan_binary(TosaOp::kMaximum, y, scalar(t, ilo, rank(x)));
      if (has_max) y = nan_binary(TosaOp::kMinimum, y, scalar(t, ihi, rank(x)));
      set_out(y);
    }
    return Status::Ok();
  }

  Status lower_gelu() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    size_t r = rank(x);
    TosaTensorId inner;
    if (graph::attr_string(attrs_, "approximate") == "tanh") {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      TosaTensorId cube = mul(mul(x, x), x);
      TosaTensorId poly = binary(TosaOp::kAdd, x, mul(cube, scalar(t, 0.044715, r)));
      inner = unary(TosaOp::kTanh, mul(poly, scalar(t, 0.79788456080286535588, r)));
    } else {
      // 0.5 x (1 + erf(x / sqrt(2)))
      inner = unary(TosaOp::kErf, mul(x, scalar(t, 0.70710678118654752440, r)));
    }
    TosaTensorId one_plus = binary(TosaOp::kAdd, inner, scalar(t, 1.0, r));
    set_out(mul(mul(x, one_plus), scalar(t, 0.5, r)));
    return Status::Ok();
  }

  Status lower_arithmetic() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    const std::string& op = node_->op;
    if (op == "div" || op == "pow") {
      // div: a * (1/b); one more rounding than a true division (<= 1.5 ulp).
      set_out(op == "pow" ? binary(TosaOp::kPow, a, b) : mul(a, unary(TosaOp::kReciprocal, b)));
      return Status::Ok();
    }
    if (op == "mul") {
      // TOSA's i8 MUL already yields i32; narrow it back (wraps like gpuu).
      set_out(cast(mul(a, b), type(a)));
      return Status::Ok();
    }
    TosaOp top = op == "add" ? TosaOp::kAdd : op == "sub" ? TosaOp::kSub : op == "maximum" ? TosaOp::kMaximum : TosaOp::kMinimum;
    set_out(via_i32({a, b}, [&](const std::vector<TosaTensorId>& v) {
      return top == TosaOp::kAdd || top == TosaOp::kSub ? binary(top, v[0], v[1]) : nan_binary(top, v[0], v[1]);
    }));
    return Status::Ok();
  }

  Status lower_compare() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    const std::string& op = node_->op;
    if (type(a) == E::kBool) {  // equal/not_equal: the op table gives bool no order
      TosaTensorId x = elementwise(TosaOp::kLogicalXor, {}, {a, b}, E::kBool);
      set_out(op == "equal" ? unary(TosaOp::kLogicalNot, x) : x);
      return Status::Ok();
    }
    // TOSA compares i32 and floats only; i8 widens exactly.
    a = cast(a, type(a) == E::kI8 ? E::kI32 : type(a));
    b = cast(b, type(b) == E::kI8 ? E::kI32 : type(b));
    if (op == "equal") set_out(compare(TosaOp::kEqual, a, b));
    if (op == "not_equal") set_out(unary(TosaOp::kLogicalNot, compare(TosaOp::kEqual, a, b)));
    if (op == "greater") set_out(compare(TosaOp::kGreater, a, b));
    if (op == "greater_equal") set_out(compare(TosaOp::kGreaterEqual, a, b));
    if (op == "less") set_out(compare(TosaOp::kGreater, b, a));
    if (op == "less_equal") set_out(compare(TosaOp::kGreaterEqual, b, a));
    return Status::Ok();
  }

  Status lower_where() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId c, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(1));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(2));
    set_out(select(c, a, b));
    return Status::Ok();
  }

  Status lower_cast() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E from = type(x), to = out_type();
    size_t r = rank(x);
    if (from == to) {
      set_out(x);
    } else if (from == E::kBool) {
      // TOSA casts bool to integers only; SELECT covers every target.
      set_out(select(x, scalar(to, 1.0, r), scalar(to, 0.0, r)));
    } else if (to == E::kBool) {
      // x != 0 (NaN is true); EQUAL takes i32 and floats.
      TosaTensorId w = cast(x, from == E::kI8 ? E::kI32 : from);
      set_out(unary(TosaOp::kLogicalNot, compare(TosaOp::kEqual, w, scalar(type(w), 0.0, r))));
    } else if (tosa_is_float(from) && !tosa_is_float(to)) {
      // gpuu truncates toward zero and maps NaN to 0; TOSA's CAST rounds to
      // nearest. Truncate first, so the CAST sees integers (it saturates, as gpuu does).
      TosaTensorId zero = scalar(from, 0.0, r);
      TosaTensorId trunc = select(compare(TosaOp::kGreaterEqual, x, zero), unary(TosaOp::kFloor, x), unary(TosaOp::kCeil, x));
      TosaTensorId not_nan = compare(TosaOp::kEqual, x, x);
      set_out(cast(select(not_nan, trunc, zero), to));
    } else {
      set_out(cast(x, to));  // int<->int wraps, int->float and float->float round to nearest
    }
    return Status::Ok();
  }

  Status lower_matmul() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    Shape out = out_value().shape;
    size_t r = out.size();
    Shape batch(out.begin(), out.end() - 2);
    int64_t batch_n = tosa_numel(batch), m = out[r - 2], n = out[r - 1];
    int64_t k = shape(a).back();
    a = align_rank(a, r);
    b = align_rank(b, r);
    auto batch_of = [&](TosaTensorId x) { Shape s = shape(x); return Shape(s.begin(), s.end() - 2); };
    TosaTensorId result;
    if (tosa_numel(batch_of(b)) == 1) {
      // Shared right operand (weights): fold a's batch into its rows.
      TosaTensorId a3 = reshape(broadcast_batch(a, batch), {1, batch_n * m, k});
      TosaTensorId b3 = reshape(b, {1, k, n});
      result = emit(TosaOp::kMatmul, {TosaAttribute::zero_point(type(a)), TosaAttribute::zero_point(type(a))}, {a3, b3},
                    type(a), {1, batch_n * m, n});
    } else {
      TosaTensorId a3 = reshape(broadcast_batch(a, batch), {batch_n, m, k});
      TosaTensorId b3 = reshape(broadcast_batch(b, batch), {batch_n, k, n});
      result = emit(TosaOp::kMatmul, {TosaAttribute::zero_point(type(a)), TosaAttribute::zero_point(type(a))}, {a3, b3},
                    type(a), {batch_n, m, n});
    }
    set_out(reshape(result, out));
    return Status::Ok();
  }

  // TILE x's batch dims (all but the last two) up to `batch` where they are 1.
  TosaTensorId broadcast_batch(TosaTensorId x, const Shape& batch) {
    Shape s = shape(x), multiples(s.size(), 1);
    bool any = false;
    for (size_t d = 0; d < batch.size(); ++d) {
      if (s[d] != batch[d]) {
        multiples[d] = batch[d];
        s[d] = batch[d];
        any = true;
      }
    }
    if (!any) return x;
    return emit(TosaOp::kTile, {TosaAttribute::shape(multiples)}, {x}, type(x), s);
  }

  Status lower_linear() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const Shape& ws = src_.value(node_->inputs[1]).shape;
    int64_t n = ws[0], k = ws[1];
    Shape out = out_value().shape;
    int64_t m = tosa_numel(out) / n;
    const std::vector<TosaAttribute> zero_points{TosaAttribute::zero_point(type(x)), TosaAttribute::zero_point(type(x))};
    TosaTensorId y;
    if (is_constant(node_->inputs[1]) && options_.model_layout.count(src_.value(node_->inputs[1]).name)) {
      // The weight as the model has it: y^T [1, N, M] = W [1, N, K] x^T [1, K, M].
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, in(1));
      TosaTensorId xt = transpose(reshape(x, {1, m, k}), {0, 2, 1});
      y = transpose(emit(TosaOp::kMatmul, zero_points, {reshape(w, {1, n, k}), xt}, type(x), {1, n, m}), {0, 2, 1});
    } else {
      // weight [N, K] -> [1, K, N]; a constant weight is transposed right here.
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], {1, n, k}, {0, 2, 1}));
      y = emit(TosaOp::kMatmul, zero_points, {reshape(x, {1, m, k}), w}, type(x), {1, m, n});
    }
    y = reshape(y, out);
    if (has_in(2)) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId bias, in(2));
      y = binary(TosaOp::kAdd, y, bias);
    }
    set_out(y);
    return Status::Ok();
  }

  Status lower_conv2d() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    Shape p = graph::attr_ints(attrs_, "padding");
    return lower_conv2d_nhwc(x, {p[0], p[0], p[1], p[1]}, TosaAccType::kFp32, TosaAttribute::zero_point(t),
                             TosaAttribute::zero_point(t), t);
  }

  // conv2d and conv2d_int: TOSA's NHWC CONV2D (one per group) or DEPTHWISE_CONV2D
  // between transposes, `pads` as [top, bottom, left, right]; the bias (zeros
  // where absent) has the output's type.
  Status lower_conv2d_nhwc(TosaTensorId x, const Shape& pads, TosaAccType acc, TosaAttribute x_zp, TosaAttribute w_zp,
                           E out_t) {
    Shape xs = shape(x), ws = src_.value(node_->inputs[1]).shape, out = out_value().shape;
    Shape stride = graph::attr_ints(attrs_, "stride"), dilation = graph::attr_ints(attrs_, "dilation");
    int64_t groups = graph::attr_int(attrs_, "groups", 1);
    int64_t channels = xs[1], oc = ws[0], kh = ws[2], kw = ws[3];
    WindowFit fh = fit_window(xs[2], (kh - 1) * dilation[0] + 1, stride[0], pads[0], pads[1], out[2]);
    WindowFit fw = fit_window(xs[3], (kw - 1) * dilation[1] + 1, stride[1], pads[2], pads[3], out[3]);
    TosaTensorId nhwc = transpose(x, kToNhwc);
    if (fh.crop || fw.crop) {
      Shape s = shape(nhwc);
      nhwc = slice(nhwc, {0, 0, 0, 0}, {s[0], s[1] - fh.crop, s[2] - fw.crop, s[3]});
    }
    TosaTensorId bias;
    if (has_in(2)) {
      GPUU_ASSIGN_OR_RETURN(bias, in(2));
    } else {
      bias = scalar(out_t, 0.0, 1);  // BC = 1 broadcasts
    }
    std::vector<TosaAttribute> window = {TosaAttribute::shape({fh.pad_before, fh.pad_after, fw.pad_before, fw.pad_after}),
                                         TosaAttribute::shape(stride), TosaAttribute::shape(dilation),
                                         TosaAttribute::u32(static_cast<uint32_t>(acc)),
                                         TosaAttribute::boolean(false), std::move(x_zp), std::move(w_zp)};
    Shape sn = shape(nhwc);
    auto out_nhwc = [&](int64_t c) { return Shape{out[0], out[2], out[3], c}; };
    TosaTensorId y;
    if (groups == 1) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], ws, kToNhwc));  // OIHW -> OHWI
      y = emit(TosaOp::kConv2d, window, {nhwc, w, bias}, out_t, out_nhwc(oc));
    } else if (groups == channels && ws[1] == 1) {
      // Depthwise: [C*M, 1, KH, KW] viewed as [C, M, KH, KW] -> [KH, KW, C, M].
      int64_t mult = oc / channels;
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], {channels, mult, kh, kw}, {2, 3, 0, 1}));
      y = emit(TosaOp::kDepthwiseConv2d, window, {nhwc, w, bias}, out_t, out_nhwc(oc));
    } else {
      // Grouped: one CONV2D per group on its channel slice, then CONCAT.
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], ws, kToNhwc));
      int64_t cg = channels / groups, og = oc / groups;
      std::vector<TosaTensorId> parts;
      for (int64_t gi = 0; gi < groups; ++gi) {
        TosaTensorId xg = slice(nhwc, {0, 0, 0, gi * cg}, {sn[0], sn[1], sn[2], cg});
        TosaTensorId wg = slice(w, {gi * og, 0, 0, 0}, {og, kh, kw, cg});
        TosaTensorId bg = shape(bias)[0] == 1 ? bias : slice(bias, {gi * og}, {og});
        parts.push_back(emit(TosaOp::kConv2d, window, {xg, wg, bg}, out_t, out_nhwc(og)));
      }
      y = emit(TosaOp::kConcat, {TosaAttribute::u32(3)}, parts, out_t, out_nhwc(oc));
    }
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  Status lower_avg_pool2d() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    Shape kernel = graph::attr_ints(attrs_, "kernel"), stride = graph::attr_ints(attrs_, "stride"),
          out = out_value().shape;
    AvgPoolFit f = fit_avg_pool(shape(x), out, attrs_);
    const WindowFit &fh = f.fh, &fw = f.fw;
    // The counted zeros go on in NCHW, so the transposes around the pool still cancel.
    x = pad(x, {0, 0, 0, 0, f.zero_pads[0], f.zero_pads[0], f.zero_pads[1], f.zero_pads[1]}, 0.0);
    TosaTensorId nhwc = transpose(x, kToNhwc);
    Shape s = shape(nhwc);
    if (fh.crop || fw.crop) nhwc = slice(nhwc, {0, 0, 0, 0}, {s[0], s[1] - fh.crop, s[2] - fw.crop, s[3]});
    TosaTensorId y = emit(TosaOp::kAvgPool2d,
                          {TosaAttribute::shape(kernel), TosaAttribute::shape(stride),
                           TosaAttribute::shape({fh.pad_before, fh.pad_after, fw.pad_before, fw.pad_after}),
                           TosaAttribute::u32(static_cast<uint32_t>(TosaAccType::kFp32)), TosaAttribute::zero_point(t),
                           TosaAttribute::zero_point(t)},
                          {nhwc}, t, {out[0], out[2], out[3], out[1]});
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  Status lower_max_pool2d() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    Shape kernel = graph::attr_ints(attrs_, "kernel"), stride = graph::attr_ints(attrs_, "stride"),
          padding = graph::attr_ints(attrs_, "padding"), dilation = graph::attr_ints(attrs_, "dilation"),
          out = out_value().shape;
    Shape xs = shape(x);
    WindowFit fh = fit_window(xs[2], (kernel[0] - 1) * dilation[0] + 1, stride[0], padding[0], padding[0], out[2]);
    WindowFit fw = fit_window(xs[3], (kernel[1] - 1) * dilation[1] + 1, stride[1], padding[1], padding[1], out[3]);
    if (dilation[0] != 1 || dilation[1] != 1) return lower_dilated_max_pool(x, kernel, stride, dilation, fh, fw, out);
    TosaTensorId nhwc = transpose(x, kToNhwc);
    if (fh.crop || fw.crop) nhwc = slice(nhwc, {0, 0, 0, 0}, {xs[0], xs[2] - fh.crop, xs[3] - fw.crop, xs[1]});
    Shape pads = {fh.pad_before, fh.pad_after, fw.pad_before, fw.pad_after};
    if (fh.pad_after >= kernel[0] || fw.pad_after >= kernel[1]) {
      // TOSA wants pads below the kernel; padding with the lowest value is the same thing.
      nhwc = pad(nhwc, {0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0}, tosa_lowest(t));
      pads = {0, 0, 0, 0};
    }
    TosaTensorId y = emit(TosaOp::kMaxPool2d,
                          {TosaAttribute::shape(kernel), TosaAttribute::shape(stride), TosaAttribute::shape(pads),
                           TosaAttribute::u32(static_cast<uint32_t>(TosaNanPropagationMode::kPropagate))},
                          {nhwc}, t, {out[0], out[2], out[3], out[1]});
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  // MAX_POOL2D has no dilation: the max over one strided view per kernel tap.
  Status lower_dilated_max_pool(TosaTensorId x, const Shape& kernel, const Shape& stride, const Shape& dilation,
                                const WindowFit& fh, const WindowFit& fw, const Shape& out) {
    E t = type(x);
    TosaTensorId xp = pad(x, {0, 0, 0, 0, fh.pad_before, std::max<int64_t>(fh.pad_after, 0), fw.pad_before,
                              std::max<int64_t>(fw.pad_after, 0)},
                          tosa_lowest(t));
    Shape ps = shape(xp);
    TosaTensorId acc = -1;
    for (int64_t ky = 0; ky < kernel[0]; ++ky) {
      for (int64_t kx = 0; kx < kernel[1]; ++kx) {
        int64_t rows = (out[2] - 1) * stride[0] + 1, cols = (out[3] - 1) * stride[1] + 1;
        TosaTensorId tap = slice(xp, {0, 0, ky * dilation[0], kx * dilation[1]}, {ps[0], ps[1], rows, cols});
        tap = stride_select(stride_select(tap, 2, stride[0], out[2]), 3, stride[1], out[3]);
        if (t == E::kI8 || t == E::kI16) tap = cast(tap, E::kI32);  // MAXIMUM has no i8 or i16 form
        acc = acc < 0 ? tap : nan_binary(TosaOp::kMaximum, acc, tap);
      }
    }
    set_out(cast(acc, t));
    return Status::Ok();
  }


  // ---- TOSA's INT profile: rescale, conv2d_int, matmul_int, avg_pool2d_int, table ----

  // Values of an i32 constant input (the registry makes multiplier and shift constants).
  std::vector<int64_t> constant_ints(ValueId id) const {
    const Blob& data = constant_data(id);
    std::vector<int64_t> out(data.size() / 4);
    for (size_t i = 0; i < out.size(); ++i) {
      int32_t v;
      std::memcpy(&v, data.data() + 4 * i, 4);
      out[i] = v;
    }
    return out;
  }

  // An i8 zero-point attribute holding `zp` (an unsigned one keeps its bits).
  static TosaAttribute zp_attr(E t, int64_t zp) {
    if (t == E::kI8 && zp > 127) zp -= 256;
    return TosaAttribute::int_tensor(t, {zp});
  }

  Status lower_rescale() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    std::vector<int64_t> multiplier = constant_ints(node_->inputs[1]);
    std::vector<int64_t> shift = constant_ints(node_->inputs[2]);
    bool scale32 = graph::attr_int(attrs_, "scale32", 1) != 0;
    std::string rounding = graph::attr_string(attrs_, "rounding", "single_round");
    TosaRoundingMode mode = rounding == "double_round"    ? TosaRoundingMode::kDoubleRound
                            : rounding == "inexact_round" ? TosaRoundingMode::kInexactRound
                                                          : TosaRoundingMode::kSingleRound;
    bool per_channel = multiplier.size() > 1;
    E to = out_type();
    std::vector<TosaAttribute> attrs = {
        TosaAttribute::boolean(scale32),
        TosaAttribute::u32(static_cast<uint32_t>(mode)),
        TosaAttribute::boolean(per_channel),
        TosaAttribute::boolean(graph::attr_int(attrs_, "input_unsigned") != 0),
        TosaAttribute::boolean(graph::attr_int(attrs_, "output_unsigned") != 0),
        TosaAttribute::int_tensor(scale32 ? E::kI32 : E::kI16, multiplier),
        TosaAttribute::int_tensor(E::kI8, shift),
        zp_attr(type(x), graph::attr_int(attrs_, "input_zp")),
        zp_attr(to, graph::attr_int(attrs_, "output_zp"))};
    auto rescale = [&](TosaTensorId v) { return emit(TosaOp::kRescale, attrs, {v}, to, shape(v)); };
    size_t r = rank(x);
    int64_t axis = graph::normalize_axis(graph::attr_int(attrs_, "axis", -1), r);
    if (!per_channel) {
      // Before a transpose, so an i16 convolution's i48 sums (NHWC) are never
      // transposed: TOSA's TRANSPOSE has no i48 form.
      set_out(pointwise(x, rescale));
      return Status::Ok();
    }
    if (axis == static_cast<int64_t>(r) - 1) {
      set_out(rescale(x));
      return Status::Ok();
    }
    // TOSA's channel is the last dim: move 'axis' there and back.
    Perm to_last, back(r);
    for (size_t d = 0; d < r; ++d) {
      if (static_cast<int64_t>(d) != axis) to_last.push_back(static_cast<int64_t>(d));
    }
    to_last.push_back(axis);
    for (size_t d = 0; d < r; ++d) back[static_cast<size_t>(to_last[d])] = static_cast<int64_t>(d);
    set_out(transpose(rescale(transpose(x, to_last)), back));
    return Status::Ok();
  }

  // i8 x i8 in i32; i16 x i8 (16-bit activations) in i48.
  Status lower_conv2d_int() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const bool wide = type(x) == E::kI16;
    return lower_conv2d_nhwc(x, graph::attr_ints(attrs_, "padding"), wide ? TosaAccType::kInt48 : TosaAccType::kInt32,
                             zp_attr(type(x), graph::attr_int(attrs_, "input_zp")),
                             zp_attr(E::kI8, graph::attr_int(attrs_, "weight_zp")), wide ? E::kI48 : E::kI32);
  }

  Status lower_matmul_int() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    set_out(emit(TosaOp::kMatmul,
                 {zp_attr(E::kI8, graph::attr_int(attrs_, "a_zp")), zp_attr(E::kI8, graph::attr_int(attrs_, "b_zp"))},
                 {a, b}, E::kI32, out_value().shape));
    return Status::Ok();
  }

  Status lower_avg_pool2d_int() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    Shape kernel = graph::attr_ints(attrs_, "kernel"), stride = graph::attr_ints(attrs_, "stride"),
          padding = graph::attr_ints(attrs_, "padding"), out = out_value().shape;
    TosaTensorId nhwc = transpose(x, kToNhwc);
    Shape s = shape(nhwc);
    WindowFit fh = fit_window(s[1], kernel[0], stride[0], padding[0], padding[1], out[2]);
    WindowFit fw = fit_window(s[2], kernel[1], stride[1], padding[2], padding[3], out[3]);
    if (fh.crop || fw.crop) nhwc = slice(nhwc, {0, 0, 0, 0}, {s[0], s[1] - fh.crop, s[2] - fw.crop, s[3]});
    TosaTensorId y = emit(TosaOp::kAvgPool2d,
                          {TosaAttribute::shape(kernel), TosaAttribute::shape(stride),
                           TosaAttribute::shape({fh.pad_before, fh.pad_after, fw.pad_before, fw.pad_after}),
                           TosaAttribute::u32(static_cast<uint32_t>(TosaAccType::kInt32)),
                           zp_attr(E::kI8, graph::attr_int(attrs_, "input_zp")),
                           zp_attr(E::kI8, graph::attr_int(attrs_, "output_zp"))},
                          {nhwc}, E::kI8, {out[0], out[2], out[3], out[1]});
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  Status lower_table() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const Blob& data = constant_data(node_->inputs[1]);
    std::vector<int64_t> entries(data.size());
    for (size_t i = 0; i < entries.size(); ++i) entries[i] = static_cast<int8_t>(data.data()[i]);
    TosaAttribute table = TosaAttribute::int_tensor(E::kI8, entries);
    set_out(pointwise(x, [&](TosaTensorId v) { return emit(TosaOp::kTable, {table}, {v}, E::kI8, shape(v)); }));
    return Status::Ok();
  }

  Status lower_mul_shift() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    set_out(elementwise(TosaOp::kMul, {}, {a, b}, E::kI32,
                        TosaAttribute::int_tensor(E::kI8, {graph::attr_int(attrs_, "shift")})));
    return Status::Ok();
  }

  // TOSA requires shifts in [0, 31]; gpuu's op clamps them there first.
  Status lower_arithmetic_right_shift() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId a, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(1));
    TosaTensorId lo = scalar(E::kI32, 0.0, rank(b)), hi = scalar(E::kI32, 31.0, rank(b));
    b = nan_binary(TosaOp::kMinimum, nan_binary(TosaOp::kMaximum, b, lo), hi);
    set_out(elementwise(TosaOp::kArithmeticRightShift, {TosaAttribute::boolean(graph::attr_int(attrs_, "round") != 0)},
                        {a, b}, E::kI32));
    return Status::Ok();
  }

  // ---- conv3d, conv_transpose2d, 3-D pools, resize ----

  Status lower_conv3d() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    Shape xs = shape(x), ws = src_.value(node_->inputs[1]).shape, out = out_value().shape;
    Shape stride = graph::attr_ints(attrs_, "stride"), padding = graph::attr_ints(attrs_, "padding"),
          dilation = graph::attr_ints(attrs_, "dilation");
    int64_t groups = graph::attr_int(attrs_, "groups", 1);
    Shape pads, crop(3, 0);
    for (size_t d = 0; d < 3; ++d) {
      WindowFit f = fit_window(xs[2 + d], (ws[2 + d] - 1) * dilation[d] + 1, stride[d], padding[d], padding[d], out[2 + d]);
      pads.push_back(f.pad_before);
      pads.push_back(f.pad_after);
      crop[d] = f.crop;
    }
    TosaTensorId ndhwc = transpose(x, {0, 2, 3, 4, 1});
    Shape s = shape(ndhwc);
    ndhwc = slice(ndhwc, {0, 0, 0, 0, 0}, {s[0], s[1] - crop[0], s[2] - crop[1], s[3] - crop[2], s[4]});
    TosaTensorId bias;
    if (has_in(2)) {
      GPUU_ASSIGN_OR_RETURN(bias, in(2));
    } else {
      bias = scalar(t, 0.0, 1);  // BC = 1 broadcasts
    }
    // OIDHW -> ODHWI; per group, one CONV3D on its channel slice, then CONCAT.
    GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], ws, {0, 2, 3, 4, 1}));
    std::vector<TosaAttribute> window = {TosaAttribute::shape(pads), TosaAttribute::shape(stride),
                                         TosaAttribute::shape(dilation),
                                         TosaAttribute::u32(static_cast<uint32_t>(TosaAccType::kFp32)),
                                         TosaAttribute::boolean(false), TosaAttribute::zero_point(t),
                                         TosaAttribute::zero_point(t)};
    int64_t cg = ws[1], og = ws[0] / groups;
    Shape sn = shape(ndhwc);
    std::vector<TosaTensorId> parts;
    for (int64_t gi = 0; gi < groups; ++gi) {
      TosaTensorId xg = slice(ndhwc, {0, 0, 0, 0, gi * cg}, {sn[0], sn[1], sn[2], sn[3], cg});
      TosaTensorId wg = slice(w, {gi * og, 0, 0, 0, 0}, {og, ws[2], ws[3], ws[4], cg});
      TosaTensorId bg = shape(bias)[0] == 1 ? bias : slice(bias, {gi * og}, {og});
      parts.push_back(emit(TosaOp::kConv3d, window, {xg, wg, bg}, t, {out[0], out[2], out[3], out[4], og}));
    }
    TosaTensorId y = parts.size() == 1 ? parts[0]
                                       : emit(TosaOp::kConcat, {TosaAttribute::u32(4)}, parts, t,
                                              {out[0], out[2], out[3], out[4], out[1]});
    set_out(transpose(y, {0, 4, 1, 2, 3}));
    return Status::Ok();
  }

  // TRANSPOSE_CONV2D writes input pixel iy at iy * stride + out_pad_top + ky,
  // torch at iy * stride - padding + ky: out_pad = -padding before and
  // output_padding - padding after. TOSA wants out_pad > -kernel, so larger
  // paddings compute more rows and SLICE them off; the pads are chosen so
  // that they read back as a torch padding / output_padding pair (top <= 0,
  // 0 <= bottom - top < stride). No dilation in TOSA.
  Status lower_conv_transpose2d() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    Shape ws = src_.value(node_->inputs[1]).shape, out = out_value().shape;
    Shape stride = graph::attr_ints(attrs_, "stride"), padding = graph::attr_ints(attrs_, "padding"),
          output_padding = graph::attr_ints(attrs_, "output_padding");
    int64_t groups = graph::attr_int(attrs_, "groups", 1);
    Shape out_pad(4), crop(2);
    for (size_t d = 0; d < 2; ++d) {
      int64_t k = ws[2 + d], p = padding[d], after = output_padding[d] - padding[d];
      // top = 0 always fits (output_padding < stride), so the search ends.
      for (int64_t top = std::max(-p, 1 - k); top <= 0; ++top) {
        int64_t bottom = std::max({after, top, 1 - k});
        if (bottom - top < stride[d]) {
          out_pad[2 * d] = top;
          out_pad[2 * d + 1] = bottom;
          crop[d] = top + p;
          break;
        }
      }
    }
    Shape xs = shape(x);
    Shape full = {out[0], (xs[2] - 1) * stride[0] + out_pad[0] + out_pad[1] + ws[2],
                  (xs[3] - 1) * stride[1] + out_pad[2] + out_pad[3] + ws[3]};
    TosaTensorId nhwc = transpose(x, kToNhwc);
    TosaTensorId bias;
    if (has_in(2)) {
      GPUU_ASSIGN_OR_RETURN(bias, in(2));
    } else {
      bias = scalar(t, 0.0, 1);
    }
    int64_t cg = ws[0] / groups, og = ws[1];
    // [C, O/g, kH, kW] viewed as [g, C/g, O/g, kH, kW] -> [g, O/g, kH, kW, C/g] = per group OHWI.
    GPUU_ASSIGN_OR_RETURN(TosaTensorId w, rearranged(node_->inputs[1], {groups, cg, og, ws[2], ws[3]}, {0, 2, 3, 4, 1}));
    w = reshape(w, {groups * og, ws[2], ws[3], cg});
    std::vector<TosaAttribute> attrs = {TosaAttribute::shape(out_pad), TosaAttribute::shape(stride),
                                        TosaAttribute::u32(static_cast<uint32_t>(TosaAccType::kFp32)),
                                        TosaAttribute::boolean(false), TosaAttribute::zero_point(t),
                                        TosaAttribute::zero_point(t)};
    Shape sn = shape(nhwc);
    std::vector<TosaTensorId> parts;
    for (int64_t gi = 0; gi < groups; ++gi) {
      TosaTensorId xg = slice(nhwc, {0, 0, 0, gi * cg}, {sn[0], sn[1], sn[2], cg});
      TosaTensorId wg = slice(w, {gi * og, 0, 0, 0}, {og, ws[2], ws[3], cg});
      TosaTensorId bg = shape(bias)[0] == 1 ? bias : slice(bias, {gi * og}, {og});
      parts.push_back(emit(TosaOp::kTransposeConv2d, attrs, {xg, wg, bg}, t, {full[0], full[1], full[2], og}));
    }
    TosaTensorId y = parts.size() == 1 ? parts[0]
                                       : emit(TosaOp::kConcat, {TosaAttribute::u32(3)}, parts, t,
                                              {full[0], full[1], full[2], out[1]});
    y = slice(y, {0, crop[0], crop[1], 0}, {out[0], out[2], out[3], out[1]});
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  Status lower_resize() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    Shape out = out_value().shape;
    TosaResizeAxis axes[2];
    fit_resize(shape(x), out, attrs_, axes);  // the op table's check found them
    graph::ResizeMode mode = graph::ResizeMode::kNearest;
    graph::parse_resize_mode(graph::attr_string(attrs_, "mode"), &mode);
    TosaResizeMode tmode = mode == graph::ResizeMode::kBilinear ? TosaResizeMode::kBilinear : TosaResizeMode::kNearestNeighbor;
    TosaTensorId nhwc = transpose(x, kToNhwc);
    TosaTensorId y = emit(TosaOp::kResize,
                          {TosaAttribute::u32(static_cast<uint32_t>(tmode)),
                           TosaAttribute::shape({axes[0].n, axes[0].d, axes[1].n, axes[1].d}),
                           TosaAttribute::shape({axes[0].offset, axes[1].offset}),
                           TosaAttribute::shape({axes[0].border, axes[1].border})},
                          {nhwc}, type(x), {out[0], out[2], out[3], out[1]});
    set_out(transpose(y, kToNchw));
    return Status::Ok();
  }

  Status lower_reduce() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const std::string& op = node_->op;
    std::vector<int64_t> axes = graph::attr_ints(attrs_, "axes");
    for (int64_t& a : axes) a = graph::normalize_axis(a, rank(x));
    std::sort(axes.begin(), axes.end());
    TosaOp top = op == "reduce_max"    ? TosaOp::kReduceMax
                 : op == "reduce_min"  ? TosaOp::kReduceMin
                 : op == "reduce_prod" ? TosaOp::kReduceProduct
                 : op == "reduce_any"  ? TosaOp::kReduceAny
                 : op == "reduce_all"  ? TosaOp::kReduceAll
                                       : TosaOp::kReduceSum;
    TosaTensorId y = x;
    int64_t count = 1;
    for (int64_t a : axes) {
      count *= shape(x)[static_cast<size_t>(a)];
      y = reduce(top, y, a);
    }
    if (op == "reduce_mean") y = mul(y, scalar(type(x), 1.0 / static_cast<double>(count), rank(y)));
    set_out(reshape(y, out_value().shape));
    return Status::Ok();
  }

  Status lower_softmax() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    int64_t axis = graph::normalize_axis(graph::attr_int(attrs_, "axis"), rank(x));
    TosaTensorId e = unary(TosaOp::kExp, binary(TosaOp::kSub, x, reduce(TosaOp::kReduceMax, x, axis)));
    TosaTensorId sum = reduce(TosaOp::kReduceSum, e, axis);
    set_out(mul(e, unary(TosaOp::kReciprocal, sum)));
    return Status::Ok();
  }

  Status lower_layer_norm() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    E t = type(x);
    size_t r = rank(x);
    int64_t nd = graph::attr_int(attrs_, "normalized_ndim");
    double eps = graph::attr_float(attrs_, "eps");
    int64_t count = 1;
    TosaTensorId sum = x;
    for (size_t a = r - static_cast<size_t>(nd); a < r; ++a) {
      count *= shape(x)[a];
      sum = reduce(TosaOp::kReduceSum, sum, static_cast<int64_t>(a));
    }
    TosaTensorId inv_n = scalar(t, 1.0 / static_cast<double>(count), r);
    TosaTensorId centered = binary(TosaOp::kSub, x, mul(sum, inv_n));
    TosaTensorId sq = mul(centered, centered);
    for (size_t a = r - static_cast<size_t>(nd); a < r; ++a) sq = reduce(TosaOp::kReduceSum, sq, static_cast<int64_t>(a));
    TosaTensorId rstd = unary(TosaOp::kRsqrt, binary(TosaOp::kAdd, mul(sq, inv_n), scalar(t, eps, r)));
    TosaTensorId y = mul(centered, rstd);
    // Optional weight and bias, applied as lower_linear applies its bias: one line each.
    if (has_in(1)) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId w, in(1));
      y = mul(y, w);
    }
    if (has_in(2)) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId b, in(2));
      y = binary(TosaOp::kAdd, y, b);
    }
    set_out(y);
    return Status::Ok();
  }

  // softmax(q k^T * scale + mask) v: kv heads tiled over their query heads
  // (grouped-query attention), two MATMULs around a softmax over the keys. A
  // row whose scores are all -inf (every key masked) gives 0, as the kernels:
  // its max is taken as 0 (no -inf - -inf) and its probabilities (0 * 1/0)
  // are selected to 0.
  Status lower_sdpa() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId q, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId k, in(1));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId v, in(2));
    const E t = type(q);
    const Shape qs = shape(q), ks = shape(k), out = out_value().shape;
    const size_t r = qs.size();
    const int64_t batch = tosa_numel(Shape(qs.begin(), qs.end() - 3)), hq = qs[r - 3], hkv = ks[r - 3];
    const int64_t len_l = qs[r - 2], len_s = ks[r - 2], e = qs[r - 1], ev = out[r - 1], n = batch * hq;
    auto per_query_head = [&](TosaTensorId x, int64_t rows, int64_t cols) {
      x = reshape(x, {batch * hkv, 1, rows * cols});
      if (hq != hkv) {
        x = emit(TosaOp::kTile, {TosaAttribute::shape({1, hq / hkv, 1})}, {x}, t, {batch * hkv, hq / hkv, rows * cols});
      }
      return reshape(x, {n, rows, cols});
    };
    TosaTensorId scores = emit(TosaOp::kMatmul, {TosaAttribute::zero_point(t), TosaAttribute::zero_point(t)},
                               {reshape(q, {n, len_l, e}), transpose(per_query_head(k, len_s, e), {0, 2, 1})}, t,
                               {n, len_l, len_s});
    const double scale = graph::has_attr(attrs_, "scale") ? graph::attr_float(attrs_, "scale")
                                                           : 1.0 / std::sqrt(static_cast<double>(e));
    scores = mul(scores, scalar(t, scale, 3));
    const TosaTensorId neg_inf = scalar(t, -INFINITY, 3);
    if (graph::attr_int(attrs_, "is_causal") != 0) {
      // Key j is allowed for query i iff j <= i.
      std::vector<uint8_t> allowed(static_cast<size_t>(len_l * len_s) * tosa_element_size(E::kBool));
      for (int64_t i = 0; i < len_l; ++i) {
        for (int64_t j = 0; j < len_s; ++j) tosa_store_element(E::kBool, j <= i ? 1 : 0, allowed.data(), i * len_s + j);
      }
      scores = select(constant(E::kBool, {1, len_l, len_s}, std::move(allowed), "causal"), scores, neg_inf);
    }
    if (has_in(3)) {
      // The mask broadcasts against the scores at the node's rank.
      GPUU_ASSIGN_OR_RETURN(TosaTensorId mask, in(3));
      Shape full = out;
      full.back() = len_s;
      TosaTensorId at_rank = reshape(scores, full);
      at_rank = type(mask) == E::kBool ? select(mask, at_rank, scalar(t, -INFINITY, r))
                                       : binary(TosaOp::kAdd, at_rank, mask);
      scores = reshape(at_rank, {n, len_l, len_s});
    }
    TosaTensorId row_max = reduce(TosaOp::kReduceMax, scores, 2);
    TosaTensorId dead = compare(TosaOp::kEqual, row_max, neg_inf);
    TosaTensorId zero = scalar(t, 0.0, 3);
    TosaTensorId ex = unary(TosaOp::kExp, binary(TosaOp::kSub, scores, select(dead, zero, row_max)));
    TosaTensorId probs = select(dead, zero, mul(ex, unary(TosaOp::kReciprocal, reduce(TosaOp::kReduceSum, ex, 2))));
    TosaTensorId y = emit(TosaOp::kMatmul, {TosaAttribute::zero_point(t), TosaAttribute::zero_point(t)},
                          {probs, per_query_head(v, len_s, ev)}, t, {n, len_l, ev});
    set_out(reshape(y, out));
    return Status::Ok();
  }

  Status lower_transpose() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    set_out(transpose(x, graph::attr_ints(attrs_, "perm")));
    return Status::Ok();
  }

  Status lower_reshape() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    set_out(reshape(x, out_value().shape));
    return Status::Ok();
  }

  Status lower_slice() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    Shape xs = shape(x);
    std::vector<int64_t> axes = graph::attr_ints(attrs_, "axes"), starts = graph::attr_ints(attrs_, "starts"),
                         steps = graph::attr_ints(attrs_, "steps");
    const Shape& out = out_value().shape;
    Shape start(xs.size(), 0), size = xs;
    std::vector<std::pair<size_t, int64_t>> strided;
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = static_cast<size_t>(graph::normalize_axis(axes[i], xs.size()));
      int64_t s = starts[i] < 0 ? starts[i] + xs[a] : starts[i];
      s = std::min(std::max<int64_t>(s, 0), xs[a]);
      start[a] = s;
      // The span from the first to the last element taken.
      size[a] = (out[a] - 1) * steps[i] + 1;
      if (steps[i] > 1) strided.push_back({a, steps[i]});
    }
    TosaTensorId y = slice(x, start, size);
    for (const auto& [axis, step] : strided) y = stride_select(y, axis, step, out[axis]);
    set_out(y);
    return Status::Ok();
  }

  Status lower_concat() {
    std::vector<TosaTensorId> xs;
    for (size_t i = 0; i < node_->inputs.size(); ++i) {
      GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(i));
      xs.push_back(x);
    }
    int64_t axis = graph::normalize_axis(graph::attr_int(attrs_, "axis"), rank(xs[0]));
    if (xs.size() == 1) {
      set_out(xs[0]);
      return Status::Ok();
    }
    set_out(emit(TosaOp::kConcat, {TosaAttribute::u32(static_cast<uint32_t>(axis))}, xs, type(xs[0]), out_value().shape));
    return Status::Ok();
  }

  Status lower_pad() {
    std::string mode = graph::attr_string(attrs_, "mode", "constant");
    if (mode != "constant") return lower_pad_mode(mode);
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    // pad_const holds the value as the element type stores it (cast's rules).
    std::vector<uint8_t> v(tosa_element_size(type(x)));
    tosa_store_element(type(x), saturated(type(x), graph::attr_float(attrs_, "value")), v.data(), 0);
    set_out(pad(x, graph::attr_ints(attrs_, "pads"), tosa_data_element(type(x), v.data(), 0)));
    return Status::Ok();
  }

  // ---- pad modes, expand, flip ----

  TosaTensorId slice_axis(TosaTensorId x, size_t axis, int64_t start, int64_t len) {
    Shape s = shape(x), begin(s.size(), 0);
    begin[axis] = start;
    s[axis] = len;
    return slice(x, begin, s);
  }
  TosaTensorId reverse(TosaTensorId x, size_t axis) {
    if (shape(x)[axis] <= 1) return x;
    return emit(TosaOp::kReverse, {TosaAttribute::u32(static_cast<uint32_t>(axis))}, {x}, type(x), shape(x));
  }
  TosaTensorId tile_axis(TosaTensorId x, size_t axis, int64_t times) {
    if (times == 1) return x;
    Shape multiples(rank(x), 1), s = shape(x);
    multiples[axis] = times;
    s[axis] *= times;
    return emit(TosaOp::kTile, {TosaAttribute::shape(multiples)}, {x}, type(x), s);
  }

  // Reflect, replicate and circular pads are separable: one axis at a time,
  // CONCAT of (reversed / repeated / wrapped) slices around the input.
  Status lower_pad_mode(const std::string& mode) {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    Shape pads = graph::attr_ints(attrs_, "pads");
    for (size_t d = 0; d < rank(x); ++d) {
      int64_t before = pads[2 * d], after = pads[2 * d + 1], n = shape(x)[d];
      if (before == 0 && after == 0) continue;
      std::vector<TosaTensorId> parts;
      if (before > 0) {
        if (mode == "reflect") parts.push_back(reverse(slice_axis(x, d, 1, before), d));
        if (mode == "replicate") parts.push_back(tile_axis(slice_axis(x, d, 0, 1), d, before));
        if (mode == "circular") parts.push_back(slice_axis(x, d, n - before, before));
      }
      parts.push_back(x);
      if (after > 0) {
        if (mode == "reflect") parts.push_back(reverse(slice_axis(x, d, n - 1 - after, after), d));
        if (mode == "replicate") parts.push_back(tile_axis(slice_axis(x, d, n - 1, 1), d, after));
        if (mode == "circular") parts.push_back(slice_axis(x, d, 0, after));
      }
      Shape s = shape(x);
      s[d] += before + after;
      x = emit(TosaOp::kConcat, {TosaAttribute::u32(static_cast<uint32_t>(d))}, parts, type(x), s);
    }
    set_out(x);
    return Status::Ok();
  }

  // RESHAPE to the target rank, then TILE the size-1 dims.
  Status lower_expand() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    const Shape& out = out_value().shape;
    x = align_rank(x, out.size());
    Shape s = shape(x), multiples(out.size(), 1);
    bool any = false;
    for (size_t d = 0; d < out.size(); ++d) {
      if (s[d] != out[d]) {
        multiples[d] = out[d];
        any = true;
      }
    }
    set_out(any ? emit(TosaOp::kTile, {TosaAttribute::shape(multiples)}, {x}, type(x), out) : x);
    return Status::Ok();
  }

  Status lower_flip() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    std::vector<int64_t> axes = graph::attr_ints(attrs_, "axes");
    for (int64_t& a : axes) a = graph::normalize_axis(a, rank(x));
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) x = reverse(x, static_cast<size_t>(a));
    set_out(x);
    return Status::Ok();
  }

  // The cast op's float -> integer rule for a value: saturate (NaN -> 0).
  static double saturated(E t, double v) {
    if (tosa_is_float(t) || t == E::kBool) return v;
    if (std::isnan(v)) return 0.0;
    double lo = t == E::kI8 ? -128.0 : -2147483648.0, hi = t == E::kI8 ? 127.0 : 2147483647.0;
    return std::min(std::max(std::trunc(v), lo), hi);
  }

  // torch.gather: out[p] = x[p with p[axis] replaced by index[p]]. TOSA's
  // GATHER picks rows, so view x as [1, numel, 1] and compute flat row
  // numbers: a constant offset per position plus index * stride(axis).
  Status lower_gather() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId index, in(1));
    Shape xs = shape(x), is = shape(index);
    size_t r = xs.size();
    size_t axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs_, "axis"), r));
    std::vector<int64_t> strides(r, 1);
    for (size_t d = r; d-- > 1;) strides[d - 1] = strides[d] * xs[d];
    int64_t n = tosa_numel(is);
    std::vector<uint8_t> offsets(static_cast<size_t>(n) * 4);
    std::vector<int64_t> idx(r, 0);
    for (int64_t p = 0; p < n; ++p) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) off += d == axis ? 0 : idx[d] * strides[d];
      tosa_store_element(E::kI32, static_cast<double>(off), offsets.data(), p);
      for (size_t d = r; d-- > 0;) {
        if (++idx[d] < is[d]) break;
        idx[d] = 0;
      }
    }
    TosaTensorId rows = mul(index, scalar(E::kI32, static_cast<double>(strides[axis]), r));
    rows = binary(TosaOp::kAdd, rows, constant(E::kI32, is, std::move(offsets)));
    TosaTensorId values = reshape(x, {1, tosa_numel(xs), 1});
    TosaTensorId picked = emit(TosaOp::kGather, {}, {values, reshape(rows, {1, n})}, type(x), {1, n, 1});
    set_out(reshape(picked, is));
    return Status::Ok();
  }

  // index_select's and index_put's TOSA view: x as [pre, dim, post] around
  // the axis (GATHER's values, SCATTER's values_in) and the 1-D index as rows
  // [pre, w] that every batch shares (TILE).
  struct RowsView {
    TosaTensorId x, rows;
    int64_t pre = 1, dim = 0, post = 1, w = 0;
  };
  Result<RowsView> rows_view() {
    GPUU_ASSIGN_OR_RETURN(TosaTensorId x, in(0));
    GPUU_ASSIGN_OR_RETURN(TosaTensorId index, in(1));
    Shape xs = shape(x);
    size_t axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs_, "axis"), xs.size()));
    RowsView v;
    v.dim = xs[axis];
    v.w = shape(index)[0];
    for (size_t d = 0; d < axis; ++d) v.pre *= xs[d];
    for (size_t d = axis + 1; d < xs.size(); ++d) v.post *= xs[d];
    v.rows = reshape(index, {1, v.w});
    if (v.pre > 1) v.rows = emit(TosaOp::kTile, {TosaAttribute::shape({v.pre, 1})}, {v.rows}, E::kI32, {v.pre, v.w});
    v.x = reshape(x, {v.pre, v.dim, v.post});
    return v;
  }

  Status lower_index_select() {
    GPUU_ASSIGN_OR_RETURN(RowsView v, rows_view());
    TosaTensorId picked = emit(TosaOp::kGather, {}, {v.x, v.rows}, type(v.x), {v.pre, v.w, v.post});
    set_out(reshape(picked, out_value().shape));
    return Status::Ok();
  }

  // index_put: values are SCATTER's input [pre, w, post].
  Status lower_index_put() {
    GPUU_ASSIGN_OR_RETURN(RowsView v, rows_view());
    GPUU_ASSIGN_OR_RETURN(TosaTensorId values, in(2));
    TosaTensorId written = emit(TosaOp::kScatter, {}, {v.x, v.rows, reshape(values, {v.pre, v.w, v.post})},
                                type(v.x), {v.pre, v.dim, v.post});
    set_out(reshape(written, out_value().shape));
    return Status::Ok();
  }

  // ---- clean-up ----

  // Drops operators and constants no output depends on; graph constant ids
  // become dense again (0.. in order), since VGF uses them as indices.
  static TosaGraph prune(const TosaGraph& g) {
    std::vector<bool> live(g.tensors.size(), false);
    for (const TosaInterface& o : g.outputs) live[static_cast<size_t>(o.tensor)] = true;
    std::vector<bool> keep(g.operators.size(), false);
    for (size_t i = g.operators.size(); i-- > 0;) {
      const TosaOperator& op = g.operators[i];
      for (TosaTensorId t : op.outputs) keep[i] = keep[i] || live[static_cast<size_t>(t)];
      if (!keep[i]) continue;
      for (TosaTensorId t : op.inputs) live[static_cast<size_t>(t)] = true;
    }
    TosaGraph out = g;
    out.constants.clear();
    out.operators.clear();
    uint32_t next_id = 0;
    for (const TosaConstant& c : g.constants) {
      if (!live[static_cast<size_t>(c.tensor)]) continue;
      TosaConstant copy = c;
      if (copy.storage == TosaConstantStorage::kGraphConstant) copy.graph_constant_id = next_id++;
      out.constants.push_back(std::move(copy));
    }
    for (size_t i = 0; i < g.operators.size(); ++i) {
      if (keep[i]) out.operators.push_back(g.operators[i]);
    }
    return out;
  }

  const Graph& src_;
  const TosaLoweringOptions& options_;
  TosaGraph g_;
  const Node* node_ = nullptr;
  AttrMap attrs_;
  std::vector<TosaTensorId> value_;
  std::vector<std::vector<graph::NodeId>> consumers_;  // by value: the nodes that read it
  uint32_t next_graph_constant_ = 0;
  std::map<TosaTensorId, std::pair<TosaTensorId, Perm>> transposed_;  // TRANSPOSE result -> (input, perm)
  std::map<TosaTensorId, TosaTensorId> reshaped_;                      // RESHAPE result -> input
  std::map<std::tuple<int, std::vector<uint8_t>, size_t>, TosaTensorId> scalars_;
};


// ---- the op table --------------------------------------------------------------

// Per op: its form, the dtypes VGF declares, the TOSA form (for messages and
// docs), the lowering, the check of its attributes and shapes, and the dtypes
// it also lowers undeclared.
const std::vector<TosaOpEntry>& tosa_op_table() {
  static const auto* table = [] {
    using F = TosaOpForm;
    using L = TosaLowering;
    using Check = std::string (*)(const Graph&, const Node&, const AttrMap&);
    constexpr TosaDTypeSet kF = kTosaFloat, kI32 = kTosaI32, kI8 = kTosaI8, kBool = kTosaBool, kI16 = kTosaI16;
    // i16 (16-bit quantized activations) only where declared: its moves, casts,
    // clamps, rescales and convolutions.
    constexpr TosaDTypeSet kAll = kTosaTensorDTypes & ~kTosaI16;
    auto* t = new std::vector<TosaOpEntry>;
    auto add = [&](std::initializer_list<const char*> ops, F form, TosaDTypeSet dtypes, const char* tosa,
                   Status (L::*lower)(), Check check = nullptr, TosaDTypeSet undeclared = 0) {
      for (const char* op : ops) t->push_back(TosaOpEntry{op, form, dtypes, tosa, check, lower, undeclared});
    };
    // TOSA's transcendental and rounding operators are float-only.
    const char* float_unary = "a float-only elementwise operator";
    add({"exp"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kExp>);
    add({"log"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kLog>);
    add({"rsqrt"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kRsqrt>);
    add({"reciprocal"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kReciprocal>);
    add({"sin"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kSin>);
    add({"cos"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kCos>);
    add({"tanh"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kTanh>);
    add({"sigmoid"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kSigmoid>);
    add({"erf"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kErf>);
    add({"floor"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kFloor>);
    add({"ceil"}, F::kPlain, kF, float_unary, &L::lower_unary<TosaOp::kCeil>);
    add({"sqrt"}, F::kPlain, kF, "POW/RSQRT (float-only)", &L::lower_sqrt);
    add({"gelu"}, F::kPlain, kF, "a decomposition through ERF/TANH (float-only)", &L::lower_gelu);
    add({"tan", "cosh"}, F::kPlain, kF, "SIN/COS/EXP/RECIPROCAL compositions (float-only)",
        &L::lower_float_compositions);
    add({"round", "trunc"}, F::kPlain, kF, "FLOOR/CEIL/SELECT compositions (float-only)", &L::lower_float_compositions);
    add({"asin", "acos", "atan", "atan2"}, F::kPlain, 0, "no inverse trigonometric operator in TOSA 1.0", nullptr);
    add({"sinh", "asinh", "acosh", "atanh", "expm1", "log1p"}, F::kPlain, 0,
        "no TOSA 1.0 operator; EXP/LOG compositions lose every digit near the function's zero", nullptr);
    // abs, add, sub, maximum, minimum and the comparisons also lower for i8,
    // through i32 (the last argument), but VGF does not declare them.
    add({"abs"}, F::kPlain, kF | kI32, "ABS", &L::lower_sign_ops, nullptr, kI8);
    add({"neg"}, F::kPlain, kF | kI32 | kI8, "NEGATE", &L::lower_sign_ops);
    add({"sign"}, F::kPlain, kF | kI32, "GREATER/SELECT", &L::lower_sign);
    add({"relu"}, F::kPlain, kF | kI32 | kI8, "CLAMP/MAXIMUM", &L::lower_sign_ops);
    add({"clamp"}, F::kPlain, kF | kI32 | kI8 | kI16, "CLAMP/MAXIMUM", &L::lower_clamp);
    add({"isnan", "isinf"}, F::kCompare, kF, "EQUAL/ABS/LOGICAL_NOT (float-only)", &L::lower_predicate);
    add({"logical_not"}, F::kCompare, kAll, "EQUAL and LOGICAL_*", &L::lower_predicate);
    add({"logical_and", "logical_or", "logical_xor"}, F::kCompare, kAll, "EQUAL and LOGICAL_*", &L::lower_logical);
    add({"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"}, F::kPlain, kI32 | kBool,
        "BITWISE_* (i32) or LOGICAL_* (bool)", &L::lower_bitwise);
    add({"add", "sub", "maximum", "minimum"}, F::kPlain, kF | kI32, "an elementwise binary operator",
        &L::lower_arithmetic, nullptr, kI8);
    add({"mul"}, F::kPlain, kF | kI32 | kI8, "MUL", &L::lower_arithmetic);
    add({"div"}, F::kPlain, kF, "MUL by RECIPROCAL (float-only)", &L::lower_arithmetic);
    add({"pow"}, F::kPlain, kF, "POW (float-only)", &L::lower_arithmetic);
    add({"remainder", "fmod", "floor_divide"}, F::kPlain, kI32,
        "INTDIV with sign fix-ups (i32 only; a float division has no TOSA form)", &L::lower_int_division);
    // bool has equality (LOGICAL_XOR) but no order.
    add({"equal", "not_equal"}, F::kCompare, kF | kI32, "EQUAL/GREATER/GREATER_EQUAL", &L::lower_compare, nullptr,
        kI8 | kBool);
    add({"less", "less_equal", "greater", "greater_equal"}, F::kCompare, kF | kI32, "EQUAL/GREATER/GREATER_EQUAL",
        &L::lower_compare, nullptr, kI8);
    add({"where"}, F::kSelect, kAll, "SELECT", &L::lower_where);
    add({"cast"}, F::kCast, kAll | kI16, "CAST", &L::lower_cast);
    add({"matmul"}, F::kPlain, kF, "MATMUL/CONV2D/DEPTHWISE_CONV2D", &L::lower_matmul);
    add({"linear"}, F::kPlain, kF, "MATMUL/CONV2D/DEPTHWISE_CONV2D", &L::lower_linear);
    add({"conv2d"}, F::kPlain, kF, "MATMUL/CONV2D/DEPTHWISE_CONV2D", &L::lower_conv2d);
    add({"avg_pool2d"}, F::kPlain, kF, "AVG_POOL2D", &L::lower_avg_pool2d, check_avg_pool2d);
    add({"max_pool2d"}, F::kPlain, kF | kI8 | kI16, "MAX_POOL2D", &L::lower_max_pool2d);
    // TOSA's INT profile: i8 data, i32 accumulators, fixed-point rescaling.
    // i16 activations: i48 accumulators (gpuu's i64 there, carries_i48: not a
    // dtype of the table), rescaled to i16.
    add({"rescale"}, F::kPlain, kI8 | kI16 | kI32, "RESCALE", &L::lower_rescale);
    add({"conv2d_int"}, F::kPlain, kI8 | kI16,
        "CONV2D/DEPTHWISE_CONV2D with zero points (i32 result; i48 over i16 activations)", &L::lower_conv2d_int);
    add({"matmul_int"}, F::kPlain, kI8, "MATMUL with zero points (i32 result)", &L::lower_matmul_int);
    add({"avg_pool2d_int"}, F::kPlain, kI8, "AVG_POOL2D with zero points", &L::lower_avg_pool2d_int);
    add({"table"}, F::kPlain, kI8, "TABLE (256 entries)", &L::lower_table, check_table);
    add({"mul_shift"}, F::kPlain, kI32, "MUL with a shift", &L::lower_mul_shift);
    add({"arithmetic_right_shift"}, F::kPlain, kI32, "ARITHMETIC_RIGHT_SHIFT", &L::lower_arithmetic_right_shift);
    add({"conv3d"}, F::kPlain, kF, "CONV3D, one per group", &L::lower_conv3d);
    add({"conv_transpose2d"}, F::kPlain, kF, "TRANSPOSE_CONV2D, one per group, no dilation",
        &L::lower_conv_transpose2d, check_conv_transpose2d);
    add({"resize"}, F::kPlain, kF, "RESIZE (where its integer scale/offset/border reproduce torch's indices)",
        &L::lower_resize, check_resize);
    add({"avg_pool3d", "max_pool3d"}, F::kPlain, 0, "no 3-D pooling operator", nullptr);
    add({"reduce_sum"}, F::kPlain, kF | kI32, "REDUCE_SUM", &L::lower_reduce);
    add({"reduce_max"}, F::kPlain, kF | kI32 | kI8, "REDUCE_MAX", &L::lower_reduce);
    add({"reduce_min"}, F::kPlain, kF | kI32 | kI8, "REDUCE_MIN", &L::lower_reduce);
    add({"reduce_prod"}, F::kPlain, kF, "REDUCE_PRODUCT (float-only)", &L::lower_reduce);
    add({"reduce_any", "reduce_all"}, F::kPlain, kBool, "REDUCE_ANY/REDUCE_ALL", &L::lower_reduce);
    add({"argmax", "argmin"}, F::kPlain, 0, "none: the output is i64, which TOSA 1.0 lacks", nullptr);
    add({"cumsum"}, F::kPlain, 0, "no prefix-sum operator in TOSA 1.0", nullptr);
    add({"reduce_mean"}, F::kPlain, kF, "REDUCE_SUM and MUL (float-only)", &L::lower_reduce);
    add({"softmax"}, F::kPlain, kF, "a float-only decomposition", &L::lower_softmax);
    add({"layer_norm"}, F::kPlain, kF, "a float-only decomposition", &L::lower_layer_norm);
    add({"scaled_dot_product_attention"}, F::kPlain, kF, "two MATMULs around a softmax decomposition (float-only)",
        &L::lower_sdpa);
    const char* movement = "a data-movement operator";
    add({"transpose"}, F::kPlain, kAll | kI16, movement, &L::lower_transpose);
    add({"reshape"}, F::kPlain, kAll | kI16, movement, &L::lower_reshape);
    add({"slice"}, F::kPlain, kAll | kI16, movement, &L::lower_slice);
    add({"concat"}, F::kPlain, kAll | kI16, movement, &L::lower_concat);
    add({"pad"}, F::kPlain, kAll, movement, &L::lower_pad);
    add({"expand"}, F::kPlain, kAll, "RESHAPE and TILE", &L::lower_expand);
    add({"flip"}, F::kPlain, kAll, "REVERSE", &L::lower_flip);
    add({"gather"}, F::kIndexed, kF | kI32 | kI8, "GATHER", &L::lower_gather, check_gather);
    add({"index_select"}, F::kIndexed, kF | kI32 | kI8, "GATHER", &L::lower_index_select);
    add({"index_put"}, F::kIndexed, kF | kI32 | kI8, "SCATTER", &L::lower_index_put, check_index_put);
    add({"scatter"}, F::kIndexed, 0, "none: TOSA's SCATTER writes whole rows, not single elements", nullptr);
    add({"custom_shader"}, F::kCustomShader, kAll, "a VGF COMPUTE segment", nullptr);
    return t;
  }();
  return *table;
}

Result<TosaGraph> lower_to_tosa(const graph::Graph& region, const TosaLoweringOptions& options) {
  return TosaLowering(region, options).run();
}

// ---- RESIZE parameters -----------------------------------------------------------

namespace {

constexpr int64_t kMaxCheckedResizeAxis = int64_t{1} << 16;

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The weight each input index gets at one output position (zero weights dropped).
using Taps = std::map<int64_t, double>;

Taps torch_taps(graph::ResizeMode mode, bool align, int64_t in, int64_t out, float scale, int64_t dst) {
  graph::ResizeTap t = graph::resize_tap(mode, align, in, out, scale, dst);
  Taps taps;
  if (mode != graph::ResizeMode::kBilinear) {
    taps[t.i0] = 1.0;
    return taps;
  }
  taps[t.i0] += 1.0 - static_cast<double>(t.frac);
  taps[t.i1] += t.frac;
  return taps;
}

// TOSA 1.0 RESIZE's pseudo-code along one axis.
Taps tosa_taps(bool bilinear, int64_t in, const TosaResizeAxis& a, int64_t dst) {
  int64_t y = dst * a.d + a.offset;
  int64_t iy = floor_div(y, a.n);
  int64_t ry = y - iy * a.n;
  int64_t i0 = std::max<int64_t>(iy, 0), i1 = std::min(iy + 1, in - 1);
  Taps taps;
  if (!bilinear) {
    taps[2 * ry >= a.n ? i1 : i0] = 1.0;
    return taps;
  }
  double dy = static_cast<double>(ry) / static_cast<double>(a.n);
  taps[i0] += 1.0 - dy;
  taps[i1] += dy;
  return taps;
}

// Equal up to the float rounding of torch's weights.
bool same_taps(const Taps& a, const Taps& b) {
  auto significant = [](const Taps& t) {
    Taps s;
    for (const auto& [i, w] : t) {
      if (std::fabs(w) > 1e-6) s[i] = w;
    }
    return s;
  };
  Taps sa = significant(a), sb = significant(b);
  if (sa.size() != sb.size()) return false;
  for (auto ia = sa.begin(), ib = sb.begin(); ia != sa.end(); ++ia, ++ib) {
    if (ia->first != ib->first || std::fabs(ia->second - ib->second) > 1e-5) return false;
  }
  return true;
}

// TOSA 1.0's limits on one axis (RESIZE's ERROR_IFs and the 8K level's
// MAX_SCALE of 256), the output size included.
bool valid_tosa_axis(const TosaResizeAxis& a, int64_t in, int64_t out) {
  if (a.n <= 0 || a.d <= 0 || a.n > 2048 || a.d >= 16 * a.n || a.n > 256 * a.d) return false;
  if (a.offset < -a.n || a.offset >= 16 * a.n) return false;
  if (a.border < -16 * a.n || a.border >= a.n) return false;
  int64_t span = (in - 1) * a.n - a.offset + a.border;
  return span >= 0 && span % a.d == 0 && span / a.d + 1 == out;
}

// p/q == v exactly, with a small q.
bool small_fraction(double v, int64_t* p, int64_t* q) {
  for (int64_t den = 1; den <= 64; ++den) {
    double num = v * static_cast<double>(den);
    if (num == std::round(num) && num >= 1.0 && num <= 1e6) {
      *p = static_cast<int64_t>(num);
      *q = den;
      return true;
    }
  }
  return false;
}

int64_t gcd(int64_t a, int64_t b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace

bool tosa_resize_axis_matches(graph::ResizeMode mode, bool align_corners, int64_t in, int64_t out, double user_scale,
                              bool tosa_bilinear, const TosaResizeAxis& axis) {
  if (tosa_bilinear != (mode == graph::ResizeMode::kBilinear)) return false;
  if (out > kMaxCheckedResizeAxis) return false;
  if (!valid_tosa_axis(axis, in, out)) return false;
  float scale = graph::resize_scale(in, out, align_corners, user_scale);
  for (int64_t dst = 0; dst < out; ++dst) {
    if (!same_taps(torch_taps(mode, align_corners, in, out, scale, dst), tosa_taps(tosa_bilinear, in, axis, dst))) {
      return false;
    }
  }
  return true;
}

bool tosa_resize_axis_for(graph::ResizeMode mode, bool align_corners, int64_t in, int64_t out, double user_scale,
                          TosaResizeAxis* axis) {
  // The check visits every output position: longer axes are refused rather
  // than searched.
  if (out > kMaxCheckedResizeAxis) return false;
  // Sampling steps (in input pixels per output pixel) to try, as p/q: the
  // sizes' ratio, and the user's scale where it is a simple fraction.
  std::vector<std::pair<int64_t, int64_t>> steps;  // (out-ish numerator n0, in-ish denominator d0): step = d0/n0
  if (align_corners) {
    steps.push_back({std::max<int64_t>(out - 1, 1), std::max<int64_t>(in - 1, 1)});
  } else {
    steps.push_back({out, in});
    int64_t p = 0, q = 0;
    if (user_scale > 0 && small_fraction(user_scale, &p, &q)) steps.push_back({p, q});
  }
  for (auto [n0, d0] : steps) {
    int64_t g = gcd(n0, d0);
    n0 /= g;
    d0 /= g;
    TosaResizeAxis a;
    if (align_corners) {
      a = {n0, d0, 0, 0};  // src = dst * (in-1)/(out-1)
    } else {
      // Positions in half steps: nearest floors dst*step, nearest_exact and
      // bilinear sample at (dst + 1/2) * step - 1/2.
      a.n = 2 * n0;
      a.d = 2 * d0;
      a.offset = mode == graph::ResizeMode::kNearest ? -n0 : d0 - n0;
    }
    a.border = (out - 1) * a.d + a.offset - (in - 1) * a.n;
    if (tosa_resize_axis_matches(mode, align_corners, in, out, user_scale, mode == graph::ResizeMode::kBilinear, a)) {
      *axis = a;
      return true;
    }
  }
  return false;
}

bool dtype_to_tosa(graph::DType d, TosaElementType* out) {
  switch (d) {
    case graph::DType::kF32: *out = TosaElementType::kF32; return true;
    case graph::DType::kF16: *out = TosaElementType::kF16; return true;
    case graph::DType::kI32: *out = TosaElementType::kI32; return true;
    case graph::DType::kI8: *out = TosaElementType::kI8; return true;
    case graph::DType::kI16: *out = TosaElementType::kI16; return true;
    case graph::DType::kBool: *out = TosaElementType::kBool; return true;
    case graph::DType::kI64: return false;
  }
  return false;
}

bool tosa_to_dtype(TosaElementType t, graph::DType* out) {
  switch (t) {
    case TosaElementType::kF32: *out = graph::DType::kF32; return true;
    case TosaElementType::kF16: *out = graph::DType::kF16; return true;
    case TosaElementType::kI32: *out = graph::DType::kI32; return true;
    case TosaElementType::kI8: *out = graph::DType::kI8; return true;
    case TosaElementType::kI16: *out = graph::DType::kI16; return true;
    case TosaElementType::kI48: *out = graph::DType::kI64; return true;  // gpuu holds TOSA's i48 in i64
    case TosaElementType::kBool: *out = graph::DType::kBool; return true;
    default: return false;
  }
}

}  // namespace gpuu::vgf
