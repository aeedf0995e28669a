#version 450
// softmax along one axis: x viewed as [outer, len, inner]; row (o, i) holds
// the len elements o*len*inner + i + j*inner. exp(x - max) / sum, in f32.
// One invocation per row (short rows) or one workgroup per row, three passes
// (max, sum, write) with shared-memory trees.
#include "common.glsl"
#include "workgroup_reduce.glsl"

layout(constant_id = 0) const bool PER_THREAD = false;
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint rows;
  uint len;
  uint inner;
} p;

void main() {
  uint row, first, step;
  if (PER_THREAD) {
    row = linear_id();
    if (row >= p.rows) return;
    first = 0u;
    step = 1u;
  } else {
    row = linear_group_id();
    if (row >= p.rows) return;  // the whole workgroup leaves together
    first = gl_LocalInvocationID.x;
    step = GPUU_WG;
  }
  uint o = row / p.inner;
  uint base = o * p.len * p.inner + (row - o * p.inner);
  // A NaN anywhere makes the sum, hence the whole row, NaN (as the reference).
  float m = uintBitsToFloat(0xFF800000u);
  for (uint j = first; j < p.len; j += step) m = max(m, float(x[base + j * p.inner]));
  if (!PER_THREAD) m = wg_max(m);
  float s = 0.0;
  for (uint j = first; j < p.len; j += step) s += exp(float(x[base + j * p.inner]) - m);
  if (!PER_THREAD) s = wg_sum(s);
  for (uint j = first; j < p.len; j += step) {
    uint at = base + j * p.inner;
    y[at] = T(exp(float(x[at]) - m) / s);
  }
}
