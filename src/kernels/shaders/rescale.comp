#version 450
// rescale: TOSA RESCALE over i8/i32 in and out, per tensor or per channel
// (the channel is (i / inner) % channels), with zero points, unsigned i8 on
// either side and the output clamped to [lo, hi].
#include "common.glsl"
#include "int_scale.glsl"

layout(constant_id = 0) const int IN_BYTES = 1;
layout(constant_id = 1) const int OUT_BYTES = 1;
layout(constant_id = 2) const int IN_UNSIGNED = 0;
layout(constant_id = 3) const int DOUBLE_ROUND = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Multiplier { int multiplier[]; };
layout(std430, set = 0, binding = 2) readonly buffer Shift { int shift_amount[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint inner, channels;  // channels 1: one scale for the whole tensor
  int input_zp, output_zp;
  int lo, hi;
} p;

#define COUNT p.count
#include "int_io.glsl"

int compute(uint i) {
  int v = IN_BYTES == 1 ? (IN_UNSIGNED != 0 ? LOAD_U8(x_words, i) : LOAD_I8(x_words, i)) : int(x_words[i]);
  int64_t value = int64_t(v) - int64_t(p.input_zp);
  uint c = p.channels > 1u ? (i / p.inner) % p.channels : 0u;
  int scaled = apply_scale(value, multiplier[c], shift_amount[c], DOUBLE_ROUND != 0);
  int64_t o = int64_t(scaled) + int64_t(p.output_zp);
  return int(clamp(o, int64_t(p.lo), int64_t(p.hi)));
}
