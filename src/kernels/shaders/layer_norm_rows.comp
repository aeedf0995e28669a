#version 450
// layer_norm over the trailing `size` elements of each row: mean, then the
// biased variance of the deviations (two passes, no E[x^2] - E[x]^2
// cancellation), then (x - mean) / sqrt(var + eps) * weight + bias, in f32.
// RMS: x / sqrt(mean(x^2) + eps) * weight, the mean taken as 0 (RMSNorm, as
// Llama writes it: the kernel graph finds the pattern, kernels/row_norm.h).
// ROW_WIDTH invocations per row: 1 (short rows), 32 (a line of a workgroup:
// rows of tens to hundreds, as convnext's 96-channel rows, which one
// invocation each walked serially and uncoalesced at 1/10 of the bandwidth),
// or the whole workgroup (long rows).
#include "common.glsl"

layout(constant_id = 0) const uint ROW_WIDTH = GPUU_WG;
layout(constant_id = 1) const bool HAS_WEIGHT = false;
layout(constant_id = 2) const bool HAS_BIAS = false;
layout(constant_id = 3) const bool RMS = false;
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { T w[]; };  // bound to x when absent
layout(std430, set = 0, binding = 2) readonly buffer Bias { T b[]; };    // bound to x when absent
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint rows;
  uint size;
  float eps;
  uint w_offset, w_stride;  // weight element j at w_offset + j * w_stride (0: one weight for all)
  // x's element j of row r at x_offset + (r / inner_rows) * outer_stride +
  // (r % inner_rows) * inner_stride + j * element_stride (row_norm.h's
  // Layout: a permuted value read in place); y is row-major.
  uint x_offset, inner_rows, outer_stride, inner_stride, element_stride;
} p;

shared float sums[GPUU_WG];

// The sum of `v` over the ROW_WIDTH invocations of this row (every invocation
// of the workgroup calls it: uniform control flow).
float row_sum(float v, uint t, uint lane) {
  if (ROW_WIDTH == 1u) return v;
  sums[t] = v;
  barrier();
  for (uint s = ROW_WIDTH / 2u; s > 0u; s >>= 1u) {
    if (lane < s) sums[t] += sums[t + s];
    barrier();
  }
  float r = sums[t - lane];
  barrier();  // read before the next call writes
  return r;
}

void main() {
  uint t = gl_LocalInvocationID.x, lane = t % ROW_WIDTH;
  uint row = (linear_group_id() * GPUU_WG + t) / ROW_WIDTH;
  if (ROW_WIDTH == 1u && row >= p.rows) return;
  // Invocations past the last row still join the sums' barriers, reading nothing.
  bool live = row < p.rows;
  uint base = row * p.size, first = live ? lane : p.size, step = ROW_WIDTH;
  uint xbase = p.x_offset + (row / p.inner_rows) * p.outer_stride + (row % p.inner_rows) * p.inner_stride;
  uint xs = p.element_stride;
  float n = float(p.size);
  float mean = 0.0;
  if (!RMS) {
    float s = 0.0;
    for (uint j = first; j < p.size; j += step) s += float(x[xbase + j * xs]);
    mean = row_sum(s, t, lane) / n;
  }
  float v = 0.0;
  for (uint j = first; j < p.size; j += step) {
    float d = float(x[xbase + j * xs]) - mean;
    v += d * d;
  }
  float rstd = 1.0 / sqrt(row_sum(v, t, lane) / n + p.eps);
  for (uint j = first; j < p.size; j += step) {
    float r = (float(x[xbase + j * xs]) - mean) * rstd;
    if (HAS_WEIGHT) r *= float(w[p.w_offset + j * p.w_stride]);
    if (HAS_BIAS) r += float(b[j]);
    y[base + j] = T(r);
  }
}
