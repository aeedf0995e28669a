#version 450
// conv2d (NCHW, groups, stride, zero padding, dilation), one invocation per
// output element summing its C/groups x kH x kW window in f32. Used where the
// tiled implicit GEMM would leave most of its 64-row tile idle: depthwise and
// other convolutions with few output channels per group. Like the GEMM
// kernels it stores through an epilogue (a depthwise convolution's batch norm
// and activation).
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { T w[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
// Bindings 4..6 and constants 1..15: the epilogue (gemm_epilogue.glsl), its
// rows the output channels and its columns batch x pixels, as conv2d's GEMM.
#define EPI_ID 1
#define EPI_BINDING 4
#include "gemm_epilogue.glsl"
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
  uint first_channel = (o / p.Og) * p.Cg;
  int iy0 = int(oy * p.sh) - int(p.ph);
  int ix0 = int(ox * p.sw) - int(p.pw);
  float acc = 0.0;
  for (uint c = 0u; c < p.Cg; ++c) {
    uint plane = (img * p.C + first_channel + c) * p.H * p.W;
    uint taps = (o * p.Cg + c) * p.kh * p.kw;
    for (uint ky = 0u; ky < p.kh; ++ky) {
      int iy = iy0 + int(ky * p.dh);
      if (iy < 0 || iy >= int(p.H)) continue;  // zero padding
      for (uint kx = 0u; kx < p.kw; ++kx) {
        int ix = ix0 + int(kx * p.dw);
        if (ix < 0 || ix >= int(p.W)) continue;
        acc += float(x[plane + uint(iy) * p.W + uint(ix)]) * float(w[taps + ky * p.kw + kx]);
      }
    }
  }
  if (HAS_BIAS != 0) acc += float(bias[o]);
  y[i] = T(epilogue(acc, i, o, img * p.OH * p.OW + oy * p.OW + ox));
}
