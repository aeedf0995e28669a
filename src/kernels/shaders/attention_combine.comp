#version 450
// The second pass of attention split over keys (attention.comp, SPLIT = 1):
// each output element of a row is the splits' unnormalised outputs weighed by
// exp2(m_s - max_s m_s) over their sums weighed alike, the rescaling the
// one-pass kernel does block by block. A row no split saw a key of (every
// max -inf, or every sum 0) is 0, as there.
#include "common.glsl"

// The output is [batch, L, Hq, Ev] rather than [batch, Hq, L, Ev] (attention.comp's).
layout(constant_id = 0) const int HEADS_INNER = 0;

layout(std430, set = 0, binding = 0) readonly buffer Part { vec4 part[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };

layout(push_constant) uniform Params {
  uint rows;    // batch * Hq * L
  uint Ev;      // output columns per row
  uint EV4;     // vec4 chunks per row in `part`
  uint splits;
  uint Hq, L;   // HEADS_INNER: heads and rows per batch
} p;

#define NEG_INF uintBitsToFloat(0xFF800000u)

void main() {
  const uint idx = linear_id();
  if (idx >= p.rows * p.Ev) return;
  const uint row = idx / p.Ev, e = idx - row * p.Ev;
  const uint stride = p.EV4 + 1u;  // vec4s per (row, split)
  const uint base = row * p.splits * stride;
  float top = NEG_INF;
  for (uint s = 0u; s < p.splits; ++s) top = max(top, part[base + s * stride + p.EV4].x);
  const float ref = top == NEG_INF ? 0.0 : top;
  float sum = 0.0, acc = 0.0;
  for (uint s = 0u; s < p.splits; ++s) {
    const vec4 stats = part[base + s * stride + p.EV4];
    const float w = exp2(stats.x - ref);  // 0 for a split that saw no key
    sum += w * stats.y;
    acc += w * part[base + s * stride + e / 4u][e % 4u];
  }
  uint at = idx;
  if (HEADS_INNER != 0) {  // row = (b * Hq + h) * L + l
    const uint l = row % p.L, bh = row / p.L;
    at = ((bh / p.Hq * p.L + l) * p.Hq + bh % p.Hq) * p.Ev + e;
  }
  y[at] = T(sum > 0.0 ? acc / sum : 0.0);
}
