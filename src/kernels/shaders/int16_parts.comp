#version 450
// conv2d_int over 16-bit activations on the int8 GEMMs (a16w8): an i16 x is
// 256 * hi + lo with hi = x >> 8 (signed) and lo = x & 255 (unsigned), so the
// sum over a window of x * w is 256 times hi's sum plus lo's, each an int8
// GEMM with i32 sums. lo goes to the GEMM as the signed byte lo - 128 with
// input zero point -128 (the GEMMs take signed bytes; padding then reads
// as the zero point, 0 as it should).
// GPUU_SPLIT: x into its two i8 halves, hi and lo - 128, one invocation per
// output word (four elements of each). Else (join): the two GEMMs' i32 sums
// into the i64 output, 256 * hi + lo (+ the i64 bias of the element's output
// channel), one invocation per output element. A linear's (rows != 0): x
// [rows, K] split into halves [K, stride] (stride >= rows, the columns past
// rows zeros), and sums [O, stride] joined into y [rows, O].
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
layout(constant_id = 0) const int HAS_BIAS = 0;
layout(std430, set = 0, binding = 0) readonly buffer Hi { int hi[]; };
layout(std430, set = 0, binding = 1) readonly buffer Lo { int lo[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { uint bias_words[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint pixels;  // per output channel of one image
  uint O;       // output channels
  uint stride;  // a linear's sums' row stride (0: not transposed)
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint at = p.stride != 0u ? (i % p.O) * p.stride + i / p.O : i;  // y's (r, o) is the sums' (o, r)
  int64_t v = int64_t(hi[at]) * 256 + int64_t(lo[at]);
  if (HAS_BIAS != 0) {
    uint o = (i / p.pixels) % p.O;
    v += int64_t(bias_words[2u * o]) | (int64_t(int(bias_words[2u * o + 1u])) << 32);
  }
  out_words[2u * i] = uint(v & int64_t(0xFFFFFFFF));
  out_words[2u * i + 1u] = uint(v >> 32);
}
#endif
