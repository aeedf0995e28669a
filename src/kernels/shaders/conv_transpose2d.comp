#version 450
// conv_transpose2d (NCHW, torch weight layout [C, O/groups, kH, kW], groups,
// stride, padding, dilation; output_padding only sizes the output), one
// invocation per output element gathering the input pixels that scatter onto
// it: oy = iy * stride - pad + ky * dilation.
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { T w[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
  uint Og;  // output channels per group
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint rest = i / p.OW;
  uint oy = rest % p.OH;
  rest /= p.OH;
  uint o = rest % p.O;
  uint img = rest / p.O;
  uint group = o / p.Og;
  uint o_in_group = o % p.Og;
  float acc = 0.0;
  for (uint ky = 0u; ky < p.kh; ++ky) {
    int ty = int(oy + p.ph) - int(ky * p.dh);
    if (ty < 0 || uint(ty) % p.sh != 0u) continue;
    uint iy = uint(ty) / p.sh;
    if (iy >= p.H) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int tx = int(ox + p.pw) - int(kx * p.dw);
      if (tx < 0 || uint(tx) % p.sw != 0u) continue;
      uint ix = uint(tx) / p.sw;
      if (ix >= p.W) continue;
      for (uint c = 0u; c < p.Cg; ++c) {
        uint channel = group * p.Cg + c;
        float v = float(x[((img * p.C + channel) * p.H + iy) * p.W + ix]);
        acc += v * float(w[((channel * p.Og + o_in_group) * p.kh + ky) * p.kw + kx]);
      }
    }
  }
  if (HAS_BIAS != 0) acc += float(bias[o]);
  y[i] = T(acc);
}
