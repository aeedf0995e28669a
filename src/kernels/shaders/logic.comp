#version 450
// Bool-valued elementwise ops over any dtype, elements read as 32-bit words
// (elements.glsl), so no 8/16/64-bit shader types are needed: isnan, isinf,
// logical_not (x == 0), and with two broadcast operands logical_and / or /
// xor (nonzero is true; NaN is nonzero, -0 is zero). bitwise ops on bool are
// the logical ones. OP: LOGIC_* of op_codes.txt.
#include "common.glsl"

layout(constant_id = 0) const int OP = 0;
const int ESIZE = 1;  // output: bool bytes
layout(std430, set = 0, binding = 0) readonly buffer A { uint a_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  int dtype;      // DTYPE_* of op_codes.txt
  uint src_size;  // its element bytes
  uint shape[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_a, a_words, p.src_size)
DEFINE_LOADER(load_b, b_words, p.src_size)

bool nonzero(uvec2 v) {
  if (p.dtype == DTYPE_F32) return (v.x & 0x7FFFFFFFu) != 0u;
  if (p.dtype == DTYPE_F16) return (v.x & 0x7FFFu) != 0u;
  return (v.x | v.y) != 0u;
}

bool is_nan(uvec2 v) {
  if (p.dtype == DTYPE_F32) return (v.x & 0x7FFFFFFFu) > 0x7F800000u;
  return (v.x & 0x7FFFu) > 0x7C00u;
}

bool is_inf(uvec2 v) {
  if (p.dtype == DTYPE_F32) return (v.x & 0x7FFFFFFFu) == 0x7F800000u;
  return (v.x & 0x7FFFu) == 0x7C00u;
}

uvec2 element(uint i) {
  uint ia = 0u, ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.shape[d];
    i /= p.shape[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  uvec2 u = load_a(ia);
  bool r = false;
  switch (OP) {
    case LOGIC_ISNAN: r = is_nan(u); break;
    case LOGIC_ISINF: r = is_inf(u); break;
    case LOGIC_LOGICAL_NOT: r = !nonzero(u); break;
    case LOGIC_LOGICAL_AND: r = nonzero(u) && nonzero(load_b(ib)); break;
    case LOGIC_LOGICAL_OR: r = nonzero(u) || nonzero(load_b(ib)); break;
    case LOGIC_LOGICAL_XOR: r = nonzero(u) != nonzero(load_b(ib)); break;
  }
  return uvec2(r ? 1u : 0u, 0u);
}
