#version 450
// out[i] = x[base + sum_d coord_d(i) * strides[d]] for any element size:
// transpose (permuted strides) and slice (start offset, stepped strides).
#include "common.glsl"

layout(constant_id = 0) const int ESIZE = 4;
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint base;
  uint shape[MAX_RANK];    // output shape
  uint strides[MAX_RANK];  // input element strides, per output dim
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_x, x_words, ESIZE)

uvec2 element(uint i) {
  uint src = p.base;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    src += c * p.strides[d];
  }
  return load_x(src);
}
