#version 450
// out = cond ? a : b with numpy broadcasting, for any element size of a and
// b. cond is bool, one byte per element, read out of its 32-bit word.
#include "common.glsl"

layout(constant_id = 0) const int ESIZE = 4;
layout(std430, set = 0, binding = 0) readonly buffer Cond { uint cond_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer A { uint a_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b_words[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint cond_strides[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_cond, cond_words, 1)
DEFINE_LOADER(load_a, a_words, ESIZE)
DEFINE_LOADER(load_b, b_words, ESIZE)

uvec2 element(uint i) {
  uint ic = 0u, ia = 0u, ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    ic += c * p.cond_strides[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  return load_cond(ic).x != 0u ? load_a(ia) : load_b(ib);
}
