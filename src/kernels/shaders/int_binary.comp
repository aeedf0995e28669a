#version 450
// out = a (op) b for i32 / i64 tensors with numpy broadcasting (as
// binary.comp). Division-like ops define what C leaves undefined: a zero
// divisor gives 0, MIN / -1 wraps to MIN (its remainders are 0).
// Comparisons (GPUU_COMPARE) pack four bool bytes per invocation.
#include "common.glsl"
#include "int_types.glsl"

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
bool compare(IT u, IT v) {
  switch (OP) {
    case 0: return u == v;
    case 1: return u != v;
    case 2: return u < v;
    case 3: return u <= v;
    case 4: return u > v;
    case 5: return u >= v;
  }
  return false;
}

void main() {
  uint word = linear_id();
  uint first = word * 4u;
  if (first >= p.count) return;
  uint bits = 0u;
  for (uint k = 0u; k < 4u && first + k < p.count; ++k) {
    uint ia, ib;
    offsets(first + k, ia, ib);
    if (compare(a[ia], b[ib])) bits |= 1u << (8u * k);
  }
  packed[word] = bits;
}
#else
// 5 remainder (the divisor's sign), 6 fmod (the dividend's), 7 floor_divide.
IT divide(IT u, IT v) {
  if (v == IT(0)) return IT(0);
  if (v == IT(-1)) return OP == 7 ? -u : IT(0);
  IT q = u / v;  // truncates toward zero
  IT r = u - q * v;
  bool adjust = r != IT(0) && ((r < IT(0)) != (v < IT(0)));
  if (OP == 6) return r;
  if (OP == 5) return adjust ? r + v : r;
  return adjust ? q - IT(1) : q;
}

IT combine(IT u, IT v) {
  switch (OP) {
    case 0: return u + v;
    case 1: return u - v;
    case 2: return u * v;
    case 3: return max(u, v);
    case 4: return min(u, v);
    case 5:
    case 6:
    case 7: return divide(u, v);
    case 8: return u & v;
    case 9: return u | v;
    case 10: return u ^ v;
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
