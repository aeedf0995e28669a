// The integer element type IT of integer kernels: int (i32), or int64_t with
// GPUU_I64 (needs the device's shaderInt64). Signed arithmetic wraps in
// SPIR-V, which is the two's complement wrap-around torch and the CPU
// reference have.
#ifdef GPUU_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define IT int64_t
#else
#define IT int
#endif

// The integer in two push-constant words (low, high); i32 takes the low one.
IT int_from_words(uint lo, uint hi) {
#ifdef GPUU_I64
  return (int64_t(int(hi)) << 32) | int64_t(uint64_t(lo));
#else
  return int(lo);
#endif
}

#ifdef GPUU_I64
#define IT_MIN int_from_words(0u, 0x80000000u)
#define IT_MAX int_from_words(0xFFFFFFFFu, 0x7FFFFFFFu)
#else
#define IT_MIN (-2147483647 - 1)
#define IT_MAX 2147483647
#endif
