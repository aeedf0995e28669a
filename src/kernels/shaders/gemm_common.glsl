// Shared by gemm.comp (f32 accumulation on the shader cores) and
// gemm_coopmat.comp (matrix cores): bindings, push constants, the tile a
// workgroup owns, bounds-checked reads of A and B and the epilogue's store.
// Default form: Y = A x B (+ bias[n]) over broadcast batches, B read through
// strides (so linear's [N,K] weight needs no transpose). GPUU_CONV form: conv2d
// as an implicit GEMM per group, A = the group's weight rows [O/groups,
// C/groups*kH*kW], B = the im2col view of the input, gathered while the tile
// loads (zero padding included), so nothing is materialized.

layout(constant_id = 0) const int HAS_BIAS = 0;
// B's contiguous axis is k (linear's weight) rather than n.
layout(constant_id = 1) const int B_K_CONTIGUOUS = 0;
// 1 where A / B may be read in vector chunks along their contiguous axis (that
// axis' length a multiple of the chunk, so a chunk never straddles a row);
// the selector decides, the shaders fall back to element reads otherwise.
layout(constant_id = 2) const int A_VEC = 0;
layout(constant_id = 3) const int B_VEC = 0;
// The bounds a tile need not check (fewer instructions and registers in the
// loop), a mask set only with vector reads of both operands: 1 = M is whole
// tiles, 2 = N is whole tiles and K whole slices (a transformer's GEMMs are
// often 2 alone: rows = batch x sequence, columns and depth = model sizes).
layout(constant_id = 4) const int ALIGNED = 0;
// (Constants 5..9 are gemm_coopmat.comp's, 5..7 gemv.comp's.)
// Split-K: the workgroups of one output tile each sum p.k_split of K and
// store an f32 partial (binding 4) instead of the result; a second dispatch
// (gemm_split_reduce.comp) adds them up, with the bias, into the output.
// Only the tiles from p.whole_tiles on are split (all where it is 0): the
// ones before it fill whole rounds of the GPU and store their results; the
// split tiles' shares fill the last round, which they would leave part idle
// whole.
layout(constant_id = 10) const int SPLIT_K = 0;
#ifdef GPUU_CONV
// How B, the im2col view, is read. CONV_GATHERED: tap by tap
// (gather_b_row). CONV_POINTWISE: a 1x1 convolution with stride 1 and no
// padding, whose im2col view is the input itself, read directly (in vector
// chunks where B_VEC). CONV_PATCHES: stride = kernel, no padding or
// dilation (a vision transformer's patch embedding): a tap row's kw taps lie
// side by side in the input, so B is read along k (B_K_CONTIGUOUS), in
// vector chunks where B_VEC, not gathered a pixel at a time 16 apart.
// CONV_IM2COL: B is the im2col view materialized beforehand (im2col.comp),
// [groups][K][N] rows bound in place of the input, read in vector chunks
// where B_VEC.
layout(constant_id = 11) const int CONV_B = 0;
#define CONV_GATHERED 0
#define CONV_POINTWISE 1
#define CONV_PATCHES 2
#define CONV_IM2COL 3
#endif

layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
#ifdef GPUU_QW
// linear_dequant: B is the weight [N, K] (B_K_CONTIGUOUS), GPUU_QW-bit signed
// integers packed little-endian into words (4-bit: low nibble first), each
// times the scale of its row's group of QW_GROUP along K (0: one per row),
// scales [N, K / QW_GROUP] at binding 8. Dequantized as they are read, so
// only the integers cross the memory bus: the point of weight-only
// quantization, whose GEMMs (decode steps) are bound by reading the weights.
layout(std430, set = 0, binding = 1) readonly buffer BQ { uint bq[]; };
layout(std430, set = 0, binding = 8) readonly buffer Scales { T qscale[]; };
layout(constant_id = 28) const int QW_GROUP = 0;
#else
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
#endif
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
// The partials [split][row][N] when SPLIT_K, rows from p.split_row0 (else bound to the output, never written).
layout(std430, set = 0, binding = 4) writeonly buffer Partial { float partial[]; };
// Bindings 5..7 and constants 12..27: the epilogue (binding 8 and constant
// 28: GPUU_QW's scales and group) (gemm_epilogue.glsl); under
// SPLIT_K the reduction applies it instead.
#define EPI_ID 12
#define EPI_BINDING 5
#include "gemm_epilogue.glsl"

#ifdef GPUU_CONV
layout(push_constant) uniform Params {
  uint M;  // output channels per group
  uint N;  // batch * OH * OW
  uint K;  // C/groups * kH * kW
  uint tiles_n;
  uint tiles_m;
  uint tile_count;  // tiles_n * tiles_m * groups
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
  uint k_split;  // SPLIT_K: the depth one workgroup sums
  uint batches;  // groups
  // SPLIT_K: the tiles before the split ones (whole tile rows), and the first
  // row (batch * M + m) of those: the partials hold the rows from it on.
  uint whole_tiles;
  uint split_row0;
} p;
#else
layout(push_constant) uniform Params {
  uint M;
  uint N;
  uint K;
  uint tiles_n;
  uint tiles_m;
  uint tile_count;  // tiles_n * tiles_m * batches
  uint batch_rank;  // output batch dims (rank - 2), at most 4
  uint b_stride_k;
  uint b_stride_n;
  uint batch_shape[4];
  uint a_batch_stride[4];  // elements; 0 on broadcast dims
  uint b_batch_stride[4];
  uint k_split;  // SPLIT_K: the depth one workgroup sums
  uint batches;  // product of batch_shape
  // SPLIT_K: the tiles before the split ones (whole tile rows), and the first
  // row (batch * M + m) of those: the partials hold the rows from it on.
  uint whole_tiles;
  uint split_row0;
} p;
#endif

// Set by gemm_tile() for the workgroup's tile: its batch (conv2d: group),
// first row and column, the bases of A and B, its share [g_k0, g_k_end) of K,
// and whether that is all of K (its results are stored, not partials).
uint g_batch, g_m0, g_n0, a_base, b_base, g_split, g_k0, g_k_end;
bool g_whole;

// False for workgroups past the last tile (the 2-D spread of a large
// dispatch): they leave together, before any barrier.
bool gemm_tile(uint bm, uint bn) {
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= p.tile_count) return false;
  uint per_batch = p.tiles_n * p.tiles_m;
  g_split = 0u;
  g_k0 = 0u;
  g_k_end = p.K;
  g_whole = true;
  if (SPLIT_K != 0 && tile >= p.whole_tiles) {
    uint per_split = per_batch * p.batches - p.whole_tiles;
    uint share = tile - p.whole_tiles;
    g_split = share / per_split;
    tile = p.whole_tiles + share - g_split * per_split;
    g_k0 = g_split * p.k_split;
    g_k_end = min(p.K, g_k0 + p.k_split);
    g_whole = false;
  }
  g_batch = tile / per_batch;
  uint rest = tile - g_batch * per_batch;
  g_m0 = (rest / p.tiles_n) * bm;
  g_n0 = (rest % p.tiles_n) * bn;
#ifdef GPUU_CONV
  a_base = g_batch * p.M * p.K;  // the group's weight rows
  b_base = 0u;
#else
  a_base = 0u;
  b_base = 0u;
  uint rem = g_batch;
  for (int d = int(p.batch_rank) - 1; d >= 0; --d) {
    uint c = rem % p.batch_shape[d];
    rem /= p.batch_shape[d];
    a_base += c * p.a_batch_stride[d];
    b_base += c * p.b_batch_stride[d];
  }
#endif
  return true;
}

bool in_m(uint m) { return (ALIGNED & 1) != 0 || m < p.M; }
bool in_n(uint n) { return (ALIGNED & 2) != 0 || n < p.N; }
// Shares of K are whole slices (the selector rounds them), so ALIGNED's
// whole-slice promise holds for each share too.
bool in_k(uint k) { return (ALIGNED & 2) != 0 || k < g_k_end; }

float load_a(uint m, uint k) { return (m < p.M && k < g_k_end) ? float(a[a_base + m * p.K + k]) : 0.0; }

#ifdef GPUU_CONV
// The pointwise convolution's B element (k = input channel of the group).
uint pointwise_b(uint k, uint n) {
  uint pixels = p.OH * p.OW;
  uint img = n / pixels;
  return (img * p.C + g_batch * p.Cg + k) * pixels + (n - img * pixels);
}
// A patch convolution's B element: tap (c, ky, kx) of output pixel (oy, ox)
// at input row oy * kh + ky, column ox * kw + kx.
uint patch_b(uint k, uint n) {
  uint taps = p.kh * p.kw, pixels = p.OH * p.OW;
  uint c = k / taps, tap = k - c * taps;
  uint ky = tap / p.kw, kx = tap - ky * p.kw;
  uint img = n / pixels, pix = n - img * pixels;
  uint oy = pix / p.OW, ox = pix - oy * p.OW;
  return ((img * p.C + g_batch * p.Cg + c) * p.H + oy * p.kh + ky) * p.W + ox * p.kw + kx;
}
// The materialized view's element.
uint im2col_b(uint k, uint n) { return (g_batch * p.K + k) * p.N + n; }
#endif

#ifdef GPUU_QW
float qw_scale(uint k, uint n) {
  if (QW_GROUP == 0) return float(qscale[n]);
  return float(qscale[n * (p.K / uint(QW_GROUP)) + k / uint(QW_GROUP)]);
}
// Element (k, n) of the weight, dequantized.
float qw_element(uint k, uint n) {
  uint i = n * p.K + k;  // the element's index in the packed weight
#if GPUU_QW == 8
  int q = bitfieldExtract(int(bq[i >> 2]), int(i & 3u) * 8, 8);
#else
  int q = bitfieldExtract(int(bq[i >> 3]), int(i & 7u) * 4, 4);
#endif
  return float(q) * qw_scale(k, n);
}
// Elements k..k+3 of column n, dequantized: k a multiple of 4, K too and
// QW_GROUP too (so the chunk has one scale and lies in one word).
vec4 qw_chunk(uint k, uint n) {
  uint i = n * p.K + k;
#if GPUU_QW == 8
  int w = int(bq[i >> 2]);
  ivec4 q = ivec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8), bitfieldExtract(w, 16, 8),
                  bitfieldExtract(w, 24, 8));
#else
  int w = int(bq[i >> 3]), o = int(i & 7u) * 4;
  ivec4 q = ivec4(bitfieldExtract(w, o, 4), bitfieldExtract(w, o + 4, 4), bitfieldExtract(w, o + 8, 4),
                  bitfieldExtract(w, o + 12, 4));
#endif
  return vec4(q) * qw_scale(k, n);
}
#endif

float load_b(uint k, uint n) {
  if (k >= g_k_end || n >= p.N) return 0.0;
#ifdef GPUU_QW
  return qw_element(k, n);
#endif
#ifdef GPUU_CONV
  if (CONV_B == CONV_POINTWISE) return float(b[pointwise_b(k, n)]);
  if (CONV_B == CONV_PATCHES) return float(b[patch_b(k, n)]);
  if (CONV_B == CONV_IM2COL) return float(b[im2col_b(k, n)]);
  uint taps = p.kh * p.kw, pixels = p.OH * p.OW;
  uint c = k / taps, tap = k % taps;
  uint ky = tap / p.kw, kx = tap % p.kw;
  uint img = n / pixels, pix = n % pixels;
  uint oy = pix / p.OW, ox = pix % p.OW;
  int iy = int(oy * p.sh + ky * p.dh) - int(p.ph);
  int ix = int(ox * p.sw + kx * p.dw) - int(p.pw);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return float(b[((img * p.C + g_batch * p.Cg + c) * p.H + uint(iy)) * p.W + uint(ix)]);
#elif !defined(GPUU_QW)
  return float(b[b_base + k * p.b_stride_k + n * p.b_stride_n]);
#endif
}

#ifdef GPUU_CONV
#define CONV_INPUT(i) float(b[i])
#include "conv_gather.glsl"
// `count` (<= 8) consecutive n of row k of the im2col view into v, as this
// form reads it.
void gather_b_row(uint k, uint n, uint count, out float v[8]) {
  [[unroll]] for (uint i = 0u; i < 8u; ++i) v[i] = 0.0;
  if (k >= g_k_end) return;
  if (CONV_B == CONV_IM2COL) {
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      if (i >= count || n + i >= p.N) break;
      v[i] = float(b[im2col_b(k, n + i)]);
    }
    return;
  }
  if (CONV_B == CONV_POINTWISE) {
    // The run's image found once: within it the elements lie side by side
    // (pointwise_b divides by the plane's size for each).
    const uint pixels = p.OH * p.OW, img = n / pixels, pix = n - img * pixels;
    const uint at = (img * p.C + g_batch * p.Cg + k) * pixels + pix;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      if (i >= count || n + i >= p.N) break;
      v[i] = float(b[pix + i < pixels ? at + i : pointwise_b(k, n + i)]);
    }
    return;
  }
  gather_conv_row(g_batch, k, n, count, v);
}
#endif

// Element offsets of a vector chunk's first element (A_VEC / B_VEC only).
uint a_offset(uint m, uint k) { return a_base + m * p.K + k; }
#ifdef GPUU_CONV
// B_VEC only where CONV_POINTWISE and the output pixels are whole chunks (a
// chunk never straddles two images), CONV_PATCHES and kw and W are whole
// chunks (a chunk is one tap row's run of columns), or CONV_IM2COL and N is
// whole chunks.
uint b_offset(uint k, uint n) {
  return CONV_B == CONV_POINTWISE ? pointwise_b(k, n)
         : CONV_B == CONV_PATCHES ? patch_b(k, n)
         : CONV_B == CONV_IM2COL  ? im2col_b(k, n)
                                  : 0u;
}
#else
uint b_offset(uint k, uint n) { return b_base + k * p.b_stride_k + n * p.b_stride_n; }
#endif

// Where result (m, n) goes: its index in the output's layout, or in a split
// tile its index among the partials [split][rows from p.split_row0][N].
uint partial_index(uint m, uint n) {
  uint rows = p.batches * p.M - p.split_row0;
  return (g_split * rows + g_batch * p.M + m - p.split_row0) * p.N + n;
}
#ifdef GPUU_CONV
// Row m's output channel (the group's rows follow the earlier groups').
uint out_channel(uint m) { return g_batch * p.M + m; }
uint y_index(uint m, uint n) { return nchw_index(n, out_channel(m), p.OH * p.OW, p.O); }
// Whether the results of columns n..n+7 (n a multiple of 8) lie side by side
// in the output, from a multiple of 8: each image's pixels are whole chunks.
bool y_chunks() { return (p.OH * p.OW) % 8u == 0u; }
#else
uint y_index(uint m, uint n) { return epi_store_index(g_batch * p.M + m, n, p.N); }
#endif

// Result (m, n) with its bias, and as stored at index i: through the epilogue too.
#ifdef GPUU_CONV
float biased(float v, uint m, uint n) { return HAS_BIAS != 0 ? v + float(bias[out_channel(m)]) : v; }
float finish_y(float v, uint m, uint n, uint i) { return epilogue(biased(v, m, n), i, out_channel(m), n); }
#else
float biased(float v, uint m, uint n) { return HAS_BIAS != 0 ? v + float(bias[n]) : v; }
float finish_y(float v, uint m, uint n, uint i) { return epilogue(biased(v, m, n), i, m, n); }
#endif

// One result, in bounds: bias added, stored in the output's layout; or, in
// a split tile, this share's partial sum as it is.
void store_y(uint m, uint n, float v) {
  if (SPLIT_K != 0 && !g_whole) {
    partial[partial_index(m, n)] = v;
    return;
  }
  uint i = y_index(m, n);
  y[i] = T(finish_y(v, m, n, i));
}
