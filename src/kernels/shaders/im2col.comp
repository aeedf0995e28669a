#version 450
#extension GL_EXT_control_flow_attributes : require
// conv2d's im2col view, materialized for the implicit GEMM that follows
// (gemm_common.glsl's CONV_IM2COL): [groups][K][N] with K = C/groups * kH *
// kW taps (channel-major) and N = batch * OH * OW pixels, zero padding
// included. Gathering the view inside the GEMM tile costs index arithmetic
// per element in a kernel of few workgroups; here every element has an
// invocation's share of a GPU-wide dispatch and the GEMM reads plain rows.
// An invocation writes PIXELS consecutive pixels of one row, 16 bytes (8
// halves or 4 floats): the tap and the first pixel decoded once, then
// stepped. (4 halves an invocation wrote resnet50's batch-8 views at ~900
// GB/s on the H100.)
#include "common.glsl"

// 1 where rows are whole chunks of PIXELS (N % PIXELS == 0) and the output
// starts 16-byte aligned: one 16-byte store per invocation.
layout(constant_id = 0) const int VEC = 0;

#ifdef GPUU_F16
#define PIXELS 8u
#else
#define PIXELS 4u
#endif
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out16 { uvec4 y16[]; };
layout(push_constant) uniform Params {
  uint count;           // invocations: groups * K rows x chunks_per_row
  uint chunks_per_row;  // ceil(N / PIXELS)
  uint N, K;            // K: taps per group
  // As the GEMM's conv form has them (gemm_common.glsl; O unused here).
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint row = i / p.chunks_per_row;
  uint n = (i - row * p.chunks_per_row) * PIXELS;
  uint g = row / p.K, k = row - g * p.K;
  uint taps = p.kh * p.kw;
  uint c = k / taps, tap = k - c * taps;
  uint ky = tap / p.kw, kx = tap - ky * p.kw;
  int dy = int(ky * p.dh) - int(p.ph), dx = int(kx * p.dw) - int(p.pw);
  uint pixels = p.OH * p.OW;
  uint img = n / pixels, pix = n - img * pixels;
  uint oy = pix / p.OW, ox = pix - oy * p.OW;
  uint channel = g * p.Cg + c;
  float v[PIXELS];
  [[unroll]] for (uint j = 0u; j < PIXELS; ++j) {
    v[j] = 0.0;
    int iy = int(oy * p.sh) + dy, ix = int(ox * p.sw) + dx;
    if (n + j < p.N && iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) {
      v[j] = float(x[((img * p.C + channel) * p.H + uint(iy)) * p.W + uint(ix)]);
    }
    if (++ox == p.OW) {
      ox = 0u;
      if (++oy == p.OH) {
        oy = 0u;
        ++img;
      }
    }
  }
  uint at = row * p.N + n;
  if (VEC != 0) {
#ifdef GPUU_F16
    y16[at / 8u] = pack8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
#else
    y16[at / 4u] = floatBitsToUint(vec4(v[0], v[1], v[2], v[3]));
#endif
  } else {
    [[unroll]] for (uint j = 0u; j < PIXELS; ++j) {
      if (n + j < p.N) y[at + j] = T(v[j]);
    }
  }
}
