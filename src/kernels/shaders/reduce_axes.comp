#version 450
// reduce_sum / _mean / _max / _min / _prod over any set of axes, without a
// transpose: output element o starts at the offset of its kept coordinates,
// and reduced element r adds the offset of its reduced coordinates. Either one
// invocation per output (short reductions) or one workgroup per (output,
// chunk of the reduction) with a shared-memory tree; with several chunks this
// pass writes f32 partials that a second pass reduces. Accumulates in f32.
#include "common.glsl"
#include "workgroup_reduce.glsl"

#ifdef GPUU_IN_F32
#define IN_T float
#else
#define IN_T T
#endif
#ifdef GPUU_OUT_F32
#define OUT_T float
#else
#define OUT_T T
#endif

layout(constant_id = 0) const int OP = REDUCE_SUM;  // REDUCE_SUM (mean: sum / divisor), _MAX, _MIN, _PROD
layout(constant_id = 1) const bool PER_THREAD = false;
layout(std430, set = 0, binding = 0) readonly buffer In { IN_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { OUT_T y[]; };
layout(push_constant) uniform Params {
  uint n_out;
  uint n_red;     // elements reduced into each output
  uint chunk;     // reduced elements per workgroup
  uint n_chunks;  // workgroups per output (outputs: n_out * n_chunks)
  float divisor;  // 1, or the element count of a mean
  uint flags;     // bits 0-7 kept rank, 8-15 reduced rank, bit 16: empty mean (NaN)
  uint kept_shape[MAX_RANK];
  uint kept_strides[MAX_RANK];
  uint red_shape[MAX_RANK];
  uint red_strides[MAX_RANK];
} p;

uint kept_offset(uint o) {
  uint off = 0u;
  for (int d = int(p.flags & 0xFFu) - 1; d >= 0; --d) {
    off += (o % p.kept_shape[d]) * p.kept_strides[d];
    o /= p.kept_shape[d];
  }
  return off;
}

uint reduced_offset(uint r) {
  uint off = 0u;
  for (int d = int((p.flags >> 8u) & 0xFFu) - 1; d >= 0; --d) {
    off += (r % p.red_shape[d]) * p.red_strides[d];
    r /= p.red_shape[d];
  }
  return off;
}

float combine(float a, float b) {
  switch (OP) {
    case REDUCE_MAX: return max_nan(a, b);
    case REDUCE_MIN: return min_nan(a, b);
    case REDUCE_PROD: return a * b;
  }
  return a + b;
}
float identity() {
  switch (OP) {
    case REDUCE_MAX: return uintBitsToFloat(0xFF800000u);  // -inf
    case REDUCE_MIN: return uintBitsToFloat(0x7F800000u);  // +inf
    case REDUCE_PROD: return 1.0;
  }
  return 0.0;
}

void store(uint at, float acc) {
  if ((p.flags & 0x10000u) != 0u) acc = uintBitsToFloat(0x7FC00000u);  // mean of nothing
  y[at] = OUT_T(acc / p.divisor);
}

void main() {
  if (PER_THREAD) {
    uint o = linear_id();
    if (o >= p.n_out) return;
    uint base = kept_offset(o);
    float acc = identity();
    for (uint r = 0u; r < p.n_red; ++r) acc = combine(acc, float(x[base + reduced_offset(r)]));
    store(o, acc);
    return;
  }
  uint g = linear_group_id();
  if (g >= p.n_out * p.n_chunks) return;  // the whole workgroup leaves together
  uint o = g / p.n_chunks;
  uint start = (g - o * p.n_chunks) * p.chunk;
  uint end = min(start + p.chunk, p.n_red);
  uint base = kept_offset(o);
  float acc = identity();
  for (uint r = start + gl_LocalInvocationID.x; r < end; r += GPUU_WG) {
    acc = combine(acc, float(x[base + reduced_offset(r)]));
  }
  acc = OP == REDUCE_SUM ? wg_sum(acc) : OP == REDUCE_MAX ? wg_max(acc) : OP == REDUCE_MIN ? wg_min(acc) : wg_prod(acc);
  if (gl_LocalInvocationID.x == 0u) store(g, acc);
}
