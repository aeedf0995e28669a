#version 450
// Concatenation of up to 8 inputs of any element size in one dispatch: the
// output is viewed as [outer, axis_len, inner] and each element picks the input
// whose slice of the axis holds it. Unused input bindings repeat input 0.
#include "common.glsl"

#if LIMIT_CONCAT_INPUTS != 8
#error "concat_inputs.comp declares 8 input bindings and 9 starts: change them with the list"
#endif

layout(constant_id = 0) const int ESIZE = 4;
layout(std430, set = 0, binding = 0) readonly buffer In0 { uint w0[]; };
layout(std430, set = 0, binding = 1) readonly buffer In1 { uint w1[]; };
layout(std430, set = 0, binding = 2) readonly buffer In2 { uint w2[]; };
layout(std430, set = 0, binding = 3) readonly buffer In3 { uint w3[]; };
layout(std430, set = 0, binding = 4) readonly buffer In4 { uint w4[]; };
layout(std430, set = 0, binding = 5) readonly buffer In5 { uint w5[]; };
layout(std430, set = 0, binding = 6) readonly buffer In6 { uint w6[]; };
layout(std430, set = 0, binding = 7) readonly buffer In7 { uint w7[]; };
layout(std430, set = 0, binding = 8) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint axis_len;  // output length of the concatenated axis
  uint inner;     // elements per step of that axis
  uint inputs;    // 1..8
  uint start[9];  // input k covers axis positions [start[k], start[k + 1])
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load0, w0, ESIZE)
DEFINE_LOADER(load1, w1, ESIZE)
DEFINE_LOADER(load2, w2, ESIZE)
DEFINE_LOADER(load3, w3, ESIZE)
DEFINE_LOADER(load4, w4, ESIZE)
DEFINE_LOADER(load5, w5, ESIZE)
DEFINE_LOADER(load6, w6, ESIZE)
DEFINE_LOADER(load7, w7, ESIZE)

uvec2 element(uint i) {
  uint row = p.axis_len * p.inner;
  uint o = i / row;
  uint r = i - o * row;
  uint a = r / p.inner;
  uint j = r - a * p.inner;
  uint k = 0u;
  while (k + 1u < p.inputs && a >= p.start[k + 1u]) ++k;
  uint len = p.start[k + 1u] - p.start[k];
  uint src = (o * len + (a - p.start[k])) * p.inner + j;
  switch (k) {
    case 0u: return load0(src);
    case 1u: return load1(src);
    case 2u: return load2(src);
    case 3u: return load3(src);
    case 4u: return load4(src);
    case 5u: return load5(src);
    case 6u: return load6(src);
  }
  return load7(src);
}
