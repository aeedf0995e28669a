// The Vulkan declaration: each kernel entry's dtypes for its deciding input,
// then the kernel's own check. Nothing here restates what a kernel takes.
#include "backends/vulkan/vulkan_capability.h"

#include "base/status.h"
#include "kernels/op_table.h"
#include "partition/capabilities.h"

namespace gpuu::vulkan {
namespace {

using graph::DType;
using partition::Verdict;

constexpr auto at = &Verdict::at;

// Every tensor: its id resolves and the kernels have storage for its dtype
// (i8 and i16 only for ops whose kernels take them).
Verdict check_tensors(const graph::Graph& g, const graph::Node& node, const kernels::OpKernel& kernel) {
  kernels::DTypeSet stored = kernels::kStoredDTypes | (kernel.dtypes & (kernels::kI8DType | kernels::kI16DType));
  return partition::check_node_tensors(g, node, [&](const graph::Value& value, bool is_output, size_t slot) {
    if (!(kernels::dtype_bit(value.dtype) & stored)) {
      return at(Verdict::Kind::kTensorDtype, is_output, slot, value.dtype);
    }
    return Verdict{};
  });
}

// The BackendCapability overrides, declared as VgfCapability's are; each backend answers its own way.
class VulkanCapability final : public partition::BackendCapability {
 public:
  const char* id() const override { return partition::kVulkanId; }
  // One dispatch per op: dearer than VGF's fused TOSA graphs, cheaper than the CPU.
  double default_cost() const override { return 2.0; }
  // Convolutions and matrix products: shader kernels, behind VGF's tensor path.
  // Attention: one kernel that costs about one of the two GEMMs it replaces
  // (benchmarks/attention), against VGF's two MATMULs and a softmax.
  std::vector<std::pair<std::string, double>> op_costs() const override {
    return {{"conv2d", 8.0}, {"matmul", 8.0}, {"linear", 8.0}, {"scaled_dot_product_attention", 8.0}};
  }

  Verdict check(const graph::Graph& graph, graph::NodeId node_id) const override {
    const graph::Node& node = graph.node(node_id);
    const kernels::OpKernel* kernel = kernels::find_op_kernel(node.op);
    if (!kernel) return at(Verdict::Kind::kUnknownOp, false, 0, DType::kF32);
    Verdict v = check_tensors(graph, node, *kernel);
    if (!v.ok()) return v;
    if (node.op == "custom_shader" && !partition::Capabilities::is_custom_shader(node)) {
      return at(Verdict::Kind::kNotShaderDomain, false, 0, DType::kF32);
    }
    auto slot = static_cast<size_t>(kernel->deciding_input);
    if (slot < node.inputs.size() && node.inputs[slot] != graph::kNone) {
      DType dtype = graph.value(node.inputs[slot]).dtype;
      if (!(kernels::dtype_bit(dtype) & kernel->dtypes)) return at(Verdict::Kind::kOpDtype, false, slot, dtype);
    }
    if (!kernels::vulkan_supports(graph, node).empty()) return at(Verdict::Kind::kBackendRefused, false, 0, DType::kF32);
    return Verdict{};
  }

  std::vector<DType> declared_dtypes(std::string_view op) const override {
    std::vector<DType> out;
    const kernels::OpKernel* kernel = kernels::find_op_kernel(std::string(op));
    if (!kernel) return out;
    for (int d = 0; d < graph::kDTypeCount; ++d) {
      if (kernel->dtypes & kernels::dtype_bit(static_cast<DType>(d))) out.push_back(static_cast<DType>(d));
    }
    return out;
  }

  std::string describe(const graph::Graph& graph, graph::NodeId node_id, const Verdict& v) const override {
    const graph::Node& node = graph.node(node_id);
    std::string where = str_cat(v.is_output ? "output " : "input ", v.slot, " of ", node.name);
    const char* dt = graph::dtype_name(v.dtype);
    switch (v.kind) {
      case Verdict::Kind::kOk: return "";
      case Verdict::Kind::kUnknownOp: return str_cat("no Vulkan kernel for op '", node.op, "'");
      case Verdict::Kind::kNoSuchValue: return str_cat(where, " names no value of the graph");
      case Verdict::Kind::kTensorDtype: return str_cat("no Vulkan kernel for ", dt, " tensors (", where, " is ", dt, ")");
      case Verdict::Kind::kOpDtype:
        return str_cat("no Vulkan kernel for '", node.op, "' on ", dt, " (", where, " is ", dt, ")");
      case Verdict::Kind::kNotShaderDomain: return partition::describe_not_shader_domain(node);
      case Verdict::Kind::kBackendRefused: return kernels::vulkan_supports(graph, node);
      default: break;  // kinds the kernel table never gives; kDenied is worded by Capabilities
    }
    return "unsupported";
  }
};

}  // namespace

const partition::BackendCapability& vulkan_capability() {
  static const VulkanCapability capability;
  return capability;
}

}  // namespace gpuu::vulkan
