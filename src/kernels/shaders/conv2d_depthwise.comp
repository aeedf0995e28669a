#version 450
#extension GL_EXT_control_flow_attributes : require
// conv2d with one input channel per group (depthwise, any channel
// multiplier: output channel o reads input channel o / Og), NCHW, zero
// padding. The window's size, stride and dilation are specialization
// constants, so its loops unroll; each invocation computes STRIP outputs side
// by side in one row, so that neighbouring taps' loads of one input row are
// shared among them (and the index arithmetic is paid once per strip, not
// per output). conv2d_direct.comp, which walks a runtime-sized window per
// output, took 8-11 us for efficientnet_b0's 112x112 and 56x56 depthwise
// layers on the H100. Stores through the epilogue as the GEMM kernels do.
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { T w[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
// Bindings 4..6 and constants 1..16: the epilogue (gemm_epilogue.glsl), its
// rows the output channels and its columns batch x pixels, as conv2d's GEMM.
#define EPI_ID 1
#define EPI_BINDING 4
#include "gemm_epilogue.glsl"
layout(constant_id = 17) const uint KH = 3;
layout(constant_id = 18) const uint KW = 3;
layout(constant_id = 19) const uint SH = 1;
layout(constant_id = 20) const uint SW = 1;
layout(constant_id = 21) const uint DH = 1;
layout(constant_id = 22) const uint DW = 1;
#define STRIP uint(LIMIT_DEPTHWISE_STRIP)  // outputs per invocation, along a row

layout(push_constant) uniform Params {
  uint count;  // invocations: batch x O x OH x strips per row
  uint C, H, W, O, OH, OW;
  uint ph, pw;
  uint Og;  // output channels per input channel
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  const uint strips = (p.OW + STRIP - 1u) / STRIP;
  uint ox0 = (i % strips) * STRIP;
  uint rest = i / strips;
  uint oy = rest % p.OH;
  rest /= p.OH;
  uint o = rest % p.O;
  uint img = rest / p.O;
  uint plane = (img * p.C + o / p.Og) * p.H * p.W;
  int iy0 = int(oy * SH) - int(p.ph);
  int ix0 = int(ox0 * SW) - int(p.pw);
  float acc[STRIP];
  [[unroll]] for (uint s = 0u; s < STRIP; ++s) acc[s] = 0.0;
  [[unroll]] for (uint ky = 0u; ky < KH; ++ky) {
    int iy = iy0 + int(ky * DH);
    if (iy < 0 || iy >= int(p.H)) continue;  // zero padding
    uint row = plane + uint(iy) * p.W;
    [[unroll]] for (uint kx = 0u; kx < KW; ++kx) {
      float tap = float(w[(o * KH + ky) * KW + kx]);
      [[unroll]] for (uint s = 0u; s < STRIP; ++s) {
        int ix = ix0 + int(s * SW + kx * DW);
        if (ix >= 0 && ix < int(p.W)) acc[s] += float(x[row + uint(ix)]) * tap;
      }
    }
  }
  uint out_row = ((img * p.O + o) * p.OH + oy) * p.OW;
  uint column = (img * p.OH + oy) * p.OW;
  [[unroll]] for (uint s = 0u; s < STRIP; ++s) {
    uint ox = ox0 + s;
    float sum = HAS_BIAS != 0 ? acc[s] + float(bias[o]) : acc[s];
    if (ox < p.OW) y[out_row + ox] = T(epilogue(sum, out_row + ox, o, column + ox));
  }
}
