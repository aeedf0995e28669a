// Integer tensors of 1-byte (i8) or 4-byte (i32) elements, bound as 32-bit
// words with no 8-bit storage feature: an i8 element is the byte (i & 3) of
// word i >> 2, and each invocation writes one whole output word (four i8
// elements or one i32), so no two invocations share a word.
//
// The including shader declares, before this file: the spec constant
// OUT_BYTES (1 or 4), the output buffer `out_words` (uint[]) and the macro
// COUNT (output elements); after it, int compute(uint i), the value of output
// element i (an i8 result is stored as its low 8 bits). This file supplies main().

#define LOAD_I8(words, i) bitfieldExtract(int(words[(i) >> 2u]), int(((i) & 3u) * 8u), 8)
#define LOAD_U8(words, i) int(bitfieldExtract(words[(i) >> 2u], int(((i) & 3u) * 8u), 8))
#define LOAD_INT(words, i, bytes) ((bytes) == 1 ? LOAD_I8(words, i) : int(words[i]))

int compute(uint i);

void main() {
  uint id = linear_id();
  uint count = COUNT;
  if (OUT_BYTES == 1) {
    uint first = id * 4u;
    if (first >= count) return;
    uint word = 0u;
    for (uint k = 0u; k < 4u && first + k < count; ++k) word |= (uint(compute(first + k)) & 0xFFu) << (8u * k);
    out_words[id] = word;
  } else {
    if (id >= count) return;
    out_words[id] = uint(compute(id));
  }
}
