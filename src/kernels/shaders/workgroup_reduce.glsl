// Shared-memory tree reductions over one workgroup (GPUU_WG invocations), in
// f32. Every invocation of the workgroup must call them (uniform control flow).

shared float wg_scratch[GPUU_WG];

// max and min that let a NaN win, as torch (and the CPU reference) do.
float max_nan(float a, float b) { return (isnan(a) || a >= b) ? a : b; }
float min_nan(float a, float b) { return (isnan(a) || a <= b) ? a : b; }
float add_f32(float a, float b) { return a + b; }
float mul_f32(float a, float b) { return a * b; }

// One tree over wg_scratch per reduction: GLSL cannot pass the combining step
// in, so a macro stamps out the function. The last barrier lets the caller
// reuse wg_scratch right after.
#define DEFINE_WG_REDUCE(name, combine)                                   \
  float name(float v) {                                                   \
    uint t = gl_LocalInvocationID.x;                                      \
    wg_scratch[t] = v;                                                    \
    barrier();                                                            \
    for (uint s = GPUU_WG / 2; s > 0u; s >>= 1u) {                        \
      if (t < s) wg_scratch[t] = combine(wg_scratch[t], wg_scratch[t + s]); \
      barrier();                                                          \
    }                                                                     \
    float r = wg_scratch[0];                                              \
    barrier();                                                            \
    return r;                                                             \
  }

DEFINE_WG_REDUCE(wg_sum, add_f32)
DEFINE_WG_REDUCE(wg_prod, mul_f32)
DEFINE_WG_REDUCE(wg_min, min_nan)
DEFINE_WG_REDUCE(wg_max, max_nan)
