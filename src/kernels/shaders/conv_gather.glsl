// The im2col view of a convolution over an NCHW input, a row run at a time:
// shared by gemm_common.glsl (a GEMM tile gathering its B) and im2col.comp
// (the view materialized). The includer declares `p` with the conv form's
// fields (N, C, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, Cg) and defines
// CONV_INPUT(i) as the input's element i as a float.

// `count` (<= 8) consecutive columns n.. of row k of group `group`'s view
// into v, zero in the padding and past N: the tap is decoded once and the
// pixel once, then stepped, instead of six divisions per element (the gather
// bounded the implicit GEMM).
void gather_conv_row(uint group, uint k, uint n, uint count, out float v[8]) {
  [[unroll]] for (uint i = 0u; i < 8u; ++i) v[i] = 0.0;
  uint taps = p.kh * p.kw;
  uint c = k / taps, tap = k % taps;
  int dy = int((tap / p.kw) * p.dh) - int(p.ph), dx = int((tap % p.kw) * p.dw) - int(p.pw);
  uint pixels = p.OH * p.OW;
  uint img = n / pixels, pix = n % pixels;
  uint oy = pix / p.OW, ox = pix % p.OW;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    if (i >= count || n + i >= p.N) break;
    int iy = int(oy * p.sh) + dy, ix = int(ox * p.sw) + dx;
    if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) {
      v[i] = CONV_INPUT(((img * p.C + group * p.Cg + c) * p.H + uint(iy)) * p.W + uint(ix));
    }
    if (++ox == p.OW) {
      ox = 0u;
      if (++oy == p.OH) {
        oy = 0u;
        ++img;
      }
    }
  }
}
