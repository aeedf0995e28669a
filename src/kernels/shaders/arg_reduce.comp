#version 450
// argmax / argmin along one axis for f32, f16, i32 and i64, writing i64
// indices as (low, high) words: one invocation per (outer, inner) position
// walks the axis and keeps the first index of the extreme value; a NaN is the
// extreme for both (torch's rule). Values are read as words and compared as
// f32 or as (signed high, unsigned low) pairs, so no 16/64-bit types are needed.
#include "common.glsl"

layout(constant_id = 0) const bool IS_MAX = true;
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint n_out;  // outer * inner
  uint len;
  uint inner;
  int dtype;   // DTYPE_F32, _F16, _I32 or _I64 of op_codes.txt
} p;

float load_float(uint i) {
  if (p.dtype == DTYPE_F32) return uintBitsToFloat(x_words[i]);
  return unpackHalf2x16(bitfieldExtract(x_words[i >> 1u], int((i & 1u) * 16u), 16)).x;
}

ivec2 load_int(uint i) {  // (high, low) of the value as int64
  if (p.dtype == DTYPE_I64) return ivec2(int(x_words[2u * i + 1u]), int(x_words[2u * i]));
  int v = int(x_words[i]);
  return ivec2(v >> 31, v);
}

bool int_beats(ivec2 e, ivec2 best) {
  if (e.x != best.x) return IS_MAX ? e.x > best.x : e.x < best.x;
  uint a = uint(e.y), b = uint(best.y);
  return IS_MAX ? a > b : a < b;
}

void main() {
  uint id = linear_id();
  if (id >= p.n_out) return;
  uint outer = id / p.inner;
  uint base = outer * p.len * p.inner + (id - outer * p.inner);
  uint best = 0u;
  if (p.dtype == DTYPE_F32 || p.dtype == DTYPE_F16) {
    float bv = load_float(base);
    for (uint j = 1u; j < p.len && !isnan(bv); ++j) {
      float e = load_float(base + j * p.inner);
      if (isnan(e) || (IS_MAX ? e > bv : e < bv)) {
        best = j;
        bv = e;
      }
    }
  } else {
    ivec2 bv = load_int(base);
    for (uint j = 1u; j < p.len; ++j) {
      ivec2 e = load_int(base + j * p.inner);
      if (int_beats(e, bv)) {
        best = j;
        bv = e;
      }
    }
  }
  out_words[2u * id] = best;
  out_words[2u * id + 1u] = 0u;
}
