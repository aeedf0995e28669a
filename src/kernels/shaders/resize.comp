#version 450
// resize over NCHW planes (nearest, nearest_exact, bilinear with or without
// align_corners), one invocation per output element. The source indices
// follow graph/resize_index.h (PyTorch's float arithmetic, shortcuts included);
// `precise` keeps each product and sum rounded on its own, as torch's are.
#include "common.glsl"

layout(constant_id = 0) const int MODE = RESIZE_MODE_NEAREST;  // RESIZE_MODE_* of op_codes.txt
layout(constant_id = 1) const int ALIGN_CORNERS = 0;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint H, W, OH, OW;
  float scale_h, scale_w;  // source step per output step (graph::resize_scale)
} p;

// (i0, i1) and the weight of i1 for output index `dst` along one axis.
void tap(uint dst, uint n_in, uint n_out, float scale, out uint i0, out uint i1, out float frac) {
  frac = 0.0;
  if (MODE == RESIZE_MODE_NEAREST) {
    if (n_out == n_in) i0 = dst;
    else if (n_out == 2u * n_in) i0 = dst >> 1u;
    else {
      precise float pos = float(dst) * scale;
      i0 = min(uint(floor(pos)), n_in - 1u);
    }
    i1 = i0;
  } else if (MODE == RESIZE_MODE_NEAREST_EXACT) {
    precise float pos = (float(dst) + 0.5) * scale;
    i0 = min(uint(floor(pos)), n_in - 1u);
    i1 = i0;
  } else if (n_out == n_in) {
    i0 = dst;
    i1 = dst;
  } else {
    precise float src;
    if (ALIGN_CORNERS != 0) {
      src = scale * float(dst);
    } else {
      precise float scaled = scale * (float(dst) + 0.5);
      src = max(scaled - 0.5, 0.0);
    }
    i0 = min(uint(floor(src)), n_in - 1u);
    precise float f = src - float(i0);
    frac = clamp(f, 0.0, 1.0);
    i1 = i0 + (i0 < n_in - 1u ? 1u : 0u);
  }
}

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint plane = (i / (p.OW * p.OH)) * p.H * p.W;
  uint y0, y1, x0, x1;
  float fy, fx;
  tap(oy, p.H, p.OH, p.scale_h, y0, y1, fy);
  tap(ox, p.W, p.OW, p.scale_w, x0, x1, fx);
  if (MODE != RESIZE_MODE_BILINEAR) {
    y[i] = x[plane + y0 * p.W + x0];
    return;
  }
  float v00 = float(x[plane + y0 * p.W + x0]), v01 = float(x[plane + y0 * p.W + x1]);
  float v10 = float(x[plane + y1 * p.W + x0]), v11 = float(x[plane + y1 * p.W + x1]);
  float gy = 1.0 - fy, gx = 1.0 - fx;
  y[i] = T(gy * (gx * v00 + fx * v01) + fy * (gx * v10 + fx * v11));
}
