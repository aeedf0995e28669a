// Custom shader ops (domain com.arm.VulkanCustomShader): reading their
// implementation attributes, compiling GLSL at export (glslc), and the form
// every backend stores: SPIR-V, base64 in the attributes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::kernels {

struct CustomShader {
  std::string operator_name;
  std::string entry_point;
  std::string language;          // "SPIR-V" or "GLSL"
  std::vector<uint32_t> spirv;   // SPIR-V only
  std::string glsl;              // GLSL only
  std::array<uint32_t, 3> workgroup_sizes{1, 1, 1};
  // Workgroups to dispatch: "dispatch" when given, else enough 1-D groups of
  // workgroup_sizes to cover output 0 (one invocation per element).
  std::optional<std::array<uint32_t, 3>> dispatch;
  std::vector<uint32_t> input_bindings, output_bindings;  // descriptor set 0
};

// Reads and checks a custom_shader node's attributes: bindings of set 0
// forming 0..n-1 over inputs then outputs, storage-buffer descriptors.
Result<CustomShader> parse_custom_shader(const graph::Node& node);

// GLSL compute source -> SPIR-V through glslc (export time only).
Result<std::vector<uint32_t>> compile_glsl_compute(const std::string& source, const std::string& what);

// The node's attributes with a GLSL shader replaced by its SPIR-V (base64):
// what a processed blob stores, since no compiler exists at run time.
Result<graph::AttrMap> attrs_with_spirv(const graph::Node& node);

// The workgroup counts to dispatch for `shader` whose first output has `elements`.
std::array<uint32_t, 3> custom_dispatch(const CustomShader& shader, int64_t elements);

}  // namespace gpuu::kernels
