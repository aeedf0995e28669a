#version 450
// layer_norm over the trailing `size` elements of each row: mean, then the
// biased variance of the deviations (two passes, no E[x^2] - E[x]^2
// cancellation), then (x - mean) / sqrt(var + eps) * weight + bias, in f32.
// One invocation per row (short rows) or one workgroup per row.
#include "common.glsl"
#include "workgroup_reduce.glsl"

layout(constant_id = 0) const bool PER_THREAD = false;
layout(constant_id = 1) const bool HAS_WEIGHT = false;
layout(constant_id = 2) const bool HAS_BIAS = false;
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { T w[]; };  // bound to x when absent
layout(std430, set = 0, binding = 2) readonly buffer Bias { T b[]; };    // bound to x when absent
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint rows;
  uint size;
  float eps;
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
  uint base = row * p.size;
  float n = float(p.size);
  float s = 0.0;
  for (uint j = first; j < p.size; j += step) s += float(x[base + j]);
  if (!PER_THREAD) s = wg_sum(s);
  float mean = s / n;
  float v = 0.0;
  for (uint j = first; j < p.size; j += step) {
    float d = float(x[base + j]) - mean;
    v += d * d;
  }
  if (!PER_THREAD) v = wg_sum(v);
  float rstd = 1.0 / sqrt(v / n + p.eps);
  for (uint j = first; j < p.size; j += step) {
    float r = (float(x[base + j]) - mean) * rstd;
    if (HAS_WEIGHT) r *= float(w[j]);
    if (HAS_BIAS) r += float(b[j]);
    y[base + j] = T(r);
  }
}
