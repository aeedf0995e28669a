#version 450
// y = f(x) elementwise, f chosen by the OP specialization constant (UNARY_*
// of op_codes.txt, where each op's math is). Float math runs in f32 whatever T is.
#include "common.glsl"
#include "op_math.glsl"  // generated from op_codes.txt: unary_apply

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  float lo;  // clamp bounds
  float hi;
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  y[i] = T(unary_apply(OP, float(x[i]), p.lo, p.hi));
}
