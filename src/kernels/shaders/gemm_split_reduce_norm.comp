#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Split-K's second step for a GEMM whose stored result is then layer-normed
// over its rows (fusion.h's norm_after units: a transformer's projection, the
// residual add in its epilogue, then the next block's layer norm). One
// workgroup per output row: it sums the row's f32 partials (+ bias, then the
// epilogue), stores y as gemm_split_reduce.comp does, keeps the stored values
// in registers and normalises them into z as layer_norm_rows.comp does (mean,
// then the biased variance of the deviations, in f32, of y as stored), so the
// norm costs no dispatch and no second read of y.
#include "common.glsl"
#include "workgroup_reduce.glsl"  // wg_sum, wg_scratch

layout(constant_id = 0) const int HAS_BIAS = 0;
// Elements of the row per invocation, at most MAX_PER: the host picks the
// fewest that cover N.
layout(constant_id = 1) const uint PER = 1;
// Bindings 3..5 and constants 2..17: the GEMM's epilogue (gemm_epilogue.glsl).
#define EPI_ID 2
#define EPI_BINDING 3
#include "gemm_epilogue.glsl"
layout(constant_id = 18) const bool HAS_WEIGHT = false;
layout(constant_id = 19) const bool HAS_NORM_BIAS = false;
// 1 where the device's subgroups add in compute shaders: a row's sums are a
// subgroupAdd per subgroup and one over their results, not a tree of eight
// barrier-separated steps.
layout(constant_id = 20) const int SUBGROUP_SUMS = 0;
// The shares of K: a constant, so that the loop unrolls and its loads are all
// in flight at once.
layout(constant_id = 21) const uint SPLITS = 2;
#define MAX_PER 16u

layout(std430, set = 0, binding = 0) readonly buffer Partial { float partial[]; };
// Bound to some read-only tensor when absent (never read then).
layout(std430, set = 0, binding = 1) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { T y[]; };
layout(std430, set = 0, binding = 6) readonly buffer Weight { T w[]; };
layout(std430, set = 0, binding = 7) readonly buffer NormBias { T nb[]; };
layout(std430, set = 0, binding = 8) writeonly buffer Normed { T z[]; };
layout(push_constant) uniform Params {
  uint count;  // rows * N: one share's partials
  uint rows, M, N;
  float eps;
  uint w_offset, w_stride;  // weight element j at w_offset + j * w_stride
} p;

// The sum of v over the workgroup (uniform control flow): a subgroupAdd per
// subgroup and one over their results, else workgroup_reduce.glsl's tree.
float workgroup_sum(float v) {
  if (SUBGROUP_SUMS == 0) return wg_sum(v);
  float s = subgroupAdd(v);
  if (gl_SubgroupInvocationID == 0u) wg_scratch[gl_SubgroupID] = s;
  barrier();
  float total = 0.0;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) total += wg_scratch[i];
  barrier();  // read before the next call writes
  return total;
}

void main() {
  uint row = linear_group_id();
  if (row >= p.rows) return;  // the whole workgroup
  uint t = gl_LocalInvocationID.x;
  float v[MAX_PER];
  float s = 0.0;
  [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
    uint j = t + i * GPUU_WG;
    v[i] = 0.0;
    if (i < PER && j < p.N) {
      uint o = row * p.N + j;
      float acc = 0.0;
      [[unroll]] for (uint k = 0u; k < SPLITS; ++k) acc += partial[k * p.count + o];
      if (HAS_BIAS != 0) acc += float(bias[j]);
      T stored = T(epilogue(acc, o, row % p.M, j));
      y[o] = stored;
      v[i] = float(stored);  // the norm reads y as stored
      s += v[i];
    }
  }
  float n = float(p.N);
  float mean = workgroup_sum(s) / n;
  float d2 = 0.0;
  [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
    uint j = t + i * GPUU_WG;
    if (i < PER && j < p.N) d2 += (v[i] - mean) * (v[i] - mean);
  }
  float rstd = 1.0 / sqrt(workgroup_sum(d2) / n + p.eps);
  [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
    uint j = t + i * GPUU_WG;
    if (i < PER && j < p.N) {
      float r = (v[i] - mean) * rstd;
      if (HAS_WEIGHT) r *= float(w[p.w_offset + j * p.w_stride]);
      if (HAS_NORM_BIAS) r += float(nb[j]);
      z[row * p.N + j] = T(r);
    }
  }
}
