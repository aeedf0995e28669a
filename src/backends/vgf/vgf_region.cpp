// Region -> TOSA -> SPIR-V -> VGF (the way back is vgf/vgf_graph.h).
#include "backends/vgf/vgf_region.h"

#include <algorithm>

#include "kernels/custom_shader.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"

namespace gpuu::vgf {
namespace {

Result<graph::DType> dtype_of_tosa(TosaElementType t) {
  graph::DType d;
  if (tosa_to_dtype(t, &d)) return d;
  return err(StatusCode::kUnsupported, "TOSA element type ", static_cast<int>(t), " has no gpuu dtype");
}

// A custom shader region: one COMPUTE segment whose storage buffers are the
// node's inputs and outputs at the bindings its attributes name.
Result<VgfFile> compute_vgf_from_region(const graph::Graph& region) {
  const graph::Node& node = region.node(0);
  graph::Node compiled = node;
  GPUU_ASSIGN_OR_RETURN(compiled.attrs, kernels::attrs_with_spirv(node));
  GPUU_ASSIGN_OR_RETURN(kernels::CustomShader shader, kernels::parse_custom_shader(compiled));
  VgfFile file;
  std::string name = shader.operator_name.empty() ? node.name : shader.operator_name;
  file.modules.push_back(Module::with_spirv(ModuleType::kCompute, name, shader.entry_point, shader.spirv));
  Segment segment;
  segment.type = ModuleType::kCompute;
  segment.name = "compute_segment_0";
  DescriptorSetInfo set;
  size_t input_index = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<graph::ValueId>& ids = pass == 0 ? node.inputs : node.outputs;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0) continue;
      const graph::Value& v = region.value(ids[i]);
      if (v.constant >= 0) {
        return err(StatusCode::kUnsupported, "custom shader '", node.name, "': constant input '", v.name,
                   "' cannot be a VGF COMPUTE segment input (pass it as a graph input)");
      }
      Resource r;
      r.category = pass == 0 ? ResourceCategory::kInput : ResourceCategory::kOutput;
      r.vk_descriptor_type = kVkDescriptorTypeStorageBuffer;
      r.vk_format = vk_format_of(v.dtype);
      r.shape = v.shape;
      file.resources.push_back(r);
      uint32_t binding = pass == 0 ? shader.input_bindings[input_index++] : shader.output_bindings[i];
      BindingSlot slot{binding, static_cast<uint32_t>(file.resources.size() - 1)};
      set.bindings.push_back(slot);
      (pass == 0 ? segment.inputs : segment.outputs).push_back(slot);
      (pass == 0 ? file.sequence.inputs : file.sequence.outputs).push_back(slot);
      (pass == 0 ? file.sequence.input_names : file.sequence.output_names).push_back(v.name);
    }
  }
  segment.descriptor_sets.push_back(set);
  segment.dispatch_shape = kernels::custom_dispatch(shader, graph::shape_numel(region.value(node.outputs[0]).shape));
  file.sequence.segments.push_back(segment);
  GPUU_RETURN_IF_ERROR(validate_vgf(file));
  return file;
}

}  // namespace

Result<VgfFile> vgf_from_region(const graph::Graph& region) {
  if (region.nodes().size() == 1 && region.node(0).op == "custom_shader") return compute_vgf_from_region(region);
  GPUU_ASSIGN_OR_RETURN(TosaGraph tosa, lower_to_tosa(region));
  return vgf_from_tosa(tosa);
}

Result<VgfFile> vgf_from_tosa(const TosaGraph& tosa, std::vector<const TosaConstant*>* record_sources) {
  GPUU_ASSIGN_OR_RETURN(std::vector<uint32_t> spirv, emit_tosa_module(tosa));
  VgfFile file;
  file.modules.push_back(Module::with_spirv(ModuleType::kGraph, "graph_partition_0", tosa.entry_point, spirv));
  Segment segment;
  segment.type = ModuleType::kGraph;
  segment.name = "graph_segment_0";
  segment.module_index = 0;
  DescriptorSetInfo set;
  if (record_sources) record_sources->clear();
  // Graph constants first (model-converter's order), their ids = constant indices.
  std::vector<const TosaConstant*> graph_constants;
  for (const TosaConstant& c : tosa.constants) {
    if (c.storage == TosaConstantStorage::kGraphConstant) graph_constants.push_back(&c);
  }
  std::sort(graph_constants.begin(), graph_constants.end(),
            [](const TosaConstant* a, const TosaConstant* b) { return a->graph_constant_id < b->graph_constant_id; });
  for (size_t i = 0; i < graph_constants.size(); ++i) {
    const TosaConstant& c = *graph_constants[i];
    if (c.graph_constant_id != i) {
      return err(StatusCode::kInternal, "graph constant ids are not 0..n-1 (", c.graph_constant_id, " at ", i, ")");
    }
    const TosaTensor& t = tosa.tensor(c.tensor);
    GPUU_ASSIGN_OR_RETURN(graph::DType dtype, dtype_of_tosa(t.type));
    Resource r;
    r.category = ResourceCategory::kConstant;
    r.vk_descriptor_type = kNoDescriptorType;
    r.vk_format = vk_format_of(dtype);
    r.shape = t.shape;
    file.resources.push_back(r);
    file.constants.push_back(Constant{static_cast<uint32_t>(file.resources.size() - 1), -1, c.data});
    if (record_sources) record_sources->push_back(&c);
    segment.constants.push_back(static_cast<uint32_t>(i));
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto& interfaces = pass == 0 ? tosa.inputs : tosa.outputs;
    for (const TosaInterface& io : interfaces) {
      const TosaTensor& t = tosa.tensor(io.tensor);
      GPUU_ASSIGN_OR_RETURN(graph::DType dtype, dtype_of_tosa(t.type));
      Resource r;
      r.category = pass == 0 ? ResourceCategory::kInput : ResourceCategory::kOutput;
      r.vk_descriptor_type = kVkDescriptorTypeTensorArm;
      r.vk_format = vk_format_of(dtype);
      r.shape = t.shape;
      file.resources.push_back(r);
      BindingSlot slot{io.binding, static_cast<uint32_t>(file.resources.size() - 1)};
      set.bindings.push_back(slot);
      (pass == 0 ? segment.inputs : segment.outputs).push_back(slot);
      (pass == 0 ? file.sequence.inputs : file.sequence.outputs).push_back(slot);
      (pass == 0 ? file.sequence.input_names : file.sequence.output_names).push_back(io.name);
    }
  }
  segment.descriptor_sets.push_back(set);
  file.sequence.segments.push_back(segment);
  GPUU_RETURN_IF_ERROR(validate_vgf(file));
  return file;
}

}  // namespace gpuu::vgf
