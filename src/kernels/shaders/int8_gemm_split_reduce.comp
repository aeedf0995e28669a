#version 450
#extension GL_EXT_control_flow_attributes : require
// Split-K's second step for the int8 GEMMs (int8_gemm_coopmat.comp): the
// output is the sum of the shares' i32 partials [split][batch][M][N] (the
// bias is in share 0's), one invocation per output element, stored in the
// output's layout (the GEMM's [batch][M][N], or conv2d's NCHW where batch is
// the group). The sum wraps as the unsplit one does. GPUU_RESCALE: the
// GEMM's rescale applied to the sum (GPUU_RESIDUAL: and a residual add's
// rescales after it), the i8 result stored.
#include "common.glsl"
#ifdef GPUU_RESCALE
#extension GL_EXT_shader_8bit_storage : require
#define RQ_BINDING 2
#define RES_BINDING 4
#include "int8_requantize.glsl"
#endif

layout(constant_id = 0) const int CONV = 0;
// Four outputs of a row per invocation, where N (conv: and the output's
// pixels) are multiples of 4: the partials read as ivec4s, the output (and
// the skip connection) written (read) four at a time, the row's index math
// once. One element each, the 56x56 residual reductions of resnet50 at batch
// 8 took 59 us (H100, 4760238), about 0.65 TB/s.
layout(constant_id = 1) const int RUN4 = 0;

layout(std430, set = 0, binding = 0) readonly buffer Partial { int partial[]; };
layout(std430, set = 0, binding = 0) readonly buffer Partial4 { ivec4 partial4[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { int y[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out4 { ivec4 y4[]; };
#ifdef GPUU_RESCALE
layout(std430, set = 0, binding = 1) writeonly buffer Out8 { int8_t y8[]; };
#endif
layout(push_constant) uniform Params {
  uint count;   // batches * M * N
  uint N;
  uint splits;
  uint pixels;  // CONV: output pixels per image
  uint O;       // CONV: output channels
#ifdef GPUU_RESCALE
  RQ_PUSH
#endif
} p;

// Output element `o`, of output channel (conv) or row `row` and column `n`.
void store(uint o, uint row, uint n, int v) {
#ifdef GPUU_RESCALE
  int r = requantize(v, CONV != 0 ? row : n, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#ifdef GPUU_RESIDUAL
  r = residual(r, skip_byte(o));
#endif
  y8[o] = int8_t(r);
#else
  y[o] = v;
#endif
}

// RUN4: outputs i .. i+3 (i % 4 == 0), one row's, at output element o.
void store4(uint o, uint row, uint n, ivec4 v) {
#ifdef GPUU_RESCALE
#ifdef GPUU_RESIDUAL
  const uint skip = skip_words[o / 4u];
#endif
  uint word = 0u;
  [[unroll]] for (uint e = 0u; e < 4u; ++e) {
    int r = requantize(v[e], CONV != 0 ? row : n + e, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#ifdef GPUU_RESIDUAL
    r = residual(r, (skip >> (8u * e)) & 0xFFu);
#endif
    word |= (uint(r) & 0xFFu) << (8u * e);
  }
  y[o / 4u] = int(word);
#else
  y4[o / 4u] = v;
#endif
}

void main() {
  if (RUN4 != 0) {
    const uint i = linear_id() * 4u;
    if (i >= p.count) return;
    ivec4 v = ivec4(0);
    for (uint s = 0u; s < p.splits; ++s) v += partial4[(s * p.count + i) / 4u];
    const uint n = i % p.N, row = i / p.N;
    uint o = i;
    if (CONV != 0) o = nchw_index(n, row, p.pixels, p.O);
    store4(o, row, n, v);
    return;
  }
  uint i = linear_id();
  if (i >= p.count) return;
  int v = 0;
  for (uint s = 0u; s < p.splits; ++s) v += partial[s * p.count + i];
  uint n = i % p.N, row = i / p.N;  // conv: row is the output channel
  if (CONV != 0) {
    store(nchw_index(n, row, p.pixels, p.O), row, n, v);
  } else {
    store(i, row, n, v);
  }
}
