#version 450
// out = a (op) b for i32 / i64 tensors with numpy broadcasting (as
// binary.comp). Division-like ops define what C leaves undefined: a zero
// divisor gives 0, MIN / -1 wraps to MIN (its remainders are 0).
// Comparisons (GPUU_COMPARE) pack four bool bytes per invocation.
#include "common.glsl"
#include "int_types.glsl"
#include "op_math.glsl"  // generated from op_codes.txt: compare_apply (for IT too)

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer A { IT a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { IT b[]; };
#ifdef GPUU_COMPARE
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint packed[]; };
#else
layout(std430, set = 0, binding = 2) writeonly buffer Out { IT y[]; };
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
    if (compare_apply(OP, a[ia], b[ib])) bits |= 1u << (8u * k);
  }
  packed[word] = bits;
}
#else
// remainder (the divisor's sign), fmod (the dividend's), floor_divide.
IT divide(IT u, IT v) {
  if (v == IT(0)) return IT(0);
  if (v == IT(-1)) return OP == INT_BINARY_FLOOR_DIVIDE ? -u : IT(0);
  IT q = u / v;  // truncates toward zero
  IT r = u - q * v;
  bool adjust = r != IT(0) && ((r < IT(0)) != (v < IT(0)));
  if (OP == INT_BINARY_FMOD) return r;
  if (OP == INT_BINARY_REMAINDER) return adjust ? r + v : r;
  return adjust ? q - IT(1) : q;
}

IT combine(IT u, IT v) {
  switch (OP) {
    case INT_BINARY_ADD: return u + v;
    case INT_BINARY_SUB: return u - v;
    case INT_BINARY_MUL: return u * v;
    case INT_BINARY_MAXIMUM: return max(u, v);
    case INT_BINARY_MINIMUM: return min(u, v);
    case INT_BINARY_REMAINDER:
    case INT_BINARY_FMOD:
    case INT_BINARY_FLOOR_DIVIDE: return divide(u, v);
    case INT_BINARY_BITWISE_AND: return u & v;
    case INT_BINARY_BITWISE_OR: return u | v;
    case INT_BINARY_BITWISE_XOR: return u ^ v;
  }
  return IT(0);
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ia, ib;
  offsets(i, ia, ib);
  y[i] = combine(a[ia], b[ib]);
}
#endif
