#version 450
// avg_pool2d and max_pool2d over NCHW planes, one invocation per output
// element, with PyTorch's window rules (the CPU reference kernels' semantics):
// avg divides by the window clipped to the padded input (count_include_pad)
// or to the input; max skips padding, honours dilation and returns NaN when
// the window holds one.
#include "common.glsl"

layout(constant_id = 0) const int MAX_POOL = 0;
layout(constant_id = 1) const int COUNT_INCLUDE_PAD = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint H, W, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;  // dilation: max only (1 for avg)
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint plane = (i / (p.OW * p.OH)) * p.H * p.W;
  int hs = int(oy * p.sh) - int(p.ph);
  int ws = int(ox * p.sw) - int(p.pw);
  float result;
  if (MAX_POOL != 0) {
    float best = uintBitsToFloat(0xff800000u);  // -inf: padding never wins
    bool nan_seen = false;
    for (uint ky = 0u; ky < p.kh; ++ky) {
      int iy = hs + int(ky * p.dh);
      if (iy < 0 || iy >= int(p.H)) continue;
      for (uint kx = 0u; kx < p.kw; ++kx) {
        int ix = ws + int(kx * p.dw);
        if (ix < 0 || ix >= int(p.W)) continue;
        float v = float(x[plane + uint(iy) * p.W + uint(ix)]);
        nan_seen = nan_seen || isnan(v);
        if (v > best) best = v;
      }
    }
    result = nan_seen ? uintBitsToFloat(0x7fc00000u) : best;
  } else {
    // A ceil_mode window may run past the right padding: that part counts for nothing.
    int he = min(hs + int(p.kh), int(p.H + p.ph));
    int we = min(ws + int(p.kw), int(p.W + p.pw));
    int padded_size = (he - hs) * (we - ws);
    int h0 = max(hs, 0), w0 = max(ws, 0);
    int h1 = min(he, int(p.H)), w1 = min(we, int(p.W));
    float sum = 0.0;
    for (int iy = h0; iy < h1; ++iy) {
      for (int ix = w0; ix < w1; ++ix) sum += float(x[plane + uint(iy) * p.W + uint(ix)]);
    }
    // The registry keeps padding <= kernel / 2 and drops windows that start in
    // the right padding, so neither divisor is ever 0.
    int divisor = COUNT_INCLUDE_PAD != 0 ? padded_size : (h1 - h0) * (w1 - w0);
    result = sum / float(divisor);
  }
  y[i] = T(result);
}
