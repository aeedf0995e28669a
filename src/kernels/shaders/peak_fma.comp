#version 450
// Calibration (device_peaks.cpp): f32 FMA throughput. Each invocation runs
// eight independent vec4 multiply-add chains held in registers (enough
// independent work to hide the FMA latency), LIMIT_PEAK_FMA_PER_ITERATION
// FMAs per loop iteration; the one store at the end keeps the compiler from
// dropping them. FLOPs per invocation: iterations * that * 2.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(std430, set = 0, binding = 0) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Params {
  uint iterations;
  float scale;  // < 1: the chains converge instead of overflowing
} p;

const uint CHAINS = 8u;
const uint UNROLL = LIMIT_PEAK_FMA_PER_ITERATION / (CHAINS * 4u);

void main() {
  vec4 acc[CHAINS];
  float seed = float(gl_LocalInvocationID.x) * 1e-3;
  [[unroll]] for (uint c = 0u; c < CHAINS; ++c) acc[c] = vec4(seed + float(c), seed, -seed, 1.0 - seed);
  const vec4 m = vec4(p.scale);
  const vec4 a = vec4(1e-3);
  for (uint i = 0u; i < p.iterations; ++i) {
    [[unroll]] for (uint u = 0u; u < UNROLL; ++u) {
      [[unroll]] for (uint c = 0u; c < CHAINS; ++c) acc[c] = fma(acc[c], m, a);
    }
  }
  vec4 sum = vec4(0.0);
  [[unroll]] for (uint c = 0u; c < CHAINS; ++c) sum += acc[c];
  y[linear_id()] = sum.x + sum.y + sum.z + sum.w;
}
