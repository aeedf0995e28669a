#version 450
// conv3d (NCDHW, groups, stride, zero padding, dilation), one invocation per
// output element summing its C/groups x kD x kH x kW window in f32.
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { T w[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint C, D, H, W, O, OD, OH, OW;
  uint kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
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
  uint oz = rest % p.OD;
  rest /= p.OD;
  uint o = rest % p.O;
  uint img = rest / p.O;
  uint first_channel = (o / p.Og) * p.Cg;
  int iz0 = int(oz * p.sd) - int(p.pd);
  int iy0 = int(oy * p.sh) - int(p.ph);
  int ix0 = int(ox * p.sw) - int(p.pw);
  float acc = 0.0;
  for (uint c = 0u; c < p.Cg; ++c) {
    uint volume = (img * p.C + first_channel + c) * p.D * p.H * p.W;
    uint taps = (o * p.Cg + c) * p.kd * p.kh * p.kw;
    for (uint kz = 0u; kz < p.kd; ++kz) {
      int iz = iz0 + int(kz * p.dd);
      if (iz < 0 || iz >= int(p.D)) continue;  // zero padding
      for (uint ky = 0u; ky < p.kh; ++ky) {
        int iy = iy0 + int(ky * p.dh);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0u; kx < p.kw; ++kx) {
          int ix = ix0 + int(kx * p.dw);
          if (ix < 0 || ix >= int(p.W)) continue;
          float v = float(x[volume + (uint(iz) * p.H + uint(iy)) * p.W + uint(ix)]);
          acc += v * float(w[taps + (kz * p.kh + ky) * p.kw + kx]);
        }
      }
    }
  }
  if (HAS_BIAS != 0) acc += float(bias[o]);
  y[i] = T(acc);
}
