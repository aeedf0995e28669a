#version 450
// out = a (op) b with numpy broadcasting: each operand is read through its own
// strides over the output shape (stride 0 on broadcast axes). Comparisons
// write bool bytes, four per invocation packed into one word, so no 8-bit
// storage feature is needed.
#include "common.glsl"
#include "math.glsl"

layout(constant_id = 0) const int OP = 0;
layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
#ifdef GPUU_COMPARE
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint packed[]; };
#else
layout(std430, set = 0, binding = 2) writeonly buffer Out { T y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

void offsets(uint i, out uint ia, out uint ib) {
  ia = 0u;
  ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
}

#ifdef GPUU_COMPARE
bool compare(float u, float v) {
  switch (OP) {
    case COMPARE_EQUAL: return u == v;
    case COMPARE_NOT_EQUAL: return u != v;
    case COMPARE_LESS: return u < v;
    case COMPARE_LESS_EQUAL: return u <= v;
    case COMPARE_GREATER: return u > v;
    case COMPARE_GREATER_EQUAL: return u >= v;
  }
  return false;
}

void main() {
  uint word = linear_id();
  uint first = word * 4u;
  if (first >= p.count) return;
  uint bits = 0u;
  for (uint k = 0u; k < 4u && first + k < p.count; ++k) {
    uint ia, ib;
    offsets(first + k, ia, ib);
    if (compare(float(a[ia]), float(b[ib]))) bits |= 1u << (8u * k);
  }
  packed[word] = bits;
}
#else
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

float combine(float u, float v) {
  switch (OP) {
    case BINARY_ADD: return u + v;
    case BINARY_SUB: return u - v;
    case BINARY_MUL: return u * v;
    case BINARY_DIV: return u / v;
    case BINARY_POW: {
      // GLSL pow is undefined for u < 0; follow IEEE pow: a negative base
      // with an integral exponent keeps the exponent's parity in its sign.
      if (u >= 0.0) return pow(u, v);
      if (v != floor(v)) return 0.0 / 0.0;
      float m = pow(-u, v);
      return mod(v, 2.0) == 1.0 ? -m : m;
    }
    case BINARY_MAXIMUM: return max(u, v);
    case BINARY_MINIMUM: return min(u, v);
    case BINARY_ATAN2: return atan2_acc(u, v);
    case BINARY_REMAINDER: {  // remainder: the divisor's sign
      float r = fmod_c(u, v);
      return (r != 0.0 && (r < 0.0) != (v < 0.0)) ? r + v : r;
    }
    case BINARY_FMOD: return fmod_c(u, v);
    case BINARY_FLOOR_DIVIDE: return floor_div(u, v);
  }
  return 0.0;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ia, ib;
  offsets(i, ia, ib);
  y[i] = T(combine(float(a[ia]), float(b[ib])));
}
#endif
