// The built-in capability tables. VGF follows TOSA 1.0 (reference/tosa-ops.md):
// f32/f16/i32/i8/bool tensors only, per-operator dtype limits, GATHER indices
// i32. Vulkan follows gpuu's kernel set: f32/f16/i32/i64/bool data, and i8
// where an op's own rule says its Vulkan kernels store i8 (the integer ops of
// TOSA's INT profile). The CPU fallback takes everything.
#include "partition/capabilities.h"

#include <algorithm>
#include <unordered_map>

namespace gpuu::partition {

// How an op's inputs decide its dtype rule.
enum class OpForm : uint8_t {
  kPlain,        // input 0 carries the dtype that matters
  kIndexed,      // gather/index_select: input 0 data, input 1 indices
  kSelect,       // where: input 0 bool condition, inputs 1 and 2 data
  kCompare,      // input 0 data, output bool
  kCast,         // any supported dtype in, any out
  kCustomShader  // the shader declares its own formats
};

// One entry of the built-in tables, shared by every op with the same limits.
struct OpRule {
  OpForm form = OpForm::kPlain;
  uint8_t vgf = 0;     // dtypes of the deciding input VGF takes
  uint8_t vulkan = 0;  // ... and Vulkan
  const char* tosa = "";  // how VGF expresses it, for messages
};

namespace {

using graph::DType;

// A dtype outside the enum (a corrupt graph) maps to no bit: no backend table takes it.
constexpr uint8_t bit(DType d) {
  return static_cast<unsigned>(d) < 8 ? static_cast<uint8_t>(1u << static_cast<unsigned>(d)) : 0;
}
constexpr uint8_t kF = bit(DType::kF32) | bit(DType::kF16);
constexpr uint8_t kI32 = bit(DType::kI32);
constexpr uint8_t kI8 = bit(DType::kI8);
constexpr uint8_t kBool = bit(DType::kBool);
constexpr uint8_t kI64 = bit(DType::kI64);
// Every dtype TOSA 1.0 has a tensor type for among ours.
constexpr uint8_t kVgfTensors = kF | kI32 | kI8 | kBool;
// Every dtype gpuu's Vulkan kernels store as data.
constexpr uint8_t kVulkanTensors = kF | kI32 | kI64 | kBool;
constexpr uint8_t kInt = kI32 | kI64;
constexpr int kMaxTosaRank = 6;

const std::unordered_map<std::string_view, OpRule>& op_table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, OpRule>;
    auto add = [&](std::initializer_list<const char*> names, OpRule rule) {
      for (const char* n : names) (*t)[n] = rule;
    };
    // TOSA's transcendental and rounding operators are float-only.
    add({"exp", "log", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil"},
        {OpForm::kPlain, kF, kF, "a float-only elementwise operator"});
    add({"sqrt"}, {OpForm::kPlain, kF, kF, "POW/RSQRT (float-only)"});
    add({"gelu"}, {OpForm::kPlain, kF, kF, "a decomposition through ERF/TANH (float-only)"});
    add({"tan", "cosh"}, {OpForm::kPlain, kF, kF, "SIN/COS/EXP/RECIPROCAL compositions (float-only)"});
    add({"round", "trunc"}, {OpForm::kPlain, kF, kF, "FLOOR/CEIL/SELECT compositions (float-only)"});
    add({"asin", "acos", "atan", "atan2"},
        {OpForm::kPlain, 0, kF, "no inverse trigonometric operator in TOSA 1.0"});
    add({"sinh", "asinh", "acosh", "atanh", "expm1", "log1p"},
        {OpForm::kPlain, 0, kF, "no TOSA 1.0 operator; EXP/LOG compositions lose every digit near the function's zero"});
    add({"abs"}, {OpForm::kPlain, kF | kI32, kF | kInt, "ABS"});
    add({"neg"}, {OpForm::kPlain, kF | kI32 | kI8, kF | kInt, "NEGATE"});
    add({"sign"}, {OpForm::kPlain, kF | kI32, kF | kInt, "GREATER/SELECT"});
    add({"relu"}, {OpForm::kPlain, kF | kI32 | kI8, kF, "CLAMP/MAXIMUM"});
    add({"clamp"}, {OpForm::kPlain, kF | kI32 | kI8, kF | kInt, "CLAMP/MAXIMUM"});
    add({"isnan", "isinf"}, {OpForm::kCompare, kF, kF, "EQUAL/ABS/LOGICAL_NOT (float-only)"});
    add({"logical_not", "logical_and", "logical_or", "logical_xor"},
        {OpForm::kCompare, kVgfTensors, kVulkanTensors, "EQUAL and LOGICAL_*"});
    add({"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"},
        {OpForm::kPlain, kI32 | kBool, kInt | kBool, "BITWISE_* (i32) or LOGICAL_* (bool)"});
    add({"add", "sub", "maximum", "minimum"}, {OpForm::kPlain, kF | kI32, kF | kInt, "an elementwise binary operator"});
    add({"mul"}, {OpForm::kPlain, kF | kI32 | kI8, kF | kInt, "MUL"});
    add({"div"}, {OpForm::kPlain, kF | kI32, kF, "MUL by RECIPROCAL or INTDIV"});
    add({"pow"}, {OpForm::kPlain, kF, kF, "POW (float-only)"});
    add({"remainder", "fmod", "floor_divide"},
        {OpForm::kPlain, kI32, kF | kInt, "INTDIV with sign fix-ups (i32 only; a float division has no TOSA form)"});
    add({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"},
        {OpForm::kCompare, kF | kI32, kF | kInt, "EQUAL/GREATER/GREATER_EQUAL"});
    add({"where"}, {OpForm::kSelect, kVgfTensors, kVulkanTensors, "SELECT"});
    add({"cast"}, {OpForm::kCast, kVgfTensors, kVulkanTensors, "CAST"});
    add({"matmul", "linear", "conv2d"}, {OpForm::kPlain, kF | kI8, kF, "MATMUL/CONV2D/DEPTHWISE_CONV2D"});
    add({"avg_pool2d"}, {OpForm::kPlain, kF | kI8, kF, "AVG_POOL2D"});
    add({"max_pool2d"}, {OpForm::kPlain, kF | kI8, kF | kI8 | kI32, "MAX_POOL2D"});
    // TOSA's INT profile: i8 data, i32 accumulators, fixed-point rescaling.
    add({"rescale"}, {OpForm::kPlain, kI8 | kI32, kI8 | kI32, "RESCALE"});
    add({"conv2d_int"}, {OpForm::kPlain, kI8, kI8, "CONV2D/DEPTHWISE_CONV2D with zero points (i32 result)"});
    add({"matmul_int"}, {OpForm::kPlain, kI8, kI8, "MATMUL with zero points (i32 result)"});
    add({"avg_pool2d_int"}, {OpForm::kPlain, kI8, kI8, "AVG_POOL2D with zero points"});
    add({"table"}, {OpForm::kPlain, kI8, kI8, "TABLE (256 entries)"});
    add({"mul_shift"}, {OpForm::kPlain, kI32, kI32, "MUL with a shift"});
    add({"arithmetic_right_shift"}, {OpForm::kPlain, kI32, kI32, "ARITHMETIC_RIGHT_SHIFT"});
    add({"conv3d"}, {OpForm::kPlain, kF, kF, "CONV3D, one per group"});
    add({"conv_transpose2d"}, {OpForm::kPlain, kF, kF, "TRANSPOSE_CONV2D, one per group, no dilation"});
    add({"resize"}, {OpForm::kPlain, kF, kF, "RESIZE (where its integer scale/offset/border reproduce torch's indices)"});
    // TOSA 1.0 has no 3-D pooling: no dtype is VGF's.
    add({"avg_pool3d", "max_pool3d"}, {OpForm::kPlain, 0, kF, "no 3-D pooling operator"});
    add({"reduce_sum"}, {OpForm::kPlain, kF | kI32, kF | kInt, "REDUCE_SUM"});
    add({"reduce_max"}, {OpForm::kPlain, kF | kI32 | kI8, kF | kInt, "REDUCE_MAX"});
    add({"reduce_min"}, {OpForm::kPlain, kF | kI32 | kI8, kF | kInt, "REDUCE_MIN"});
    add({"reduce_prod"}, {OpForm::kPlain, kF, kF | kInt, "REDUCE_PRODUCT (float-only)"});
    add({"reduce_any", "reduce_all"}, {OpForm::kPlain, kBool, kBool, "REDUCE_ANY/REDUCE_ALL"});
    add({"argmax", "argmin"}, {OpForm::kPlain, 0, kF | kInt, "none: the output is i64, which TOSA 1.0 lacks"});
    add({"cumsum"}, {OpForm::kPlain, 0, kF | kInt, "no prefix-sum operator in TOSA 1.0"});
    add({"reduce_mean"}, {OpForm::kPlain, kF, kF, "REDUCE_SUM and MUL (float-only)"});
    add({"softmax", "layer_norm"}, {OpForm::kPlain, kF, kF, "a float-only decomposition"});
    add({"transpose", "reshape", "slice", "concat", "pad"},
        {OpForm::kPlain, kVgfTensors, kVulkanTensors, "a data-movement operator"});
    add({"expand"}, {OpForm::kPlain, kVgfTensors, kVulkanTensors, "RESHAPE and TILE"});
    add({"flip"}, {OpForm::kPlain, kVgfTensors, kVulkanTensors, "REVERSE"});
    add({"gather", "index_select"}, {OpForm::kIndexed, kF | kI32 | kI8, kVulkanTensors, "GATHER"});
    add({"custom_shader"}, {OpForm::kCustomShader, kVgfTensors, 0xFF, "a VGF COMPUTE segment"});
    return t;
  }();
  return *table;
}

bool value_ok(const graph::Graph& g, graph::ValueId v) {
  return v >= 0 && static_cast<size_t>(v) < g.values().size();
}

Verdict at(Verdict::Kind kind, bool is_output, size_t slot, DType dtype) {
  Verdict v;
  v.kind = kind;
  v.is_output = is_output;
  v.slot = static_cast<int32_t>(slot);
  v.dtype = dtype;
  return v;
}

// Tensor-level checks every op shares: ids resolve, dtypes have storage on
// the backend, TOSA ranks stay within its limit.
Verdict check_tensors(bool vgf, const graph::Graph& g, const graph::Node& node, const OpRule& rule) {
  auto check_one = [&](graph::ValueId id, bool is_output, size_t slot) -> Verdict {
    if (!value_ok(g, id)) return at(Verdict::Kind::kNoSuchValue, is_output, slot, DType::kF32);
    const graph::Value& value = g.value(id);
    uint8_t mask = bit(value.dtype);
    if (vgf) {
      if (!(mask & kVgfTensors)) return at(Verdict::Kind::kTensorDtype, is_output, slot, value.dtype);
      if (static_cast<int64_t>(value.shape.size()) > kMaxTosaRank) {
        Verdict v = at(Verdict::Kind::kRank, is_output, slot, value.dtype);
        v.rank = static_cast<int64_t>(value.shape.size());
        return v;
      }
    } else if (rule.form != OpForm::kCustomShader) {
      bool index_slot = rule.form == OpForm::kIndexed && !is_output && slot == 1;
      uint8_t allowed = index_slot ? (kI32 | kI64) : static_cast<uint8_t>(kVulkanTensors | (rule.vulkan & kI8));
      if (!(mask & allowed)) return at(Verdict::Kind::kTensorDtype, is_output, slot, value.dtype);
    }
    return Verdict{};
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNone) continue;  // an optional input left out
    Verdict v = check_one(node.inputs[i], false, i);
    if (!v.ok()) return v;
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Verdict v = check_one(node.outputs[i], true, i);
    if (!v.ok()) return v;
  }
  return Verdict{};
}

// The op-specific dtype rule, on the input that decides it.
Verdict check_op(bool vgf, const graph::Graph& g, const graph::Node& node, const OpRule& rule) {
  uint8_t allowed = vgf ? rule.vgf : rule.vulkan;
  // check_tensors() already vetted every present id; absent optional inputs
  // (kNone) never decide a dtype rule.
  auto present = [&](size_t slot) { return slot < node.inputs.size() && node.inputs[slot] != graph::kNone; };
  auto input_dtype = [&](size_t slot) { return g.value(node.inputs[slot]).dtype; };
  switch (rule.form) {
    case OpForm::kCustomShader:
      if (!Capabilities::is_custom_shader(node)) return at(Verdict::Kind::kNotShaderDomain, false, 0, DType::kF32);
      return Verdict{};
    case OpForm::kCast:
      return Verdict{};  // every tensor already has storage on the backend
    case OpForm::kSelect:
      if (present(0) && input_dtype(0) != DType::kBool) {
        return at(Verdict::Kind::kConditionDtype, false, 0, input_dtype(0));
      }
      if (present(1) && !(bit(input_dtype(1)) & allowed)) {
        return at(Verdict::Kind::kOpDtype, false, 1, input_dtype(1));
      }
      return Verdict{};
    case OpForm::kIndexed:
      if (present(1) && vgf && input_dtype(1) != DType::kI32) {
        return at(Verdict::Kind::kIndexDtype, false, 1, input_dtype(1));
      }
      [[fallthrough]];
    case OpForm::kPlain:
    case OpForm::kCompare:
      if (present(0) && !(bit(input_dtype(0)) & allowed)) {
        return at(Verdict::Kind::kOpDtype, false, 0, input_dtype(0));
      }
      return Verdict{};
  }
  return Verdict{};
}

const OpRule* find_op_rule(std::string_view op) {
  auto it = op_table().find(op);
  return it == op_table().end() ? nullptr : &it->second;
}

// One of the two built-in declarations; they share the op table above.
class BuiltinTable final : public BackendCapability {
 public:
  BuiltinTable(bool vgf, const char* id, double cost) : vgf_(vgf), id_(id), cost_(cost) {}
  const char* id() const override { return id_; }
  double default_cost() const override { return cost_; }

  Verdict check(const graph::Graph& graph, graph::NodeId node_id) const override {
    const graph::Node& node = graph.node(node_id);
    const OpRule* rule = find_op_rule(node.op);
    if (!rule) return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
    Verdict v = check_tensors(vgf_, graph, node, *rule);
    if (!v.ok()) return v;
    return check_op(vgf_, graph, node, *rule);
  }

  std::vector<graph::DType> declared_dtypes(std::string_view op) const override {
    std::vector<graph::DType> out;
    const OpRule* rule = find_op_rule(op);
    if (!rule) return out;
    uint8_t mask = vgf_ ? rule->vgf : rule->vulkan;
    for (int d = 0; d < graph::kDTypeCount; ++d) {
      if (mask & bit(static_cast<DType>(d))) out.push_back(static_cast<DType>(d));
    }
    return out;
  }

  std::string op_form(std::string_view op) const override {
    const OpRule* rule = find_op_rule(op);
    return vgf_ && rule && rule->vgf ? rule->tosa : "";
  }

  std::string describe(const graph::Graph& graph, graph::NodeId node_id, const Verdict& v) const override {
    const graph::Node& node = graph.node(node_id);
    std::string where = str_cat(v.is_output ? "output " : "input ", v.slot, " of ", node.name);
    const char* dt = graph::dtype_name(v.dtype);
    switch (v.kind) {
      case Verdict::Kind::kOk: return "";
      case Verdict::Kind::kUnknownOp:
        if (vgf_) return str_cat("no TOSA 1.0 lowering for op '", node.op, "'");
        return str_cat("no Vulkan kernel for op '", node.op, "'");
      case Verdict::Kind::kNoSuchValue: return str_cat(where, " names no value of the graph");
      case Verdict::Kind::kTensorDtype:
        if (vgf_) return str_cat("TOSA 1.0 has no ", dt, " tensors (", where, " is ", dt, ")");
        return str_cat("no Vulkan kernel for ", dt, " tensors (", where, " is ", dt, ")");
      case Verdict::Kind::kOpDtype:
        if (vgf_) {
          return str_cat("TOSA 1.0 has no ", dt, " form of '", node.op, "' (", find_op_rule(node.op)->tosa, "; ",
                         where, " is ", dt, ")");
        }
        return str_cat("no Vulkan kernel for '", node.op, "' on ", dt, " (", where, " is ", dt, ")");
      case Verdict::Kind::kIndexDtype:
        return str_cat("TOSA 1.0 GATHER takes i32 indices only (", where, " is ", dt, ")");
      case Verdict::Kind::kConditionDtype:
        return str_cat("the condition of 'where' must be bool (", where, " is ", dt, ")");
      case Verdict::Kind::kRank:
        return str_cat("TOSA 1.0 tensors have rank <= ", kMaxTosaRank, " (", where, " has rank ", v.rank, ")");
      case Verdict::Kind::kNotShaderDomain: {
        std::string domain = "<none>";
        auto it = node.attrs.find("domain_name");
        if (it != node.attrs.end()) {
          if (const auto* s = std::get_if<std::string>(&it->second)) domain = "'" + *s + "'";
        }
        return str_cat("custom_shader ", node.name, " has domain_name ", domain, ", not '",
                       kVulkanCustomShaderDomain, "'");
      }
      case Verdict::Kind::kDenied:
      case Verdict::Kind::kBackendRefused: break;  // worded by Capabilities
    }
    return "unsupported";
  }

 private:
  bool vgf_;
  const char* id_;
  double cost_;
};

}  // namespace

// VGF runs TOSA graphs whose elementwise chains fuse (1); Vulkan spends one
// dispatch per op (2).
const BackendCapability& builtin_vgf_capability() {
  static const BuiltinTable table(true, kVgfId, 1.0);
  return table;
}
const BackendCapability& builtin_vulkan_capability() {
  static const BuiltinTable table(false, kVulkanId, 2.0);
  return table;
}

Capabilities::Capabilities() : backends_{&builtin_vgf_capability(), &builtin_vulkan_capability()} {}

const BackendCapability* Capabilities::find(std::string_view id) const {
  for (const BackendCapability* b : backends_) {
    if (id == b->id()) return b;
  }
  return nullptr;
}

std::string Capabilities::registered_ids() const {
  std::string out;
  for (const BackendCapability* b : backends_) out += std::string(b->id()) + ", ";
  return out + kCpuId;
}

Status Capabilities::deny(std::string backend, std::string op) {
  if (backend == kCpuId) {
    return err(StatusCode::kInvalidArgument, "deny: the CPU fallback takes every op; it cannot be denied '", op, "'");
  }
  if (backend.empty()) return err(StatusCode::kInvalidArgument, "deny: the backend id is empty (op '", op, "')");
  if (op.empty()) return err(StatusCode::kInvalidArgument, "deny: the op name is empty");
  if (!is_denied(backend, op)) denials_.push_back(Denial{std::move(backend), std::move(op)});
  return Status::Ok();
}

Status Capabilities::pin(std::string node_name, std::string backend) {
  if (backend.empty()) {
    return err(StatusCode::kInvalidArgument, "pin: the backend id is empty for node '", node_name, "'");
  }
  if (node_name.empty()) return err(StatusCode::kInvalidArgument, "pin: the node name is empty");
  pins_.push_back(Pin{std::move(node_name), std::move(backend)});
  return Status::Ok();
}

bool Capabilities::is_denied(std::string_view backend, std::string_view op) const {
  return std::any_of(denials_.begin(), denials_.end(),
                     [&](const Denial& d) { return d.backend == backend && d.op == op; });
}

bool Capabilities::is_known_op(std::string_view op) { return op_table().count(op) != 0; }

bool Capabilities::is_custom_shader(const graph::Node& node) {
  if (node.op != "custom_shader") return false;
  auto it = node.attrs.find("domain_name");
  if (it == node.attrs.end()) return false;
  const auto* domain = std::get_if<std::string>(&it->second);
  return domain && *domain == kVulkanCustomShaderDomain;
}

void Capabilities::narrow(std::string backend, BackendCheck check) {
  if (backend == kCpuId) return;  // the CPU fallback takes everything
  for (auto& [id, c] : checks_) {
    if (id == backend) {
      c = std::move(check);
      return;
    }
  }
  checks_.emplace_back(std::move(backend), std::move(check));
}

std::string Capabilities::backend_refusal(std::string_view backend, const graph::Graph& graph,
                                          graph::NodeId node) const {
  if (node < 0 || static_cast<size_t>(node) >= graph.nodes().size()) return "";
  for (const auto& [id, check] : checks_) {
    if (id == backend && check) return check(graph, graph.node(node));
  }
  return "";
}

Verdict Capabilities::verdict(std::string_view backend, const graph::Graph& graph, graph::NodeId node) const {
  if (node < 0 || static_cast<size_t>(node) >= graph.nodes().size()) {
    return at(Verdict::Kind::kNoSuchValue, false, 0, DType::kF32);
  }
  if (backend == kCpuId) return Verdict{};
  const BackendCapability* cap = find(backend);
  if (!cap) return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
  Verdict v = cap->check(graph, node);
  if (v.ok() && !backend_refusal(backend, graph, node).empty()) v.kind = Verdict::Kind::kBackendRefused;
  if (v.ok() && !denials_.empty() && is_denied(backend, graph.node(node).op)) v.kind = Verdict::Kind::kDenied;
  return v;
}

Support Capabilities::support(std::string_view backend, const graph::Graph& graph, graph::NodeId node) const {
  Verdict v = verdict(backend, graph, node);
  if (v.ok()) return Support{};
  if (node < 0 || static_cast<size_t>(node) >= graph.nodes().size()) {
    return Support{false, str_cat("node index ", node, " is out of range")};
  }
  if (v.kind == Verdict::Kind::kDenied) return Support{false, "denied by user"};
  if (v.kind == Verdict::Kind::kBackendRefused) {
    std::string refusal = backend_refusal(backend, graph, node);
    if (!refusal.empty()) return Support{false, refusal};  // else the declaration's own check refused
  }
  const BackendCapability* cap = find(backend);
  if (!cap) return Support{false, str_cat("no backend '", backend, "' is registered (", registered_ids(), ")")};
  return Support{false, cap->describe(graph, node, v)};
}

}  // namespace gpuu::partition
