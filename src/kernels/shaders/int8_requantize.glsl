// An int8 GEMM's store requantizing its i32 sums as the TOSA RESCALE that
// alone reads them would (rescale.comp: int_scale.glsl's arithmetic, zero
// points, clamp to [lo, hi]: rescale_value): int8_gemm_coopmat.comp and its split-K
// reduction under GPUU_RESCALE. The multipliers are bound at RQ_BINDING
// (default 4), the shifts at the next binding; the including shader ends its
// push constants with RQ_PUSH.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "int_scale.glsl"

// Per channel (the output channel of conv2d, the column of matmul) or one
// multiplier and shift for the tensor; TOSA's double rounding.
layout(constant_id = 10) const int RQ_PER_CHANNEL = 0;
layout(constant_id = 11) const int RQ_DOUBLE_ROUND = 0;
#ifndef RQ_BINDING
#define RQ_BINDING 4
#endif
layout(std430, set = 0, binding = RQ_BINDING) readonly buffer RqMultiplier { int rq_multiplier[]; };
layout(std430, set = 0, binding = RQ_BINDING + 1) readonly buffer RqShift { int rq_shift[]; };
#define RQ_PUSH int rq_input_zp, rq_output_zp, rq_lo, rq_hi;

int requantize(int v, uint channel, int input_zp, int output_zp, int lo, int hi) {
  uint c = RQ_PER_CHANNEL != 0 ? channel : 0u;
  return rescale_value(int64_t(v), input_zp, true, rq_multiplier[c], rq_shift[c], RQ_DOUBLE_ROUND != 0, output_zp,
                       int64_t(lo), int64_t(hi));
}

#ifdef GPUU_RESIDUAL
// A residual block's int8 add after the rescale (TOSA's form of x + skip
// between int8 tensors): its result r (an i8) and the skip connection's i8
// element are each rescaled to i32 (A and B), added (wrapping), and rescaled
// to the output (C). A, B and C scale the whole tensor; their zero points,
// signedness, rounding and C's clamp are specialization constants; the skip
// and the six multiplier / shift tensors are bound from RES_BINDING on.
layout(constant_id = 12) const int RA_IN_ZP = 0;
layout(constant_id = 13) const int RA_OUT_ZP = 0;
layout(constant_id = 14) const int RA_IN_UNSIGNED = 0;
layout(constant_id = 15) const int RA_DOUBLE_ROUND = 0;
layout(constant_id = 16) const int RB_IN_ZP = 0;
layout(constant_id = 17) const int RB_OUT_ZP = 0;
layout(constant_id = 18) const int RB_IN_UNSIGNED = 0;
layout(constant_id = 19) const int RB_DOUBLE_ROUND = 0;
layout(constant_id = 20) const int RC_IN_ZP = 0;
layout(constant_id = 21) const int RC_OUT_ZP = 0;
layout(constant_id = 22) const int RC_LO = -128;
layout(constant_id = 23) const int RC_HI = 127;
layout(constant_id = 24) const int RC_DOUBLE_ROUND = 0;
layout(std430, set = 0, binding = RES_BINDING) readonly buffer Skip { uint skip_words[]; };
layout(std430, set = 0, binding = RES_BINDING + 1) readonly buffer RaMultiplier { int ra_multiplier[]; };
layout(std430, set = 0, binding = RES_BINDING + 2) readonly buffer RaShift { int ra_shift[]; };
layout(std430, set = 0, binding = RES_BINDING + 3) readonly buffer RbMultiplier { int rb_multiplier[]; };
layout(std430, set = 0, binding = RES_BINDING + 4) readonly buffer RbShift { int rb_shift[]; };
layout(std430, set = 0, binding = RES_BINDING + 5) readonly buffer RcMultiplier { int rc_multiplier[]; };
layout(std430, set = 0, binding = RES_BINDING + 6) readonly buffer RcShift { int rc_shift[]; };

// An i8 element as a rescale reads it: its byte, signed or unsigned.
int64_t i8_value(uint byte, int is_unsigned) {
  return int64_t(is_unsigned != 0 ? int(byte) : bitfieldExtract(int(byte), 0, 8));
}

// The skip connection's byte at output element o.
uint skip_byte(uint o) { return (skip_words[o >> 2u] >> ((o & 3u) * 8u)) & 0xFFu; }

// The block's output element, r being the GEMM's requantized result there and
// skip the skip connection's byte (skip_byte).
int residual(int r, uint skip) {
  // i32 outputs clamp to the i32 range: the 64-bit value's low 32 bits after.
  int64_t i32_min = int64_t(-2147483647 - 1), i32_max = int64_t(2147483647);
  int ai = rescale_value(i8_value(uint(r) & 0xFFu, RA_IN_UNSIGNED), RA_IN_ZP, true, ra_multiplier[0], ra_shift[0],
                         RA_DOUBLE_ROUND != 0, RA_OUT_ZP, i32_min, i32_max);
  int bi = rescale_value(i8_value(skip, RB_IN_UNSIGNED), RB_IN_ZP, true, rb_multiplier[0], rb_shift[0],
                         RB_DOUBLE_ROUND != 0, RB_OUT_ZP, i32_min, i32_max);
  return rescale_value(int64_t(ai + bi), RC_IN_ZP, true, rc_multiplier[0], rc_shift[0], RC_DOUBLE_ROUND != 0,
                       RC_OUT_ZP, int64_t(RC_LO), int64_t(RC_HI));
}
#endif
