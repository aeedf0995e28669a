// TOSA 1.0's apply_scale_32 / apply_scale_16 in 64-bit integers (needs
// shaderInt64): (value * multiplier + round) >> shift, round = 2^(shift-1)
// (0 for shift 0), double rounding adding +-2^30 by the sign of value when
// shift > 31; the 64-bit arithmetic wraps, the shift is arithmetic and the
// result keeps its low 32 bits, as the CPU reference does.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

int apply_scale(int64_t value, int multiplier, int shift, bool double_round) {
  uint64_t round = shift > 0 ? (uint64_t(1) << uint(shift - 1)) : uint64_t(0);
  if (double_round && shift > 31) round += value >= int64_t(0) ? (uint64_t(1) << 30) : (uint64_t(0) - (uint64_t(1) << 30));
  uint64_t product = uint64_t(value) * uint64_t(int64_t(multiplier)) + round;
  return int(int64_t(product) >> uint(shift));
}
