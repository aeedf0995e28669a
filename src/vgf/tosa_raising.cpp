// tosa_to_gpuu: TOSA graph -> gpuu graph, one function per TOSA operator
// family, keeping TOSA's semantics where gpuu's ops differ (NHWC layout,
// asymmetric pads, CAST rounding, saturating i8 NEGATE). Transposes fold as
// they are built; a final copy drops nodes no output needs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "graph/builder.h"
#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "vgf/tosa_lowering.h"

namespace gpuu::vgf {

namespace {

using graph::AttrMap;
using graph::DType;
using graph::ValueId;
using Shape = std::vector<int64_t>;
using Perm = std::vector<int64_t>;
using Ints = std::vector<int64_t>;
using E = TosaElementType;

const Perm kToNhwc = {0, 2, 3, 1};
const Perm kToNchw = {0, 3, 1, 2};


// gpuu graphs never shrink, so dead nodes are dropped by copying the live ones.
Result<graph::Graph> copy_live(const graph::Graph& g) {
  std::vector<bool> live(g.values().size(), false);
  for (ValueId v : g.outputs()) live[static_cast<size_t>(v)] = true;
  std::vector<bool> keep(g.nodes().size(), false);
  for (size_t n = g.nodes().size(); n-- > 0;) {
    const graph::Node& node = g.nodes()[n];
    for (ValueId v : node.outputs) keep[n] = keep[n] || live[static_cast<size_t>(v)];
    if (!keep[n]) continue;
    for (ValueId v : node.inputs) {
      if (v != graph::kNone) live[static_cast<size_t>(v)] = true;
    }
  }
  graph::Graph out;
  graph::GraphNames names;
  std::vector<ValueId> map(g.values().size(), graph::kNone);
  for (ValueId in : g.inputs()) {
    const graph::Value& v = g.value(in);
    GPUU_ASSIGN_OR_RETURN(map[static_cast<size_t>(in)], graph::add_graph_input(out, v.name, v.dtype, v.shape, &names));
  }
  for (const graph::Constant& c : g.constants()) {
    if (!live[static_cast<size_t>(c.value)]) continue;
    const graph::Value& v = g.value(c.value);
    GPUU_ASSIGN_OR_RETURN(map[static_cast<size_t>(c.value)],
                          graph::add_graph_constant(out, v.name, v.dtype, v.shape, c.data, &names));
  }
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    if (!keep[n]) continue;
    const graph::Node& node = g.nodes()[n];
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == graph::kNone ? graph::kNone : map[static_cast<size_t>(v)]);
    GPUU_ASSIGN_OR_RETURN(std::vector<ValueId> outs, graph::add_op(out, node.op, node.name, inputs, node.attrs, &names));
    for (size_t i = 0; i < outs.size(); ++i) map[static_cast<size_t>(node.outputs[i])] = outs[i];
  }
  for (ValueId v : g.outputs()) GPUU_RETURN_IF_ERROR(graph::add_graph_output(out, map[static_cast<size_t>(v)]));
  return out;
}

class Raising {
 public:
  explicit Raising(const TosaGraph& g) : g_(g) {}

  Result<graph::Graph> run() {
    Status valid = validate_tosa_graph(g_);
    if (!valid.ok()) return valid;
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      DType d = DType::kF32;
      if (!tosa_to_dtype(g_.tensors[i].type, &d)) {
        return err(StatusCode::kUnsupported, "tensor ", i, " is ", tosa_element_type_name(g_.tensors[i].type),
                   ": gpuu has no such dtype");
      }
    }
    value_.assign(g_.tensors.size(), graph::kNone);
    constant_of_.assign(g_.tensors.size(), -1);
    for (size_t i = 0; i < g_.constants.size(); ++i) constant_of_[static_cast<size_t>(g_.constants[i].tensor)] = static_cast<int>(i);
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const TosaInterface& io = g_.inputs[i];
      const TosaTensor& t = g_.tensor(io.tensor);
      DType d = DType::kF32;
      tosa_to_dtype(t.type, &d);
      std::string name = unique_value_name(io.name.empty() ? "input_" + std::to_string(i) : io.name);
      GPUU_ASSIGN_OR_RETURN(value_[static_cast<size_t>(io.tensor)], graph::add_graph_input(out_, name, d, t.shape, &names_));
    }
    for (op_index_ = 0; op_index_ < g_.operators.size(); ++op_index_) {
      const TosaOperator& op = g_.operators[op_index_];
      op_ = &op;
      GPUU_RETURN_IF_ERROR(raise(op));
      for (TosaTensorId t : op.outputs) {
        ValueId v = value_[static_cast<size_t>(t)];
        const TosaTensor& want = g_.tensor(t);
        DType d = DType::kF32;
        tosa_to_dtype(want.type, &d);
        if (v == graph::kNone || out_.value(v).dtype != d || out_.value(v).shape != want.shape) {
          return err(StatusCode::kInvalidArgument, where(), "the gpuu ops give ",
                     v == graph::kNone ? std::string("nothing") : graph::dtype_name(out_.value(v).dtype) + graph::shape_to_string(out_.value(v).shape),
                     ", but the TOSA result is ", tosa_type_string(want));
        }
      }
    }
    op_ = nullptr;
    for (const TosaInterface& o : g_.outputs) {
      GPUU_ASSIGN_OR_RETURN(ValueId v, value(o.tensor));
      if (std::find(out_.outputs().begin(), out_.outputs().end(), v) != out_.outputs().end() ||
          out_.value(v).producer == graph::kNone) {
        // The same tensor twice, or an input or constant (reshapes that cancel out, say): gpuu outputs are
        // distinct values that the graph makes, so copy it.
        GPUU_ASSIGN_OR_RETURN(v, node("reshape", {v}, {{"shape", out_.value(v).shape}}));
      }
      GPUU_RETURN_IF_ERROR(graph::add_graph_output(out_, v));
    }
    return copy_live(out_);
  }

 private:
  // ---- naming, errors, values ----

  std::string where() const {
    if (!op_) return "";
    return "operator " + std::to_string(op_index_) + " (" + tosa_op_name(op_->op) + "): ";
  }
  template <typename... Parts>
  Status unsupported(const Parts&... parts) const {
    return err(StatusCode::kUnsupported, where(), parts...);
  }
  template <typename... Parts>
  Status malformed(const Parts&... parts) const {
    return err(StatusCode::kInvalidFormat, where(), parts...);
  }

  std::string unique_value_name(const std::string& base) {
    names_.catch_up(out_);
    std::string name = base;
    for (int k = 1; names_.find_value(name) != graph::kNone; ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  Result<ValueId> node(const char* op, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    names_.catch_up(out_);
    std::string name;
    do {
      name = std::string(op) + "_" + std::to_string(counter_++);
    } while (names_.find_node(name) != graph::kNone || names_.find_value(name + ":0") != graph::kNone);
    Result<std::vector<ValueId>> outs = graph::add_op(out_, op, name, std::move(inputs), std::move(attrs), &names_);
    if (!outs.ok()) return err(outs.status().code(), where(), outs.status().message());
    return outs->front();
  }

  Result<ValueId> constant(DType d, const Shape& s, std::vector<uint8_t> bytes, const std::string& base = "const") {
    std::string name = unique_value_name(base);
    return graph::add_graph_constant(out_, name, d, s, Blob::take(std::move(bytes)), &names_);
  }

  // A [1]*rank constant holding `v` (cached).
  Result<ValueId> scalar(DType d, double v, size_t rank) {
    std::vector<uint8_t> bytes(graph::dtype_size(d));
    E t = d == DType::kF32 ? E::kF32 : d == DType::kF16 ? E::kF16 : d == DType::kI32 ? E::kI32 : d == DType::kI8 ? E::kI8 : E::kBool;
    tosa_store_element(t, v, bytes.data(), 0);
    auto key = std::make_tuple(static_cast<int>(d), bytes, rank);
    auto it = scalars_.find(key);
    if (it != scalars_.end()) return it->second;
    GPUU_ASSIGN_OR_RETURN(ValueId id, constant(d, Shape(rank, 1), bytes));
    scalars_.emplace(key, id);
    return id;
  }

  // The gpuu value of a TOSA tensor; constants become gpuu constants on first use.
  Result<ValueId> value(TosaTensorId t) {
    ValueId& v = value_[static_cast<size_t>(t)];
    if (v != graph::kNone) return v;
    int k = constant_of_[static_cast<size_t>(t)];
    if (k < 0) return err(StatusCode::kInternal, where(), "tensor ", t, " has no value yet");
    const TosaConstant& c = g_.constants[static_cast<size_t>(k)];
    const TosaTensor& tt = g_.tensor(t);
    if (c.data.empty()) {
      return err(StatusCode::kInvalidArgument, "graph constant ", c.graph_constant_id,
                 " has no data (attach the VGF constant with set_graph_constant_data)");
    }
    DType d = DType::kF32;
    tosa_to_dtype(tt.type, &d);
    std::string name = unique_value_name(c.name.empty() ? "const_" + std::to_string(k) : c.name);
    GPUU_ASSIGN_OR_RETURN(v, graph::add_graph_constant(out_, name, d, tt.shape, c.data, &names_));
    return v;
  }
  Result<ValueId> in(size_t i) { return value(op_->inputs[i]); }
  const TosaTensor& tin(size_t i) const { return g_.tensor(op_->inputs[i]); }
  const TosaTensor& tout(size_t i = 0) const { return g_.tensor(op_->outputs[i]); }
  DType out_dtype(size_t i = 0) const {
    DType d = DType::kF32;
    tosa_to_dtype(tout(i).type, &d);
    return d;
  }
  void set_out(ValueId v, size_t i = 0) { value_[static_cast<size_t>(op_->outputs[i])] = v; }
  const TosaAttribute& attr(size_t i) const { return op_->attributes[i]; }
  DType dtype(ValueId v) const { return out_.value(v).dtype; }
  Shape shape(ValueId v) const { return out_.value(v).shape; }

  Result<ValueId> transpose(ValueId x, const Perm& perm) {
    // A file's perm is checked here: composing with an earlier transpose
    // indexes by it (found by fuzzing).
    const size_t rank = shape(x).size();
    std::vector<bool> seen(rank, false);
    bool permutation = perm.size() == rank;
    for (size_t i = 0; permutation && i < perm.size(); ++i) {
      permutation = perm[i] >= 0 && static_cast<size_t>(perm[i]) < rank && !seen[static_cast<size_t>(perm[i])];
      if (permutation) seen[static_cast<size_t>(perm[i])] = true;
    }
    if (!permutation) return malformed("perm ", graph::shape_to_string(perm), " is not a permutation of rank ", rank);
    if (graph::is_identity_perm(perm)) return x;
    auto inner = transposed_.find(x);
    if (inner != transposed_.end()) {
      return transpose(inner->second.first, graph::compose_perms(inner->second.second, perm));
    }
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("transpose", {x}, {{"perm", perm}}));
    transposed_[y] = {x, perm};
    return y;
  }

  // A one-input elementwise op commutes with a transpose: apply it to the
  // transpose's input instead, so that transpose can cancel against the next.
  Result<ValueId> pointwise(ValueId x, const std::function<Result<ValueId>(ValueId)>& fn) {
    auto it = transposed_.find(x);
    if (it == transposed_.end()) return fn(x);
    std::pair<ValueId, Perm> source = it->second;
    GPUU_ASSIGN_OR_RETURN(ValueId y, fn(source.first));
    return transpose(y, source.second);
  }

  Result<ValueId> reshape(ValueId x, const Shape& s) {
    auto inner = reshaped_.find(x);
    if (inner != reshaped_.end()) x = inner->second;  // reshape(reshape(v)) = reshape(v)
    if (shape(x) == s) return x;
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("reshape", {x}, {{"shape", s}}));
    reshaped_[y] = x;
    return y;
  }

  Result<ValueId> cast(ValueId x, DType to) {
    if (dtype(x) == to) return x;
    return node("cast", {x}, {{"dtype", std::string(graph::dtype_name(to))}});
  }

  // A TOSA operand viewed as `view` and permuted: constants are rearranged
  // here (a weight is then a plain constant again), values get ops.
  Result<ValueId> rearranged(size_t input, const Shape& view, const Perm& perm) {
    TosaTensorId t = op_->inputs[input];
    int k = constant_of_[static_cast<size_t>(t)];
    if (k >= 0 && value_[static_cast<size_t>(t)] == graph::kNone && !g_.constants[static_cast<size_t>(k)].data.empty()) {
      const TosaTensor& tt = g_.tensor(t);
      Shape out(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) out[i] = view[static_cast<size_t>(perm[i])];
      DType d = DType::kF32;
      tosa_to_dtype(tt.type, &d);
      const TosaConstant& c = g_.constants[static_cast<size_t>(k)];
      return graph::add_graph_constant(out_, unique_value_name(c.name.empty() ? "const" : c.name), d, out,
                                       graph::permuted_blob(c.data, tosa_element_size(tt.type), view, perm), &names_);
    }
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(input));
    GPUU_ASSIGN_OR_RETURN(x, reshape(x, view));
    return transpose(x, perm);
  }

  Status require_zero(size_t attr_index, const char* what) const {
    const TosaAttribute& a = attr(attr_index);
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.value(i) != 0.0) return unsupported(what, " is ", a.value(i), "; gpuu has no zero-point arithmetic");
    }
    return Status::Ok();
  }
  Status require_propagate(size_t attr_index) const {
    if (tosa_is_float(tin(0).type) && attr(attr_index).ints[0] != static_cast<int64_t>(TosaNanPropagationMode::kPropagate)) {
      return unsupported("nan_mode IGNORE has no gpuu equivalent (gpuu propagates NaN)");
    }
    return Status::Ok();
  }

  // ---- operators ----

  // The ranks TOSA 1.0 fixes for an operator's leading inputs and its output
  // (-1: any). Raising indexes those shapes, so a file that breaks them is
  // refused first (fuzzing found reads past short shapes).
  struct FixedRanks {
    std::vector<int> inputs;
    int output = -1;
  };
  static FixedRanks fixed_ranks(TosaOp op) {
    switch (op) {
      case TosaOp::kMatmul: return {{3, 3}, 3};
      case TosaOp::kConv2d:
      case TosaOp::kDepthwiseConv2d:
      case TosaOp::kTransposeConv2d: return {{4, 4, 1}, 4};
      case TosaOp::kConv3d: return {{5, 5, 1}, 5};
      case TosaOp::kAvgPool2d:
      case TosaOp::kMaxPool2d:
      case TosaOp::kResize: return {{4}, 4};
      case TosaOp::kGather: return {{3, 2}, 3};
      case TosaOp::kScatter: return {{3, 2, 3}, 3};
      default: return {};
    }
  }
  Status check_fixed_ranks(const TosaOperator& op) const {
    FixedRanks want = fixed_ranks(op.op);
    if (op.inputs.size() < want.inputs.size() || op.outputs.empty()) {
      return malformed("has ", op.inputs.size(), " inputs and ", op.outputs.size(), " outputs, needs at least ",
                       want.inputs.size(), " and 1");
    }
    for (size_t i = 0; i < want.inputs.size(); ++i) {
      size_t rank = tin(i).shape.size();
      if (want.inputs[i] >= 0 && rank != static_cast<size_t>(want.inputs[i])) {
        return malformed("input ", i, " has rank ", rank, ", TOSA needs ", want.inputs[i]);
      }
    }
    if (want.output >= 0 && tout().shape.size() != static_cast<size_t>(want.output)) {
      return malformed("output has rank ", tout().shape.size(), ", TOSA needs ", want.output);
    }
    return Status::Ok();
  }

  Status raise(const TosaOperator& op) {
    GPUU_RETURN_IF_ERROR(check_fixed_ranks(op));
    switch (op.op) {
      case TosaOp::kExp: return simple("exp");
      case TosaOp::kLog: return simple("log");
      case TosaOp::kRsqrt: return simple("rsqrt");
      case TosaOp::kReciprocal: return simple("reciprocal");
      case TosaOp::kSin: return simple("sin");
      case TosaOp::kCos: return simple("cos");
      case TosaOp::kTanh: return simple("tanh");
      case TosaOp::kSigmoid: return simple("sigmoid");
      case TosaOp::kErf: return simple("erf");
      case TosaOp::kFloor: return simple("floor");
      case TosaOp::kCeil: return simple("ceil");
      case TosaOp::kAbs: return simple("abs");
      case TosaOp::kAdd: return simple("add");
      case TosaOp::kSub: return simple("sub");
      case TosaOp::kPow: return simple("pow");
      case TosaOp::kEqual: return simple("equal");
      case TosaOp::kGreater: return simple("greater");
      case TosaOp::kGreaterEqual: return simple("greater_equal");
      case TosaOp::kLogicalXor: return raise_logical();
      case TosaOp::kSelect: return simple("where");
      case TosaOp::kMaximum:
      case TosaOp::kMinimum:
        GPUU_RETURN_IF_ERROR(require_propagate(0));
        return simple(op.op == TosaOp::kMaximum ? "maximum" : "minimum");
      case TosaOp::kLogicalNot: return raise_logical();
      case TosaOp::kLogicalAnd: return raise_logical();
      case TosaOp::kLogicalOr: return raise_logical();
      case TosaOp::kNegate: return raise_negate();
      case TosaOp::kClamp: return raise_clamp();
      case TosaOp::kMul: return raise_mul();
      case TosaOp::kCast: return raise_cast();
      case TosaOp::kMatmul: return raise_matmul();
      case TosaOp::kConv2d:
      case TosaOp::kDepthwiseConv2d: return raise_conv();
      case TosaOp::kAvgPool2d: return raise_avg_pool();
      case TosaOp::kMaxPool2d: return raise_max_pool();
      case TosaOp::kConv3d: return raise_conv3d();
      case TosaOp::kTransposeConv2d: return raise_transpose_conv();
      case TosaOp::kResize: return raise_resize();
      case TosaOp::kReverse: return raise_reverse();
      case TosaOp::kReduceSum:
      case TosaOp::kReduceMax:
      case TosaOp::kReduceMin:
      case TosaOp::kReduceProduct:
      case TosaOp::kReduceAny:
      case TosaOp::kReduceAll: return raise_reduce();
      case TosaOp::kBitwiseAnd: return simple("bitwise_and");
      case TosaOp::kBitwiseOr: return simple("bitwise_or");
      case TosaOp::kBitwiseXor: return simple("bitwise_xor");
      case TosaOp::kBitwiseNot: return simple("bitwise_not");
      case TosaOp::kIntdiv: return raise_intdiv();
      case TosaOp::kReshape: {
        GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
        GPUU_ASSIGN_OR_RETURN(ValueId y, reshape(x, tout().shape));
        set_out(y);
        return Status::Ok();
      }
      case TosaOp::kTranspose: {
        GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
        GPUU_ASSIGN_OR_RETURN(ValueId y, transpose(x, attr(0).ints));
        set_out(y);
        return Status::Ok();
      }
      case TosaOp::kSlice: return raise_slice();
      case TosaOp::kConcat: return raise_concat();
      case TosaOp::kPad: return raise_pad();
      case TosaOp::kTile: return raise_tile();
      case TosaOp::kGather: return raise_gather();
      case TosaOp::kScatter: return raise_scatter();
      case TosaOp::kRescale: return raise_rescale();
      case TosaOp::kTable: return raise_table();
      case TosaOp::kArithmeticRightShift: return raise_arithmetic_right_shift();
      default: return unsupported("no gpuu equivalent");
    }
  }

  // One gpuu op over the tensor operands, same order.
  Status simple(const char* gpuu_op) {
    if (op_->inputs.size() == 1) {  // every one-input op here is elementwise
      GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
      GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) { return node(gpuu_op, {v}); }));
      set_out(y);
      return Status::Ok();
    }
    std::vector<ValueId> xs;
    for (size_t i = 0; i < op_->inputs.size(); ++i) {
      GPUU_ASSIGN_OR_RETURN(ValueId x, in(i));
      xs.push_back(x);
    }
    GPUU_ASSIGN_OR_RETURN(ValueId y, node(gpuu_op, xs));
    set_out(y);
    return Status::Ok();
  }

  // INTDIV truncates; gpuu's floor_divide floors. They differ by one exactly
  // where remainder (the divisor's sign) and fmod (the dividend's) differ.
  Status raise_intdiv() {
    GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
    GPUU_ASSIGN_OR_RETURN(ValueId floored, node("floor_divide", {a, b}));
    GPUU_ASSIGN_OR_RETURN(ValueId c_rem, node("fmod", {a, b}));
    GPUU_ASSIGN_OR_RETURN(ValueId py_rem, node("remainder", {a, b}));
    GPUU_ASSIGN_OR_RETURN(ValueId differ, node("not_equal", {c_rem, py_rem}));
    GPUU_ASSIGN_OR_RETURN(ValueId step, node("cast", {differ}, {{"dtype", std::string("i32")}}));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("add", {floored, step}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_logical() {
    const char* gpuu_op = op_->op == TosaOp::kLogicalNot   ? "logical_not"
                          : op_->op == TosaOp::kLogicalAnd ? "logical_and"
                          : op_->op == TosaOp::kLogicalOr  ? "logical_or"
                                                           : "logical_xor";
    return simple(gpuu_op);
  }


  Status raise_negate() {
    GPUU_RETURN_IF_ERROR(require_zero(0, "input1_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(1, "output_zp"));
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    if (dtype(x) != DType::kI8) {
      GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) { return node("neg", {v}); }));
      set_out(y);
      return Status::Ok();
    }
    // i8 NEGATE saturates: -(-128) = 127.
    GPUU_ASSIGN_OR_RETURN(ValueId wide, cast(x, DType::kI32));
    GPUU_ASSIGN_OR_RETURN(ValueId neg, node("neg", {wide}));
    GPUU_ASSIGN_OR_RETURN(ValueId sat, node("clamp", {neg}, {{"min", -128.0}, {"max", 127.0}}));
    GPUU_ASSIGN_OR_RETURN(ValueId y, cast(sat, DType::kI8));
    set_out(y);
    return Status::Ok();
  }

  Status raise_clamp() {
    GPUU_RETURN_IF_ERROR(require_propagate(2));
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    AttrMap bounds = {{"min", attr(0).value(0)}, {"max", attr(1).value(0)}};
    if (dtype(x) == DType::kI8) {
      // Exactly the i8 clamp, on the i32 kernels (the bounds are i8 values).
      GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) -> Result<ValueId> {
        GPUU_ASSIGN_OR_RETURN(ValueId wide, cast(v, DType::kI32));
        GPUU_ASSIGN_OR_RETURN(ValueId c, node("clamp", {wide}, bounds));
        return cast(c, DType::kI8);
      }));
      set_out(y);
      return Status::Ok();
    }
    GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) { return node("clamp", {v}, bounds); }));
    set_out(y);
    return Status::Ok();
  }

  Status raise_mul() {
    if (tin(0).type == E::kI32 && attr(0).ints[0] != 0) {
      // Fixed-point MUL: (a * b + 2^(shift-1)) >> shift.
      GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
      GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
      GPUU_ASSIGN_OR_RETURN(ValueId y, node("mul_shift", {a, b}, {{"shift", attr(0).ints[0]}}));
      set_out(y);
      return Status::Ok();
    }
    for (size_t i = 0; i < attr(0).size(); ++i) {
      if (attr(0).value(i) != 0.0) return unsupported("a nonzero shift applies to i32 MUL only (TOSA requires 0 here)");
    }
    GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
    // i8 x i8 -> i32: widen first (exact).
    GPUU_ASSIGN_OR_RETURN(a, cast(a, out_dtype()));
    GPUU_ASSIGN_OR_RETURN(b, cast(b, out_dtype()));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("mul", {a, b}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_cast() {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    DType from = dtype(x), to = out_dtype();
    bool from_float = from == DType::kF32 || from == DType::kF16;
    bool to_int = to == DType::kI32 || to == DType::kI8;
    if (from_float && to_int) {
      // TOSA rounds to nearest, ties to even, then saturates; gpuu's cast
      // truncates (and saturates), so round first.
      size_t r = shape(x).size();
      GPUU_ASSIGN_OR_RETURN(ValueId half, scalar(from, 0.5, r));
      GPUU_ASSIGN_OR_RETURN(ValueId one, scalar(from, 1.0, r));
      GPUU_ASSIGN_OR_RETURN(ValueId fl, node("floor", {x}));
      GPUU_ASSIGN_OR_RETURN(ValueId diff, node("sub", {x, fl}));
      GPUU_ASSIGN_OR_RETURN(ValueId up, node("add", {fl, one}));
      GPUU_ASSIGN_OR_RETURN(ValueId h, node("mul", {fl, half}));
      GPUU_ASSIGN_OR_RETURN(ValueId fh, node("floor", {h}));
      GPUU_ASSIGN_OR_RETURN(ValueId odd, node("not_equal", {h, fh}));
      GPUU_ASSIGN_OR_RETURN(ValueId tie_pick, node("where", {odd, up, fl}));
      GPUU_ASSIGN_OR_RETURN(ValueId is_tie, node("equal", {diff, half}));
      GPUU_ASSIGN_OR_RETURN(ValueId below, node("where", {is_tie, tie_pick, fl}));
      GPUU_ASSIGN_OR_RETURN(ValueId above_half, node("greater", {diff, half}));
      GPUU_ASSIGN_OR_RETURN(ValueId rounded, node("where", {above_half, up, below}));
      GPUU_ASSIGN_OR_RETURN(x, cast(rounded, to));
      set_out(x);
      return Status::Ok();
    }
    // The other pairs agree (int narrowing wraps in both).
    GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) { return cast(v, to); }));
    set_out(y);
    return Status::Ok();
  }

  Status raise_matmul() {
    if (tin(0).type == E::kI8) {
      if (out_dtype() != DType::kI32) return unsupported("i8 MATMUL must give i32");
      GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
      GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
      GPUU_ASSIGN_OR_RETURN(ValueId y, node("matmul_int", {a, b}, {{"a_zp", attr(0).ints[0]}, {"b_zp", attr(1).ints[0]}}));
      set_out(y);
      return Status::Ok();
    }
    GPUU_RETURN_IF_ERROR(require_zero(0, "A_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(1, "B_zp"));
    GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
    DType to = out_dtype();
    if (to != DType::kF32 && to != DType::kF16) return unsupported("integer MATMUL has no gpuu equivalent");
    GPUU_ASSIGN_OR_RETURN(a, cast(a, to));
    GPUU_ASSIGN_OR_RETURN(b, cast(b, to));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("matmul", {a, b}));
    set_out(y);
    return Status::Ok();
  }

  // NHWC input (x), padded explicitly where the pads are not symmetric (or,
  // for pools, exceed half the kernel as gpuu allows); returns the NCHW
  // value and the symmetric padding left for the gpuu op.
  Result<ValueId> nchw_padded(const Ints& pads, double fill, bool pool, const Ints& kernel, Ints* padding) {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
    bool symmetric = pads[0] == pads[1] && pads[2] == pads[3];
    if (pool) symmetric = symmetric && pads[0] <= kernel[0] / 2 && pads[2] <= kernel[1] / 2;
    if (symmetric) {
      *padding = {pads[0], pads[2]};
      return x;
    }
    *padding = {0, 0};
    return node("pad", {x}, {{"pads", Ints{0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3]}}, {"value", fill}});
  }

  Status raise_conv() {
    bool depthwise = op_->op == TosaOp::kDepthwiseConv2d;
    if (tin(0).type == E::kI8 || tin(0).type == E::kI16) return raise_conv_int(depthwise);
    GPUU_RETURN_IF_ERROR(require_zero(5, "input_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(6, "weight_zp"));
    const Ints& pads = attr(0).ints;
    Ints padding;
    GPUU_ASSIGN_OR_RETURN(ValueId x, nchw_padded(pads, 0.0, false, {}, &padding));
    const Shape& ws = tin(1).shape;
    ValueId w;
    int64_t groups = 1;
    if (depthwise) {
      // [KH, KW, C, M] -> [C, M, KH, KW] -> [C*M, 1, KH, KW]
      GPUU_ASSIGN_OR_RETURN(w, rearranged(1, ws, {2, 3, 0, 1}));
      GPUU_ASSIGN_OR_RETURN(w, reshape(w, {ws[2] * ws[3], 1, ws[0], ws[1]}));
      groups = ws[2];
    } else {
      GPUU_ASSIGN_OR_RETURN(w, rearranged(1, ws, kToNchw));  // OHWI -> OIHW
    }
    GPUU_ASSIGN_OR_RETURN(ValueId bias, in(2));
    DType to = out_dtype();
    if (to != DType::kF32 && to != DType::kF16) return unsupported("integer convolution has no gpuu equivalent");
    GPUU_ASSIGN_OR_RETURN(x, cast(x, to));
    GPUU_ASSIGN_OR_RETURN(w, cast(w, to));
    GPUU_ASSIGN_OR_RETURN(bias, cast(bias, to));
    int64_t oc = shape(w)[0];
    bool full_bias = shape(bias) == Shape{oc};
    std::vector<ValueId> inputs = {x, w};
    if (full_bias) inputs.push_back(bias);
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("conv2d", inputs,
                                          {{"stride", attr(1).ints}, {"padding", padding}, {"dilation", attr(2).ints},
                                           {"groups", groups}}));
    if (!full_bias) {
      GPUU_ASSIGN_OR_RETURN(y, node("add", {y, bias}));  // BC = 1 broadcasts
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }

  Status raise_avg_pool() {
    if (tin(0).type == E::kI8) {
      if (out_dtype() != DType::kI8) return unsupported("i8 AVG_POOL2D must give i8");
      if (attr(3).ints[0] != static_cast<int64_t>(TosaAccType::kInt32)) return unsupported("i8 AVG_POOL2D needs acc_type INT32");
      GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
      GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
      GPUU_ASSIGN_OR_RETURN(ValueId y, node("avg_pool2d_int", {x},
                                            {{"kernel", attr(0).ints}, {"stride", attr(1).ints}, {"padding", attr(2).ints},
                                             {"input_zp", attr(4).ints[0]}, {"output_zp", attr(5).ints[0]}}));
      GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
      set_out(y);
      return Status::Ok();
    }
    GPUU_RETURN_IF_ERROR(require_zero(4, "input_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(5, "output_zp"));
    const Ints& kernel = attr(0).ints;
    const Ints& stride = attr(1).ints;
    const Ints& pads = attr(2).ints;
    Ints padding;
    GPUU_ASSIGN_OR_RETURN(ValueId x, nchw_padded(pads, 0.0, true, kernel, &padding));
    bool explicit_pad = padding == Ints{0, 0} && (pads[0] || pads[1] || pads[2] || pads[3]);
    // With symmetric pads gpuu's count_include_pad = 0 is TOSA's divisor;
    // explicit pads are counted, so scale each window by area / real cells.
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("avg_pool2d", {x},
                                          {{"kernel", kernel}, {"stride", stride}, {"padding", padding},
                                           {"count_include_pad", int64_t{explicit_pad ? 1 : 0}}}));
    if (explicit_pad) {
      const Shape& is = tin(0).shape;  // NHWC
      const Shape& os = tout().shape;
      auto cells = [](int64_t start, int64_t k, int64_t size) {
        return std::max<int64_t>(0, std::min(start + k, size) - std::max<int64_t>(start, 0));
      };
      std::vector<double> factor;
      bool needed = false;
      for (int64_t oy = 0; oy < os[1]; ++oy) {
        for (int64_t ox = 0; ox < os[2]; ++ox) {
          int64_t count = cells(oy * stride[0] - pads[0], kernel[0], is[1]) * cells(ox * stride[1] - pads[2], kernel[1], is[2]);
          double f = count ? static_cast<double>(kernel[0] * kernel[1]) / static_cast<double>(count) : 0.0;
          needed = needed || f != 1.0;
          factor.push_back(f);
        }
      }
      if (needed) {
        DType d = dtype(y);
        E t = d == DType::kF16 ? E::kF16 : E::kF32;
        std::vector<uint8_t> bytes(factor.size() * graph::dtype_size(d));
        for (size_t i = 0; i < factor.size(); ++i) tosa_store_element(t, factor[i], bytes.data(), static_cast<int64_t>(i));
        GPUU_ASSIGN_OR_RETURN(ValueId f, constant(d, {1, 1, os[1], os[2]}, std::move(bytes)));
        GPUU_ASSIGN_OR_RETURN(y, node("mul", {y, f}));
      }
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }

  Status raise_max_pool() {
    GPUU_RETURN_IF_ERROR(require_propagate(3));
    const Ints& kernel = attr(0).ints;
    E t = tin(0).type;
    double lowest = tosa_lowest(t);
    Ints padding;
    GPUU_ASSIGN_OR_RETURN(ValueId x, nchw_padded(attr(2).ints, lowest, true, kernel, &padding));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("max_pool2d", {x}, {{"kernel", kernel}, {"stride", attr(1).ints}, {"padding", padding}}));
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }


  // ---- TOSA INT profile: integer convolution, RESCALE, TABLE ----

  // CONV2D / DEPTHWISE_CONV2D on i8 (i16) with zero points: conv2d_int (NCHW,
  // the four pads as they are), i32 (i48, gpuu's i64) out; a BC = 1 bias is
  // added after.
  Status raise_conv_int(bool depthwise) {
    const bool wide = tin(0).type == E::kI16;
    const DType acc = wide ? DType::kI64 : DType::kI32;
    if (tin(1).type != E::kI8) return unsupported("an integer convolution's weights must be i8");
    if (out_dtype() != acc) return unsupported(wide ? "i16 convolution must give i48" : "i8 convolution must give i32");
    const TosaAccType acc_type = wide ? TosaAccType::kInt48 : TosaAccType::kInt32;
    if (attr(3).ints[0] != static_cast<int64_t>(acc_type)) {
      return unsupported(wide ? "i16 convolution needs acc_type INT48" : "i8 convolution needs acc_type INT32");
    }
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
    const Shape& ws = tin(1).shape;
    ValueId w;
    int64_t groups = 1;
    if (depthwise) {
      GPUU_ASSIGN_OR_RETURN(w, rearranged(1, ws, {2, 3, 0, 1}));  // [KH, KW, C, M] -> [C, M, KH, KW]
      GPUU_ASSIGN_OR_RETURN(w, reshape(w, {ws[2] * ws[3], 1, ws[0], ws[1]}));
      groups = ws[2];
    } else {
      GPUU_ASSIGN_OR_RETURN(w, rearranged(1, ws, kToNchw));  // OHWI -> OIHW
    }
    GPUU_ASSIGN_OR_RETURN(ValueId bias, in(2));
    if (dtype(bias) != acc) return unsupported("an integer convolution's bias must have its accumulator's type");
    int64_t oc = shape(w)[0];
    bool full_bias = shape(bias) == Shape{oc};
    std::vector<ValueId> inputs = {x, w};
    if (full_bias) inputs.push_back(bias);
    // As conv2d's raising above, plus TOSA's zero points: conv2d_int is another op.
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("conv2d_int", inputs,
                                          {{"stride", attr(1).ints}, {"padding", attr(0).ints}, {"dilation", attr(2).ints},
                                           {"groups", groups}, {"input_zp", attr(5).ints[0]},
                                           {"weight_zp", attr(6).ints[0]}}));
    if (!full_bias) {
      GPUU_ASSIGN_OR_RETURN(y, node("add", {y, bias}));  // BC = 1 broadcasts
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }

  // i8 TRANSPOSE_CONV2D: output [o] sums (x[i] - izp) * (w[k] - wzp) over
  // i * stride + out_pad_before + k = o. That is conv2d_int over x with
  // stride - 1 copies of input_zp between elements (they add nothing), the
  // kernel flipped, and pads K - 1 + out_pad on each side (>= 0 as TOSA
  // requires out_pad > -K); pads add nothing in conv2d_int either.
  Status raise_transpose_conv_int() {
    if (out_dtype() != DType::kI32) return unsupported("i8 TRANSPOSE_CONV2D must give i32");
    if (attr(2).ints[0] != static_cast<int64_t>(TosaAccType::kInt32)) return unsupported("i8 TRANSPOSE_CONV2D needs acc_type INT32");
    const Ints& out_pad = attr(0).ints;
    const Ints& stride = attr(1).ints;
    int64_t izp = attr(4).ints[0], wzp = attr(5).ints[0];
    const Shape& ws = tin(1).shape;  // [OC, KH, KW, IC]
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
    Shape xs = shape(x);  // N, C, H, W
    if (stride[0] > 1 || stride[1] > 1) {
      GPUU_ASSIGN_OR_RETURN(x, reshape(x, {xs[0], xs[1], xs[2], 1, xs[3], 1}));
      GPUU_ASSIGN_OR_RETURN(x, node("pad", {x}, {{"pads", Ints{0, 0, 0, 0, 0, 0, 0, stride[0] - 1, 0, 0, 0, stride[1] - 1}},
                                                 {"value", static_cast<double>(izp)}}));
      GPUU_ASSIGN_OR_RETURN(x, reshape(x, {xs[0], xs[1], xs[2] * stride[0], xs[3] * stride[1]}));
      GPUU_ASSIGN_OR_RETURN(x, node("slice", {x}, {{"axes", Ints{2, 3}}, {"starts", Ints{0, 0}},
                                                   {"ends", Ints{(xs[2] - 1) * stride[0] + 1, (xs[3] - 1) * stride[1] + 1}}}));
    }
    GPUU_ASSIGN_OR_RETURN(ValueId w, rearranged(1, ws, kToNchw));  // OHWI -> OIHW
    GPUU_ASSIGN_OR_RETURN(w, node("flip", {w}, {{"axes", Ints{2, 3}}}));
    GPUU_ASSIGN_OR_RETURN(ValueId bias, in(2));
    if (dtype(bias) != DType::kI32) return unsupported("an i8 transposed convolution's bias must be i32");
    bool full_bias = shape(bias) == Shape{ws[0]};
    std::vector<ValueId> inputs = {x, w};
    if (full_bias) inputs.push_back(bias);
    Ints padding = {ws[1] - 1 + out_pad[0], ws[1] - 1 + out_pad[1], ws[2] - 1 + out_pad[2], ws[2] - 1 + out_pad[3]};
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("conv2d_int", inputs,
                                          {{"padding", padding}, {"input_zp", izp}, {"weight_zp", wzp}}));
    if (!full_bias) {
      GPUU_ASSIGN_OR_RETURN(y, node("add", {y, bias}));
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }

  // An i32 constant [n] of attribute values.
  Result<ValueId> int32_constant(const std::vector<int64_t>& values, const std::string& base) {
    std::vector<uint8_t> bytes(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t u = static_cast<uint32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &u, 4);
    }
    return constant(DType::kI32, {static_cast<int64_t>(values.size())}, std::move(bytes), base);
  }

  // RESCALE: gpuu's rescale with multiplier/shift as i32 constants; the
  // channel is TOSA's last dim, which is dim perm[rank-1] of a transposed
  // source (the rescale then runs before the transpose, which may cancel).
  Status raise_rescale() {
    bool scale32 = attr(0).ints[0] != 0;
    int64_t mode = attr(1).ints[0];
    bool per_channel = attr(2).ints[0] != 0;
    bool in_unsigned = attr(3).ints[0] != 0, out_unsigned = attr(4).ints[0] != 0;
    const std::vector<int64_t>& mult = attr(5).ints;
    const std::vector<int64_t>& shift = attr(6).ints;
    const Shape& is = tin(0).shape;
    size_t expect = per_channel ? static_cast<size_t>(is.back()) : 1;
    if (mult.size() != expect || shift.size() != expect) {
      return err(StatusCode::kInvalidArgument, where(), "multiplier and shift have ", mult.size(), " and ", shift.size(),
                 " entries; ", per_channel ? "per_channel needs one per channel of the last dim (" : "per-tensor needs one (",
                 expect, ")");
    }
    const char* rounding = mode == static_cast<int64_t>(TosaRoundingMode::kDoubleRound)    ? "double_round"
                           : mode == static_cast<int64_t>(TosaRoundingMode::kInexactRound) ? "inexact_round"
                                                                                            : "single_round";
    int64_t izp = attr(7).ints[0], ozp = attr(8).ints[0];
    if (in_unsigned && tin(0).type == E::kI8) izp &= 0xFF;
    if (out_unsigned && tout().type == E::kI8) ozp &= 0xFF;
    GPUU_ASSIGN_OR_RETURN(ValueId m, int32_constant(mult, "multiplier"));
    GPUU_ASSIGN_OR_RETURN(ValueId sh, int32_constant(shift, "shift"));
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    AttrMap a = {{"dtype", std::string(graph::dtype_name(out_dtype()))},
                 {"scale32", int64_t{scale32 ? 1 : 0}},
                 {"rounding", std::string(rounding)},
                 {"input_zp", izp},
                 {"output_zp", ozp},
                 {"input_unsigned", int64_t{in_unsigned ? 1 : 0}},
                 {"output_unsigned", int64_t{out_unsigned ? 1 : 0}}};
    ValueId y;
    auto it = transposed_.find(x);
    if (it != transposed_.end() && !is.empty()) {
      std::pair<ValueId, Perm> source = it->second;
      a["axis"] = source.second.back();
      GPUU_ASSIGN_OR_RETURN(ValueId r, node("rescale", {source.first, m, sh}, a));
      GPUU_ASSIGN_OR_RETURN(y, transpose(r, source.second));
    } else {
      a["axis"] = int64_t{-1};
      GPUU_ASSIGN_OR_RETURN(y, node("rescale", {x, m, sh}, a));
    }
    set_out(y);
    return Status::Ok();
  }

  // i8 operands shift exactly in i32 (the result only shrinks).
  Status raise_arithmetic_right_shift() {
    GPUU_ASSIGN_OR_RETURN(ValueId a, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId b, in(1));
    DType d = dtype(a);
    if (d != DType::kI32 && d != DType::kI8) return unsupported("no gpuu form for ", graph::dtype_name(d), " operands");
    GPUU_ASSIGN_OR_RETURN(a, cast(a, DType::kI32));
    GPUU_ASSIGN_OR_RETURN(b, cast(b, DType::kI32));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("arithmetic_right_shift", {a, b}, {{"round", attr(0).ints[0]}}));
    GPUU_ASSIGN_OR_RETURN(y, cast(y, d));
    set_out(y);
    return Status::Ok();
  }

  Status raise_table() {
    if (tin(0).type != E::kI8) return unsupported("only the i8 TABLE (256 entries) has a gpuu equivalent");
    const TosaAttribute& t = attr(0);
    if (t.size() != 256) {
      return err(StatusCode::kInvalidArgument, where(), "an i8 TABLE needs 256 entries, got ", t.size());
    }
    std::vector<uint8_t> bytes(256);
    for (size_t i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(t.ints[i]));
    GPUU_ASSIGN_OR_RETURN(ValueId table, constant(DType::kI8, {256}, std::move(bytes), "table"));
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId y, pointwise(x, [&](ValueId v) { return node("table", {v, table}); }));
    set_out(y);
    return Status::Ok();
  }

  // ---- CONV3D, TRANSPOSE_CONV2D, RESIZE, REVERSE ----

  // Operands in the output's float dtype, and whether the bias is a full
  // [OC] one (it goes into the gpuu op) or BC = 1 (added after, broadcast).
  Status conv_inputs(ValueId* x, ValueId* w, ValueId* bias, bool* full_bias) {
    GPUU_ASSIGN_OR_RETURN(*bias, in(2));
    DType to = out_dtype();
    if (to != DType::kF32 && to != DType::kF16) return unsupported("integer convolution has no gpuu equivalent");
    GPUU_ASSIGN_OR_RETURN(*x, cast(*x, to));
    GPUU_ASSIGN_OR_RETURN(*w, cast(*w, to));
    GPUU_ASSIGN_OR_RETURN(*bias, cast(*bias, to));
    *full_bias = shape(*bias) == Shape{tout().shape.back()};  // channels last
    return Status::Ok();
  }

  Status raise_conv3d() {
    GPUU_RETURN_IF_ERROR(require_zero(5, "input_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(6, "weight_zp"));
    const Ints& pads = attr(0).ints;
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(x, transpose(x, {0, 4, 1, 2, 3}));  // NDHWC -> NCDHW
    Ints padding = {pads[0], pads[2], pads[4]};
    if (pads[0] != pads[1] || pads[2] != pads[3] || pads[4] != pads[5]) {
      padding = {0, 0, 0};
      GPUU_ASSIGN_OR_RETURN(x, node("pad", {x}, {{"pads", Ints{0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3], pads[4], pads[5]}}}));
    }
    GPUU_ASSIGN_OR_RETURN(ValueId w, rearranged(1, tin(1).shape, {0, 4, 1, 2, 3}));  // ODHWI -> OIDHW
    ValueId bias;
    bool full_bias = false;
    GPUU_RETURN_IF_ERROR(conv_inputs(&x, &w, &bias, &full_bias));
    std::vector<ValueId> inputs = {x, w};
    if (full_bias) inputs.push_back(bias);
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("conv3d", inputs,
                                          {{"stride", attr(1).ints}, {"padding", padding}, {"dilation", attr(2).ints}}));
    if (!full_bias) {
      GPUU_ASSIGN_OR_RETURN(y, node("add", {y, bias}));
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, {0, 2, 3, 4, 1}));
    set_out(y);
    return Status::Ok();
  }

  // out_pad (top, bottom, left, right) is torch's (-padding, output_padding -
  // padding) when top/left <= 0 and 0 <= output_padding < stride.
  Status raise_transpose_conv() {
    if (tin(0).type == E::kI8) return raise_transpose_conv_int();
    GPUU_RETURN_IF_ERROR(require_zero(4, "input_zp"));
    GPUU_RETURN_IF_ERROR(require_zero(5, "weight_zp"));
    const Ints& out_pad = attr(0).ints;
    const Ints& stride = attr(1).ints;
    Ints padding(2), output_padding(2);
    for (size_t d = 0; d < 2; ++d) {
      padding[d] = -out_pad[2 * d];
      output_padding[d] = out_pad[2 * d + 1] - out_pad[2 * d];
      if (padding[d] < 0 || output_padding[d] < 0 || output_padding[d] >= stride[d]) {
        return unsupported("out_pad ", graph::shape_to_string(out_pad), " has no conv_transpose2d padding/output_padding form");
      }
    }
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
    GPUU_ASSIGN_OR_RETURN(ValueId w, rearranged(1, tin(1).shape, {3, 0, 1, 2}));  // OHWI -> [I, O, kH, kW]
    ValueId bias;
    bool full_bias = false;
    GPUU_RETURN_IF_ERROR(conv_inputs(&x, &w, &bias, &full_bias));
    std::vector<ValueId> inputs = {x, w};
    if (full_bias) inputs.push_back(bias);
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("conv_transpose2d", inputs,
                                          {{"stride", stride}, {"padding", padding}, {"output_padding", output_padding}}));
    if (!full_bias) {
      GPUU_ASSIGN_OR_RETURN(y, node("add", {y, bias}));
    }
    GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
    set_out(y);
    return Status::Ok();
  }

  // The gpuu resize (mode, align_corners, scales) whose indices are this
  // RESIZE's along both axes, if one is.
  Status raise_resize() {
    bool bilinear = attr(0).ints[0] == static_cast<int64_t>(TosaResizeMode::kBilinear);
    const Ints& sc = attr(1).ints;
    const Ints& off = attr(2).ints;
    const Ints& border = attr(3).ints;
    const Shape& is = tin(0).shape;  // NHWC
    const Shape& os = tout().shape;
    TosaResizeAxis axes[2] = {{sc[0], sc[1], off[0], border[0]}, {sc[2], sc[3], off[1], border[1]}};
    struct Form {
      graph::ResizeMode mode;
      bool align;
      bool with_scales;
    };
    std::vector<Form> forms;
    if (bilinear) {
      forms = {{graph::ResizeMode::kBilinear, false, false}, {graph::ResizeMode::kBilinear, true, false},
               {graph::ResizeMode::kBilinear, false, true}};
    } else {
      forms = {{graph::ResizeMode::kNearest, false, false}, {graph::ResizeMode::kNearestExact, false, false},
               {graph::ResizeMode::kNearest, false, true}, {graph::ResizeMode::kNearestExact, false, true}};
    }
    for (const Form& f : forms) {
      std::vector<double> scales = {static_cast<double>(sc[0]) / static_cast<double>(sc[1]),
                                    static_cast<double>(sc[2]) / static_cast<double>(sc[3])};
      bool ok = true;
      for (size_t d = 0; d < 2 && ok; ++d) {
        ok = tosa_resize_axis_matches(f.mode, f.align, is[1 + d], os[1 + d], f.with_scales ? scales[d] : 0.0, bilinear,
                                      axes[d]);
      }
      if (!ok) continue;
      static const char* kNames[] = {"nearest", "nearest_exact", "bilinear"};
      AttrMap a = {{"size", Ints{os[1], os[2]}},
                   {"mode", std::string(kNames[static_cast<int>(f.mode)])},
                   {"align_corners", int64_t{f.align ? 1 : 0}}};
      if (f.with_scales) a["scales"] = scales;
      GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
      GPUU_ASSIGN_OR_RETURN(x, transpose(x, kToNchw));
      DType to = out_dtype();
      if (to != DType::kF32 && to != DType::kF16) return unsupported("integer RESIZE has no gpuu equivalent");
      GPUU_ASSIGN_OR_RETURN(ValueId y, node("resize", {x}, std::move(a)));
      GPUU_ASSIGN_OR_RETURN(y, transpose(y, kToNhwc));
      set_out(y);
      return Status::Ok();
    }
    return unsupported("scale ", graph::shape_to_string(sc), ", offset ", graph::shape_to_string(off), " and border ",
                       graph::shape_to_string(border), " match no gpuu resize mode");
  }

  Status raise_reverse() {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("flip", {x}, {{"axes", Ints{attr(0).ints[0]}}}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_reduce() {
    const char* gpuu_op = "reduce_sum";
    switch (op_->op) {
      case TosaOp::kReduceMax: gpuu_op = "reduce_max"; break;
      case TosaOp::kReduceMin: gpuu_op = "reduce_min"; break;
      case TosaOp::kReduceProduct: gpuu_op = "reduce_prod"; break;
      case TosaOp::kReduceAny: gpuu_op = "reduce_any"; break;
      case TosaOp::kReduceAll: gpuu_op = "reduce_all"; break;
      default: break;
    }
    if (op_->op == TosaOp::kReduceMax || op_->op == TosaOp::kReduceMin) {
      GPUU_RETURN_IF_ERROR(require_propagate(1));
    }
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node(gpuu_op, {x}, {{"axes", Ints{attr(0).ints[0]}}, {"keepdim", int64_t{1}}}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_slice() {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    const Ints& start = attr(0).ints;
    const Ints& size = attr(1).ints;
    Ints axes, ends;
    for (size_t d = 0; d < start.size(); ++d) {
      axes.push_back(static_cast<int64_t>(d));
      ends.push_back(start[d] + size[d]);
    }
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("slice", {x}, {{"axes", axes}, {"starts", start}, {"ends", ends}}));
    set_out(y);
    return Status::Ok();
  }

  // Every raising ends with set_out(y) as tosa_lowering.cpp's lowerings do; the next opens alike.
  Status raise_concat() {
    std::vector<ValueId> xs;
    for (size_t i = 0; i < op_->inputs.size(); ++i) {
      GPUU_ASSIGN_OR_RETURN(ValueId x, in(i));
      xs.push_back(x);
    }
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("concat", xs, {{"axis", attr(0).ints[0]}}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_pad() {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("pad", {x}, {{"pads", attr(0).ints}, {"value", attr(1).value(0)}}));
    set_out(y);
    return Status::Ok();
  }

  Status raise_tile() {
    GPUU_ASSIGN_OR_RETURN(ValueId x, in(0));
    const Ints& multiples = attr(0).ints;
    // Repeating only size-1 dims is a broadcast: one expand.
    bool broadcast = true;
    for (size_t d = 0; d < multiples.size(); ++d) broadcast = broadcast && (multiples[d] == 1 || tin(0).shape[d] == 1);
    if (broadcast) {
      GPUU_ASSIGN_OR_RETURN(ValueId y, node("expand", {x}, {{"shape", tout().shape}}));
      set_out(y);
      return Status::Ok();
    }
    for (size_t d = 0; d < multiples.size(); ++d) {
      if (multiples[d] == 1) continue;
      if (multiples[d] < 1) return unsupported("multiples entry ", d, " = ", multiples[d]);
      std::vector<ValueId> copies(static_cast<size_t>(multiples[d]), x);
      GPUU_ASSIGN_OR_RETURN(x, node("concat", copies, {{"axis", static_cast<int64_t>(d)}}));
    }
    set_out(x);
    return Status::Ok();
  }

  // GATHER [N,K,C] by [N,W] -> [N,W,C]: gpuu's gather along axis 1 with the
  // indices repeated over C.
  Status raise_gather() {
    GPUU_ASSIGN_OR_RETURN(ValueId values, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId indices, in(1));
    const Shape& vs = tin(0).shape;
    const Shape& is = tin(1).shape;
    if (vs.size() != 3 || is.size() != 2) {
      return malformed("values ", graph::shape_to_string(vs), " and indices ", graph::shape_to_string(is),
                       " are not of rank 3 and 2");
    }
    GPUU_ASSIGN_OR_RETURN(ValueId idx, indices_over_channels(indices, is, vs[2]));
    GPUU_ASSIGN_OR_RETURN(ValueId y, node("gather", {values, idx}, {{"axis", int64_t{1}}}));
    set_out(y);
    return Status::Ok();
  }

  // GATHER's and SCATTER's row indices [N,W] as gpuu's element indices
  // [N,W,C]: the same index for every channel.
  Result<ValueId> indices_over_channels(ValueId indices, const Shape& is, int64_t channels) {
    GPUU_ASSIGN_OR_RETURN(ValueId idx, reshape(indices, {is[0], is[1], 1}));
    if (channels == 1) return idx;
    std::vector<uint8_t> zeros(static_cast<size_t>(channels) * 4, 0);
    GPUU_ASSIGN_OR_RETURN(ValueId z, constant(DType::kI32, {1, 1, channels}, std::move(zeros)));
    return node("add", {idx, z});
  }

  // SCATTER [N,K,C] at indices [N,W] from input [N,W,C]: gpuu's index_put
  // along axis 1 where one batch shares them (N = 1), else its scatter along
  // axis 1 with the indices repeated over C (as GATHER's raising).
  Status raise_scatter() {
    GPUU_ASSIGN_OR_RETURN(ValueId values, in(0));
    GPUU_ASSIGN_OR_RETURN(ValueId indices, in(1));
    GPUU_ASSIGN_OR_RETURN(ValueId input, in(2));
    const Shape& vs = tin(0).shape;
    const Shape& is = tin(1).shape;
    if (is[0] != vs[0] || tin(2).shape != Shape{vs[0], is[1], vs[2]}) {
      return malformed("values ", graph::shape_to_string(vs), ", indices ", graph::shape_to_string(is), " and input ",
                       graph::shape_to_string(tin(2).shape), " are not [N,K,C], [N,W] and [N,W,C]");
    }
    ValueId y = graph::kNone;
    if (vs[0] == 1) {
      GPUU_ASSIGN_OR_RETURN(ValueId rows, reshape(indices, {is[1]}));
      GPUU_ASSIGN_OR_RETURN(y, node("index_put", {values, rows, input}, {{"axis", int64_t{1}}}));
    } else {
      GPUU_ASSIGN_OR_RETURN(ValueId idx, indices_over_channels(indices, is, vs[2]));
      GPUU_ASSIGN_OR_RETURN(y, node("scatter", {values, idx, input}, {{"axis", int64_t{1}}}));
    }
    set_out(y);
    return Status::Ok();
  }

  const TosaGraph& g_;
  graph::Graph out_;
  graph::GraphNames names_;
  std::vector<ValueId> value_;
  std::vector<int> constant_of_;  // tensor -> index in g_.constants, or -1
  std::map<ValueId, std::pair<ValueId, Perm>> transposed_;
  std::map<ValueId, ValueId> reshaped_;  // reshape node output -> its input
  std::map<std::tuple<int, std::vector<uint8_t>, size_t>, ValueId> scalars_;
  const TosaOperator* op_ = nullptr;
  size_t op_index_ = 0;
  int counter_ = 0;
};

}  // namespace

Result<graph::Graph> tosa_to_gpuu(const TosaGraph& graph) { return Raising(graph).run(); }

}  // namespace gpuu::vgf
