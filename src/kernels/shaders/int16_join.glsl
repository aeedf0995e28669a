// The i64 sum of an a16w8 convolution's two int8 GEMMs (int16_parts.comp's
// halves): 256 * hi + lo (+ the i64 bias of the element's output channel),
// for int16_parts.comp's join and rescale.comp's rescale_join. The including
// shader binds the sums and the bias at JOIN_HI_BINDING, JOIN_LO_BINDING and
// JOIN_BIAS_BINDING and defines spec constant JOIN_BIAS_ID (HAS_BIAS) before
// including it; JOIN_PUSH in its push constants holds joined_sum's last three
// arguments.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "channel_walk.glsl"

layout(constant_id = JOIN_BIAS_ID) const int HAS_BIAS = 0;
layout(std430, set = 0, binding = JOIN_HI_BINDING) readonly buffer JoinHi { int join_hi[]; };
layout(std430, set = 0, binding = JOIN_LO_BINDING) readonly buffer JoinLo { int join_lo[]; };
layout(std430, set = 0, binding = JOIN_BIAS_BINDING) readonly buffer JoinBias { uint join_bias[]; };
// pixels per output channel of one image, output channels, and a linear's
// sums' row stride (0: not transposed: y's (r, o) is the sums' (o, r)).
#define JOIN_PUSH uint join_pixels, join_channels, join_stride;

ChannelWalk join_walk = CHANNEL_WALK_START;  // the bias's channel

int64_t joined_sum(uint i, uint pixels, uint channels, uint stride) {
  uint at = stride != 0u ? (i % channels) * stride + i / channels : i;
  int64_t v = int64_t(join_hi[at]) * 256 + int64_t(join_lo[at]);
  if (HAS_BIAS != 0) {
    uint o = walk_channel(join_walk, i, pixels, channels);
    v += int64_t(join_bias[2u * o]) | (int64_t(int(join_bias[2u * o + 1u])) << 32);
  }
  return v;
}
