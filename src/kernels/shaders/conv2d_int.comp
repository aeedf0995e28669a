#version 450
// conv2d_int: NCHW i8 input, [O, C/groups, kH, kW] i8 weight, optional i32
// bias, i32 output; zero points subtracted from every real element, padding
// contributing nothing; the int32 sum wraps. One invocation per output.
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;
const int OUT_BYTES = 4;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { uint w_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint C, H, W, O, OH, OW;
  uint KH, KW, sh, sw;
  int pad_top, pad_left;
  uint dh, dw;
  uint group_channels, out_per_group;
  int input_zp, weight_zp;
} p;

#define COUNT p.count
#include "int_io.glsl"

int compute(uint i) {
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint o = (i / (p.OW * p.OH)) % p.O;
  uint n = i / (p.OW * p.OH * p.O);
  uint c0 = (o / p.out_per_group) * p.group_channels;
  int y0 = int(oy * p.sh) - p.pad_top;
  int x0 = int(ox * p.sw) - p.pad_left;
  int acc = 0;
  for (uint ci = 0u; ci < p.group_channels; ++ci) {
    uint plane = (n * p.C + c0 + ci) * p.H;
    uint wrow = (o * p.group_channels + ci) * p.KH;
    for (uint ky = 0u; ky < p.KH; ++ky) {
      int iy = y0 + int(ky * p.dh);
      if (iy < 0 || iy >= int(p.H)) continue;
      for (uint kx = 0u; kx < p.KW; ++kx) {
        int ix = x0 + int(kx * p.dw);
        if (ix < 0 || ix >= int(p.W)) continue;
        int xe = LOAD_I8(x_words, (plane + uint(iy)) * p.W + uint(ix)) - p.input_zp;
        int we = LOAD_I8(w_words, (wrow + ky) * p.KW + kx) - p.weight_zp;
        acc += xe * we;
      }
    }
  }
  if (HAS_BIAS != 0) acc += bias[o];
  return acc;
}
