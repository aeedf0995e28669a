#version 450
// Integer and bool reductions over any set of axes, addressed as
// reduce_axes.comp does: sum, max, min, prod (wrapping) on i32 / i64, any and
// all on bool. One invocation per result (per four results for bool, whose
// bytes share a word), accumulating in IT; elements move as 32-bit words. A
// result is one output, or with n_chunks > 1 one chunk of it: long
// reductions write partials (IT) that a second pass reduces.
#include "common.glsl"
#include "int_types.glsl"

layout(constant_id = 0) const int OP = REDUCE_SUM;  // REDUCE_* of op_codes.txt
layout(constant_id = 1) const int IN_SIZE = 4;   // element bytes: 1 (bool), 4 or 8
layout(constant_id = 2) const int OUT_SIZE = 4;
layout(std430, set = 0, binding = 0) readonly buffer In { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint n_res;     // results: outputs * n_chunks
  uint n_red;     // elements reduced into each output
  uint chunk;     // of them per result
  uint n_chunks;
  uint flags;  // bits 0-7 kept rank, 8-15 reduced rank
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

IT load(uint i) {
  if (IN_SIZE == 8) return int_from_words(x_words[2u * i], x_words[2u * i + 1u]);
  if (IN_SIZE == 4) return IT(int(x_words[i]));
  return IT(bitfieldExtract(x_words[i >> 2u], int((i & 3u) * 8u), 8) != 0u ? 1 : 0);
}

IT reduce_one(uint res) {
  uint o = res / p.n_chunks;
  uint start = (res - o * p.n_chunks) * p.chunk;
  uint end = min(start + p.chunk, p.n_red);
  uint base = kept_offset(o);
  IT acc;
  switch (OP) {
    case REDUCE_MAX: acc = IT_MIN; break;
    case REDUCE_MIN: acc = IT_MAX; break;
    case REDUCE_PROD: case REDUCE_ALL: acc = IT(1); break;
    default: acc = IT(0); break;
  }
  for (uint r = start; r < end; ++r) {
    IT v = load(base + reduced_offset(r));
    switch (OP) {
      case REDUCE_SUM: acc += v; break;
      case REDUCE_MAX: acc = max(acc, v); break;
      case REDUCE_MIN: acc = min(acc, v); break;
      case REDUCE_PROD: acc *= v; break;
      case REDUCE_ANY: acc = (acc != IT(0) || v != IT(0)) ? IT(1) : IT(0); break;
      case REDUCE_ALL: acc = (acc != IT(0) && v != IT(0)) ? IT(1) : IT(0); break;
    }
  }
  return acc;
}

void main() {
  uint id = linear_id();
  if (OUT_SIZE == 1) {
    uint first = id * 4u;
    if (first >= p.n_res) return;
    uint word = 0u;
    for (uint k = 0u; k < 4u && first + k < p.n_res; ++k) {
      if (reduce_one(first + k) != IT(0)) word |= 1u << (8u * k);
    }
    out_words[id] = word;
    return;
  }
  if (id >= p.n_res) return;
  IT v = reduce_one(id);
#ifdef GPUU_I64
  if (OUT_SIZE == 8) {
    out_words[2u * id] = uint(v & int64_t(0xFFFFFFFF));
    out_words[2u * id + 1u] = uint(v >> 32);
    return;
  }
#endif
  out_words[id] = uint(v);
}
