// An int8 GEMM's store requantizing its i32 sums as the TOSA RESCALE that
// alone reads them would (rescale.comp: int_scale.glsl's arithmetic, zero
// points, clamp to [lo, hi]): int8_gemm_coopmat.comp and its split-K
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
  int scaled = apply_scale(int64_t(v) - int64_t(input_zp), rq_multiplier[c], rq_shift[c], RQ_DOUBLE_ROUND != 0);
  return int(clamp(int64_t(scaled) + int64_t(output_zp), int64_t(lo), int64_t(hi)));
}
