// run_node (input checks, registry inference, kernel dispatch) and run_graph
// (whole graphs in node order) for the CPU fallback.
#include "backends/cpu/cpu_kernels.h"

#include <map>
#include <new>
#include <string>
#include <string_view>

#include "backends/cpu/kernel_support.h"
#include "graph/op_registry.h"
#include "graph/verifier.h"

namespace gpuu::cpu {

using graph::kNone;

namespace {

// cpu_op_kernels() by op name (the first entry, should a family repeat one).
const std::map<std::string_view, Kernel, std::less<>>& kernel_by_op() {
  static const std::map<std::string_view, Kernel, std::less<>> table = [] {
    std::map<std::string_view, Kernel, std::less<>> t;
    for (const CpuOpKernel& k : cpu_op_kernels()) t.emplace(k.op, k.run);
    return t;
  }();
  return table;
}

template <typename... Parts>
Status node_error(const graph::Node& node, const Parts&... parts) {
  return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): ", parts...);
}

}  // namespace

const std::vector<CpuOpKernel>& cpu_op_kernels() {
  static const std::vector<CpuOpKernel> table = [] {
    std::vector<CpuOpKernel> t;
    for (auto add_family : {add_elementwise_kernels, add_linalg_kernels, add_conv_pool_kernels, add_spatial_kernels,
                            add_reduce_norm_kernels, add_shape_kernels, add_index_kernels, add_int_quant_kernels}) {
      add_family(t);
    }
    return t;
  }();
  return table;
}

bool cpu_supports_op(std::string_view op) { return kernel_by_op().count(op) != 0; }

Status run_node(const graph::Graph& graph, const graph::Node& node, const std::vector<const HostTensor*>& inputs,
                std::vector<HostTensor>* outputs) {
  if (node.op == "custom_shader") {
    return err(StatusCode::kUnsupported, "node '", node.name,
               "' (custom_shader): custom shaders run only on a GPU backend; the CPU fallback cannot execute them");
  }
  const graph::OpSchema* schema = graph::find_op(node.op);
  if (!schema) return node_error(node, "unknown op '", node.op, "'");
  auto kernel = kernel_by_op().find(node.op);
  if (kernel == kernel_by_op().end()) {
    return err(StatusCode::kUnsupported, "node '", node.name, "' (", node.op, "): no CPU kernel for this op");
  }
  if (inputs.size() != node.inputs.size()) {
    return node_error(node, "got ", inputs.size(), " input tensors for the node's ", node.inputs.size(), " inputs");
  }
  // Each tensor must be well formed and be what the graph declares for its
  // value; then the registry's inference on the graph holds for the tensors too.
  std::vector<std::string> descs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    graph::ValueId id = node.inputs[i];
    descs[i] = "input " + std::to_string(i) + " (" + schema->input_name(i);
    if (id == kNone) {
      descs[i] += ", absent)";
      if (inputs[i]) return node_error(node, descs[i], " is left out of the node, but a tensor was passed for it");
      continue;
    }
    if (id < 0 || static_cast<size_t>(id) >= graph.values().size()) {
      return node_error(node, descs[i], ") is value id ", id, ", but the graph has ", graph.values().size(), " values");
    }
    const graph::Value& value = graph.value(id);
    descs[i] += " '" + value.name + "')";
    if (!inputs[i]) return node_error(node, descs[i], " has no tensor (nullptr)");
    GPUU_RETURN_IF_ERROR(inputs[i]->check("node '" + node.name + "' (" + node.op + "): " + descs[i]));
    if (!inputs[i]->matches(value)) {
      return node_error(node, descs[i], " is ", inputs[i]->type_string(), ", but the graph declares ",
                        type_string(value.dtype, value.shape));
    }
  }
  std::vector<graph::Value> out_types;
  GPUU_RETURN_IF_ERROR(graph::infer(graph, node, &out_types));
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(node));
  KernelArgs args{node, attrs, inputs, out_types, descs};
  std::vector<HostTensor> produced;
  // Shapes within the graph limits can still exceed host memory: report it
  // rather than let std::bad_alloc end the process.
  try {
    GPUU_RETURN_IF_ERROR(kernel->second(args, &produced));
  } catch (const std::bad_alloc&) {
    return err(StatusCode::kOutOfMemory, "node '", node.name, "' (", node.op, "): out of host memory for ",
               type_string(out_types.empty() ? graph::DType::kF32 : out_types[0].dtype,
                           out_types.empty() ? graph::Shape{} : out_types[0].shape));
  }
  // A kernel that disagrees with the registry is a bug here, not bad input.
  if (produced.size() != out_types.size()) {
    return err(StatusCode::kInternal, "node '", node.name, "' (", node.op, "): the CPU kernel made ", produced.size(),
               " outputs, the registry infers ", out_types.size());
  }
  for (size_t i = 0; i < produced.size(); ++i) {
    if (!produced[i].matches(out_types[i]) || !produced[i].check("output").ok()) {
      return err(StatusCode::kInternal, "node '", node.name, "' (", node.op, "): the CPU kernel made output ", i, " as ",
                 produced[i].type_string(), ", the registry infers ", type_string(out_types[i].dtype, out_types[i].shape));
    }
  }
  *outputs = std::move(produced);
  return Status::Ok();
}

namespace {

Result<std::vector<HostTensor>> run_verified_graph(const graph::Graph& graph, const std::vector<HostTensor>& inputs) {
  const auto& graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size()) {
    return err(StatusCode::kInvalidArgument, "the graph takes ", graph_inputs.size(), " inputs, got ", inputs.size(),
               " tensors");
  }
  const size_t n_values = graph.values().size();
  // live[id] is the tensor of value id while it is still needed: the caller's
  // tensor for a graph input, else one held in `owned`.
  std::vector<const HostTensor*> live(n_values, nullptr);
  std::vector<HostTensor> owned(n_values);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const graph::Value& v = graph.value(graph_inputs[i]);
    std::string what = "graph input " + std::to_string(i) + " '" + v.name + "'";
    GPUU_RETURN_IF_ERROR(inputs[i].check(what));
    if (!inputs[i].matches(v)) {
      return err(StatusCode::kInvalidArgument, what, " must be ", type_string(v.dtype, v.shape), ", got ",
                 inputs[i].type_string());
    }
    live[static_cast<size_t>(graph_inputs[i])] = &inputs[i];
  }
  for (const graph::Constant& c : graph.constants()) {
    const graph::Value& v = graph.value(c.value);
    GPUU_ASSIGN_OR_RETURN(owned[static_cast<size_t>(c.value)], HostTensor::from_blob(v.dtype, v.shape, c.data));
    live[static_cast<size_t>(c.value)] = &owned[static_cast<size_t>(c.value)];
  }

  // The last node reading each value; graph outputs are kept to the end.
  const auto n_nodes = static_cast<int64_t>(graph.nodes().size());
  std::vector<int64_t> last_use(n_values, -1);
  for (int64_t n = 0; n < n_nodes; ++n) {
    for (graph::ValueId id : graph.node(static_cast<graph::NodeId>(n)).inputs) {
      if (id != kNone) last_use[static_cast<size_t>(id)] = n;
    }
  }
  for (graph::ValueId id : graph.outputs()) last_use[static_cast<size_t>(id)] = n_nodes;
  auto release_after = [&](int64_t n, graph::ValueId id) {
    auto v = static_cast<size_t>(id);
    if (last_use[v] <= n && live[v] == &owned[v]) {
      owned[v] = HostTensor();
      live[v] = nullptr;
    }
  };

  for (int64_t n = 0; n < n_nodes; ++n) {
    const graph::Node& node = graph.node(static_cast<graph::NodeId>(n));
    std::vector<const HostTensor*> args(node.inputs.size(), nullptr);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != kNone) args[i] = live[static_cast<size_t>(node.inputs[i])];
    }
    std::vector<HostTensor> results;
    GPUU_RETURN_IF_ERROR(run_node(graph, node, args, &results));
    for (size_t k = 0; k < results.size(); ++k) {
      auto v = static_cast<size_t>(node.outputs[k]);
      owned[v] = std::move(results[k]);
      live[v] = &owned[v];
      release_after(n, node.outputs[k]);  // an output nothing reads
    }
    for (graph::ValueId id : node.inputs) {
      if (id != kNone) release_after(n, id);
    }
  }

  std::vector<HostTensor> result;
  result.reserve(graph.outputs().size());
  for (graph::ValueId id : graph.outputs()) result.push_back(*live[static_cast<size_t>(id)]);
  return result;
}

}  // namespace

Result<std::vector<HostTensor>> run_graph(const graph::Graph& graph, const std::vector<HostTensor>& inputs) {
  GPUU_RETURN_IF_ERROR(graph::verify(graph));
  try {
    return run_verified_graph(graph, inputs);
  } catch (const std::bad_alloc&) {  // copies of constants and outputs (kernels catch their own)
    return err(StatusCode::kOutOfMemory, "out of host memory while running the graph on the CPU");
  }
}

}  // namespace gpuu::cpu
