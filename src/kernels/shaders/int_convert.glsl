// Float to integer as gpuu's cast defines it, shared by cast_convert.comp and
// the fused chains' integer outputs.
#ifndef GPUU_INT_CONVERT_GLSL
#define GPUU_INT_CONVERT_GLSL
// f32 -> integer in [lo, hi], truncating toward zero, saturating, NaN -> 0.
// (The bounds are compared as floats: float(INT32_MAX) is 2^31, and any f at
// or above it saturates, as the reference's comparison in double does.)
int float_to_int_saturated(float f, int lo, int hi) {
  if (isnan(f)) return 0;
  if (f >= float(hi)) return hi;
  if (f <= float(lo)) return lo;
  return int(f);
}
#endif
