// Element movement for any dtype as 32-bit words, with no 8/16-bit storage
// feature: an element of 1, 2, 4 or 8 bytes is read as the bits it holds
// (uvec2: low word, then the high word of 8-byte elements), and each
// invocation writes whole output words, so no two invocations share a word.
//
// The including shader declares, before this file: the spec constant ESIZE
// (output element bytes), the output buffer `out_words` (uint[]) and the macro
// ELEMENT_COUNT (output elements). After it: uvec2 element(uint i), the bits of
// output element i. This file supplies main().

// DEFINE_LOADER(name, words, size): uvec2 name(uint i) reads element i of a
// buffer of `size`-byte elements bound as uint words.
#define DEFINE_LOADER(name, words, size)                                                  \
  uvec2 name(uint i) {                                                                    \
    if (size == 8) return uvec2(words[2u * i], words[2u * i + 1u]);                       \
    if (size == 4) return uvec2(words[i], 0u);                                            \
    if (size == 2) return uvec2(bitfieldExtract(words[i >> 1u], int((i & 1u) * 16u), 16), 0u); \
    return uvec2(bitfieldExtract(words[i >> 2u], int((i & 3u) * 8u), 8), 0u);             \
  }

uvec2 element(uint i);

void main() {
  uint id = linear_id();
  uint count = ELEMENT_COUNT;
  if (ESIZE == 8) {
    if (id >= count) return;
    uvec2 v = element(id);
    out_words[2u * id] = v.x;
    out_words[2u * id + 1u] = v.y;
  } else if (ESIZE == 4) {
    if (id >= count) return;
    out_words[id] = element(id).x;
  } else {
    // 1- and 2-byte elements: this invocation owns output word `id` whole.
    uint per = 4u / uint(ESIZE);
    uint bits = uint(ESIZE) * 8u;
    uint first = id * per;
    if (first >= count) return;
    uint word = 0u;
    for (uint k = 0u; k < per && first + k < count; ++k) {
      word |= bitfieldExtract(element(first + k).x, 0, int(bits)) << (k * bits);
    }
    out_words[id] = word;
  }
}
