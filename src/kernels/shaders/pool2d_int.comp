#version 450
// Integer 2-D pools over NCHW planes: max_pool2d on i8/i16/i32 (padding never
// wins; dilation) and avg_pool2d_int on i8 (TOSA AVG_POOL2D: zero points, an
// int32 sum over the real elements, divided by their count with TOSA's
// reciprocal_scale and apply_scale_32, output zero point, saturated to i8).
#include "common.glsl"
#ifndef GPUU_MAX_ONLY
#include "int_scale.glsl"  // the average pool only: max pools need no shaderInt64
#endif

layout(constant_id = 0) const int MAX_POOL = 1;
layout(constant_id = 1) const int OUT_BYTES = 1;  // = the input's element size

layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params {
  uint count;
  uint H, W, OH, OW;
  uint kh, kw, sh, sw;
  int pad_top, pad_left;
  uint dh, dw;
  int input_zp, output_zp;
} p;

#define COUNT p.count
#include "int_io.glsl"

int compute(uint i) {
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint plane = (i / (p.OW * p.OH)) * p.H * p.W;
  int y0 = int(oy * p.sh) - p.pad_top;
  int x0 = int(ox * p.sw) - p.pad_left;
  int best = OUT_BYTES == 1 ? -128 : OUT_BYTES == 2 ? -32768 : (-2147483647 - 1);
  int acc = 0;
  int count = 0;
  for (uint ky = 0u; ky < p.kh; ++ky) {
    int iy = y0 + int(ky * p.dh);
    if (iy < 0 || iy >= int(p.H)) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int ix = x0 + int(kx * p.dw);
      if (ix < 0 || ix >= int(p.W)) continue;
      int v = LOAD_INT(x_words, plane + uint(iy) * p.W + uint(ix), OUT_BYTES);
      best = max(best, v);
      acc += v - p.input_zp;
      ++count;
    }
  }
#ifdef GPUU_MAX_ONLY
  return best;
#else
  if (MAX_POOL != 0) return best;
  // reciprocal_scale(count): k = ceil(log2(count)), multiplier =
  // ((2^30 + 1) << k) / count, shift = 30 + k. The registry keeps count >= 1.
  int k = findMSB(uint(count - 1)) + 1;
  int64_t multiplier = ((int64_t(1) << 30) + int64_t(1)) * (int64_t(1) << k) / int64_t(count);
  int scaled = apply_scale(int64_t(acc), int(multiplier), 30 + k, false);
  return clamp(scaled + p.output_zp, -128, 127);
#endif
}
