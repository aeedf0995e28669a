// Shared-memory tree reductions over one workgroup (GPUU_WG invocations), in
// f32. Every invocation of the workgroup must call them (uniform control flow).

shared float wg_scratch[GPUU_WG];

// max that lets a NaN win, as torch (and the CPU reference) do.
float max_nan(float a, float b) { return (isnan(a) || a >= b) ? a : b; }

float wg_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  wg_scratch[t] = v;
  barrier();
  for (uint s = GPUU_WG / 2; s > 0u; s >>= 1u) {
    if (t < s) wg_scratch[t] += wg_scratch[t + s];
    barrier();
  }
  float r = wg_scratch[0];
  barrier();  // wg_scratch may be reused right after
  return r;
}

// min and product, as max_nan and sum above.
float min_nan(float a, float b) { return (isnan(a) || a <= b) ? a : b; }

float wg_min(float v) {
  uint t = gl_LocalInvocationID.x;
  wg_scratch[t] = v;
  barrier();
  for (uint s = GPUU_WG / 2; s > 0u; s >>= 1u) {
    if (t < s) wg_scratch[t] = min_nan(wg_scratch[t], wg_scratch[t + s]);
    barrier();
  }
  float r = wg_scratch[0];
  barrier();
  return r;
}

// wg_min, wg_prod and wg_max keep one tree each: GLSL cannot pass the combining step in.
float wg_prod(float v) {
  uint t = gl_LocalInvocationID.x;
  wg_scratch[t] = v;
  barrier();
  for (uint s = GPUU_WG / 2; s > 0u; s >>= 1u) {
    if (t < s) wg_scratch[t] *= wg_scratch[t + s];
    barrier();
  }
  float r = wg_scratch[0];
  barrier();
  return r;
}

float wg_max(float v) {
  uint t = gl_LocalInvocationID.x;
  wg_scratch[t] = v;
  barrier();
  for (uint s = GPUU_WG / 2; s > 0u; s >>= 1u) {
    if (t < s) wg_scratch[t] = max_nan(wg_scratch[t], wg_scratch[t + s]);
    barrier();
  }
  float r = wg_scratch[0];
  barrier();
  return r;
}
