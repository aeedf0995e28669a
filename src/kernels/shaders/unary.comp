#version 450
// y = f(x) elementwise, f chosen by the OP specialization constant (values of
// unary_ops() in kernels/elementwise.cpp). Float math runs in f32 whatever T is.
#include "common.glsl"
#include "math.glsl"

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
    case 18: return tan_acc(v);
    case 19: return asin_acc(v);
    case 20: return acos_acc(v);
    case 21: return atan_acc(v);
    case 22: {  // (e - 1/e) / 2 through expm1: no cancellation near 0
      float e = expm1_acc(v);
      return 0.5 * (e + e / (e + 1.0));
    }
    case 23: return 0.5 * (exp(v) + exp(-v));
    case 24: {
      float a = abs(v);
      float r = a > 1e18 ? log(a) + 0.69314718055994531 : log1p_acc(a + a * a / (1.0 + sqrt(1.0 + a * a)));
      return v < 0.0 ? -r : r;
    }
    case 25: {
      float t = v - 1.0;
      return v > 1e18 ? log(v) + 0.69314718055994531 : log1p_acc(t + sqrt(2.0 * t + t * t));
    }
    case 26: return 0.5 * log1p_acc(2.0 * v / (1.0 - v));
    case 27: return expm1_acc(v);
    case 28: return log1p_acc(v);
    case 29: return roundEven(v);
    case 30: return trunc(v);
    case 31: return isnan(v) ? v : (v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0));
  }
  return v;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  y[i] = T(apply(float(x[i])));
}
