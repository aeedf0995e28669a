// The TOSA graph IR: the grammar-derived operator table, builders, the
// validator every emitted or parsed graph goes through, comparison and
// canonical renumbering.
#include "vgf/tosa_graph.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "base/half.h"

namespace gpuu::vgf {

namespace {

#include "vgf/tosa_grammar_ops.inc"

static_assert(sizeof(kTosaOpTable) / sizeof(kTosaOpTable[0]) == kTosaOpCount, "one table row per TosaOp");

}  // namespace

// ---- element types -------------------------------------------------------

const char* tosa_element_type_name(TosaElementType type) {
  switch (type) {
    case TosaElementType::kBool: return "bool";
    case TosaElementType::kI8: return "i8";
    case TosaElementType::kI16: return "i16";
    case TosaElementType::kI32: return "i32";
    case TosaElementType::kI48: return "i48";
    case TosaElementType::kF16: return "f16";
    case TosaElementType::kF32: return "f32";
  }
  return "?";
}

bool tosa_is_float(TosaElementType type) { return type == TosaElementType::kF16 || type == TosaElementType::kF32; }

size_t tosa_element_size(TosaElementType type) {
  switch (type) {
    case TosaElementType::kBool:
    case TosaElementType::kI8: return 1;
    case TosaElementType::kI16:
    case TosaElementType::kF16: return 2;
    case TosaElementType::kI32:
    case TosaElementType::kF32: return 4;
    case TosaElementType::kI48: return 8;
  }
  return 0;
}

void tosa_int_range(TosaElementType type, int64_t* lo, int64_t* hi) {
  switch (type) {
    case TosaElementType::kBool: *lo = 0; *hi = 1; return;
    case TosaElementType::kI8: *lo = -128; *hi = 127; return;
    case TosaElementType::kI16: *lo = -32768; *hi = 32767; return;
    case TosaElementType::kI32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case TosaElementType::kI48: *lo = -(int64_t{1} << 47); *hi = (int64_t{1} << 47) - 1; return;
    default: *lo = 0; *hi = 0; return;
  }
}

double tosa_lowest(TosaElementType type) {
  if (tosa_is_float(type)) return -INFINITY;
  int64_t lo = 0, hi = 0;
  tosa_int_range(type, &lo, &hi);
  return static_cast<double>(lo);
}

namespace {

bool valid_type(TosaElementType type) { return static_cast<unsigned>(type) <= static_cast<unsigned>(TosaElementType::kF32); }

// The bits a float value has once rounded to `type`, for exact comparison.
uint64_t float_bits(TosaElementType type, double v) {
  if (type == TosaElementType::kF16) return double_to_half(v);
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

// ---- the operator table ----------------------------------------------------

const TosaOpInfo* find_tosa_op(uint32_t opcode) { return opcode < kTosaOpCount ? &kTosaOpTable[opcode] : nullptr; }

const TosaOpInfo& tosa_op_info(TosaOp op) { return kTosaOpTable[static_cast<uint32_t>(op)]; }

const char* tosa_op_name(TosaOp op) {
  const TosaOpInfo* info = find_tosa_op(static_cast<uint32_t>(op));
  return info ? info->name : "?";
}

size_t tosa_attr_count(const TosaOpInfo& info) {
  size_t n = 0;
  for (uint32_t i = 0; i < info.operand_count; ++i) {
    TosaOperandRole r = info.operands[i].role;
    if (r != TosaOperandRole::kInput && r != TosaOperandRole::kInputList) ++n;
  }
  return n;
}

size_t tosa_input_count(const TosaOpInfo& info) { return info.operand_count - tosa_attr_count(info); }

// ---- attributes ------------------------------------------------------------

TosaAttribute TosaAttribute::u32(uint32_t value) { return int_scalar(TosaElementType::kI32, value); }

TosaAttribute TosaAttribute::boolean(bool value) { return int_scalar(TosaElementType::kBool, value ? 1 : 0); }

TosaAttribute TosaAttribute::shape(std::vector<int64_t> values) {
  return int_tensor(TosaElementType::kI32, std::move(values));
}

// The four makers below: one element type, and ints or floats as a tensor or a scalar.
namespace {
TosaAttribute attribute_of(TosaElementType type, bool is_tensor, std::vector<int64_t> ints, std::vector<double> floats) {
  TosaAttribute a;
  a.type = type;
  a.is_tensor = is_tensor;
  a.ints = std::move(ints);
  a.floats = std::move(floats);
  return a;
}
}  // namespace

TosaAttribute TosaAttribute::int_tensor(TosaElementType type, std::vector<int64_t> values) {
  return attribute_of(type, true, std::move(values), {});
}

TosaAttribute TosaAttribute::float_tensor(TosaElementType type, std::vector<double> values) {
  return attribute_of(type, true, {}, std::move(values));
}

TosaAttribute TosaAttribute::int_scalar(TosaElementType type, int64_t value) {
  return attribute_of(type, false, {value}, {});
}

TosaAttribute TosaAttribute::float_scalar(TosaElementType type, double value) {
  return attribute_of(type, false, {}, {value});
}

TosaAttribute TosaAttribute::zero_point(TosaElementType type) {
  return tosa_is_float(type) ? float_tensor(type, {0.0}) : int_tensor(type, {0});
}

bool operator==(const TosaAttribute& a, const TosaAttribute& b) {
  if (a.type != b.type || a.is_tensor != b.is_tensor || a.ints != b.ints || a.floats.size() != b.floats.size()) {
    return false;
  }
  for (size_t i = 0; i < a.floats.size(); ++i) {
    if (float_bits(a.type, a.floats[i]) != float_bits(b.type, b.floats[i])) return false;
  }
  return true;
}

// ---- building --------------------------------------------------------------

TosaTensorId TosaGraph::add_tensor(TosaElementType type, std::vector<int64_t> shape) {
  tensors.push_back(TosaTensor{type, std::move(shape)});
  return static_cast<TosaTensorId>(tensors.size() - 1);
}

TosaTensorId TosaGraph::add_input(TosaElementType type, std::vector<int64_t> shape, uint32_t descriptor_set,
                                  uint32_t binding, std::string name) {
  TosaTensorId id = add_tensor(type, std::move(shape));
  inputs.push_back(TosaInterface{id, descriptor_set, binding, std::move(name)});
  return id;
}

TosaTensorId TosaGraph::add_graph_constant(TosaElementType type, std::vector<int64_t> shape,
                                           uint32_t graph_constant_id, Blob data, std::string name) {
  TosaTensorId id = add_tensor(type, std::move(shape));
  constants.push_back(
      TosaConstant{id, TosaConstantStorage::kGraphConstant, graph_constant_id, std::move(data), std::move(name)});
  return id;
}

TosaTensorId TosaGraph::add_inline_constant(TosaElementType type, std::vector<int64_t> shape, Blob data,
                                            std::string name) {
  TosaTensorId id = add_tensor(type, std::move(shape));
  constants.push_back(TosaConstant{id, TosaConstantStorage::kInline, 0, std::move(data), std::move(name)});
  return id;
}

TosaTensorId TosaGraph::add_operator(TosaOp op, std::vector<TosaAttribute> attributes,
                                     std::vector<TosaTensorId> operator_inputs, const std::vector<TosaTensor>& results) {
  TosaOperator o;
  o.op = op;
  o.attributes = std::move(attributes);
  o.inputs = std::move(operator_inputs);
  for (const TosaTensor& r : results) o.outputs.push_back(add_tensor(r.type, r.shape));
  operators.push_back(std::move(o));
  return operators.back().outputs.empty() ? -1 : operators.back().outputs.front();
}

void TosaGraph::add_output(TosaTensorId tensor, uint32_t descriptor_set, uint32_t binding, std::string name) {
  outputs.push_back(TosaInterface{tensor, descriptor_set, binding, std::move(name)});
}

// ---- helpers -----------------------------------------------------------------

int64_t tosa_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string tosa_shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string tosa_type_string(const TosaTensor& tensor) {
  return std::string(tosa_element_type_name(tensor.type)) + tosa_shape_string(tensor.shape);
}

int64_t tosa_data_int(TosaElementType type, const uint8_t* data, int64_t index) {
  const uint8_t* p = data + static_cast<size_t>(index) * tosa_element_size(type);
  switch (type) {
    case TosaElementType::kBool: return *p != 0;
    case TosaElementType::kI8: return static_cast<int8_t>(*p);
    case TosaElementType::kI16: {
      int16_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case TosaElementType::kI32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case TosaElementType::kI48: {
      int64_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    default: return static_cast<int64_t>(tosa_data_element(type, data, index));
  }
}

double tosa_data_element(TosaElementType type, const uint8_t* data, int64_t index) {
  const uint8_t* p = data + static_cast<size_t>(index) * tosa_element_size(type);
  if (type == TosaElementType::kF32) {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
  if (type == TosaElementType::kF16) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return half_to_float(h);
  }
  return static_cast<double>(tosa_data_int(type, data, index));
}

void tosa_store_element(TosaElementType type, double value, uint8_t* data, int64_t index) {
  uint8_t* p = data + static_cast<size_t>(index) * tosa_element_size(type);
  if (type == TosaElementType::kF32) {
    float f = static_cast<float>(value);
    std::memcpy(p, &f, sizeof f);
    return;
  }
  if (type == TosaElementType::kF16) {
    uint16_t h = double_to_half(value);
    std::memcpy(p, &h, sizeof h);
    return;
  }
  if (type == TosaElementType::kBool) {
    *p = value != 0.0 ? 1 : 0;
    return;
  }
  // Truncate toward zero (saturating to int64 so the conversion is defined), then wrap.
  int64_t v = 0;
  if (!std::isnan(value)) {
    if (value >= 9223372036854775807.0) {
      v = std::numeric_limits<int64_t>::max();
    } else if (value <= -9223372036854775808.0) {
      v = std::numeric_limits<int64_t>::min();
    } else {
      v = static_cast<int64_t>(value);
    }
  }
  std::memcpy(p, &v, tosa_element_size(type));  // little-endian: the low bytes
}

// ---- validation --------------------------------------------------------------

namespace {

std::string op_label(const TosaGraph& g, size_t index) {
  return "operator " + std::to_string(index) + " (" + tosa_op_name(g.operators[index].op) + ")";
}

Status check_tensor(const TosaTensor& t, TosaTensorId id) {
  if (!valid_type(t.type)) {
    return err(StatusCode::kInvalidArgument, "tensor ", id, ": unknown element type ", static_cast<int>(t.type));
  }
  if (t.shape.empty() || t.shape.size() > kTosaMaxRank) {
    return err(StatusCode::kInvalidArgument, "tensor ", id, " ", tosa_type_string(t), ": rank ", t.shape.size(),
               " is outside 1..", kTosaMaxRank);
  }
  int64_t numel = 1;
  for (int64_t d : t.shape) {
    if (d < 1 || d > kTosaMaxDim) {
      return err(StatusCode::kInvalidArgument, "tensor ", id, " ", tosa_type_string(t), ": dim ", d,
                 " is outside 1..", kTosaMaxDim);
    }
    if (numel > kTosaMaxNumel / d) {
      return err(StatusCode::kInvalidArgument, "tensor ", id, " ", tosa_type_string(t), ": too many elements");
    }
    numel *= d;
  }
  return Status::Ok();
}

Status check_attribute(const TosaGraph& g, size_t index, const TosaOperandInfo& slot, const TosaAttribute& a,
                       const std::vector<TosaTensorId>& operand_tensor) {
  const TosaOperator& op = g.operators[index];
  auto fail = [&](const auto&... parts) {
    return err(StatusCode::kInvalidArgument, op_label(g, index), ": attribute '", slot.name, "' ", parts...);
  };
  if (!valid_type(a.type)) return fail("has an unknown element type");
  bool is_float = tosa_is_float(a.type);
  if ((is_float && !a.ints.empty()) || (!is_float && !a.floats.empty())) {
    return fail("of type ", tosa_element_type_name(a.type), " keeps its values in the wrong list");
  }
  size_t n = a.size();
  auto rank_of = [&](int32_t ref) -> int64_t {
    TosaTensorId t = ref >= 0 && static_cast<size_t>(ref) < operand_tensor.size() ? operand_tensor[ref] : -1;
    return t >= 0 ? static_cast<int64_t>(g.tensor(t).shape.size()) : -1;
  };
  auto type_of = [&](int32_t ref) -> int {
    TosaTensorId t = ref >= 0 && static_cast<size_t>(ref) < operand_tensor.size() ? operand_tensor[ref] : -1;
    return t >= 0 ? static_cast<int>(g.tensor(t).type) : -1;
  };
  TosaElementType want_type = TosaElementType::kI32;
  bool want_tensor = false;
  switch (slot.role) {
    case TosaOperandRole::kAttrU32:
    case TosaOperandRole::kAttrEnum: break;
    case TosaOperandRole::kAttrBool: want_type = TosaElementType::kBool; break;
    case TosaOperandRole::kAttrShape: want_tensor = true; break;
    case TosaOperandRole::kAttrTensor:
    case TosaOperandRole::kAttrScalar: {
      want_tensor = slot.role == TosaOperandRole::kAttrTensor;
      int t = -1;
      switch (slot.type_rule) {
        case TosaTypeRule::kFixed: t = static_cast<int>(slot.fixed_type); break;
        case TosaTypeRule::kOfOperand: t = type_of(slot.ref); break;
        case TosaTypeRule::kOfResult:
          t = op.outputs.empty() ? -1 : static_cast<int>(g.tensor(op.outputs[0]).type);
          break;
        case TosaTypeRule::kI16OrI32:
          t = a.type == TosaElementType::kI16 ? static_cast<int>(TosaElementType::kI16)
                                              : static_cast<int>(TosaElementType::kI32);
          break;
        case TosaTypeRule::kNone: break;
      }
      if (t < 0) return fail("has no tensor to take its element type from");
      want_type = static_cast<TosaElementType>(t);
      break;
    }
    default: return fail("is not an attribute slot");
  }
  if (a.type != want_type) {
    return fail("must have element type ", tosa_element_type_name(want_type), ", got ", tosa_element_type_name(a.type));
  }
  if (a.is_tensor != want_tensor) return fail(want_tensor ? "must be a constant tensor" : "must be a scalar constant");
  if (!want_tensor && n != 1) return fail("must hold one value, got ", n);
  if (want_tensor) {
    int64_t want_len = -1;
    switch (slot.length_rule) {
      case TosaLengthRule::kFixed: want_len = slot.length; break;
      case TosaLengthRule::kRankOf: want_len = rank_of(slot.ref); break;
      case TosaLengthRule::kTwiceRankOf: want_len = 2 * rank_of(slot.ref); break;
      case TosaLengthRule::kRankOfResult:
        want_len = op.outputs.empty() ? -1 : static_cast<int64_t>(g.tensor(op.outputs[0]).shape.size());
        break;
      case TosaLengthRule::kAny:
      case TosaLengthRule::kNone: break;
    }
    if (want_len >= 0 && static_cast<int64_t>(n) != want_len) {
      return fail("must have ", want_len, " elements, got ", n);
    }
    if (n < 1 || n > static_cast<size_t>(kTosaMaxDim)) return fail("has ", n, " elements");
  }
  if (!is_float) {
    int64_t lo, hi;
    tosa_int_range(a.type, &lo, &hi);
    if (slot.role == TosaOperandRole::kAttrU32 || slot.role == TosaOperandRole::kAttrEnum) {
      lo = 0;
      hi = 0xFFFFFFFFll;
    }
    if (slot.role == TosaOperandRole::kAttrEnum) {
      switch (slot.enum_kind) {
        case TosaEnumKind::kAccType: lo = kTosaAccTypeMin; hi = kTosaAccTypeMax; break;
        case TosaEnumKind::kNanPropagationMode: lo = kTosaNanPropagationModeMin; hi = kTosaNanPropagationModeMax; break;
        case TosaEnumKind::kRoundingMode: lo = kTosaRoundingModeMin; hi = kTosaRoundingModeMax; break;
        case TosaEnumKind::kResizeMode: lo = kTosaResizeModeMin; hi = kTosaResizeModeMax; break;
        case TosaEnumKind::kNone: break;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (a.ints[i] < lo || a.ints[i] > hi) {
        return fail("value ", i, " = ", a.ints[i], " is outside ", lo, "..", hi);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status validate_tosa_operator(const TosaGraph& g, size_t index) {
  const TosaOperator& op = g.operators[index];
  const TosaOpInfo* info = find_tosa_op(static_cast<uint32_t>(op.op));
  if (!info) return err(StatusCode::kInvalidArgument, "operator ", index, ": unknown TOSA op ", static_cast<uint32_t>(op.op));
  auto fail = [&](const auto&... parts) { return err(StatusCode::kInvalidArgument, op_label(g, index), ": ", parts...); };
  size_t attrs = tosa_attr_count(*info), inputs = tosa_input_count(*info);
  bool has_list = info->operand_count > 0 && info->operands[info->operand_count - 1].role == TosaOperandRole::kInputList;
  if (op.attributes.size() != attrs) return fail("takes ", attrs, " attribute operands, got ", op.attributes.size());
  if (has_list ? op.inputs.size() < inputs : op.inputs.size() != inputs) {
    return fail("takes ", has_list ? "at least " : "", inputs, " tensor operands, got ", op.inputs.size());
  }
  if (op.outputs.size() != info->result_count) return fail("has ", info->result_count, " results, got ", op.outputs.size());
  // operand index -> tensor (for the rules that refer to another operand).
  std::vector<TosaTensorId> operand_tensor(info->operand_count, -1);
  size_t next_input = 0;
  for (uint32_t k = 0; k < info->operand_count; ++k) {
    TosaOperandRole r = info->operands[k].role;
    if (r == TosaOperandRole::kInput) operand_tensor[k] = op.inputs[next_input++];
  }
  size_t next_attr = 0;
  for (uint32_t k = 0; k < info->operand_count; ++k) {
    TosaOperandRole r = info->operands[k].role;
    if (r == TosaOperandRole::kInput || r == TosaOperandRole::kInputList) continue;
    GPUU_RETURN_IF_ERROR(check_attribute(g, index, info->operands[k], op.attributes[next_attr++], operand_tensor));
  }
  return Status::Ok();
}

Status validate_tosa_graph(const TosaGraph& g) {
  auto invalid = [](const auto&... parts) { return err(StatusCode::kInvalidArgument, parts...); };
  if (g.entry_point.empty() || g.entry_point.find('\0') != std::string::npos) {
    return invalid("the entry point name must be non-empty and free of NUL characters");
  }
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    GPUU_RETURN_IF_ERROR(check_tensor(g.tensors[i], static_cast<TosaTensorId>(i)));
  }
  // Who produces each tensor: -1 nobody yet.
  std::vector<int> produced(g.tensors.size(), 0);
  auto valid = [&](TosaTensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); };
  auto produce = [&](TosaTensorId t, const std::string& by) -> Status {
    if (!valid(t)) return invalid(by, " names tensor ", t, ", but the graph has ", g.tensors.size(), " tensors");
    if (produced[static_cast<size_t>(t)]) return invalid(by, " produces tensor ", t, ", which is already produced");
    produced[static_cast<size_t>(t)] = 1;
    return Status::Ok();
  };
  std::set<std::pair<uint32_t, uint32_t>> slots;
  auto check_slot = [&](const TosaInterface& io, const std::string& what) -> Status {
    if (!slots.insert({io.descriptor_set, io.binding}).second) {
      return invalid(what, " uses descriptor set ", io.descriptor_set, " binding ", io.binding, " twice");
    }
    if (io.name.find('\0') != std::string::npos) return invalid(what, " has a NUL in its name");
    return Status::Ok();
  };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    std::string what = "graph input " + std::to_string(i);
    GPUU_RETURN_IF_ERROR(produce(g.inputs[i].tensor, what));
    GPUU_RETURN_IF_ERROR(check_slot(g.inputs[i], what));
  }
  std::set<uint32_t> constant_ids;
  for (size_t i = 0; i < g.constants.size(); ++i) {
    const TosaConstant& c = g.constants[i];
    std::string what = "constant " + std::to_string(i);
    GPUU_RETURN_IF_ERROR(produce(c.tensor, what));
    if (c.name.find('\0') != std::string::npos) return invalid(what, " has a NUL in its name");
    const TosaTensor& t = g.tensor(c.tensor);
    uint64_t bytes = static_cast<uint64_t>(tosa_numel(t.shape)) * tosa_element_size(t.type);
    if (c.storage == TosaConstantStorage::kGraphConstant) {
      if (!constant_ids.insert(c.graph_constant_id).second) {
        return invalid(what, ": graph constant id ", c.graph_constant_id, " is used twice");
      }
      if (!c.data.empty() && c.data.size() != bytes) {
        return invalid(what, " ", tosa_type_string(t), ": ", c.data.size(), " bytes of data, expected ", bytes);
      }
    } else if (c.storage == TosaConstantStorage::kInline) {
      if (c.data.size() != bytes) {
        return invalid(what, " ", tosa_type_string(t), " (inline): ", c.data.size(), " bytes of data, expected ", bytes);
      }
    } else {
      return invalid(what, ": unknown storage ", static_cast<int>(c.storage));
    }
  }
  for (size_t i = 0; i < g.operators.size(); ++i) {
    const TosaOperator& op = g.operators[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      TosaTensorId t = op.inputs[k];
      if (!valid(t)) return invalid(op_label(g, i), ": tensor operand ", k, " names tensor ", t, ", which does not exist");
      if (!produced[static_cast<size_t>(t)]) {
        return invalid(op_label(g, i), ": tensor operand ", k, " (tensor ", t,
                       ") is not produced before it; operators must be in topological order");
      }
    }
    for (TosaTensorId t : op.outputs) GPUU_RETURN_IF_ERROR(produce(t, op_label(g, i)));
    GPUU_RETURN_IF_ERROR(validate_tosa_operator(g, i));
  }
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    if (!produced[i]) return invalid("tensor ", i, " is produced by no input, constant or operator");
  }
  if (g.outputs.empty()) return invalid("the graph has no outputs");
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    std::string what = "graph output " + std::to_string(i);
    if (!valid(g.outputs[i].tensor)) return invalid(what, " names tensor ", g.outputs[i].tensor, ", which does not exist");
    GPUU_RETURN_IF_ERROR(check_slot(g.outputs[i], what));
  }
  return Status::Ok();
}

// ---- comparison, renumbering, constant data ---------------------------------

std::string tosa_graph_difference(const TosaGraph& a, const TosaGraph& b, bool compare_graph_constant_data) {
  if (a.entry_point != b.entry_point) return "entry point '" + a.entry_point + "' vs '" + b.entry_point + "'";
  if (a.generator != b.generator) return "generator " + std::to_string(a.generator) + " vs " + std::to_string(b.generator);
  if (a.tensors.size() != b.tensors.size()) {
    return str_cat(a.tensors.size(), " tensors vs ", b.tensors.size());
  }
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (a.tensors[i].type != b.tensors[i].type || a.tensors[i].shape != b.tensors[i].shape) {
      return str_cat("tensor ", i, ": ", tosa_type_string(a.tensors[i]), " vs ", tosa_type_string(b.tensors[i]));
    }
  }
  auto interfaces = [](const char* what, const std::vector<TosaInterface>& x,
                       const std::vector<TosaInterface>& y) -> std::string {
    if (x.size() != y.size()) return str_cat(x.size(), " graph ", what, "s vs ", y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].tensor != y[i].tensor || x[i].descriptor_set != y[i].descriptor_set || x[i].binding != y[i].binding ||
          x[i].name != y[i].name) {
        return str_cat("graph ", what, " ", i, ": tensor ", x[i].tensor, " set ", x[i].descriptor_set, " binding ",
                       x[i].binding, " '", x[i].name, "' vs tensor ", y[i].tensor, " set ", y[i].descriptor_set,
                       " binding ", y[i].binding, " '", y[i].name, "'");
      }
    }
    return "";
  };
  std::string d = interfaces("input", a.inputs, b.inputs);
  if (d.empty()) d = interfaces("output", a.outputs, b.outputs);
  if (!d.empty()) return d;
  if (a.constants.size() != b.constants.size()) return str_cat(a.constants.size(), " constants vs ", b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    const TosaConstant& x = a.constants[i];
    const TosaConstant& y = b.constants[i];
    if (x.tensor != y.tensor || x.storage != y.storage || x.name != y.name ||
        (x.storage == TosaConstantStorage::kGraphConstant && x.graph_constant_id != y.graph_constant_id)) {
      return str_cat("constant ", i, ": tensor ", x.tensor, " vs ", y.tensor, " (or storage, id or name differ)");
    }
    bool compare_data = x.storage == TosaConstantStorage::kInline || compare_graph_constant_data;
    if (compare_data && !x.data.same_bytes(y.data)) return str_cat("constant ", i, ": data differs");
  }
  if (a.operators.size() != b.operators.size()) return str_cat(a.operators.size(), " operators vs ", b.operators.size());
  for (size_t i = 0; i < a.operators.size(); ++i) {
    const TosaOperator& x = a.operators[i];
    const TosaOperator& y = b.operators[i];
    std::string label = str_cat("operator ", i, " (", tosa_op_name(x.op), ")");
    if (x.op != y.op) return label + " vs " + tosa_op_name(y.op);
    if (x.attributes.size() != y.attributes.size()) return label + ": attribute counts differ";
    for (size_t k = 0; k < x.attributes.size(); ++k) {
      if (x.attributes[k] != y.attributes[k]) return str_cat(label, ": attribute ", k, " differs");
    }
    if (x.inputs != y.inputs) return label + ": tensor operands differ";
    if (x.outputs != y.outputs) return label + ": results differ";
  }
  return "";
}

TosaGraph canonicalize_tosa_graph(const TosaGraph& g) {
  TosaGraph out;
  out.entry_point = g.entry_point;
  out.generator = g.generator;
  std::vector<TosaTensorId> map(g.tensors.size(), -1);
  auto remap = [&](TosaTensorId t) -> TosaTensorId {
    if (t < 0 || static_cast<size_t>(t) >= g.tensors.size()) return t;
    if (map[static_cast<size_t>(t)] < 0) {
      map[static_cast<size_t>(t)] = out.add_tensor(g.tensors[static_cast<size_t>(t)].type, g.tensors[static_cast<size_t>(t)].shape);
    }
    return map[static_cast<size_t>(t)];
  };
  for (const TosaInterface& in : g.inputs) {
    TosaInterface copy = in;
    copy.tensor = remap(in.tensor);
    out.inputs.push_back(copy);
  }
  for (const TosaConstant& c : g.constants) {
    TosaConstant copy = c;
    copy.tensor = remap(c.tensor);
    out.constants.push_back(copy);
  }
  // Outputs first so they get numbers in operator order; inputs were all numbered already.
  for (const TosaOperator& op : g.operators) {
    TosaOperator copy = op;
    for (TosaTensorId& t : copy.outputs) t = remap(t);
    out.operators.push_back(std::move(copy));
  }
  for (TosaOperator& op : out.operators) {
    for (TosaTensorId& t : op.inputs) t = remap(t);
  }
  for (const TosaInterface& o : g.outputs) {
    TosaInterface copy = o;
    copy.tensor = remap(o.tensor);
    out.outputs.push_back(copy);
  }
  return out;
}

Status set_graph_constant_data(TosaGraph& graph, uint32_t graph_constant_id, Blob data) {
  for (TosaConstant& c : graph.constants) {
    if (c.storage != TosaConstantStorage::kGraphConstant || c.graph_constant_id != graph_constant_id) continue;
    if (c.tensor < 0 || static_cast<size_t>(c.tensor) >= graph.tensors.size()) {
      return err(StatusCode::kInvalidArgument, "graph constant ", graph_constant_id, " names no tensor");
    }
    const TosaTensor& t = graph.tensor(c.tensor);
    uint64_t bytes = static_cast<uint64_t>(tosa_numel(t.shape)) * tosa_element_size(t.type);
    if (data.size() != bytes) {
      return err(StatusCode::kInvalidArgument, "graph constant ", graph_constant_id, " ", tosa_type_string(t), ": ",
                 data.size(), " bytes of data, expected ", bytes);
    }
    c.data = std::move(data);
    return Status::Ok();
  }
  return err(StatusCode::kNotFound, "no graph constant has GraphConstantID ", graph_constant_id);
}

}  // namespace gpuu::vgf
