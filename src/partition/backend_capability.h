// What a backend declares to the partitioner: its id, its default cost per
// node, its check of a node and, per op, what it takes. Each backend owns its
// declaration; the partitioner works over any ordered list of them plus the
// CPU fallback, which takes everything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace gpuu::partition {

// Backend ids, as written into program files, logs and the explain report.
// VGF and Vulkan are named here only because the RFC policies vgf_first and
// vulkan_first name them; any other id works the same.
inline constexpr const char* kVgfId = "VgfBackend";
inline constexpr const char* kVulkanId = "VulkanBackend";
inline constexpr const char* kCpuId = "CpuFallback";

// Why a backend refuses a node, compact enough to compute for every node of a
// large graph; the capability's describe() turns it into text only when asked.
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

  // A refusal about tensor `slot` of a node (an output when `is_output`).
  static Verdict at(Kind kind, bool is_output, size_t slot, graph::DType dtype) {
    Verdict v;
    v.kind = kind;
    v.is_output = is_output;
    v.slot = static_cast<int32_t>(slot);
    v.dtype = dtype;
    return v;
  }
};

// The walk every backend's tensor check makes: each present input, then each
// output, in order; an id naming no value is kNoSuchValue, otherwise
// `check(value, is_output, slot)` decides. The first refusal, or ok.
template <typename Check>
Verdict check_node_tensors(const graph::Graph& g, const graph::Node& node, Check check) {
  auto one = [&](graph::ValueId id, bool is_output, size_t slot) -> Verdict {
    if (id < 0 || static_cast<size_t>(id) >= g.values().size()) {
      return Verdict::at(Verdict::Kind::kNoSuchValue, is_output, slot, graph::DType::kF32);
    }
    return check(g.value(id), is_output, slot);
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNone) continue;  // an optional input left out
    Verdict v = one(node.inputs[i], false, i);
    if (!v.ok()) return v;
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Verdict v = one(node.outputs[i], true, i);
    if (!v.ok()) return v;
  }
  return Verdict{};
}

class BackendCapability {
 public:
  virtual ~BackendCapability() = default;
  virtual const char* id() const = 0;
  // Estimated cost of one node when the cost model names no other (units of
  // the cost model: VGF 1, Vulkan 2, the CPU 10).
  virtual double default_cost() const = 0;
  // The ops one node of which costs other than default_cost() on this
  // backend, with that cost (VGF: conv2d 4, where the tensor path is widest
  // ahead). A table rather than a function of the op, so that the cost model
  // and the explain report can list them; the user's per-op costs win.
  virtual std::vector<std::pair<std::string, double>> op_costs() const { return {}; }
  // Whether the backend takes node `node` of `graph` (ids already vetted).
  virtual Verdict check(const graph::Graph& graph, graph::NodeId node) const = 0;
  // `verdict` (from check()) as text naming the node and tensor at fault.
  virtual std::string describe(const graph::Graph& graph, graph::NodeId node, const Verdict& verdict) const = 0;
  // For docs and gpuu-inspect --ops: the dtypes of the input that decides
  // (empty: the backend does not take the op), and how the backend expresses
  // the op ("" when it has nothing to say).
  virtual std::vector<graph::DType> declared_dtypes(std::string_view op) const = 0;
  virtual std::string op_form(std::string_view /*op*/) const { return ""; }
};

}  // namespace gpuu::partition
