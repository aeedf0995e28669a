// Backend capabilities: the ordered list of GPU backend declarations the
// partitioner works over (the CPU fallback takes everything), narrowed by the
// backends' own checks and by the user with deny(backend, op) and
// pin(node, backend). Backends are named by id throughout.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "partition/backend_capability.h"
#include "partition/partition_result.h"

namespace gpuu::partition {

// The domain_name that marks a custom_shader node as a Vulkan compute shader
// (seed vgf-custom-shader-conversion.txt).
inline constexpr const char* kVulkanCustomShaderDomain = "com.arm.VulkanCustomShader";

struct Support {
  bool ok = true;
  std::string reason;  // empty when ok
};

struct Denial {
  std::string backend;  // a GPU backend id
  std::string op;
};

struct Pin {
  std::string node;     // node name
  std::string backend;  // a GPU backend id or kCpuId
};

// A backend's own word on a node: "" when it takes it, else why not.
using BackendCheck = std::function<std::string(const graph::Graph&, const graph::Node&)>;

// "custom_shader n has domain_name 'x', not 'com.arm.VulkanCustomShader'":
// the words every backend uses for Verdict::Kind::kNotShaderDomain.
std::string describe_not_shader_domain(const graph::Node& node);

class Capabilities {
 public:
  // No GPU backend: everything goes to the CPU fallback. The backends'
  // declarations come from runtime::registered_capabilities() (or a list).
  Capabilities() = default;
  // The given GPU backends, in registration order (borrowed: they must
  // outlive this object); CPU is always the fallback.
  explicit Capabilities(std::vector<const BackendCapability*> backends) : backends_(std::move(backends)) {}

  const std::vector<const BackendCapability*>& backends() const { return backends_; }
  // The backend with this id (nullptr: none, or the CPU fallback).
  const BackendCapability* find(std::string_view id) const;
  // The registered ids, CPU fallback last: "VgfBackend, VulkanBackend, CpuFallback".
  std::string registered_ids() const;

  // `backend` will not take any node whose op is `op`. The CPU fallback takes
  // everything and cannot be denied an op; an empty op is refused too. Ids
  // not registered are refused by the partitioner (naming all at once).
  Status deny(std::string backend, std::string op);
  // Node `node_name` goes to `backend` whatever the policy (CPU included). The
  // partitioner refuses a pin the backend cannot honour, a name no node has,
  // and a node pinned to two different backends.
  Status pin(std::string node_name, std::string backend);

  // Narrows `backend` to what its implementation says it can run: the export
  // path hands in the backends' own checks, so a region is never given to a
  // backend that would refuse it at init. Applied after its declaration.
  void narrow(std::string backend, BackendCheck check);
  // "" unless a narrow() check refuses the node (then its reason).
  std::string backend_refusal(std::string_view backend, const graph::Graph& graph, graph::NodeId node) const;

  const std::vector<Denial>& denials() const { return denials_; }
  const std::vector<Pin>& pins() const { return pins_; }
  bool is_denied(std::string_view backend, std::string_view op) const;

  // The declaration's check, then narrow(), then deny(). kCpuId: always ok;
  // an id not registered: kUnknownOp.
  Verdict verdict(std::string_view backend, const graph::Graph& graph, graph::NodeId node) const;
  // verdict() as text: "TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)".
  Support support(std::string_view backend, const graph::Graph& graph, graph::NodeId node) const;

  // An op name of the shared op list (graph/op_registry).
  static bool is_known_op(std::string_view op);
  // op "custom_shader" with domain_name com.arm.VulkanCustomShader: such a node
  // always gets a region of its own.
  static bool is_custom_shader(const graph::Node& node);

 private:
  std::vector<const BackendCapability*> backends_;
  std::vector<Denial> denials_;
  std::vector<Pin> pins_;
  std::vector<std::pair<std::string, BackendCheck>> checks_;
};

}  // namespace gpuu::partition
