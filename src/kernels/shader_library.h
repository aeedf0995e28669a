// The compute shaders built into gpuu: GLSL in shaders/, compiled to SPIR-V by
// glslc at build time and embedded, looked up by name ("unary_f32", ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuu::kernels {

struct EmbeddedShader {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};

const std::vector<EmbeddedShader>& embedded_shaders();

// Null when no shader has that name.
const EmbeddedShader* find_shader(std::string_view name);

}  // namespace gpuu::kernels
