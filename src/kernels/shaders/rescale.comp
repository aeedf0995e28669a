#version 450
// rescale: TOSA RESCALE, i8/i16/i32/i64 (an i16 GEMM's i48 sums) in and
// i8/i16/i32 out, per tensor or per channel (the channel is (i / inner) %
// channels), with zero points, unsigned i8 on either side and the output
// clamped to [lo, hi] (an integer clamp is this with an identity scale).
#include "common.glsl"
#include "int_scale.glsl"
#include "channel_walk.glsl"

layout(constant_id = 0) const int IN_BYTES = 1;
layout(constant_id = 1) const int OUT_BYTES = 1;
layout(constant_id = 2) const int IN_UNSIGNED = 0;
layout(constant_id = 3) const int DOUBLE_ROUND = 0;
// 0: no scale (an i8 or i16 clamp: [lo, hi] alone; multiplier and shift unread).
layout(constant_id = 4) const int SCALED = 1;

#ifdef GPUU_JOIN
// rescale_join: the rescale after an a16w8 convolution's two int8 GEMMs,
// applied as their sums are joined (int16_join.glsl): its i64 input is never
// stored. The sums at bindings 0 and 4, the bias at 5. TWICE: and the second
// rescale that alone reads the first's i32 result (a16w8's to i16), its
// multipliers and shifts at bindings 6 and 7, so that result is not stored
// either; OUT_BYTES is then the second's.
#define JOIN_HI_BINDING 0
#define JOIN_LO_BINDING 4
#define JOIN_BIAS_BINDING 5
#define JOIN_BIAS_ID 5
#include "int16_join.glsl"
layout(constant_id = 6) const int TWICE = 0;
layout(constant_id = 7) const int DOUBLE_ROUND2 = 0;
layout(std430, set = 0, binding = 6) readonly buffer Multiplier2 { int multiplier2[]; };
layout(std430, set = 0, binding = 7) readonly buffer Shift2 { int shift2[]; };
#else
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
#endif
layout(std430, set = 0, binding = 1) readonly buffer Multiplier { int multiplier[]; };
layout(std430, set = 0, binding = 2) readonly buffer Shift { int shift_amount[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint inner, channels;  // channels 1: one scale for the whole tensor
  int input_zp, output_zp;
  int lo, hi;
#ifdef GPUU_JOIN
  JOIN_PUSH
  // TWICE: the second rescale's channel stride and count, zero points, clamp.
  uint inner2, channels2;
  int input_zp2, output_zp2;
  int lo2, hi2;
#endif
} p;

#define COUNT p.count
#include "int_io.glsl"

ChannelWalk g_walk = CHANNEL_WALK_START;
#ifdef GPUU_JOIN
ChannelWalk g_walk2 = CHANNEL_WALK_START;
#endif

int compute(uint i) {
#ifdef GPUU_JOIN
  int64_t v = joined_sum(i, p.join_pixels, p.join_channels, p.join_stride);
#else
  int64_t v = IN_BYTES == 8   ? int64_t(x_words[2u * i]) | (int64_t(int(x_words[2u * i + 1u])) << 32)
              : IN_BYTES == 2 ? int64_t(LOAD_I16(x_words, i))
              : IN_BYTES == 1 ? int64_t(IN_UNSIGNED != 0 ? LOAD_U8(x_words, i) : LOAD_I8(x_words, i))
                              : int64_t(int(x_words[i]));
#endif
  uint c = p.channels > 1u ? walk_channel(g_walk, i, p.inner, p.channels) : 0u;
  int r = rescale_value(v, p.input_zp, SCALED != 0, multiplier[c], shift_amount[c], DOUBLE_ROUND != 0, p.output_zp,
                        int64_t(p.lo), int64_t(p.hi));
#ifdef GPUU_JOIN
  if (TWICE != 0) {
    uint c2 = p.channels2 > 1u ? walk_channel(g_walk2, i, p.inner2, p.channels2) : 0u;
    r = rescale_value(int64_t(r), p.input_zp2, true, multiplier2[c2], shift2[c2], DOUBLE_ROUND2 != 0, p.output_zp2,
                      int64_t(p.lo2), int64_t(p.hi2));
  }
#endif
  return r;
}
