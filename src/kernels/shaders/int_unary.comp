#version 450
// y = f(x) for i32 / i64 tensors: neg, abs, sign, clamp, bitwise_not (OP:
// INT_UNARY_* of op_codes.txt).
#include "common.glsl"
#include "int_types.glsl"

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer In { IT x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { IT y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint lo_low, lo_high;  // clamp bounds, already within the dtype's range
  uint hi_low, hi_high;
} p;

IT apply(IT v) {
  switch (OP) {
    case INT_UNARY_NEG: return -v;  // wraps: -MIN is MIN
    case INT_UNARY_ABS: return v < IT(0) ? -v : v;
    case INT_UNARY_SIGN: return v > IT(0) ? IT(1) : (v < IT(0) ? IT(-1) : IT(0));
    case INT_UNARY_CLAMP: return min(max(v, int_from_words(p.lo_low, p.lo_high)), int_from_words(p.hi_low, p.hi_high));
    case INT_UNARY_BITWISE_NOT: return ~v;
  }
  return v;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  y[i] = apply(x[i]);
}
