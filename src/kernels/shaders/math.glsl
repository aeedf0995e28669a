// The f32 math of elementwise ops that is longer than the one expression
// op_codes.txt gives an op (op_math.glsl, generated from that list, calls
// these). Most keep a small relative error everywhere, where drivers' builtins
// (lavapipe's among them) have only absolute accuracy near 0 or near 1: atan
// and what derives from it, expm1, log1p, tan and the hyperbolic functions.

// x clamped to [lo, hi] by comparisons, so that NaN passes, as in torch (the
// GLSL builtins' min and max may return either operand for NaN).
float clamp_nan(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// atan: |x| > 1 folds to pi/2 - atan(1/x); above tan(pi/12) a shift by pi/6;
// then the odd series to t^11 (error < 3e-9 for |t| <= 0.268).
float atan_acc(float x) {
  float a = abs(x);
  if (isnan(x)) return x;
  bool inverted = a > 1.0;
  if (inverted) a = 1.0 / a;
  bool shifted = a > 0.26794919243112270;
  if (shifted) a = (a * 1.7320508075688772 - 1.0) / (1.7320508075688772 + a);
  float t2 = a * a;
  float r = a * (1.0 + t2 * (-1.0 / 3.0 + t2 * (0.2 + t2 * (-1.0 / 7.0 + t2 * (1.0 / 9.0 + t2 * (-1.0 / 11.0))))));
  if (shifted) r += 0.52359877559829887;
  if (inverted) r = 1.5707963267948966 - r;
  return x < 0.0 ? -r : r;
}

float atan2_acc(float y, float x) {
  if (isnan(x) || isnan(y)) return x + y;
  const float pi = 3.14159265358979324;
  if (x == 0.0) {
    if (y == 0.0) return (floatBitsToUint(x) >> 31u) != 0u ? (y < 0.0 || (floatBitsToUint(y) >> 31u) != 0u ? -pi : pi) : y;
    return y > 0.0 ? 0.5 * pi : -0.5 * pi;
  }
  if (isinf(x) || isinf(y)) {
    float ax = isinf(x) ? (x > 0.0 ? 1.0 : -1.0) : 0.0;
    float ay = isinf(y) ? (y > 0.0 ? 1.0 : -1.0) : 0.0;
    if (ax == 0.0) return ay * 0.5 * pi;
    if (ay == 0.0) {
      bool neg_y = (floatBitsToUint(y) >> 31u) != 0u;
      float r = ax > 0.0 ? 0.0 : pi;
      return neg_y ? -r : r;
    }
    return ay * (ax > 0.0 ? 0.25 * pi : 0.75 * pi);
  }
  // Largest magnitude on the bottom keeps the quotient in [-1, 1].
  float r;
  if (abs(y) <= abs(x)) {
    r = atan_acc(y / x);
    if (x < 0.0) r += (floatBitsToUint(y) >> 31u) != 0u ? -pi : pi;
  } else {
    r = (y > 0.0 ? 0.5 * pi : -0.5 * pi) - atan_acc(x / y);
  }
  return r;
}

float asin_acc(float v) {
  if (abs(v) > 1.0) return 0.0 / 0.0;
  return atan2_acc(v, sqrt((1.0 - v) * (1.0 + v)));
}

float acos_acc(float v) {
  if (abs(v) > 1.0) return 0.0 / 0.0;
  return atan2_acc(sqrt((1.0 - v) * (1.0 + v)), v);
}

// expm1: the Taylor series for |x| < 0.5 (error < 1e-9), exp(x) - 1 beyond,
// where the subtraction loses at most a factor 2.6.
float expm1_acc(float x) {
  if (abs(x) < 0.5) {
    return x * (1.0 + x * (1.0 / 2.0 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 +
               x * (1.0 / 720.0 + x * (1.0 / 5040.0 + x * (1.0 / 40320.0))))))));
  }
  return exp(x) - 1.0;
}

// log1p: 2 atanh(s) with s = x / (2 + x) for |x| < 0.5 (|s| <= 1/3, series
// to s^15), log(1 + x) beyond, where the result is far from 0.
float log1p_acc(float x) {
  if (abs(x) < 0.5) {
    float s = x / (2.0 + x);
    float s2 = s * s;
    return 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (0.2 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 * (1.0 / 11.0 +
           s2 * (1.0 / 13.0 + s2 * (1.0 / 15.0))))))));
  }
  return log(1.0 + x);
}

// tan: near 0 the odd series to x^11 (error < 2e-10 relative for |x| < 0.25),
// since NVIDIA's sin returns 0 for tiny arguments; sin / cos beyond.
float tan_acc(float x) {
  if (abs(x) < 0.25) {
    float x2 = x * x;
    return x * (1.0 + x2 * (1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (17.0 / 315.0 + x2 * (62.0 / 2835.0 +
           x2 * (1382.0 / 155925.0))))));
  }
  return sin(x) / cos(x);
}

// sinh = (e - 1/e) / 2 through e = expm1(x): no cancellation near 0.
float sinh_acc(float x) {
  float e = expm1_acc(x);
  return 0.5 * (e + e / (e + 1.0));
}

float asinh_acc(float x) {
  float a = abs(x);
  float r = a > 1e18 ? log(a) + 0.69314718055994531 : log1p_acc(a + a * a / (1.0 + sqrt(1.0 + a * a)));
  return x < 0.0 ? -r : r;
}

float acosh_acc(float x) {
  float t = x - 1.0;
  return x > 1e18 ? log(x) + 0.69314718055994531 : log1p_acc(t + sqrt(2.0 * t + t * t));
}

// erf by Abramowitz & Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_approx(float x) {
  float s = sign(x);
  float a = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-a * a));
}

// GLSL pow is undefined for u < 0; follow IEEE pow: a negative base with an
// integral exponent keeps the exponent's parity in its sign.
float pow_ieee(float u, float v) {
  if (u >= 0.0) return pow(u, v);
  if (v != floor(v)) return 0.0 / 0.0;
  float m = pow(-u, v);
  return mod(v, 2.0) == 1.0 ? -m : m;
}

// u - q * v for a whole-number q, exactly as far as f32 allows: q * v splits
// into p + e (Dekker's product; no fma, which drivers may leave unfused),
// and u - p is exact when it matters (p close to u). `precise` keeps the
// compiler from contracting or reassociating the steps.
float residual(float u, float q, float v) {
  precise float p = q * v;
  precise float cq = 4097.0 * q;
  precise float qh = cq - (cq - q);
  precise float ql = q - qh;
  precise float cv = 4097.0 * v;
  precise float vh = cv - (cv - v);
  precise float vl = v - vh;
  precise float e = ((qh * vh - p) + qh * vl + ql * vh) + ql * vl;
  precise float r = (u - p) - e;
  return r;
}

// C's fmod: u - v * trunc(u / v), with the quotient corrected where u / v
// rounded across an integer, so the result keeps u's sign and |r| < |v|.
float fmod_c(float u, float v) {
  if (v == 0.0 || isinf(u) || isnan(u) || isnan(v)) return 0.0 / 0.0;
  if (isinf(v)) return u;
  float q = trunc(u / v);
  float r = residual(u, q, v);
  float av = abs(v);
  if (u >= 0.0) {
    if (r < 0.0) r += av;
    if (r >= av) r -= av;
  } else {
    if (r > 0.0) r -= av;
    if (r <= -av) r += av;
  }
  return r;
}

// Python's %: the remainder takes the divisor's sign.
float remainder_py(float u, float v) {
  float r = fmod_c(u, v);
  return (r != 0.0 && (r < 0.0) != (v < 0.0)) ? r + v : r;
}

// floor(u / v) of the exact quotient: the remainder decides the rounding.
float floor_div(float u, float v) {
  float q = u / v;
  if (v == 0.0 || isinf(q) || isnan(q) || isinf(v)) return floor(q);
  q = floor(q);
  float r = residual(u, q, v);
  if (r != 0.0 && (r < 0.0) != (v < 0.0)) {
    q -= 1.0;
  } else if (abs(r) >= abs(v)) {
    q += 1.0;
  }
  return q;
}
