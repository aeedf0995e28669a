#version 450
// scatter and index_put: the updates land on an output that already holds
// the base (the lowering copies x there first; an output that aliases x, a
// KV cache updated in place, needs no copy). Update element u (row-major over
// the updates) goes to the output at its own coordinates off the axis and at
// index value k on it, where k is the index read at u (scatter: the index
// has the updates' shape) or at u's axis coordinate (ROW_INDEX, index_put: a
// 1-D index). An index outside [0, dim), or an i64 one whose high word is not
// its low word's sign extension (read as two words: no shaderInt64 needed),
// writes nothing: the update is skipped, never clamped onto a valid row.
// Constant indices are refused at export.
//
// Two forms of this file:
//  - scatter_copy (reduce "none", any dtype moved as bits): every update is
//    written; of updates sharing a destination one stays (torch leaves which
//    undefined). 4- and 8-byte elements move as words; 2- and 1-byte ones
//    (_16, _8) through 16- and 8-bit storage, since the other elements of
//    their word may belong to other invocations (a compare-and-swap of the
//    word would need an atomic scope that is valid with and without the
//    device's Vulkan memory model, and Device scope is not).
//  - scatter_reduce_<type> (GPUU_REDUCE): deterministic, without atomics.
//    The update of a destination that comes first along the axis owns it: it
//    combines the destination's value (INCLUDE_SELF) with every update of that
//    destination in axis order and writes once; the others return. That reads
//    the line's indices once per update (O(len^2) per line), but it is the
//    same on every device and run: no float atomics (an extension the context
//    does not enable, covering f32 sums only; products, means, f16 and the
//    atomic scope problem above would remain), and sums in torch's CPU order.
//    Floats combine in f32, integers in IT.
#if defined(GPUU_STORE16)
#extension GL_EXT_shader_16bit_storage : require
#define ET uint16_t
#elif defined(GPUU_STORE8)
#extension GL_EXT_shader_8bit_storage : require
#define ET uint8_t
#endif
#include "common.glsl"
#ifdef GPUU_REDUCE
#ifdef GPUU_INT
#include "int_types.glsl"
#define ST IT
#define ACC IT
#else
#define ST T
#define ACC float
#endif
#endif

layout(constant_id = 0) const int ESIZE = 4;  // bytes per element of scatter_copy: 4 or 8
layout(constant_id = 1) const bool INDEX_I64 = false;
layout(constant_id = 2) const bool ROW_INDEX = false;
layout(constant_id = 3) const int REDUCE = SCATTER_REDUCE_NONE;
layout(constant_id = 4) const bool INCLUDE_SELF = true;
layout(std430, set = 0, binding = 0) readonly buffer Index { uint index_words[]; };
#if defined(GPUU_REDUCE)
layout(std430, set = 0, binding = 1) readonly buffer Updates { ST updates[]; };
layout(std430, set = 0, binding = 2) buffer Out { ST out_data[]; };
#elif defined(ET)
layout(std430, set = 0, binding = 1) readonly buffer Updates { ET update_elements[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { ET out_elements[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer Updates { uint update_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
#endif
layout(push_constant) uniform Params {
  uint count;  // update elements
  uint rank;
  uint axis;
  uint dim;    // the output's length along the axis
  uint inner;  // the updates' stride along the axis
  uint shape[MAX_RANK];        // the updates' shape
  uint out_strides[MAX_RANK];  // the output's row-major strides
  // Where the updates' elements are in their binding: row-major from 0, or
  // (scatter_copy) a view of another value, a slice of a fused projection.
  uint updates_offset;
  uint updates_strides[MAX_RANK];
} p;

// The index at `pos`, when it names a row of the output.
bool index_at(uint pos, out uint k) {
  int index;
  if (INDEX_I64) {
    index = int(index_words[2u * pos]);
    if (index_words[2u * pos + 1u] != uint(index >> 31)) return false;
  } else {
    index = int(index_words[pos]);
  }
  k = uint(index);
  return index >= 0 && k < p.dim;
}

// The index of the update at axis coordinate j of the line starting at update `line`.
bool line_index(uint line, uint j, out uint k) { return index_at(ROW_INDEX ? j : line + j * p.inner, k); }

#ifdef GPUU_REDUCE
ACC combine(ACC acc, ACC v) {
  switch (REDUCE) {
    case SCATTER_REDUCE_PROD: return acc * v;
#ifndef GPUU_INT
    case SCATTER_REDUCE_AMAX: return isnan(acc) || isnan(v) ? acc + v : max(acc, v);  // NaN wins, as in torch
    case SCATTER_REDUCE_AMIN: return isnan(acc) || isnan(v) ? acc + v : min(acc, v);
#else
    case SCATTER_REDUCE_AMAX: return max(acc, v);
    case SCATTER_REDUCE_AMIN: return min(acc, v);
#endif
  }
  return acc + v;  // sum, mean
}

ACC mean_of(ACC sum, uint n) {
#ifdef GPUU_INT
  IT q = sum / IT(n);  // truncates toward zero; torch floors an integer mean
  return sum - q * IT(n) < IT(0) ? q - IT(1) : q;
#else
  return sum / float(n);
#endif
}

void land(uint u, uint along, uint dest, uint k) {
  uint line = u - along * p.inner;  // this line's update at axis coordinate 0
  uint len = p.shape[p.axis];
  for (uint j = 0u; j < along; ++j) {
    uint kj;
    if (line_index(line, j, kj) && kj == k) return;  // an earlier update owns the destination
  }
  ACC acc = INCLUDE_SELF ? ACC(out_data[dest]) : ACC(updates[u]);
  uint n = 1u;
  for (uint j = INCLUDE_SELF ? along : along + 1u; j < len; ++j) {
    uint kj;
    if (!line_index(line, j, kj) || kj != k) continue;
    acc = combine(acc, ACC(updates[line + j * p.inner]));
    ++n;
  }
  if (REDUCE == SCATTER_REDUCE_MEAN) acc = mean_of(acc, n);
  out_data[dest] = ST(acc);
}
#elif defined(ET)
// `src`: the update's element in its binding (u where the updates are row-major).
void land(uint src, uint along, uint dest, uint k) { out_elements[dest] = update_elements[src]; }
#else
void land(uint src, uint along, uint dest, uint k) {
  if (ESIZE == 8) {
    out_words[2u * dest] = update_words[2u * src];
    out_words[2u * dest + 1u] = update_words[2u * src + 1u];
  } else {
    out_words[dest] = update_words[src];
  }
}
#endif

void main() {
  uint u = linear_id();
  if (u >= p.count) return;
  uint rest = u, base = 0u, along = 0u, src = p.updates_offset;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.shape[d];
    rest /= p.shape[d];
    src += c * p.updates_strides[d];
    if (uint(d) == p.axis) {
      along = c;
    } else {
      base += c * p.out_strides[d];
    }
  }
  uint k;
  if (!index_at(ROW_INDEX ? along : u, k)) return;
#ifdef GPUU_REDUCE
  land(u, along, base + k * p.out_strides[p.axis], k);  // row-major updates: takes_view offers no views here
#else
  land(src, along, base + k * p.out_strides[p.axis], k);
#endif
}
