#version 450
// A chain of elementwise ops in one dispatch. The chain is baked in as
// specialization constants (one instruction word each: op | a << 8 | b << 16,
// operands naming registers: 0..3 the inputs, 4 + k the result of
// instruction k), so the driver unrolls it into straight-line code: each
// element is read once, computed in registers, and written once.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAX_INPUTS LIMIT_FUSED_MAX_INPUTS
#if LIMIT_FUSED_MAX_INPUTS != 4 || LIMIT_FUSED_MAX_INSTRUCTIONS != 40
#error "the value lists below (v0..v43, C0..C39) are written for 4 inputs and 40 instructions"
#endif
#define MAX_INSTRUCTIONS LIMIT_FUSED_MAX_INSTRUCTIONS

layout(constant_id = 0) const int N_INPUTS = 1;
layout(constant_id = 1) const int N_INSTRUCTIONS = 1;
layout(constant_id = 2) const int C0 = 0;
layout(constant_id = 3) const int C1 = 0;
layout(constant_id = 4) const int C2 = 0;
layout(constant_id = 5) const int C3 = 0;
layout(constant_id = 6) const int C4 = 0;
layout(constant_id = 7) const int C5 = 0;
layout(constant_id = 8) const int C6 = 0;
layout(constant_id = 9) const int C7 = 0;
layout(constant_id = 10) const int C8 = 0;
layout(constant_id = 11) const int C9 = 0;
layout(constant_id = 12) const int C10 = 0;
layout(constant_id = 13) const int C11 = 0;
layout(constant_id = 14) const int C12 = 0;
layout(constant_id = 15) const int C13 = 0;
layout(constant_id = 16) const int C14 = 0;
layout(constant_id = 17) const int C15 = 0;
layout(constant_id = 18) const int C16 = 0;
layout(constant_id = 19) const int C17 = 0;
layout(constant_id = 20) const int C18 = 0;
layout(constant_id = 21) const int C19 = 0;
layout(constant_id = 22) const int C20 = 0;
layout(constant_id = 23) const int C21 = 0;
layout(constant_id = 24) const int C22 = 0;
layout(constant_id = 25) const int C23 = 0;
layout(constant_id = 26) const int C24 = 0;
layout(constant_id = 27) const int C25 = 0;
layout(constant_id = 28) const int C26 = 0;
layout(constant_id = 29) const int C27 = 0;
layout(constant_id = 30) const int C28 = 0;
layout(constant_id = 31) const int C29 = 0;
layout(constant_id = 32) const int C30 = 0;
layout(constant_id = 33) const int C31 = 0;
layout(constant_id = 34) const int C32 = 0;
layout(constant_id = 35) const int C33 = 0;
layout(constant_id = 36) const int C34 = 0;
layout(constant_id = 37) const int C35 = 0;
layout(constant_id = 38) const int C36 = 0;
layout(constant_id = 39) const int C37 = 0;
layout(constant_id = 40) const int C38 = 0;
layout(constant_id = 41) const int C39 = 0;
// Bit k set: input k has the output's shape, so element i is at index i.
layout(constant_id = 42) const int CONTIGUOUS = 0;

layout(std430, set = 0, binding = 0) readonly buffer In0 { T in0[]; };
layout(std430, set = 0, binding = 1) readonly buffer In1 { T in1[]; };
layout(std430, set = 0, binding = 2) readonly buffer In2 { T in2[]; };
layout(std430, set = 0, binding = 3) readonly buffer In3 { T in3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { T y[]; };

// Input strides over the output shape (0 on broadcast axes), four inputs.
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint strides[MAX_INPUTS * MAX_RANK];
} p;

float erf_approx(float v) {
  float s = sign(v);
  float a = abs(v);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-a * a));
}

// Op codes: UNARY_* for unary ops, FUSED_BINARY_BASE + BINARY_* for arithmetic.
float apply(int op, float u, float v) {
  switch (op) {
    case UNARY_ABS: return abs(u);
    case UNARY_NEG: return -u;
    case UNARY_EXP: return exp(u);
    case UNARY_LOG: return log(u);
    case UNARY_SQRT: return sqrt(u);
    case UNARY_RSQRT: return inversesqrt(u);
    case UNARY_RECIPROCAL: return 1.0 / u;
    case UNARY_SIN: return sin(u);
    case UNARY_COS: return cos(u);
    case UNARY_TANH: return tanh(clamp(u, -15.0, 15.0));
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-u));
    case UNARY_RELU: return max(u, 0.0);
    case UNARY_GELU: return 0.5 * u * (1.0 + erf_approx(u * 0.70710678118654752));
    case UNARY_GELU_TANH: return 0.5 * u * (1.0 + tanh(clamp(0.79788456080286536 * (u + 0.044715 * u * u * u), -15.0, 15.0)));
    case UNARY_ERF: return erf_approx(u);
    case UNARY_FLOOR: return floor(u);
    case UNARY_CEIL: return ceil(u);
    case FUSED_BINARY_BASE + BINARY_ADD: return u + v;
    case FUSED_BINARY_BASE + BINARY_SUB: return u - v;
    case FUSED_BINARY_BASE + BINARY_MUL: return u * v;
    case FUSED_BINARY_BASE + BINARY_DIV: return u / v;
    case FUSED_BINARY_BASE + BINARY_POW: {
      if (u >= 0.0) return pow(u, v);
      if (v != floor(v)) return 0.0 / 0.0;
      float m = pow(-u, v);
      return mod(v, 2.0) == 1.0 ? -m : m;
    }
    case FUSED_BINARY_BASE + BINARY_MAXIMUM: return max(u, v);
    case FUSED_BINARY_BASE + BINARY_MINIMUM: return min(u, v);
  }
  return u;
}

uint input_offset(uint i, int which) {
  if ((CONTIGUOUS & (1 << which)) != 0) return i;
  uint off = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    off += c * p.strides[which * MAX_RANK + d];
  }
  return off;
}

// The chain's values are scalars v0..v43 (v0..v3 the inputs, v4 + k the
// result of instruction k); an operand is picked by a comparison chain on
// specialization constants, which the driver folds away, so every value
// lives in a register (an array indexed this way may be left in local
// memory: with 40 instructions, one was, at half the bandwidth).
#define PICK(i) \
  ( \
   (i) == 0 ? v0 : (i) == 1 ? v1 : (i) == 2 ? v2 : (i) == 3 ? v3 : (i) == 4 ? v4 : (i) == 5 ? v5 : \
   (i) == 6 ? v6 : (i) == 7 ? v7 : (i) == 8 ? v8 : (i) == 9 ? v9 : (i) == 10 ? v10 : (i) == 11 ? v11 : \
   (i) == 12 ? v12 : (i) == 13 ? v13 : (i) == 14 ? v14 : (i) == 15 ? v15 : (i) == 16 ? v16 : (i) == 17 ? v17 : \
   (i) == 18 ? v18 : (i) == 19 ? v19 : (i) == 20 ? v20 : (i) == 21 ? v21 : (i) == 22 ? v22 : (i) == 23 ? v23 : \
   (i) == 24 ? v24 : (i) == 25 ? v25 : (i) == 26 ? v26 : (i) == 27 ? v27 : (i) == 28 ? v28 : (i) == 29 ? v29 : \
   (i) == 30 ? v30 : (i) == 31 ? v31 : (i) == 32 ? v32 : (i) == 33 ? v33 : (i) == 34 ? v34 : (i) == 35 ? v35 : \
   (i) == 36 ? v36 : (i) == 37 ? v37 : (i) == 38 ? v38 : (i) == 39 ? v39 : (i) == 40 ? v40 : (i) == 41 ? v41 : \
   (i) == 42 ? v42 : v43)

#define STEP(k, DST, CODE) \
  if (k < N_INSTRUCTIONS) DST = apply((CODE) & 0xff, PICK(((CODE) >> 8) & 0xff), PICK(((CODE) >> 16) & 0xff));
#define RUN \
  STEP(0, v4, C0) STEP(1, v5, C1) STEP(2, v6, C2) STEP(3, v7, C3) \
  STEP(4, v8, C4) STEP(5, v9, C5) STEP(6, v10, C6) STEP(7, v11, C7) \
  STEP(8, v12, C8) STEP(9, v13, C9) STEP(10, v14, C10) STEP(11, v15, C11) \
  STEP(12, v16, C12) STEP(13, v17, C13) STEP(14, v18, C14) STEP(15, v19, C15) \
  STEP(16, v20, C16) STEP(17, v21, C17) STEP(18, v22, C18) STEP(19, v23, C19) \
  STEP(20, v24, C20) STEP(21, v25, C21) STEP(22, v26, C22) STEP(23, v27, C23) \
  STEP(24, v28, C24) STEP(25, v29, C25) STEP(26, v30, C26) STEP(27, v31, C27) \
  STEP(28, v32, C28) STEP(29, v33, C29) STEP(30, v34, C30) STEP(31, v35, C31) \
  STEP(32, v36, C32) STEP(33, v37, C33) STEP(34, v38, C34) STEP(35, v39, C35) \
  STEP(36, v40, C36) STEP(37, v41, C37) STEP(38, v42, C38) STEP(39, v43, C39)

#define DECLARE_VALUES float v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0, v5 = 0.0, v6 = 0.0, v7 = 0.0, v8 = 0.0, v9 = 0.0, v10 = 0.0, v11 = 0.0, v12 = 0.0, v13 = 0.0, v14 = 0.0, v15 = 0.0, v16 = 0.0, v17 = 0.0, v18 = 0.0, v19 = 0.0, v20 = 0.0, v21 = 0.0, v22 = 0.0, v23 = 0.0, v24 = 0.0, v25 = 0.0, v26 = 0.0, v27 = 0.0, v28 = 0.0, v29 = 0.0, v30 = 0.0, v31 = 0.0, v32 = 0.0, v33 = 0.0, v34 = 0.0, v35 = 0.0, v36 = 0.0, v37 = 0.0, v38 = 0.0, v39 = 0.0, v40 = 0.0, v41 = 0.0, v42 = 0.0, v43 = 0.0;

float load(uint i, int which) {
  switch (which) {
    case 0: return float(in0[input_offset(i, 0)]);
    case 1: return float(in1[input_offset(i, 1)]);
    case 2: return float(in2[input_offset(i, 2)]);
    default: return float(in3[input_offset(i, 3)]);
  }
}

// Each invocation takes LIMIT_FUSED_PER_THREAD elements a slice of the
// tensor apart: all their loads are issued before any arithmetic, so a
// memory-bound chain keeps enough bytes in flight to reach the bus's
// bandwidth, while neighbouring invocations still read neighbouring words.
// Only the loaded inputs are kept per element; the chain then runs one
// element at a time.
void main() {
  const uint slice = (p.count + LIMIT_FUSED_PER_THREAD - 1) / LIMIT_FUSED_PER_THREAD;
  uint t = linear_id();
  if (t >= slice) return;
  float x[LIMIT_FUSED_PER_THREAD][MAX_INPUTS];
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    uint i = min(t + uint(k) * slice, p.count - 1);  // past the end: a harmless re-read
    [[unroll]] for (int j = 0; j < MAX_INPUTS; ++j) x[k][j] = j < N_INPUTS ? load(i, j) : 0.0;
  }
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    DECLARE_VALUES
    v0 = x[k][0];
    v1 = x[k][1];
    v2 = x[k][2];
    v3 = x[k][3];
    RUN
    float result = PICK(MAX_INPUTS + N_INSTRUCTIONS - 1);
    uint i = t + uint(k) * slice;
    if (i < p.count) y[i] = T(result);
  }
}
