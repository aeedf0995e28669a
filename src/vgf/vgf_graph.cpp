// The gpuu graph a VGF file computes: a GRAPH segment's TOSA raised onto gpuu
// ops, a COMPUTE segment as one custom_shader node; tensor VkFormats.
#include "vgf/vgf_graph.h"

#include "base/base64.h"
#include "base/json_writer.h"
#include "graph/builder.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"

namespace gpuu::vgf {

uint32_t vk_format_of(graph::DType dtype) {
  switch (dtype) {
    case graph::DType::kF32: return 100;   // VK_FORMAT_R32_SFLOAT
    case graph::DType::kF16: return 76;    // VK_FORMAT_R16_SFLOAT
    case graph::DType::kI32: return 99;    // VK_FORMAT_R32_SINT
    case graph::DType::kI64: return 111;   // VK_FORMAT_R64_SINT
    case graph::DType::kI8: return 14;     // VK_FORMAT_R8_SINT
    case graph::DType::kI16: return 75;    // VK_FORMAT_R16_SINT
    case graph::DType::kBool: return 1000460000u;  // VK_FORMAT_R8_BOOL_ARM
  }
  return 0;
}

Result<graph::DType> dtype_of_vk_format(uint32_t vk_format) {
  for (int i = 0; i < graph::kDTypeCount; ++i) {
    if (vk_format_of(static_cast<graph::DType>(i)) == vk_format) return static_cast<graph::DType>(i);
  }
  return err(StatusCode::kUnsupported, "VkFormat ", vk_format, " is not a tensor format gpuu runs");
}

namespace {

// The inverse: a graph with one custom_shader node running the segment's module.
Result<graph::Graph> graph_from_compute_segment(const VgfFile& file, const Segment& segment, const Module& module) {
  graph::Graph g;
  std::vector<graph::ValueId> inputs;
  JsonWriter attrs;
  attrs.begin_object();
  attrs.key("entry_point").value(module.entry_point);
  attrs.key("workgroup_sizes").begin_array().value(int64_t{1}).end_array();
  attrs.key("dispatch").begin_array();
  for (uint32_t d : segment.dispatch_shape) attrs.value(static_cast<int64_t>(d == 0 ? 1 : d));
  attrs.end_array();
  attrs.key("shader_language").value("SPIR-V");
  attrs.key("shader_code").value(
      base64_encode(reinterpret_cast<const uint8_t*>(module.spirv.data()), module.spirv.size() * 4));
  for (size_t i = 0; i < segment.inputs.size(); ++i) {
    const Resource& r = file.resources.at(segment.inputs[i].mrt_index);
    GPUU_ASSIGN_OR_RETURN(graph::DType dtype, dtype_of_vk_format(r.vk_format));
    std::string name = i < file.sequence.input_names.size() && !file.sequence.input_names[i].empty()
                           ? file.sequence.input_names[i]
                           : "input_" + std::to_string(i);
    GPUU_ASSIGN_OR_RETURN(graph::ValueId id, graph::add_graph_input(g, name, dtype, r.shape));
    inputs.push_back(id);
    attrs.key("input_" + std::to_string(i) + "_binding").value(static_cast<int64_t>(segment.inputs[i].binding));
  }
  graph::AttrMap node_attrs;
  node_attrs["domain_name"] = std::string("com.arm.VulkanCustomShader");
  node_attrs["operator_name"] = module.name;
  node_attrs["num_outputs"] = static_cast<int64_t>(segment.outputs.size());
  for (size_t o = 0; o < segment.outputs.size(); ++o) {
    const Resource& r = file.resources.at(segment.outputs[o].mrt_index);
    GPUU_ASSIGN_OR_RETURN(graph::DType dtype, dtype_of_vk_format(r.vk_format));
    node_attrs["output_" + std::to_string(o) + "_shape"] = r.shape;
    node_attrs["output_" + std::to_string(o) + "_dtype"] = std::string(graph::dtype_name(dtype));
    attrs.key("output_" + std::to_string(o) + "_binding").value(static_cast<int64_t>(segment.outputs[o].binding));
  }
  attrs.end_object();
  node_attrs["implementation_attrs"] = attrs.str();
  GPUU_ASSIGN_OR_RETURN(std::vector<graph::ValueId> outs, graph::add_op(g, "custom_shader", module.name, inputs,
                                                                        node_attrs));
  for (size_t o = 0; o < outs.size(); ++o) {
    if (o < file.sequence.output_names.size() && !file.sequence.output_names[o].empty()) {
      g.mutable_value(outs[o]).name = file.sequence.output_names[o];
    }
    g.mark_output(outs[o]);
  }
  return g;
}

}  // namespace

Result<graph::Graph> graph_from_vgf(const VgfFile& file) {
  if (file.sequence.segments.size() != 1) {
    return err(StatusCode::kUnsupported, "VGF with ", file.sequence.segments.size(),
               " segments: gpuu's executor runs files of one segment");
  }
  const Segment& segment = file.sequence.segments[0];
  const Module& module = file.modules.at(segment.module_index);
  if (!module.has_code || module.code_type != CodeType::kSpirv) {
    return err(StatusCode::kUnsupported, "VGF module '", module.name, "' carries no SPIR-V (a placeholder)");
  }
  if (segment.type == ModuleType::kCompute) return graph_from_compute_segment(file, segment, module);
  GPUU_ASSIGN_OR_RETURN(TosaGraph tosa, parse_tosa_module(module.spirv.data(), module.spirv.size()));
  // Each graph constant id takes its constant record (format 0.5.0 says which; 0.4.x: id = index).
  for (const GraphConstantBinding& b : segment.effective_constant_bindings()) {
    if (b.constant_table_index >= file.constants.size()) {
      return err(StatusCode::kInvalidFormat, "segment '", segment.name, "' names constant ", b.constant_table_index,
                 " of ", file.constants.size());
    }
    GPUU_RETURN_IF_ERROR(set_graph_constant_data(tosa, b.graph_constant_id, file.constants[b.constant_table_index].data));
  }
  // The sequence's names (when given) name the graph's inputs and outputs, in binding order.
  for (size_t i = 0; i < tosa.inputs.size() && i < file.sequence.input_names.size(); ++i) {
    if (!file.sequence.input_names[i].empty()) tosa.inputs[i].name = file.sequence.input_names[i];
  }
  for (size_t i = 0; i < tosa.outputs.size() && i < file.sequence.output_names.size(); ++i) {
    if (!file.sequence.output_names[i].empty()) tosa.outputs[i].name = file.sequence.output_names[i];
  }
  GPUU_ASSIGN_OR_RETURN(graph::Graph g, tosa_to_gpuu(tosa));
  // Outputs carry the sequence's names too: the runtime binds by name.
  for (size_t i = 0; i < g.outputs().size() && i < file.sequence.output_names.size(); ++i) {
    const std::string& name = file.sequence.output_names[i];
    if (!name.empty()) g.mutable_value(g.outputs()[i]).name = name;
  }
  return g;
}

}  // namespace gpuu::vgf
