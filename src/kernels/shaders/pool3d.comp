#version 450
// avg_pool3d and max_pool3d over NCDHW volumes, one invocation per output
// element, with the window rules of pool2d.comp (and the CPU reference).
#include "common.glsl"

layout(constant_id = 0) const int MAX_POOL = 0;
layout(constant_id = 1) const int COUNT_INCLUDE_PAD = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { T y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint D, H, W, OD, OH, OW;
  uint kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;  // dilation: max only (1 for avg)
} p;

void main() {
  uint i = linear_id();
  if (i >= p.count) return;
  uint ox = i % p.OW;
  uint oy = (i / p.OW) % p.OH;
  uint oz = (i / (p.OW * p.OH)) % p.OD;
  uint volume = (i / (p.OW * p.OH * p.OD)) * p.D * p.H * p.W;
  int zs = int(oz * p.sd) - int(p.pd);
  int hs = int(oy * p.sh) - int(p.ph);
  int ws = int(ox * p.sw) - int(p.pw);
  float result;
  if (MAX_POOL != 0) {
    float best = uintBitsToFloat(0xff800000u);  // -inf: padding never wins
    bool nan_seen = false;
    for (uint kz = 0u; kz < p.kd; ++kz) {
      int iz = zs + int(kz * p.dd);
      if (iz < 0 || iz >= int(p.D)) continue;
      for (uint ky = 0u; ky < p.kh; ++ky) {
        int iy = hs + int(ky * p.dh);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0u; kx < p.kw; ++kx) {
          int ix = ws + int(kx * p.dw);
          if (ix < 0 || ix >= int(p.W)) continue;
          float v = float(x[volume + (uint(iz) * p.H + uint(iy)) * p.W + uint(ix)]);
          nan_seen = nan_seen || isnan(v);
          if (v > best) best = v;
        }
      }
    }
    result = nan_seen ? uintBitsToFloat(0x7fc00000u) : best;
  } else {
    // A ceil_mode window may run past the trailing padding: that part counts for nothing.
    int ze = min(zs + int(p.kd), int(p.D + p.pd));
    int he = min(hs + int(p.kh), int(p.H + p.ph));
    int we = min(ws + int(p.kw), int(p.W + p.pw));
    int padded_size = (ze - zs) * (he - hs) * (we - ws);
    int z0 = max(zs, 0), h0 = max(hs, 0), w0 = max(ws, 0);
    int z1 = min(ze, int(p.D)), h1 = min(he, int(p.H)), w1 = min(we, int(p.W));
    float sum = 0.0;
    for (int iz = z0; iz < z1; ++iz) {
      for (int iy = h0; iy < h1; ++iy) {
        for (int ix = w0; ix < w1; ++ix) sum += float(x[volume + (uint(iz) * p.H + uint(iy)) * p.W + uint(ix)]);
      }
    }
    int divisor = COUNT_INCLUDE_PAD != 0 ? padded_size : (z1 - z0) * (h1 - h0) * (w1 - w0);
    result = sum / float(divisor);
  }
  y[i] = T(result);
}
