#version 450
// matmul_int: [B,M,K] x [B,K,N] i8 with zero points, i32 output (the int32
// sum wraps). One invocation per output.
#include "common.glsl"

const int OUT_BYTES = 4;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint M, K, N;
  int a_zp, b_zp;
} p;

#define COUNT p.count
#include "int_io.glsl"

int compute(uint i) {
  uint n = i % p.N;
  uint m = (i / p.N) % p.M;
  uint b = i / (p.N * p.M);
  uint arow = (b * p.M + m) * p.K;
  uint bbase = b * p.K * p.N + n;
  int acc = 0;
  for (uint k = 0u; k < p.K; ++k) {
    acc += (LOAD_I8(a_words, arow + k) - p.a_zp) * (LOAD_I8(b_words, bbase + k * p.N) - p.b_zp);
  }
  return acc;
}
