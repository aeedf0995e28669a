#version 450
// conv2d_int over 16-bit activations on the int8 GEMMs (a16w8): an i16 x is
// 256 * hi + lo with hi = x >> 8 (signed) and lo = x & 255 (unsigned), so the
// sum over a window of x * w is 256 times hi's sum plus lo's, each an int8
// GEMM with i32 sums. lo goes to the GEMM as the signed byte lo - 128 with
// input zero point -128 (the GEMMs take signed bytes; padding then reads
// as the zero point, 0 as it should).
// GPUU_SPLIT: x into its two i8 halves, hi and lo - 128, one invocation per
// output word (four elements of each). Else (join): the two GEMMs' i32 sums
// joined into the i64 output (int16_join.glsl), one invocation per output
// element. A linear's (rows != 0): x [rows, K] split into halves [K, stride]
// (stride >= rows, the columns past rows zeros), and sums [O, stride] joined
// into y [rows, O].
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"
#include "int_load.glsl"

#ifdef GPUU_SPLIT
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Hi { uint hi_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Lo { uint lo_words[]; };
layout(push_constant) uniform Params {
  uint count;  // of the halves
  uint rows, stride, K;  // a linear's (rows 0: not transposed)
} p;

void main() {
  uint word = linear_id(), first = word * 4u;
  if (first >= p.count) return;
  uint hi = 0u, lo = 0u;
  for (uint k = 0u; k < 4u && first + k < p.count; ++k) {
    uint at = first + k;  // element (c, r) of the halves [K, stride] reads x's (r, c)
    if (p.rows != 0u) {
      const uint r = at % p.stride;
      if (r >= p.rows) continue;  // padding: zero bytes
      at = r * p.K + at / p.stride;
    }
    int x = LOAD_I16(x_words, at);
    hi |= bitfieldExtract(uint(x >> 8), 0, 8) << (8u * k);
    lo |= ((uint(x) & 0xFFu) ^ 0x80u) << (8u * k);  // (x & 255) - 128 as a signed byte
  }
  hi_words[word] = hi;
  lo_words[word] = lo;
}
#else
#define JOIN_HI_BINDING 0
#define JOIN_LO_BINDING 1
#define JOIN_BIAS_BINDING 2
#define JOIN_BIAS_ID 0
#include "int16_join.glsl"
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  JOIN_PUSH
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  int64_t v = joined_sum(i, p.join_pixels, p.join_channels, p.join_stride);
  out_words[2u * i] = uint(v & int64_t(0xFFFFFFFF));
  out_words[2u * i + 1u] = uint(v >> 32);
}
#endif
