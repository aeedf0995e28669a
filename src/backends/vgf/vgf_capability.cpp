// VGF's declaration to the partitioner, read from the op table beside the
// TOSA lowering (vgf/tosa_op_table.h): every tensor of a dtype TOSA 1.0 has
// and of rank <= 6, then the op's entry (form, declared dtypes, node check).
#include "backends/vgf/vgf_capability.h"

#include "base/status.h"
#include "partition/capabilities.h"
#include "vgf/tosa_graph.h"
#include "vgf/tosa_op_table.h"

namespace gpuu::vgf {
namespace {

using graph::DType;
using partition::Verdict;

constexpr auto at = &Verdict::at;

// Every tensor: its id resolves, TOSA has its dtype (i64 as i48 where
// carries_i48 says), its rank is within TOSA's limit.
Verdict check_tensors(const graph::Graph& g, const graph::Node& node) {
  return partition::check_node_tensors(g, node, [&](const graph::Value& value, bool is_output, size_t slot) {
    const bool i48 = value.dtype == DType::kI64 && carries_i48(node.op, is_output, slot);
    if (!i48 && !(tosa_dtype_bit(value.dtype) & kTosaTensorDTypes)) {
      return at(Verdict::Kind::kTensorDtype, is_output, slot, value.dtype);
    }
    if (value.shape.size() > kTosaMaxRank) {
      Verdict v = at(Verdict::Kind::kRank, is_output, slot, value.dtype);
      v.rank = static_cast<int64_t>(value.shape.size());
      return v;
    }
    return Verdict{};
  });
}

// The table's refusal as the partitioner's verdict, and back for describe().
Verdict to_verdict(const TosaRefusal& r) {
  switch (r.kind) {
    case TosaRefusal::Kind::kOk: return Verdict{};
    case TosaRefusal::Kind::kUnknownOp: return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
    case TosaRefusal::Kind::kOpDtype: return at(Verdict::Kind::kOpDtype, false, static_cast<size_t>(r.slot), r.dtype);
    case TosaRefusal::Kind::kIndexDtype:
      return at(Verdict::Kind::kIndexDtype, false, static_cast<size_t>(r.slot), r.dtype);
    case TosaRefusal::Kind::kConditionDtype:
      return at(Verdict::Kind::kConditionDtype, false, static_cast<size_t>(r.slot), r.dtype);
    case TosaRefusal::Kind::kNode: return at(Verdict::Kind::kBackendRefused, false, 0, DType::kF32);
  }
  return Verdict{};
}
TosaRefusal to_refusal(TosaRefusal::Kind kind, const Verdict& v) {
  TosaRefusal r;
  r.kind = kind;
  r.slot = v.slot;
  r.dtype = v.dtype;
  return r;
}

class VgfCapability final : public partition::BackendCapability {
 public:
  const char* id() const override { return partition::kVgfId; }
  // TOSA graphs whose elementwise chains fuse: the cheapest GPU node.
  double default_cost() const override { return 1.0; }
  // Convolutions and matrix products: the data-graph path is built for them.
  // Attention lowers to two MATMULs around a softmax decomposition.
  std::vector<std::pair<std::string, double>> op_costs() const override {
    return {{"conv2d", 4.0}, {"matmul", 4.0}, {"linear", 4.0}, {"scaled_dot_product_attention", 10.0}};
  }

  Verdict check(const graph::Graph& graph, graph::NodeId node_id) const override {
    const graph::Node& node = graph.node(node_id);
    const TosaOpEntry* entry = find_tosa_op(node.op);
    if (!entry) return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
    Verdict v = check_tensors(graph, node);
    if (!v.ok()) return v;
    if (entry->form == TosaOpForm::kCustomShader && !partition::Capabilities::is_custom_shader(node)) {
      return at(Verdict::Kind::kNotShaderDomain, false, 0, DType::kF32);
    }
    return to_verdict(check_tosa_node(graph, node, TosaDTypeRule::kDeclared));
  }

  std::vector<DType> declared_dtypes(std::string_view op) const override {
    std::vector<DType> out;
    const TosaOpEntry* entry = find_tosa_op(op);
    if (!entry) return out;
    for (int d = 0; d < graph::kDTypeCount; ++d) {
      if (entry->dtypes & tosa_dtype_bit(static_cast<DType>(d))) out.push_back(static_cast<DType>(d));
    }
    return out;
  }

  std::string op_form(std::string_view op) const override {
    const TosaOpEntry* entry = find_tosa_op(op);
    return entry && entry->dtypes ? entry->tosa : "";
  }

  std::string describe(const graph::Graph& graph, graph::NodeId node_id, const Verdict& v) const override {
    const graph::Node& node = graph.node(node_id);
    std::string where = str_cat(v.is_output ? "output " : "input ", v.slot, " of ", node.name);
    const char* dt = graph::dtype_name(v.dtype);
    auto table_says = [&](TosaRefusal::Kind kind) { return describe_tosa_refusal(graph, node, to_refusal(kind, v)); };
    switch (v.kind) {
      case Verdict::Kind::kOk: return "";
      case Verdict::Kind::kUnknownOp: return table_says(TosaRefusal::Kind::kUnknownOp);
      case Verdict::Kind::kNoSuchValue: return str_cat(where, " names no value of the graph");
      case Verdict::Kind::kTensorDtype:
        return str_cat("TOSA 1.0 has no ", dt, " tensors (", where, " is ", dt, ")");
      case Verdict::Kind::kOpDtype: return table_says(TosaRefusal::Kind::kOpDtype);
      case Verdict::Kind::kIndexDtype: return table_says(TosaRefusal::Kind::kIndexDtype);
      case Verdict::Kind::kConditionDtype: return table_says(TosaRefusal::Kind::kConditionDtype);
      case Verdict::Kind::kRank:
        return str_cat("TOSA 1.0 tensors have rank <= ", kTosaMaxRank, " (", where, " has rank ", v.rank, ")");
      case Verdict::Kind::kNotShaderDomain: return partition::describe_not_shader_domain(node);
      // Worded as lower_to_tosa words it, as the backend's own check (narrow()) does.
      case Verdict::Kind::kBackendRefused: return tosa_node_label(node) + table_says(TosaRefusal::Kind::kNode);
      case Verdict::Kind::kDenied: break;  // worded by Capabilities
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
