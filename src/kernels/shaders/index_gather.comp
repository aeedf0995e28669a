#version 450
// gather (torch.gather) and index_select for any element size, with i32 or
// i64 indices: output element i reads x at its own coordinates off the axis
// and at index[ipos(i)] on it, where ipos walks the index tensor (gather: the
// output's own coordinates; index_select: the axis coordinate alone). An i64
// index is two words, low first, valid only when the high word is the sign
// extension of the low one (no shaderInt64). An index outside [0, dim) reads
// nothing and yields 0 (constant indices are rejected before this runs).
#include "common.glsl"

layout(constant_id = 0) const int ESIZE = 4;
layout(constant_id = 1) const bool INDEX_I64 = false;
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Index { uint index_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint axis;
  uint dim;  // x's length along the axis
  uint shape[MAX_RANK];          // output shape
  uint x_strides[MAX_RANK];      // x's row-major strides
  uint index_strides[MAX_RANK];  // per output dim, into the index tensor
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_x, x_words, ESIZE)

uvec2 element(uint i) {
  uint src = 0u, ipos = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    if (uint(d) != p.axis) src += c * p.x_strides[d];
    ipos += c * p.index_strides[d];
  }
  int index;
  bool valid = true;
  if (INDEX_I64) {
    uint lo = index_words[2u * ipos];
    uint hi = index_words[2u * ipos + 1u];
    index = int(lo);
    valid = hi == uint(index >> 31);
  } else {
    index = int(index_words[ipos]);
  }
  if (!valid || index < 0 || uint(index) >= p.dim) return uvec2(0u);
  return load_x(src + uint(index) * p.x_strides[p.axis]);
}
