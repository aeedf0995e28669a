#version 450
// out = a (op) b with numpy broadcasting: each operand is read through its own
// strides over the output shape (stride 0 on broadcast axes). Comparisons
// write bool bytes, four per invocation packed into one word, so no 8-bit
// storage feature is needed.
#include "common.glsl"
#include "op_math.glsl"  // generated from op_codes.txt: binary_apply, compare_apply

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
#ifdef GPUU_COMPARE
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint packed[]; };
#else
layout(std430, set = 0, binding = 2) writeonly buffer Out { T y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

void offsets(uint i, out uint ia, out uint ib) {
  ia = 0u;
  ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
}

#ifdef GPUU_COMPARE
void main() {
  uint word = linear_id();
  uint first = word * 4u;
  if (first >= p.count) return;
  uint bits = 0u;
  for (uint k = 0u; k < 4u && first + k < p.count; ++k) {
    uint ia, ib;
    offsets(first + k, ia, ib);
    if (compare_apply(OP, float(a[ia]), float(b[ib]))) bits |= 1u << (8u * k);
  }
  packed[word] = bits;
}
#else
void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ia, ib;
  offsets(i, ia, ib);
  y[i] = T(binary_apply(OP, float(a[ia]), float(b[ib])));
}
#endif
