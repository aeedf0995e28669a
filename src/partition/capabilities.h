// Backend capabilities: which nodes each backend can take and, when it cannot,
// why. Built-in tables for VGF (what TOSA 1.0 expresses), Vulkan (gpuu's own
// kernels) and the CPU fallback (everything), narrowed by the user with
// deny(backend, op) and pin(node, backend).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "partition/partition_result.h"

namespace gpuu::partition {

// The domain_name that marks a custom_shader node as a Vulkan compute shader
// (seed vgf-custom-shader-conversion.txt).
inline constexpr const char* kVulkanCustomShaderDomain = "com.arm.VulkanCustomShader";

// Why a backend's table refuses a node, compact enough to compute for every
// node of a large graph; describe() turns it into text only when asked.
struct Verdict {
  enum class Kind : uint8_t {
    kOk,
    kUnknownOp,        // the op is not in the backend's table
    kNoSuchValue,      // an input/output id names no value of the graph
    kTensorDtype,      // a tensor of a dtype the backend has no storage for (TOSA: i64)
    kOpDtype,          // the op exists, but not for this dtype
    kIndexDtype,       // gather/index_select indices of the wrong dtype
    kConditionDtype,   // where's condition is not bool
    kRank,             // TOSA 1.0 tensors have rank <= 6
    kNotShaderDomain,  // custom_shader whose domain_name is not com.arm.VulkanCustomShader
    kDenied,           // deny(backend, op)
    kBackendRefused,   // the backend's own check (narrow()) refused the node
  };
  Kind kind = Kind::kOk;
  bool is_output = false;  // the tensor at fault is an output (else an input)
  int32_t slot = 0;        // its index among the node's inputs or outputs
  graph::DType dtype = graph::DType::kF32;
  int64_t rank = 0;

  bool ok() const { return kind == Kind::kOk; }
};

struct OpRule;  // an entry of the built-in tables (capabilities.cpp)

struct Support {
  bool ok = true;
  std::string reason;  // empty when ok
};

struct Denial {
  Backend backend = Backend::kVgf;
  std::string op;
};

struct Pin {
  std::string node;  // node name
  Backend backend = Backend::kCpu;
};

// A backend's own word on a node: "" when it takes it, else why not.
using BackendCheck = std::function<std::string(const graph::Graph&, const graph::Node&)>;

class Capabilities {
 public:
  // The built-in tables, with nothing denied or pinned.
  Capabilities() = default;

  // `backend` will not take any node whose op is `op`. The CPU fallback takes
  // everything and cannot be denied an op; an empty op is refused too.
  Status deny(Backend backend, std::string op);
  // Node `node_name` goes to `backend` whatever the policy (CPU included). The
  // partitioner refuses a pin the backend cannot honour, a name no node has,
  // and a node pinned to two different backends.
  Status pin(std::string node_name, Backend backend);

  // Narrows `backend` (VGF or Vulkan) to what its implementation says it can
  // run: the export path hands in the backends' own checks (the Vulkan
  // kernels' table, say), so a region is never given to a backend that would
  // refuse it at init. Applied after the built-in table.
  void narrow(Backend backend, BackendCheck check);
  // "" unless a narrow() check refuses the node (then its reason).
  std::string backend_refusal(Backend backend, const graph::Graph& graph, graph::NodeId node) const;

  const std::vector<Denial>& denials() const { return denials_; }
  const std::vector<Pin>& pins() const { return pins_; }
  bool is_denied(Backend backend, std::string_view op) const;

  // What the backend's own table says about node `node` (deny and pins ignored).
  static Verdict builtin(Backend backend, const graph::Graph& graph, graph::NodeId node);
  // The table entry for `op` (nullptr: an op no GPU backend knows), so that a
  // caller checking many nodes looks each distinct op up once ...
  static const OpRule* find_op_rule(std::string_view op);
  // ... and then asks builtin() with it; `rule` must be find_op_rule(node's op).
  static Verdict builtin(Backend backend, const graph::Graph& graph, graph::NodeId node, const OpRule* rule);
  // The table, then narrow(), then deny().
  Verdict verdict(Backend backend, const graph::Graph& graph, graph::NodeId node) const;
  // verdict() as text: "TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)".
  Support support(Backend backend, const graph::Graph& graph, graph::NodeId node) const;
  static std::string describe(Backend backend, const graph::Graph& graph, graph::NodeId node, const Verdict& verdict);

  // An op name of the shared op list (unknown ops go to the CPU alone).
  static bool is_known_op(std::string_view op);
  // What the built-in table declares for `op` on `backend` (VGF or Vulkan):
  // the dtypes of the input that decides (empty: the backend does not take
  // the op), and how VGF expresses it in TOSA. For docs and gpuu-inspect --ops.
  static std::vector<graph::DType> declared_dtypes(Backend backend, std::string_view op);
  static std::string tosa_form(std::string_view op);
  // op "custom_shader" with domain_name com.arm.VulkanCustomShader: such a node
  // always gets a region of its own.
  static bool is_custom_shader(const graph::Node& node);

 private:
  std::vector<Denial> denials_;
  std::vector<Pin> pins_;
  BackendCheck checks_[2];  // by Backend::kVgf, kVulkan
};

}  // namespace gpuu::partition
