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
// GPUU_I8: conv2d_int's view of i8 bytes for the int8 GEMMs, the input zero
// point in the padding, each row padded to whole 16-byte runs (N16 bytes,
// past N the zero point too, never summed into a stored column) so that
// every invocation writes one uvec4.
#include "common.glsl"

// 1 where rows are whole chunks of PIXELS (N % PIXELS == 0) and the output
// starts 16-byte aligned: one 16-byte store per invocation.
layout(constant_id = 0) const int VEC = 0;

#if defined(GPUU_I8)
#define PIXELS 16u
#elif defined(GPUU_F16)
#define PIXELS 8u
#else
#define PIXELS 4u
#endif
#ifdef GPUU_I8
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
#else
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
#endif
layout(std430, set = 0, binding = 1) writeonly buffer Out16 { uvec4 y16[]; };
layout(push_constant) uniform Params {
  uint count;           // invocations: groups * K rows x chunks_per_row
  uint chunks_per_row;  // ceil(N / PIXELS)
  uint N, K;            // K: taps per group
  // As the GEMM's conv form has them (gemm_common.glsl; O unused here).
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
#ifdef GPUU_I8
  int zp;   // the input's zero point
#endif
} p;

#ifdef GPUU_I8
// Gathered less the zero point, so that the padding's 0 is the zero point
// once added back (exact: |byte - zp| <= 255).
#define CONV_INPUT(i) float(bitfieldExtract(int(x_words[(i) >> 2u]), int(((i) & 3u) * 8u), 8) - p.zp)
#else
#define CONV_INPUT(i) float(x[i])
#endif
#include "conv_gather.glsl"

#ifdef GPUU_I8
// Eight gathered values (less the zero point) as bytes in two words.
uvec2 pack_bytes(float v[8]) {
  uvec2 w = uvec2(0u);
  [[unroll]] for (uint j = 0u; j < 8u; ++j) w[j / 4u] |= (uint(int(v[j]) + p.zp) & 0xFFu) << (8u * (j % 4u));
  return w;
}
#endif

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint row = i / p.chunks_per_row;
  uint n = (i - row * p.chunks_per_row) * PIXELS;
  uint g = row / p.K;
  float v[8];
#ifdef GPUU_I8
  float v2[8];
  gather_conv_row(g, row - g * p.K, n, 8u, v);
  gather_conv_row(g, row - g * p.K, n + 8u, 8u, v2);
  y16[i] = uvec4(pack_bytes(v), pack_bytes(v2));
#else
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
#endif
}
