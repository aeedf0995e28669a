// IEEE 754 binary16 ("half") <-> float/double conversions, bit-exact and
// portable: f16 tensors are stored as uint16_t and computed in wider types.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpuu {

// Half -> float is exact (every half is a float), subnormals, infinities and
// NaN payloads included.
inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
  } else if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, or NaN keeping its payload
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);  // rebias 15 -> 127
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Double -> half with round-to-nearest-even, done once on the double's bits so
// that results computed in double are not rounded twice (double -> float -> half
// can differ from the correctly rounded half). Overflow gives +-inf; NaN stays
// NaN (quiet, sign kept); values below half the smallest subnormal give +-0.
inline uint16_t double_to_half(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  uint64_t magnitude = x & 0x7FFFFFFFFFFFFFFFull;
  if (magnitude >= 0x7FF0000000000000ull) {
    return static_cast<uint16_t>(sign | (magnitude > 0x7FF0000000000000ull ? 0x7E00u : 0x7C00u));
  }
  int64_t exponent = static_cast<int64_t>(magnitude >> 52) - 1023;  // unbiased
  uint64_t mantissa = magnitude & 0xFFFFFFFFFFFFFull;
  if (exponent > 15) return static_cast<uint16_t>(sign | 0x7C00u);
  if (exponent >= -14) {
    // Normal half: keep the top 10 of 52 mantissa bits, round on the other 42.
    uint64_t h = (static_cast<uint64_t>(exponent + 15) << 10) | (mantissa >> 42);
    uint64_t rest = mantissa & ((uint64_t{1} << 42) - 1);
    const uint64_t halfway = uint64_t{1} << 41;
    if (rest > halfway || (rest == halfway && (h & 1))) ++h;  // a carry may bump the exponent, even to inf
    return static_cast<uint16_t>(sign | (h >= 0x7C00u ? 0x7C00u : h));
  }
  // Subnormal half: the result is round(value * 2^24) = round(M * 2^-shift)
  // with M the 53-bit significand. Double subnormals are far below that range.
  if (magnitude < 0x0010000000000000ull) return sign;
  uint64_t significand = mantissa | (uint64_t{1} << 52);
  int64_t shift = -exponent + 28;  // exponent < -14, so shift > 42
  if (shift > 53) return sign;     // below 2^-25 (or at it: ties to the even 0)
  uint64_t m = significand >> shift;
  uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
  uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (m & 1))) ++m;  // 0x400 is the smallest normal: still right
  return static_cast<uint16_t>(sign | m);
}

// Float -> half, round-to-nearest-even (float -> double is exact).
inline uint16_t float_to_half(float f) { return double_to_half(static_cast<double>(f)); }

}  // namespace gpuu
