#version 450
// Inclusive prefix sums along one axis: one invocation per (outer, inner)
// line walks it in order. Floats accumulate in f32; integers in IT, wrapping.
#include "common.glsl"
#ifdef GPUU_INT
#include "int_types.glsl"
#define ST IT
#define ACC IT
#else
#define ST T
#define ACC float
#endif

layout(std430, set = 0, binding = 0) readonly buffer X { ST x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { ST y[]; };
layout(push_constant) uniform Params {
  uint lines;  // outer * inner
  uint len;
  uint inner;
} p;

void main() {
  uint id = linear_id();
  if (id >= p.lines) return;
  uint outer = id / p.inner;
  uint at = outer * p.len * p.inner + (id - outer * p.inner);
  ACC acc = ACC(0);
  for (uint j = 0u; j < p.len; ++j, at += p.inner) {
    acc += ACC(x[at]);
    y[at] = ST(acc);
  }
}
