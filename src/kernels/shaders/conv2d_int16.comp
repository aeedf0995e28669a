#version 450
// conv2d_int over 16-bit activations (a16w8): NCHW i16 input, [O, C/groups,
// kH, kW] i8 weight, optional i64 bias, i64 output (TOSA's i48 accumulator:
// |i16 x i8| < 2^22, so no sum of fewer than 2^25 products overflows it).
// The input's zero point is 0 (TOSA's signed i16), the weight's may not be.
// One invocation per output, which writes its two words.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { uint w_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { uint bias_words[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint C, H, W, O, OH, OW;
  uint KH, KW, sh, sw;
  int pad_top, pad_left;
  uint dh, dw;
  uint group_channels, out_per_group;
  int input_zp;  // conv2d_int.comp's layout; TOSA's signed i16 zero point is 0
  int weight_zp;
} p;

#include "int_load.glsl"

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint o = (i / (p.OW * p.OH)) % p.O;
  uint n = i / (p.OW * p.OH * p.O);
  uint c0 = (o / p.out_per_group) * p.group_channels;
  int y0 = int(oy * p.sh) - p.pad_top;
  int x0 = int(ox * p.sw) - p.pad_left;
  int64_t acc = 0;
  for (uint ci = 0u; ci < p.group_channels; ++ci) {
    uint plane = (n * p.C + c0 + ci) * p.H;
    uint wrow = (o * p.group_channels + ci) * p.KH;
    for (uint ky = 0u; ky < p.KH; ++ky) {
      int iy = y0 + int(ky * p.dh);
      if (iy < 0 || iy >= int(p.H)) continue;
      for (uint kx = 0u; kx < p.KW; ++kx) {
        int ix = x0 + int(kx * p.dw);
        if (ix < 0 || ix >= int(p.W)) continue;
        int xe = LOAD_I16(x_words, (plane + uint(iy)) * p.W + uint(ix));
        int we = LOAD_I8(w_words, (wrow + ky) * p.KW + kx) - p.weight_zp;
        acc += int64_t(xe * we);  // |product| < 2^23: exact in 32 bits
      }
    }
  }
  if (HAS_BIAS != 0) acc += int64_t(bias_words[2u * o]) | (int64_t(int(bias_words[2u * o + 1u])) << 32);
  out_words[2u * i] = uint(acc & int64_t(0xFFFFFFFF));
  out_words[2u * i + 1u] = uint(acc >> 32);
}
