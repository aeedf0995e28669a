// Integer tensors of 1-, 2- or 4-byte elements (i8, i16, i32), bound as
// 32-bit words with no 8/16-bit storage feature: an i8 element is the byte
// (i & 3) of word i >> 2, an i16 the half (i & 1) of word i >> 1, and each
// invocation writes one whole output word (four i8 elements, two i16 or one
// i32), so no two invocations share a word.
//
// The including shader declares, before this file: the spec constant
// OUT_BYTES (1, 2 or 4), the output buffer `out_words` (uint[]) and the macro
// COUNT (output elements); after it, int compute(uint i), the value of output
// element i (an i8 result is stored as its low 8 bits). This file supplies main().

#include "int_load.glsl"

int compute(uint i);

void main() {
  uint id = linear_id();
  uint count = COUNT;
  if (OUT_BYTES == 1 || OUT_BYTES == 2) {
    const uint per = 4u / uint(OUT_BYTES), bits = 8u * uint(OUT_BYTES);
    uint first = id * per;
    if (first >= count) return;
    uint word = 0u;
    for (uint k = 0u; k < per && first + k < count; ++k) {
      word |= bitfieldExtract(uint(compute(first + k)), 0, int(bits)) << (bits * k);
    }
    out_words[id] = word;
  } else {
    if (id >= count) return;
    out_words[id] = uint(compute(id));
  }
}
