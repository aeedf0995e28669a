#version 450
// Split-K's second step: y = sum over the shares of the f32 partials (+ bias,
// then the GEMM's epilogue), one invocation per output element of the split
// tiles' rows (all rows, unless the GEMM stored whole tiles first), stored in the
// output's layout (the GEMM's [batch][M][N], or conv2d's NCHW where batch is
// the group).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(constant_id = 0) const int HAS_BIAS = 0;
layout(constant_id = 1) const int CONV = 0;

layout(std430, set = 0, binding = 0) readonly buffer Partial { float partial[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 1) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { T y[]; };
// Bindings 3..5 and constants 2..17: the GEMM's epilogue (gemm_epilogue.glsl).
#define EPI_ID 2
#define EPI_BINDING 3
#include "gemm_epilogue.glsl"
// The shares of K: a constant, so that the loop unrolls and its loads are all
// in flight at once.
layout(constant_id = 18) const uint SPLITS = 2;
layout(push_constant) uniform Params {
  uint count;    // one share's partials: (batches * M - row0) * N
  uint M, N;
  uint pixels;   // CONV: output pixels per image
  uint O;        // CONV: output channels
  uint row0;     // the first split row (batch * M + m); the GEMM stored the rows before it
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  float v = 0.0;
  [[unroll]] for (uint s = 0u; s < SPLITS; ++s) v += partial[s * p.count + i];
  uint n = i % p.N;
  uint row = p.row0 + i / p.N;  // batch * M + m (conv: the output channel)
  if (CONV != 0) {
    if (HAS_BIAS != 0) v += float(bias[row]);
    uint o = nchw_index(n, row, p.pixels, p.O);
    y[o] = T(epilogue(v, o, row, n));
  } else {
    if (HAS_BIAS != 0) v += float(bias[n]);
    uint o = epi_store_index(row, n, p.N);
    y[o] = T(epilogue(v, o, row % p.M, n));
  }
}
