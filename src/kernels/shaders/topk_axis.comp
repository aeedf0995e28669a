#version 450
// topk along one axis (torch.topk, torch.sort): one invocation per (outer,
// inner) line picks its k results in order, each by one walk of the line for
// the best element that comes after the previous pick. The pick order is
// total: by value (largest: descending with NaN first; smallest: ascending
// with NaN last, as torch), then by index, so ties keep index order and the
// results come out sorted with no scratch memory: O(k * len) a line, for the
// small k of routers and samplers, or short lines.
#include "common.glsl"
#ifdef GPUU_INT
#include "int_types.glsl"
#define ST IT
#define VT IT
#else
#define ST T
#define VT float
#endif

layout(constant_id = 0) const bool LARGEST = true;
layout(std430, set = 0, binding = 0) readonly buffer X { ST x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Values { ST values[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Indices { uvec2 indices[]; };  // i64: (low, high)
layout(push_constant) uniform Params {
  uint lines;  // outer * inner
  uint len;
  uint inner;
  uint k;
} p;

// Whether (a at i) comes before (b at j) in the pick order.
bool before(VT a, uint i, VT b, uint j) {
#ifndef GPUU_INT
  const bool a_nan = isnan(a), b_nan = isnan(b);
  if (a_nan || b_nan) return a_nan && b_nan ? i < j : LARGEST ? a_nan : b_nan;
#endif
  if (a != b) return LARGEST ? a > b : a < b;
  return i < j;
}

void main() {
  uint id = linear_id();
  if (id >= p.lines) return;
  const uint outer = id / p.inner, in_line = id - outer * p.inner;
  const uint base = outer * p.len * p.inner + in_line;
  VT last = VT(0);
  uint last_at = 0u;
  for (uint r = 0u; r < p.k; ++r) {
    VT best = VT(0);
    uint best_at = p.len;  // none yet
    for (uint j = 0u, at = base; j < p.len; ++j, at += p.inner) {
      const VT e = VT(x[at]);
      if (r > 0u && !before(last, last_at, e, j)) continue;  // picked already
      if (best_at == p.len || before(e, j, best, best_at)) {
        best = e;
        best_at = j;
      }
    }
    const uint out_at = (outer * p.k + r) * p.inner + in_line;
    values[out_at] = x[base + best_at * p.inner];  // the element itself, bit for bit
    indices[out_at] = uvec2(best_at, 0u);
    last = best;
    last_at = best_at;
  }
}
