// TOSA 1.0's apply_scale_32 / apply_scale_16 in 64-bit integers (needs
// shaderInt64): (value * multiplier + round) >> shift, round = 2^(shift-1)
// (0 for shift 0), double rounding adding +-2^30 by the sign of value when
// shift > 31; the 64-bit arithmetic wraps, the shift is arithmetic and the
// result keeps its low 32 bits, as the CPU reference does.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

int apply_scale(int64_t value, int multiplier, int shift, bool double_round) {
  uint64_t round = shift > 0 ? (uint64_t(1) << uint(shift - 1)) : uint64_t(0);
  if (double_round && shift > 31) round += value >= int64_t(0) ? (uint64_t(1) << 30) : (uint64_t(0) - (uint64_t(1) << 30));
  uint64_t product;
  if (int64_t(int(value)) == value) {
    // The usual case (a GEMM's i32 sum, an i8 or i16 value less its zero
    // point): one 32 x 32 -> 64 multiply gives the same product, where a
    // 64 x 64 one is several of the GPU's 32-bit ones.
    int hi, lo;
    imulExtended(int(value), multiplier, hi, lo);
    product = uint64_t(packInt2x32(ivec2(lo, hi))) + round;
  } else {
    product = uint64_t(value) * uint64_t(int64_t(multiplier)) + round;
  }
  return int(int64_t(product) >> uint(shift));
}

// TOSA RESCALE of one value: less the input zero point, scaled (or not, for
// an integer clamp), plus the output zero point, clamped to [lo, hi]. The
// one spelling of the sequence for rescale.comp and the GEMM stores that
// requantize (int8_requantize.glsl).
int rescale_value(int64_t value, int input_zp, bool scaled, int multiplier, int shift, bool double_round,
                  int output_zp, int64_t lo, int64_t hi) {
  int64_t o = value - int64_t(input_zp);
  if (scaled) o = int64_t(apply_scale(o, multiplier, shift, double_round));
  return int(clamp(o + int64_t(output_zp), lo, hi));
}
