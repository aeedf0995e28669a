#version 450
// cast between f32, f16, i32, i64, i8 and bool using only 32-bit integer and
// float arithmetic (no 16-bit, 8-bit or 64-bit shader types), rounding and
// saturating exactly as the CPU reference: float -> float rounds to nearest
// even; float -> integer truncates toward zero and saturates, NaN -> 0;
// integer -> narrower integer wraps; integer -> float rounds once to nearest
// even; anything -> bool is x != 0 (NaN is true); bool -> number is 0/1.
#include "common.glsl"
#include "int_convert.glsl"

// The dtype pair comes in push constants, not specialization constants: the
// branches on it are uniform, and a model's casts then share one pipeline per
// output element size instead of compiling one per pair.
layout(constant_id = 0) const int ESIZE = 4;  // output element bytes
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  int src;       // DTYPE_* of op_codes.txt
  int dst;
  int src_size;  // input element bytes
} p;

#define SRC p.src
#define DST p.dst

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_x, x_words, p.src_size)

float half_bits_to_float(uint h) {
  uint sign = (h & 0x8000u) << 16u;
  uint e = (h >> 10u) & 0x1Fu;
  uint m = h & 0x3FFu;
  if (e == 0x1Fu) return uintBitsToFloat(sign | 0x7F800000u | (m << 13u));
  if (e == 0u) {
    // Subnormal: m * 2^-24, exact in f32 (and a normal f32, so never flushed).
    float v = float(m) * 5.9604644775390625e-8;
    return sign != 0u ? -v : v;
  }
  return uintBitsToFloat(sign | ((e + 112u) << 23u) | (m << 13u));
}

// f32 bits -> f16 bits, round to nearest even; overflow -> inf, NaN stays NaN.
uint float_bits_to_half(uint x) {
  uint sign = (x >> 16u) & 0x8000u;
  uint e = (x >> 23u) & 0xFFu;
  uint mant = x & 0x7FFFFFu;
  if (e == 0xFFu) return sign | 0x7C00u | (mant != 0u ? (0x200u | (mant >> 13u)) : 0u);
  if (e >= 143u) return sign | 0x7C00u;  // >= 2^16: beyond any rounding to 65504
  if (e >= 113u) {
    // Normal half: keep 10 mantissa bits; a carry out of them bumps the
    // exponent, and out of the largest exponent gives inf, as it should.
    uint h = ((e - 112u) << 10u) | (mant >> 13u);
    uint rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h += 1u;
    return sign | h;
  }
  // Subnormal half (units of 2^-24), or zero when even the rounding bit is gone.
  uint shift = 126u - e;  // >= 14
  if (shift > 24u) return sign;
  uint sig = mant | 0x800000u;
  uint h = sig >> shift;
  uint rest = sig & ((1u << shift) - 1u);
  uint halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (h & 1u) != 0u)) h += 1u;
  return sign | h;
}

// Two's complement int64 (low, high words) -> f32 bits, one rounding to nearest even.
uint int64_to_float_bits(uvec2 v) {
  bool negative = int(v.y) < 0;
  uint lo = v.x, hi = v.y;
  if (negative) {  // magnitude; INT64_MIN stays 2^63 read as unsigned
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0u ? 1u : 0u);
  }
  if (hi == 0u && lo == 0u) return 0u;
  int msb = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);
  uint m;
  if (msb <= 23) {
    m = lo << uint(23 - msb);
  } else {
    uint shift = uint(msb - 23);  // 1..40
    m = shift >= 32u ? hi >> (shift - 32u) : (lo >> shift) | (hi << (32u - shift));
    uint r = shift - 1u;  // the rounding bit
    uint round_bit = r >= 32u ? (hi >> (r - 32u)) & 1u : (lo >> r) & 1u;
    bool sticky = r >= 32u ? (lo != 0u || (hi & ((1u << (r - 32u)) - 1u)) != 0u) : (lo & ((1u << r) - 1u)) != 0u;
    if (round_bit != 0u && (sticky || (m & 1u) != 0u)) m += 1u;
    if (m == 0x1000000u) {  // rounded up to the next power of two
      m >>= 1u;
      msb += 1;
    }
  }
  return (negative ? 0x80000000u : 0u) | (uint(msb + 127) << 23u) | (m & 0x7FFFFFu);
}

// f32 -> int64 (low, high words), truncating toward zero, saturating, NaN -> 0.
uvec2 float_to_int64(float f) {
  if (isnan(f)) return uvec2(0u);
  if (f >= 9223372036854775808.0) return uvec2(0xFFFFFFFFu, 0x7FFFFFFFu);
  if (f <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
  if (abs(f) < 2147483648.0) {
    int i = int(f);
    return uvec2(uint(i), i < 0 ? 0xFFFFFFFFu : 0u);
  }
  // |f| >= 2^31 is a whole number; split it into 2^32 * hi + lo exactly.
  float hi = floor(f * 2.3283064365386963e-10);
  float lo = f - hi * 4294967296.0;
  return uvec2(uint(lo), uint(int(hi)));
}

uvec2 element(uint i) {
  uvec2 raw = load_x(i);
  bool from_float = SRC == DTYPE_F32 || SRC == DTYPE_F16;
  // A float source as f32 (exact for f16); an integer source as int64 words.
  float f = SRC == DTYPE_F32 ? uintBitsToFloat(raw.x) : half_bits_to_float(raw.x);
  uvec2 n = raw;
  if (SRC == DTYPE_I32) n = uvec2(raw.x, int(raw.x) < 0 ? 0xFFFFFFFFu : 0u);
  if (SRC == DTYPE_I8) {
    int b = bitfieldExtract(int(raw.x), 0, 8);
    n = uvec2(uint(b), b < 0 ? 0xFFFFFFFFu : 0u);
  }
  if (SRC == DTYPE_I16) {
    int h = bitfieldExtract(int(raw.x), 0, 16);
    n = uvec2(uint(h), h < 0 ? 0xFFFFFFFFu : 0u);
  }
  if (SRC == DTYPE_BOOL) n = uvec2(raw.x != 0u ? 1u : 0u, 0u);

  if (DST == DTYPE_BOOL) {
    bool nonzero = SRC == DTYPE_F32 ? (raw.x & 0x7FFFFFFFu) != 0u : SRC == DTYPE_F16 ? (raw.x & 0x7FFFu) != 0u : (n.x | n.y) != 0u;
    return uvec2(nonzero ? 1u : 0u, 0u);
  }
  if (DST == DTYPE_F32) return uvec2(from_float ? floatBitsToUint(f) : int64_to_float_bits(n), 0u);
  if (DST == DTYPE_F16) {
    if (from_float) return uvec2(float_bits_to_half(floatBitsToUint(f)), 0u);
    // Beyond the int32 range the value is far past half's 65504: inf. Inside
    // it, values up to 2^24 convert to f32 exactly; larger ones become inf in
    // half either way, so two roundings give the one the reference gives.
    bool fits32 = n.y == (int(n.x) < 0 ? 0xFFFFFFFFu : 0u);
    if (!fits32) return uvec2(int(n.y) < 0 ? 0xFC00u : 0x7C00u, 0u);
    return uvec2(float_bits_to_half(int64_to_float_bits(n)), 0u);
  }
  if (DST == DTYPE_I32) return uvec2(from_float ? uint(float_to_int_saturated(f, -2147483647 - 1, 2147483647)) : n.x, 0u);
  if (DST == DTYPE_I8) return uvec2(from_float ? uint(float_to_int_saturated(f, -128, 127)) : n.x, 0u);
  if (DST == DTYPE_I16) return uvec2(from_float ? uint(float_to_int_saturated(f, -32768, 32767)) : n.x, 0u);
  return from_float ? float_to_int64(f) : n;  // DST == DTYPE_I64
}
