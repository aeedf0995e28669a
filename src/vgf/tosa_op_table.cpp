// Reading the op table: a node's refusal from its entry, and the words for it.
// The entries themselves live in tosa_lowering.cpp, beside the lowerings they
// point at.
#include "vgf/tosa_op_table.h"

#include <unordered_map>

#include "graph/op_registry.h"

namespace gpuu::vgf {
namespace {

using Kind = TosaRefusal::Kind;

TosaRefusal refusal(Kind kind, size_t slot = 0, graph::DType dtype = graph::DType::kF32) {
  TosaRefusal r;
  r.kind = kind;
  r.slot = static_cast<int32_t>(slot);
  r.dtype = dtype;
  return r;
}

// The entry's check, on a node the op registry accepts as stored (outputs
// included): its attributes resolve and its shapes are consistent. A node the
// registry does not accept is the verifier's to refuse: "" here.
std::string entry_check(const graph::Graph& g, const graph::Node& node, const TosaOpEntry& entry) {
  std::vector<graph::Value> inferred;
  if (!graph::infer(g, node, &inferred).ok() || inferred.size() != node.outputs.size()) return "";
  for (size_t i = 0; i < inferred.size(); ++i) {
    const graph::Value& stored = g.value(node.outputs[i]);
    if (inferred[i].dtype != stored.dtype || inferred[i].shape != stored.shape) return "";
  }
  Result<graph::AttrMap> attrs = graph::resolve_attrs(node);
  return attrs.ok() ? entry.check(g, node, attrs.value()) : "";
}

}  // namespace

bool carries_i48(std::string_view op, bool is_output, size_t slot) {
  if (op == "conv2d_int") return is_output ? slot == 0 : slot == 2;
  return op == "rescale" && !is_output && slot == 0;
}

const TosaOpEntry* find_tosa_op(std::string_view op) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const TosaOpEntry*>;
    for (const TosaOpEntry& entry : tosa_op_table()) m->emplace(entry.op, &entry);
    return m;
  }();
  auto it = index->find(op);
  return it == index->end() ? nullptr : it->second;
}

TosaRefusal check_tosa_node(const graph::Graph& g, const graph::Node& node, TosaDTypeRule rule) {
  const TosaOpEntry* entry = find_tosa_op(node.op);
  if (!entry) return refusal(Kind::kUnknownOp);
  TosaDTypeSet accepted = entry->dtypes | (rule == TosaDTypeRule::kLowered ? entry->undeclared : 0);
  // Absent optional inputs (kNone) never decide a dtype rule.
  auto present = [&](size_t slot) { return slot < node.inputs.size() && node.inputs[slot] != graph::kNone; };
  auto input_dtype = [&](size_t slot) { return g.value(node.inputs[slot]).dtype; };
  switch (entry->form) {
    case TosaOpForm::kCustomShader:
    case TosaOpForm::kCast:
      break;  // every tensor already has a TOSA type
    case TosaOpForm::kSelect:
      if (present(0) && input_dtype(0) != graph::DType::kBool) {
        return refusal(Kind::kConditionDtype, 0, input_dtype(0));
      }
      if (present(1) && !(tosa_dtype_bit(input_dtype(1)) & accepted)) {
        return refusal(Kind::kOpDtype, 1, input_dtype(1));
      }
      break;
    case TosaOpForm::kIndexed:
      if (present(1) && input_dtype(1) != graph::DType::kI32) return refusal(Kind::kIndexDtype, 1, input_dtype(1));
      [[fallthrough]];
    case TosaOpForm::kPlain:
    case TosaOpForm::kCompare:
      // An i48 accumulator (rescale's i64 input) has its own rule: carries_i48.
      if (present(0) && input_dtype(0) == graph::DType::kI64 && carries_i48(node.op, false, 0)) break;
      if (present(0) && !(tosa_dtype_bit(input_dtype(0)) & accepted)) {
        return refusal(Kind::kOpDtype, 0, input_dtype(0));
      }
      break;
  }
  if (entry->check && !entry_check(g, node, *entry).empty()) return refusal(Kind::kNode);
  return TosaRefusal{};
}

std::string describe_tosa_refusal(const graph::Graph& g, const graph::Node& node, const TosaRefusal& r) {
  const TosaOpEntry* entry = find_tosa_op(node.op);
  std::string where = str_cat("input ", r.slot, " of ", node.name);
  const char* dt = graph::dtype_name(r.dtype);
  switch (r.kind) {
    case Kind::kOk: return "";
    case Kind::kUnknownOp: return str_cat("no TOSA 1.0 lowering for op '", node.op, "'");
    case Kind::kOpDtype:
      return str_cat("TOSA 1.0 has no ", dt, " form of '", node.op, "' (", entry ? entry->tosa : "", "; ", where,
                     " is ", dt, ")");
    case Kind::kIndexDtype:
      return str_cat("TOSA 1.0 ", entry ? entry->tosa : "GATHER", " takes i32 indices only (", where, " is ", dt, ")");
    case Kind::kConditionDtype: return str_cat("the condition of 'where' must be bool (", where, " is ", dt, ")");
    case Kind::kNode: return entry && entry->check ? entry_check(g, node, *entry) : "";
  }
  return "";
}

std::string tosa_node_label(const graph::Node& node) { return str_cat("node '", node.name, "' (", node.op, "): "); }

}  // namespace gpuu::vgf
