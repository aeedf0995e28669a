// The TOSA 1.0 table: f32/f16/i32/i8/bool tensors only, per-operator dtype
// limits, GATHER indices i32, rank <= 6.
#include "backends/vgf/vgf_capability.h"

#include <unordered_map>
#include <variant>

#include "base/status.h"
#include "partition/capabilities.h"

namespace gpuu::vgf {
namespace {

using graph::DType;
using partition::Verdict;

// How an op's inputs decide its dtype rule.
enum class OpForm : uint8_t {
  kPlain,        // input 0 carries the dtype that matters
  kIndexed,      // gather/index_select: input 0 data, input 1 indices
  kSelect,       // where: input 0 bool condition, inputs 1 and 2 data
  kCompare,      // input 0 data, output bool
  kCast,         // any supported dtype in, any out
  kCustomShader  // the shader declares its own formats
};

struct OpRule {
  OpForm form = OpForm::kPlain;
  uint8_t dtypes = 0;     // dtypes of the deciding input TOSA takes
  const char* tosa = "";  // how TOSA expresses the op, for messages and docs
};

// A dtype outside the enum (a corrupt graph) maps to no bit: the table takes none.
constexpr uint8_t bit(DType d) {
  return static_cast<unsigned>(d) < 8 ? static_cast<uint8_t>(1u << static_cast<unsigned>(d)) : 0;
}
constexpr uint8_t kF = bit(DType::kF32) | bit(DType::kF16);
constexpr uint8_t kI32 = bit(DType::kI32);
constexpr uint8_t kI8 = bit(DType::kI8);
constexpr uint8_t kBool = bit(DType::kBool);
// Every dtype TOSA 1.0 has a tensor type for among ours.
constexpr uint8_t kVgfTensors = kF | kI32 | kI8 | kBool;
constexpr int kMaxTosaRank = 6;

const std::unordered_map<std::string_view, OpRule>& op_table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, OpRule>;
    auto add = [&](std::initializer_list<const char*> names, OpRule rule) {
      for (const char* n : names) (*t)[n] = rule;
    };
    // TOSA's transcendental and rounding operators are float-only.
    add({"exp", "log", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil"},
        {OpForm::kPlain, kF, "a float-only elementwise operator"});
    add({"sqrt"}, {OpForm::kPlain, kF, "POW/RSQRT (float-only)"});
    add({"gelu"}, {OpForm::kPlain, kF, "a decomposition through ERF/TANH (float-only)"});
    add({"tan", "cosh"}, {OpForm::kPlain, kF, "SIN/COS/EXP/RECIPROCAL compositions (float-only)"});
    add({"round", "trunc"}, {OpForm::kPlain, kF, "FLOOR/CEIL/SELECT compositions (float-only)"});
    add({"asin", "acos", "atan", "atan2"},
        {OpForm::kPlain, 0, "no inverse trigonometric operator in TOSA 1.0"});
    add({"sinh", "asinh", "acosh", "atanh", "expm1", "log1p"},
        {OpForm::kPlain, 0, "no TOSA 1.0 operator; EXP/LOG compositions lose every digit near the function's zero"});
    add({"abs"}, {OpForm::kPlain, kF | kI32, "ABS"});
    add({"neg"}, {OpForm::kPlain, kF | kI32 | kI8, "NEGATE"});
    add({"sign"}, {OpForm::kPlain, kF | kI32, "GREATER/SELECT"});
    add({"relu"}, {OpForm::kPlain, kF | kI32 | kI8, "CLAMP/MAXIMUM"});
    add({"clamp"}, {OpForm::kPlain, kF | kI32 | kI8, "CLAMP/MAXIMUM"});
    add({"isnan", "isinf"}, {OpForm::kCompare, kF, "EQUAL/ABS/LOGICAL_NOT (float-only)"});
    add({"logical_not", "logical_and", "logical_or", "logical_xor"},
        {OpForm::kCompare, kVgfTensors, "EQUAL and LOGICAL_*"});
    add({"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"},
        {OpForm::kPlain, kI32 | kBool, "BITWISE_* (i32) or LOGICAL_* (bool)"});
    add({"add", "sub", "maximum", "minimum"}, {OpForm::kPlain, kF | kI32, "an elementwise binary operator"});
    add({"mul"}, {OpForm::kPlain, kF | kI32 | kI8, "MUL"});
    add({"div"}, {OpForm::kPlain, kF | kI32, "MUL by RECIPROCAL or INTDIV"});
    add({"pow"}, {OpForm::kPlain, kF, "POW (float-only)"});
    add({"remainder", "fmod", "floor_divide"},
        {OpForm::kPlain, kI32, "INTDIV with sign fix-ups (i32 only; a float division has no TOSA form)"});
    add({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"},
        {OpForm::kCompare, kF | kI32, "EQUAL/GREATER/GREATER_EQUAL"});
    add({"where"}, {OpForm::kSelect, kVgfTensors, "SELECT"});
    add({"cast"}, {OpForm::kCast, kVgfTensors, "CAST"});
    add({"matmul", "linear", "conv2d"}, {OpForm::kPlain, kF | kI8, "MATMUL/CONV2D/DEPTHWISE_CONV2D"});
    add({"avg_pool2d"}, {OpForm::kPlain, kF | kI8, "AVG_POOL2D"});
    add({"max_pool2d"}, {OpForm::kPlain, kF | kI8, "MAX_POOL2D"});
    // TOSA's INT profile: i8 data, i32 accumulators, fixed-point rescaling.
    add({"rescale"}, {OpForm::kPlain, kI8 | kI32, "RESCALE"});
    add({"conv2d_int"}, {OpForm::kPlain, kI8, "CONV2D/DEPTHWISE_CONV2D with zero points (i32 result)"});
    add({"matmul_int"}, {OpForm::kPlain, kI8, "MATMUL with zero points (i32 result)"});
    add({"avg_pool2d_int"}, {OpForm::kPlain, kI8, "AVG_POOL2D with zero points"});
    add({"table"}, {OpForm::kPlain, kI8, "TABLE (256 entries)"});
    add({"mul_shift"}, {OpForm::kPlain, kI32, "MUL with a shift"});
    add({"arithmetic_right_shift"}, {OpForm::kPlain, kI32, "ARITHMETIC_RIGHT_SHIFT"});
    add({"conv3d"}, {OpForm::kPlain, kF, "CONV3D, one per group"});
    add({"conv_transpose2d"}, {OpForm::kPlain, kF, "TRANSPOSE_CONV2D, one per group, no dilation"});
    add({"resize"}, {OpForm::kPlain, kF, "RESIZE (where its integer scale/offset/border reproduce torch's indices)"});
    // TOSA 1.0 has no 3-D pooling: no dtype is VGF's.
    add({"avg_pool3d", "max_pool3d"}, {OpForm::kPlain, 0, "no 3-D pooling operator"});
    add({"reduce_sum"}, {OpForm::kPlain, kF | kI32, "REDUCE_SUM"});
    add({"reduce_max"}, {OpForm::kPlain, kF | kI32 | kI8, "REDUCE_MAX"});
    add({"reduce_min"}, {OpForm::kPlain, kF | kI32 | kI8, "REDUCE_MIN"});
    add({"reduce_prod"}, {OpForm::kPlain, kF, "REDUCE_PRODUCT (float-only)"});
    add({"reduce_any", "reduce_all"}, {OpForm::kPlain, kBool, "REDUCE_ANY/REDUCE_ALL"});
    add({"argmax", "argmin"}, {OpForm::kPlain, 0, "none: the output is i64, which TOSA 1.0 lacks"});
    add({"cumsum"}, {OpForm::kPlain, 0, "no prefix-sum operator in TOSA 1.0"});
    add({"reduce_mean"}, {OpForm::kPlain, kF, "REDUCE_SUM and MUL (float-only)"});
    add({"softmax", "layer_norm"}, {OpForm::kPlain, kF, "a float-only decomposition"});
    add({"transpose", "reshape", "slice", "concat", "pad"},
        {OpForm::kPlain, kVgfTensors, "a data-movement operator"});
    add({"expand"}, {OpForm::kPlain, kVgfTensors, "RESHAPE and TILE"});
    add({"flip"}, {OpForm::kPlain, kVgfTensors, "REVERSE"});
    add({"gather", "index_select"}, {OpForm::kIndexed, kF | kI32 | kI8, "GATHER"});
    add({"custom_shader"}, {OpForm::kCustomShader, kVgfTensors, "a VGF COMPUTE segment"});
    return t;
  }();
  return *table;
}

const OpRule* find_rule(std::string_view op) {
  auto it = op_table().find(op);
  return it == op_table().end() ? nullptr : &it->second;
}

constexpr auto at = &Verdict::at;

// Every tensor: its id resolves, TOSA has its dtype, its rank is within TOSA's limit.
Verdict check_tensors(const graph::Graph& g, const graph::Node& node) {
  return partition::check_node_tensors(g, node, [](const graph::Value& value, bool is_output, size_t slot) {
    if (!(bit(value.dtype) & kVgfTensors)) return at(Verdict::Kind::kTensorDtype, is_output, slot, value.dtype);
    if (static_cast<int64_t>(value.shape.size()) > kMaxTosaRank) {
      Verdict v = at(Verdict::Kind::kRank, is_output, slot, value.dtype);
      v.rank = static_cast<int64_t>(value.shape.size());
      return v;
    }
    return Verdict{};
  });
}

// The op-specific dtype rule, on the input that decides it.
Verdict check_op(const graph::Graph& g, const graph::Node& node, const OpRule& rule) {
  // check_tensors() already vetted every present id; absent optional inputs
  // (kNone) never decide a dtype rule.
  auto present = [&](size_t slot) { return slot < node.inputs.size() && node.inputs[slot] != graph::kNone; };
  auto input_dtype = [&](size_t slot) { return g.value(node.inputs[slot]).dtype; };
  switch (rule.form) {
    case OpForm::kCustomShader:
      if (!partition::Capabilities::is_custom_shader(node)) {
        return at(Verdict::Kind::kNotShaderDomain, false, 0, DType::kF32);
      }
      return Verdict{};
    case OpForm::kCast:
      return Verdict{};  // every tensor already has a TOSA type
    case OpForm::kSelect:
      if (present(0) && input_dtype(0) != DType::kBool) {
        return at(Verdict::Kind::kConditionDtype, false, 0, input_dtype(0));
      }
      if (present(1) && !(bit(input_dtype(1)) & rule.dtypes)) {
        return at(Verdict::Kind::kOpDtype, false, 1, input_dtype(1));
      }
      return Verdict{};
    case OpForm::kIndexed:
      if (present(1) && input_dtype(1) != DType::kI32) return at(Verdict::Kind::kIndexDtype, false, 1, input_dtype(1));
      [[fallthrough]];
    case OpForm::kPlain:
    case OpForm::kCompare:
      if (present(0) && !(bit(input_dtype(0)) & rule.dtypes)) {
        return at(Verdict::Kind::kOpDtype, false, 0, input_dtype(0));
      }
      return Verdict{};
  }
  return Verdict{};
}

class VgfCapability final : public partition::BackendCapability {
 public:
  const char* id() const override { return partition::kVgfId; }
  // TOSA graphs whose elementwise chains fuse: the cheapest GPU node.
  double default_cost() const override { return 1.0; }
  // Convolutions and matrix products: the data-graph path is built for them.
  std::vector<std::pair<std::string, double>> op_costs() const override {
    return {{"conv2d", 4.0}, {"matmul", 4.0}, {"linear", 4.0}};
  }

  Verdict check(const graph::Graph& graph, graph::NodeId node_id) const override {
    const graph::Node& node = graph.node(node_id);
    const OpRule* rule = find_rule(node.op);
    if (!rule) return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
    Verdict v = check_tensors(graph, node);
    if (!v.ok()) return v;
    return check_op(graph, node, *rule);
  }

  std::vector<DType> declared_dtypes(std::string_view op) const override {
    std::vector<DType> out;
    const OpRule* rule = find_rule(op);
    if (!rule) return out;
    for (int d = 0; d < graph::kDTypeCount; ++d) {
      if (rule->dtypes & bit(static_cast<DType>(d))) out.push_back(static_cast<DType>(d));
    }
    return out;
  }

  std::string op_form(std::string_view op) const override {
    const OpRule* rule = find_rule(op);
    return rule && rule->dtypes ? rule->tosa : "";
  }

  std::string describe(const graph::Graph& graph, graph::NodeId node_id, const Verdict& v) const override {
    const graph::Node& node = graph.node(node_id);
    std::string where = str_cat(v.is_output ? "output " : "input ", v.slot, " of ", node.name);
    const char* dt = graph::dtype_name(v.dtype);
    switch (v.kind) {
      case Verdict::Kind::kOk: return "";
      case Verdict::Kind::kUnknownOp: return str_cat("no TOSA 1.0 lowering for op '", node.op, "'");
      case Verdict::Kind::kNoSuchValue: return str_cat(where, " names no value of the graph");
      case Verdict::Kind::kTensorDtype: return str_cat("TOSA 1.0 has no ", dt, " tensors (", where, " is ", dt, ")");
      case Verdict::Kind::kOpDtype:
        return str_cat("TOSA 1.0 has no ", dt, " form of '", node.op, "' (", find_rule(node.op)->tosa, "; ", where,
                       " is ", dt, ")");
      case Verdict::Kind::kIndexDtype:
        return str_cat("TOSA 1.0 GATHER takes i32 indices only (", where, " is ", dt, ")");
      case Verdict::Kind::kConditionDtype:
        return str_cat("the condition of 'where' must be bool (", where, " is ", dt, ")");
      case Verdict::Kind::kRank:
        return str_cat("TOSA 1.0 tensors have rank <= ", kMaxTosaRank, " (", where, " has rank ", v.rank, ")");
      case Verdict::Kind::kNotShaderDomain: return partition::describe_not_shader_domain(node);
      case Verdict::Kind::kDenied:
      case Verdict::Kind::kBackendRefused: break;  // worded by Capabilities
    }
    return "unsupported";
  }
};

}  // namespace

const partition::BackendCapability& vgf_capability() {
  static const VgfCapability capability;
  return capability;
}

}  // namespace gpuu::vgf
