#version 450
// A chain of elementwise ops in one dispatch. The chain is baked in as
// specialization constants (one instruction word each: op | a << 8 | b << 16,
// operands naming registers: 0..3 the inputs, 4 + k the result of
// instruction k), so the driver unrolls it into straight-line code: each
// element is read once, computed in registers, and written once.
#include "common.glsl"

#define MAX_INPUTS 4
#define MAX_INSTRUCTIONS 24

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

// Op codes: unary.comp's (0..16) for unary ops, 32 + binary.comp's for arithmetic.
float apply(int op, float u, float v) {
  switch (op) {
    case 0: return abs(u);
    case 1: return -u;
    case 2: return exp(u);
    case 3: return log(u);
    case 4: return sqrt(u);
    case 5: return inversesqrt(u);
    case 6: return 1.0 / u;
    case 7: return sin(u);
    case 8: return cos(u);
    case 9: return tanh(clamp(u, -15.0, 15.0));
    case 10: return 1.0 / (1.0 + exp(-u));
    case 11: return max(u, 0.0);
    case 12: return 0.5 * u * (1.0 + erf_approx(u * 0.70710678118654752));
    case 13: return 0.5 * u * (1.0 + tanh(clamp(0.79788456080286536 * (u + 0.044715 * u * u * u), -15.0, 15.0)));
    case 14: return erf_approx(u);
    case 15: return floor(u);
    case 16: return ceil(u);
    case 32: return u + v;
    case 33: return u - v;
    case 34: return u * v;
    case 35: return u / v;
    case 36: {
      if (u >= 0.0) return pow(u, v);
      if (v != floor(v)) return 0.0 / 0.0;
      float m = pow(-u, v);
      return mod(v, 2.0) == 1.0 ? -m : m;
    }
    case 37: return max(u, v);
    case 38: return min(u, v);
  }
  return u;
}

uint input_offset(uint i, int which) {
  uint off = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    off += c * p.strides[which * MAX_RANK + d];
  }
  return off;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  const int code[MAX_INSTRUCTIONS] = int[MAX_INSTRUCTIONS](C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12,
                                                          C13, C14, C15, C16, C17, C18, C19, C20, C21, C22, C23);
  float r[MAX_INPUTS + MAX_INSTRUCTIONS];
  r[0] = float(in0[input_offset(i, 0)]);
  if (N_INPUTS > 1) r[1] = float(in1[input_offset(i, 1)]);
  if (N_INPUTS > 2) r[2] = float(in2[input_offset(i, 2)]);
  if (N_INPUTS > 3) r[3] = float(in3[input_offset(i, 3)]);
  for (int k = 0; k < MAX_INSTRUCTIONS; ++k) {
    if (k >= N_INSTRUCTIONS) break;
    int c = code[k];
    r[MAX_INPUTS + k] = apply(c & 0xff, r[(c >> 8) & 0xff], r[(c >> 16) & 0xff]);
  }
  y[i] = T(r[MAX_INPUTS + N_INSTRUCTIONS - 1]);
}
