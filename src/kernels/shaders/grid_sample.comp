#version 450
// grid_sample over NCHW planes, one invocation per output element: output
// (n, c, oy, ox) reads x where grid point (n, oy, ox) lands, with bilinear,
// nearest or bicubic taps and zeros, border or reflection padding. The
// coordinates follow graph/grid_sample.h (PyTorch's f32 formulas); `precise`
// keeps each product and sum rounded on its own, as torch's are.
#include "common.glsl"

layout(constant_id = 0) const int MODE = GRID_SAMPLE_MODE_BILINEAR;      // GRID_SAMPLE_MODE_* of op_codes.txt
layout(constant_id = 1) const int PADDING = GRID_SAMPLE_PADDING_ZEROS;   // GRID_SAMPLE_PADDING_*
layout(constant_id = 2) const int ALIGN_CORNERS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Grid { T grid[]; };  // [N, OH, OW, 2]: (x, y) pairs
layout(std430, set = 0, binding = 2) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint C, H, W, OH, OW;
} p;

// graph::GridSampleAxis, for an axis of `size` pixels.
float unnormalize(float g, uint size) {
  precise float scaled = (g + 1.0) * (ALIGN_CORNERS != 0 ? float(size - 1u) / 2.0 : float(size) / 2.0);
  return ALIGN_CORNERS != 0 ? scaled : scaled - 0.5;
}

float pad(float v, uint size) {
  if (PADDING == GRID_SAMPLE_PADDING_ZEROS) return v;
  if (PADDING == GRID_SAMPLE_PADDING_REFLECTION) {
    float low = ALIGN_CORNERS != 0 ? 0.0 : -0.5;
    float twice_span = ALIGN_CORNERS != 0 ? float(size - 1u) * 2.0 : float(size) * 2.0;
    if (twice_span <= 0.0) return 0.0;
    precise float dist = abs(v - low);
    precise float extra = dist - trunc(dist / twice_span) * twice_span;
    v = min(extra, twice_span - extra) + low;
  }
  return min(float(size - 1u), v > 0.0 ? v : 0.0);  // NaN to 0, as torch's border
}

// The index of integral coordinate `v`, or -1 outside [0, size): far
// coordinates never reach an integer conversion.
int index_of(float v, uint size) { return v >= 0.0 && v < float(size) ? int(v) : -1; }

float pixel(uint plane, int yi, int xi) {
  return yi < 0 || xi < 0 ? 0.0 : float(x[plane + uint(yi) * p.W + uint(xi)]);
}

// graph::grid_sample_cubic_weights: taps at -1, 0, 1, 2 from `t` past tap 0.
float cubic_outer(float v) {
  const float a = -0.75;
  precise float w = ((a * v - 5.0 * a) * v + 8.0 * a) * v - 4.0 * a;
  return w;
}
float cubic_inner(float v) {
  const float a = -0.75;
  precise float w = ((a + 2.0) * v - (a + 3.0)) * v * v + 1.0;
  return w;
}

// Four taps of one row at x0 - 1 .. x0 + 2, each padded on its own, weighted.
float cubic_row(uint plane, int yi, float x0, float tx) {
  precise float row = cubic_outer(tx + 1.0) * pixel(plane, yi, index_of(pad(x0 - 1.0, p.W), p.W)) +
                      cubic_inner(tx) * pixel(plane, yi, index_of(pad(x0, p.W), p.W)) +
                      cubic_inner(1.0 - tx) * pixel(plane, yi, index_of(pad(x0 + 1.0, p.W), p.W)) +
                      cubic_outer(2.0 - tx) * pixel(plane, yi, index_of(pad(x0 + 2.0, p.W), p.W));
  return row;
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint plane_index = i / (p.OW * p.OH);  // n * C + c
  uint g = (((plane_index / p.C) * p.OH + oy) * p.OW + ox) * 2u;
  float gx = float(grid[g]), gy = float(grid[g + 1u]);
  uint plane = plane_index * p.H * p.W;
  if (MODE == GRID_SAMPLE_MODE_NEAREST) {
    int xi = index_of(roundEven(pad(unnormalize(gx, p.W), p.W)), p.W);
    int yi = index_of(roundEven(pad(unnormalize(gy, p.H), p.H)), p.H);
    y[i] = T(pixel(plane, yi, xi));
  } else if (MODE == GRID_SAMPLE_MODE_BILINEAR) {
    float sx = pad(unnormalize(gx, p.W), p.W), sy = pad(unnormalize(gy, p.H), p.H);
    float x0 = floor(sx), y0 = floor(sy);
    precise float e = sx - x0, s = sy - y0;  // the weights of the east and south taps
    int xw = index_of(x0, p.W), xe = index_of(x0 + 1.0, p.W);
    int yn = index_of(y0, p.H), ys = index_of(y0 + 1.0, p.H);
    precise float v = pixel(plane, yn, xw) * ((1.0 - s) * (1.0 - e)) + pixel(plane, yn, xe) * ((1.0 - s) * e) +
                      pixel(plane, ys, xw) * (s * (1.0 - e)) + pixel(plane, ys, xe) * (s * e);
    y[i] = T(v);
  } else {
    // Bicubic: 4x4 taps around the unpadded point.
    float sx = unnormalize(gx, p.W), sy = unnormalize(gy, p.H);
    float x0 = floor(sx), y0 = floor(sy);
    precise float tx = sx - x0, ty = sy - y0;
    precise float v = cubic_outer(ty + 1.0) * cubic_row(plane, index_of(pad(y0 - 1.0, p.H), p.H), x0, tx) +
                      cubic_inner(ty) * cubic_row(plane, index_of(pad(y0, p.H), p.H), x0, tx) +
                      cubic_inner(1.0 - ty) * cubic_row(plane, index_of(pad(y0 + 1.0, p.H), p.H), x0, tx) +
                      cubic_outer(2.0 - ty) * cubic_row(plane, index_of(pad(y0 + 2.0, p.H), p.H), x0, tx);
    y[i] = T(v);
  }
}
