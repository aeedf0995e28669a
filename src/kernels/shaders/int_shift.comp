#version 450
// i32 shifts of TOSA's INT profile with numpy broadcasting (as int_binary.comp):
// OP SHIFT_ARITHMETIC_RIGHT_SHIFT (b clamped to [0, 31]; ROUND adds the last bit
// shifted out), OP SHIFT_MUL_SHIFT ((a * b + 2^(s-1)) >> s over the exact 64-bit
// product from imulExtended, the sum wrapping at 64 bits, the result's low 32
// bits: no shaderInt64 needed).
#include "common.glsl"

layout(constant_id = 0) const int OP = SHIFT_ARITHMETIC_RIGHT_SHIFT;
layout(constant_id = 1) const int ROUND = 0;
layout(std430, set = 0, binding = 0) readonly buffer A { int a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { int b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { int y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
  uint shift;  // mul_shift's
} p;

int mul_shift(int u, int v, uint s) {
  if (s == 0u) return u * v;
  int hi, lo;
  imulExtended(u, v, hi, lo);
  uint round_lo = s <= 32u ? (1u << (s - 1u)) : 0u;
  uint round_hi = s > 32u ? (1u << (s - 33u)) : 0u;
  uint carry;
  uint l = uaddCarry(uint(lo), round_lo, carry);
  uint h = uint(hi) + round_hi + carry;
  if (s < 32u) return int((l >> s) | (h << (32u - s)));
  return int(h) >> (s - 32u);
}

int shift_right(int u, int v) {
  int s = clamp(v, 0, 31);
  int r = u >> s;
  if (ROUND != 0 && s > 0 && ((u >> (s - 1)) & 1) != 0) r += 1;
  return r;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ia = 0u, ib = 0u, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.shape[d];
    rest /= p.shape[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  y[i] = OP == SHIFT_MUL_SHIFT ? mul_shift(a[ia], b[ib], p.shift) : shift_right(a[ia], b[ib]);
}
