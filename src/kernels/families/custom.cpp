// The custom_shader op: a compute shader the model brings (SPIR-V), bound to
// its inputs and outputs as storage buffers of descriptor set 0.
#include <functional>

#include "kernels/custom_shader.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

std::string check_custom(const graph::Graph&, const graph::Node& n) {
  Result<CustomShader> s = parse_custom_shader(n);
  return s.ok() ? "" : s.status().message();
}

Status lower_custom(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(CustomShader shader, parse_custom_shader(n));
  if (shader.language != "SPIR-V") {
    return err(StatusCode::kInvalidArgument, "custom shader '", n.name,
               "' is GLSL: it is compiled to SPIR-V at export, and this blob holds none");
  }
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the words: one module per distinct shader
  for (uint32_t w : shader.spirv) hash = (hash ^ w) * 1099511628211ull;
  std::string name = "custom:" + shader.operator_name + ":" + std::to_string(hash);
  lc.kernels.add_spirv(name, shader.spirv);
  std::vector<Binding> bindings(shader.input_bindings.size() + shader.output_bindings.size());
  size_t k = 0;
  for (graph::ValueId in : n.inputs) {
    if (in >= 0) bindings[shader.input_bindings[k++]] = Binding{lc.tensor(in).range, false};
  }
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    bindings[shader.output_bindings[o]] = Binding{lc.tensor(n.outputs[o]).range, true};
  }
  KernelKey key{name, {}, static_cast<uint32_t>(bindings.size()), 0, shader.entry_point};
  GPUU_ASSIGN_OR_RETURN(const Kernel* kernel, lc.kernels.get(key));
  Step step;
  step.label = n.name;
  step.work.ops = n.op;
  step.kernel = kernel;
  step.bindings = std::move(bindings);
  std::array<uint32_t, 3> groups = custom_dispatch(shader, graph::shape_numel(lc.tensor(n.outputs[0]).shape));
  for (int i = 0; i < 3; ++i) step.groups[i] = groups[static_cast<size_t>(i)];
  lc.sequence.add(std::move(step));
  return Status::Ok();
}

}  // namespace

void add_custom_kernels(std::vector<OpKernel>& table) {
  table.push_back(OpKernel{"custom_shader", kAllDTypes, check_custom, lower_custom});
}

}  // namespace gpuu::kernels
