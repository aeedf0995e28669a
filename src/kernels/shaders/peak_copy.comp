#version 450
// Calibration (device_peaks.cpp): a plain copy of 16-byte words, one per
// invocation, over a buffer larger than the device's caches: its bytes read
// and written per second are the profile's peak memory bandwidth.
#include "common.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Params { uint count; } p;  // words

void main() {
  uint i = linear_id();
  if (i < p.count) dst[i] = src[i];
}
