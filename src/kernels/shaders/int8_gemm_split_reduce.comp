#version 450
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

layout(std430, set = 0, binding = 0) readonly buffer Partial { int partial[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { int y[]; };
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

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  int v = 0;
  for (uint s = 0u; s < p.splits; ++s) v += partial[s * p.count + i];
  uint n = i % p.N, row = i / p.N;  // conv: row is the output channel
  if (CONV != 0) {
    uint img = n / p.pixels;
    store((img * p.O + row) * p.pixels + (n - img * p.pixels), row, n, v);
  } else {
    store(i, row, n, v);
  }
}
