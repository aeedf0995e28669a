#version 450
// y = f(x) elementwise, f chosen by the OP specialization constant (values of
// UnaryOp in elementwise_ops.h). Float math runs in f32 whatever T is.
#include "common.glsl"

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  float lo;  // clamp bounds
  float hi;
} p;

// erf by Abramowitz & Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_approx(float v) {
  float s = sign(v);
  float a = abs(v);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-a * a));
}

float apply(float v) {
  switch (OP) {
    case 0: return abs(v);
    case 1: return -v;
    case 2: return exp(v);
    case 3: return log(v);
    case 4: return sqrt(v);
    case 5: return inversesqrt(v);
    case 6: return 1.0 / v;
    case 7: return sin(v);
    case 8: return cos(v);
    case 9: return tanh(clamp(v, -15.0, 15.0));  // tanh(+-15) is +-1 in f32; avoids exp overflow
    case 10: return 1.0 / (1.0 + exp(-v));
    case 11: return max(v, 0.0);
    case 12: return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    case 13: return 0.5 * v * (1.0 + tanh(clamp(0.79788456080286536 * (v + 0.044715 * v * v * v), -15.0, 15.0)));
    case 14: return erf_approx(v);
    case 15: return floor(v);
    case 16: return ceil(v);
    case 17: return min(max(v, p.lo), p.hi);
  }
  return v;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  y[i] = T(apply(float(x[i])));
}
