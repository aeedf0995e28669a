#version 450
// y = f(x) elementwise, f chosen by the OP specialization constant (UNARY_*
// of op_codes.txt). Float math runs in f32 whatever T is.
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
    case UNARY_ABS: return abs(v);
    case UNARY_NEG: return -v;
    case UNARY_EXP: return exp(v);
    case UNARY_LOG: return log(v);
    case UNARY_SQRT: return sqrt(v);
    case UNARY_RSQRT: return inversesqrt(v);
    case UNARY_RECIPROCAL: return 1.0 / v;
    case UNARY_SIN: return sin(v);
    case UNARY_COS: return cos(v);
    case UNARY_TANH: return tanh(clamp(v, -15.0, 15.0));  // tanh(+-15) is +-1 in f32; avoids exp overflow
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case UNARY_RELU: return max(v, 0.0);
    case UNARY_GELU: return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    case UNARY_GELU_TANH: return 0.5 * v * (1.0 + tanh(clamp(0.79788456080286536 * (v + 0.044715 * v * v * v), -15.0, 15.0)));
    case UNARY_ERF: return erf_approx(v);
    case UNARY_FLOOR: return floor(v);
    case UNARY_CEIL: return ceil(v);
    case UNARY_CLAMP: return min(max(v, p.lo), p.hi);
    case UNARY_TAN: return tan_acc(v);
    case UNARY_ASIN: return asin_acc(v);
    case UNARY_ACOS: return acos_acc(v);
    case UNARY_ATAN: return atan_acc(v);
    case UNARY_SINH: {  // (e - 1/e) / 2 through expm1: no cancellation near 0
      float e = expm1_acc(v);
      return 0.5 * (e + e / (e + 1.0));
    }
    case UNARY_COSH: return 0.5 * (exp(v) + exp(-v));
    case UNARY_ASINH: {
      float a = abs(v);
      float r = a > 1e18 ? log(a) + 0.69314718055994531 : log1p_acc(a + a * a / (1.0 + sqrt(1.0 + a * a)));
      return v < 0.0 ? -r : r;
    }
    case UNARY_ACOSH: {
      float t = v - 1.0;
      return v > 1e18 ? log(v) + 0.69314718055994531 : log1p_acc(t + sqrt(2.0 * t + t * t));
    }
    case UNARY_ATANH: return 0.5 * log1p_acc(2.0 * v / (1.0 - v));
    case UNARY_EXPM1: return expm1_acc(v);
    case UNARY_LOG1P: return log1p_acc(v);
    case UNARY_ROUND: return roundEven(v);
    case UNARY_TRUNC: return trunc(v);
    case UNARY_SIGN: return isnan(v) ? v : (v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0));
  }
  return v;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  y[i] = T(apply(float(x[i])));
}
