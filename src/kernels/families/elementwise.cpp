// Elementwise kernels: unary math (and clamp), broadcasting binary arithmetic
// and comparisons for f32/f16 tensors; their integer forms for i32/i64
// (int_*.comp); bool-valued predicates and logical ops over any dtype (logic.comp).
#include <cmath>
#include <limits>
#include <map>

#include "kernels/fusion.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

// Values of the OP specialization constant in shaders/unary.comp (op_codes.txt).
const std::map<std::string, int32_t>& unary_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kUnaryTable);
  return ops;
}

// shaders/int_unary.comp.
const std::map<std::string, int32_t>& int_unary_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kIntUnaryTable);
  return ops;
}

// shaders/int_binary.comp (arithmetic; comparisons use comparison_ops()).
// One accessor per op_codes table (generated from one list); each holds its own static map.
const std::map<std::string, int32_t>& int_binary_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kIntBinaryTable);
  return ops;
}

// shaders/logic.comp: bool results over any dtype; bitwise ops on bool are these.
const std::map<std::string, int32_t>& logic_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kLogicTable);
  return ops;
}
int32_t logic_op_for(const graph::Node& n, DType dtype) {
  if (dtype == DType::kBool) {
    if (n.op == "bitwise_not") return op_codes::kLogicLogicalNot;
    if (n.op == "bitwise_and") return op_codes::kLogicLogicalAnd;
    if (n.op == "bitwise_or") return op_codes::kLogicLogicalOr;
    if (n.op == "bitwise_xor") return op_codes::kLogicLogicalXor;
  }
  auto it = logic_ops().find(n.op);
  return it == logic_ops().end() ? -1 : it->second;
}

// shaders/binary.comp: arithmetic OP values, then comparison OP values (GPUU_COMPARE).
const std::map<std::string, int32_t>& arithmetic_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kBinaryTable);
  return ops;
}
const std::map<std::string, int32_t>& comparison_ops() {
  static const std::map<std::string, int32_t> ops = op_codes::to_map(op_codes::kCompareTable);
  return ops;
}

double attr_float(const graph::Node& n, const char* name, double fallback) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return fallback;
  if (const double* d = std::get_if<double>(&it->second)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return fallback;
}

// The dtypes each op's kernels take, by the dtype of input 0 (the registry
// has already made the other inputs alike).
constexpr DTypeSet bit(DType d) { return dtype_bit(d); }
constexpr DTypeSet kFloatBits = kFloatDTypes;
constexpr DTypeSet kIntBits = kIntDTypes;
constexpr DTypeSet kBoolBit = kBoolDType;

DTypeSet accepted_dtypes(const std::string& op) {
  if (logic_ops().count(op)) {
    return op == "isnan" || op == "isinf" ? kFloatBits : kFloatBits | kIntBits | kBoolBit | bit(DType::kI8);
  }
  if (op == "bitwise_not" || op == "bitwise_and" || op == "bitwise_or" || op == "bitwise_xor") {
    return kIntBits | kBoolBit;
  }
  if (op == "clamp") return kFloatBits | kIntBits | bit(DType::kI8) | bit(DType::kI16);
  if (int_unary_ops().count(op) || int_binary_ops().count(op) || comparison_ops().count(op)) {
    return kFloatBits | kIntBits;
  }
  return kFloatBits;
}

std::string check_elementwise(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& x = g.value(n.inputs[0]);
  // Any rank (OpKernel::any_rank) whose broadcast walk merges into kMaxRank dims.
  // A walk has at most y's rank of dims: only higher ranks need walking.
  const graph::Value& y = g.value(n.outputs[0]);
  if (y.shape.size() > kMaxRank) {
    std::vector<graph::Shape> in_shapes;
    for (graph::ValueId in : n.inputs) in_shapes.push_back(g.value(in).shape);
    const size_t walked = broadcast_walk(in_shapes, y.shape).dims.size();
    if (walked > kMaxRank) {
      return "Vulkan " + n.op + " '" + n.name + "' walks " + std::to_string(walked) + " separate dims of '" + y.name +
             "' (at most " + std::to_string(kMaxRank) + ")";
    }
  }
  if (accepted_dtypes(n.op) & bit(x.dtype)) return "";
  std::string takes;
  for (DType d : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8, DType::kI16, DType::kBool}) {
    if (accepted_dtypes(n.op) & bit(d)) takes += (takes.empty() ? "" : "/") + std::string(graph::dtype_name(d));
  }
  return "Vulkan " + n.op + " kernels take " + takes + " tensors, input '" + x.name + "' is " +
         graph::dtype_name(x.dtype);
}

const char* int_suffix(DType dtype) { return dtype == DType::kI64 ? "_i64" : "_i32"; }

// The words of v saturated into an integer dtype's range (clamp bounds).
std::pair<uint32_t, uint32_t> int_bound_words(DType dtype, double v, bool is_max) {
  double lo = dtype == DType::kI64 ? -9223372036854775808.0 : -2147483648.0;
  double hi = dtype == DType::kI64 ? 9223372036854775807.0 : 2147483647.0;
  int64_t r;
  if (std::isnan(v)) {
    r = 0;
  } else if (v >= hi) {
    r = dtype == DType::kI64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
  } else if (v <= lo) {
    r = dtype == DType::kI64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  } else {
    r = static_cast<int64_t>(is_max ? std::floor(v) : std::ceil(v));  // the integers inside [min, max]
  }
  auto u = static_cast<uint64_t>(r);
  return {static_cast<uint32_t>(u), static_cast<uint32_t>(u >> 32)};
}

// Broadcast addressing of a binary op: count, then the merged walk's rank,
// dims and both operands' strides (check_elementwise keeps it in kMaxRank).
PushConstants broadcast_push(const TensorRef& a, const TensorRef& b, const TensorRef& y) {
  const BroadcastWalk walk = broadcast_walk({a.shape, b.shape}, y.shape);
  PushConstants push;
  push.u32(static_cast<uint32_t>(graph::shape_numel(y.shape))).u32(static_cast<uint32_t>(walk.dims.size()));
  push.u32_array(walk.dims, kMaxRank).u32_array(walk.strides[0], kMaxRank).u32_array(walk.strides[1], kMaxRank);
  return push;
}

Status lower_logic(LoweringContext& lc, const graph::Node& n, int32_t op) {
  const TensorRef& a = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs.size() > 1 ? n.inputs[1] : n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  const BroadcastWalk walk = broadcast_walk({a.shape, b.shape}, y.shape);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(walk.dims.size()));
  push.u32(static_cast<uint32_t>(a.dtype)).u32(static_cast<uint32_t>(graph::dtype_size(a.dtype)));
  push.u32_array(walk.dims, kMaxRank).u32_array(walk.strides[0], kMaxRank).u32_array(walk.strides[1], kMaxRank);
  KernelKey key{"logic", {op}, 3, push.size()};
  // One invocation writes one word: four bool bytes.
  return add_dispatch(lc, n, key, {{a.range, false}, {b.range, false}, {y.range, true}}, push, (count + 3) / 4);
}

Status lower_int_unary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_int64_support(lc, n, x.dtype));
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  auto lo = int_bound_words(x.dtype, attr_float(n, "min", -std::numeric_limits<double>::infinity()), false);
  auto hi = int_bound_words(x.dtype, attr_float(n, "max", std::numeric_limits<double>::infinity()), true);
  // Crossed bounds: max wins, as in the CPU reference (min applies first).
  int64_t lo_v = static_cast<int64_t>(static_cast<uint64_t>(lo.first) | static_cast<uint64_t>(lo.second) << 32);
  int64_t hi_v = static_cast<int64_t>(static_cast<uint64_t>(hi.first) | static_cast<uint64_t>(hi.second) << 32);
  if (x.dtype == DType::kI32) {
    lo_v = static_cast<int32_t>(lo.first);
    hi_v = static_cast<int32_t>(hi.first);
  }
  if (lo_v > hi_v) lo = hi;
  PushConstants push;
  push.u32(count).u32(lo.first).u32(lo.second).u32(hi.first).u32(hi.second);
  KernelKey key{std::string("int_unary") + int_suffix(x.dtype), {int_unary_ops().at(n.op)}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

Status lower_int_binary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& a = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_int64_support(lc, n, a.dtype));
  bool compare = comparison_ops().count(n.op) > 0;
  int32_t op = compare ? comparison_ops().at(n.op) : int_binary_ops().at(n.op);
  PushConstants push = broadcast_push(a, b, y);
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  KernelKey key{std::string(compare ? "int_compare" : "int_binary") + int_suffix(a.dtype), {op}, 3, push.size()};
  uint64_t invocations = compare ? (count + 3) / 4 : count;
  return add_dispatch(lc, n, key, {{a.range, false}, {b.range, false}, {y.range, true}}, push, invocations);
}

Status lower_unary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  int32_t logic = logic_op_for(n, x.dtype);
  if (logic >= 0) return lower_logic(lc, n, logic);
  if (x.dtype == DType::kI8 || x.dtype == DType::kI16) return lower_narrow_int_clamp(lc, n);  // clamp alone takes them
  if (!is_float(x.dtype)) return lower_int_unary(lc, n);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, x.dtype));
  int32_t op = unary_code(n);
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push;
  push.u32(count)
      .f32(static_cast<float>(attr_float(n, "min", -std::numeric_limits<double>::infinity())))
      .f32(static_cast<float>(attr_float(n, "max", std::numeric_limits<double>::infinity())));
  KernelKey key{std::string("unary") + float_suffix(x.dtype), {op}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

Status lower_binary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& a = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  int32_t logic = logic_op_for(n, a.dtype);
  if (logic >= 0) return lower_logic(lc, n, logic);
  if (!is_float(a.dtype)) return lower_int_binary(lc, n);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, a.dtype));
  bool compare = comparison_ops().count(n.op) > 0;
  int32_t op = compare ? comparison_ops().at(n.op) : arithmetic_ops().at(n.op);
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push = broadcast_push(a, b, y);
  KernelKey key{std::string(compare ? "compare" : "binary") + float_suffix(a.dtype), {op}, 3, push.size()};
  // A comparison packs four bool bytes per invocation.
  uint64_t invocations = compare ? (count + 3) / 4 : count;
  return add_dispatch(lc, n, key, {{a.range, false}, {b.range, false}, {y.range, true}}, push, invocations);
}

}  // namespace

int32_t unary_code(const graph::Node& node) {
  auto it = unary_ops().find(node.op);
  if (it == unary_ops().end()) return -1;
  if (node.op == "gelu") {
    auto a = node.attrs.find("approximate");
    const std::string* approximate = a == node.attrs.end() ? nullptr : std::get_if<std::string>(&a->second);
    if (approximate && *approximate == "tanh") return op_codes::kUnaryGeluTanh;
  }
  if (node.op == "clamp") {
    // The variants whose constant bounds are compiled in, so they fuse.
    struct ConstantClamp {
      double lo, hi;
      int32_t code;
    };
    static constexpr ConstantClamp kConstantClamps[] = {{0, 6, op_codes::kUnaryClampRelu6},
                                                        {-128, 127, op_codes::kUnaryClampInt8},
                                                        {-32768, 32767, op_codes::kUnaryClampInt16},
                                                        {-32767, 32767, op_codes::kUnaryClampInt16Symmetric}};
    for (const ConstantClamp& c : kConstantClamps) {
      if (node.attrs.count("min") && node.attrs.count("max") && attr_float(node, "min", 0) == c.lo &&
          attr_float(node, "max", 0) == c.hi) {
        return c.code;
      }
    }
  }
  return it->second;
}

void add_elementwise_kernels(std::vector<OpKernel>& table) {
  // Every kernel here reads its inputs at the output element's (broadcast)
  // index only, so each may write over an input of its output's type. The
  // fusable ones read views through the fused kernel (fusion.h).
  auto add = [&](const char* op, Status (*lower)(LoweringContext&, const graph::Node&)) {
    table.push_back(OpKernel{op, accepted_dtypes(op), check_elementwise, lower, 0, takes_elementwise_view,
                             same_element_operand, true});
  };
  for (const auto& entry : unary_ops()) add(entry.first.c_str(), lower_unary);
  for (const char* op : {"bitwise_not", "isnan", "isinf", "logical_not"}) add(op, lower_unary);
  for (const auto& entry : arithmetic_ops()) add(entry.first.c_str(), lower_binary);
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"}) {
    add(op, lower_binary);
  }
  for (const auto& entry : comparison_ops()) add(entry.first.c_str(), lower_binary);
}

}  // namespace gpuu::kernels
