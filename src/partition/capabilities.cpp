// The generic side of capabilities: a list of backend declarations (each
// backend's table lives in its own folder), narrowed by deny/pin/narrow; the
// CPU fallback takes everything.
#include "partition/capabilities.h"

#include <algorithm>
#include <variant>

#include "graph/op_registry.h"

namespace gpuu::partition {

namespace {

Verdict at(Verdict::Kind kind) {
  Verdict v;
  v.kind = kind;
  return v;
}

}  // namespace

std::string describe_not_shader_domain(const graph::Node& node) {
  std::string domain = "<none>";
  auto it = node.attrs.find("domain_name");
  if (it != node.attrs.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) domain = "'" + *s + "'";
  }
  return str_cat("custom_shader ", node.name, " has domain_name ", domain, ", not '", kVulkanCustomShaderDomain, "'");
}

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

bool Capabilities::is_known_op(std::string_view op) { return graph::find_op(op) != nullptr; }

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
    return at(Verdict::Kind::kNoSuchValue);
  }
  if (backend == kCpuId) return Verdict{};
  const BackendCapability* cap = find(backend);
  if (!cap) return at(Verdict::Kind::kUnknownOp);
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
