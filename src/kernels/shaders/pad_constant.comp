#version 450
// Padding for any element size. Constant mode: an output element whose
// coordinates, less the leading pads, fall inside the input copies it; any
// other takes the fill value (its bits, already converted to the dtype on the
// host). Reflect, replicate and circular modes map every coordinate back into
// the input (the registry keeps pads within one reflection or wrap).
#include "common.glsl"

layout(constant_id = 0) const int ESIZE = 4;
layout(constant_id = 1) const int MODE = PAD_MODE_CONSTANT;  // PAD_MODE_* of op_codes.txt
layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint fill_lo;  // fill bits: low word (all of it for elements up to 4 bytes)
  uint fill_hi;  // high word of an 8-byte fill
  uint out_shape[MAX_RANK];
  uint in_shape[MAX_RANK];
  uint lead[MAX_RANK];  // pad before each dim
} p;

#define ELEMENT_COUNT p.count
#include "elements.glsl"
DEFINE_LOADER(load_x, x_words, ESIZE)

uvec2 element(uint i) {
  uint src = 0u;
  uint stride = 1u;
  bool inside = true;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = i % p.out_shape[d];
    i /= p.out_shape[d];
    // Unsigned wrap-around turns coordinates before the pad into huge ones.
    uint ic = c - p.lead[d];
    if (MODE == PAD_MODE_CONSTANT) {
      if (c < p.lead[d] || ic >= p.in_shape[d]) inside = false;
    } else {
      int n = int(p.in_shape[d]);
      int s = int(c) - int(p.lead[d]);
      if (MODE == PAD_MODE_REFLECT) s = s < 0 ? -s : (s >= n ? 2 * (n - 1) - s : s);
      else if (MODE == PAD_MODE_REPLICATE) s = clamp(s, 0, n - 1);
      else s = s < 0 ? s + n : (s >= n ? s - n : s);
      ic = uint(s);
    }
    src += ic * stride;
    stride *= p.in_shape[d];
  }
  return inside ? load_x(src) : uvec2(p.fill_lo, p.fill_hi);
}
