#version 450
#extension GL_EXT_control_flow_attributes : require
// conv2d's im2col view, materialized for the implicit GEMM that follows
// (gemm_common.glsl's CONV_IM2COL): [groups][K][N] with K = C/groups * kH *
// kW taps (channel-major) and N = batch * OH * OW pixels, zero padding
// included. Gathering the view inside the GEMM tile costs index arithmetic
// per element in a kernel of few workgroups; here every element has an
// invocation's share of a GPU-wide dispatch and the GEMM reads plain rows.
// An invocation writes PIXELS consecutive pixels of one row, 16 bytes (8
// halves or 4 floats), gathered as a GEMM tile gathers them
// (conv_gather.glsl). (4 halves an invocation wrote resnet50's batch-8 views
// at ~900 GB/s on the H100.)
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

#define CONV_INPUT(i) float(x[i])
#include "conv_gather.glsl"

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint row = i / p.chunks_per_row;
  uint n = (i - row * p.chunks_per_row) * PIXELS;
  uint g = row / p.K;
  float v[8];
  gather_conv_row(g, row - g * p.K, n, PIXELS, v);
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
