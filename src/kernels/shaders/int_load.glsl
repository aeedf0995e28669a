// Loads of 1- and 2-byte integer elements from buffers bound as 32-bit words
// (no 8/16-bit storage feature): element i of i8 data is the byte (i & 3) of
// word i >> 2, of i16 data the half (i & 1) of word i >> 1.
#ifndef GPUU_INT_LOAD_GLSL
#define GPUU_INT_LOAD_GLSL
#define LOAD_I8(words, i) bitfieldExtract(int(words[(i) >> 2u]), int(((i) & 3u) * 8u), 8)
#define LOAD_U8(words, i) int(bitfieldExtract(words[(i) >> 2u], int(((i) & 3u) * 8u), 8))
#define LOAD_I16(words, i) bitfieldExtract(int(words[(i) >> 1u]), int(((i) & 1u) * 16u), 16)
#define LOAD_INT(words, i, bytes) ((bytes) == 1 ? LOAD_I8(words, i) : (bytes) == 2 ? LOAD_I16(words, i) : int(words[i]))
#endif
