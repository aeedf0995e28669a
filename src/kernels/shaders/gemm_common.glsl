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

layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };

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
} p;
#endif

// Set by gemm_tile() for the workgroup's tile.
uint g_batch, g_m0, g_n0, a_base, b_base;

// False for workgroups past the last tile (the 2-D spread of a large
// dispatch): they leave together, before any barrier.
bool gemm_tile(uint bm, uint bn) {
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= p.tile_count) return false;
  uint per_batch = p.tiles_n * p.tiles_m;
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
bool in_k(uint k) { return (ALIGNED & 2) != 0 || k < p.K; }

float load_a(uint m, uint k) { return (m < p.M && k < p.K) ? float(a[a_base + m * p.K + k]) : 0.0; }

float load_b(uint k, uint n) {
  if (k >= p.K || n >= p.N) return 0.0;
#ifdef GPUU_CONV
  uint taps = p.kh * p.kw, pixels = p.OH * p.OW;
  uint c = k / taps, tap = k % taps;
  uint ky = tap / p.kw, kx = tap % p.kw;
  uint img = n / pixels, pix = n % pixels;
  uint oy = pix / p.OW, ox = pix % p.OW;
  int iy = int(oy * p.sh + ky * p.dh) - int(p.ph);
  int ix = int(ox * p.sw + kx * p.dw) - int(p.pw);
  if (iy < 0 || iy >= int(p.H) || ix < 0 || ix >= int(p.W)) return 0.0;
  return float(b[((img * p.C + g_batch * p.Cg + c) * p.H + uint(iy)) * p.W + uint(ix)]);
#else
  return float(b[b_base + k * p.b_stride_k + n * p.b_stride_n]);
#endif
}

#ifdef GPUU_CONV
// `count` (<= 8) consecutive n of row k of the im2col view into v: the tap is
// decoded once and the pixel once, then stepped, instead of six divisions per
// element (the gather bounded the implicit GEMM).
void gather_b_row(uint k, uint n, uint count, out float v[8]) {
  [[unroll]] for (uint i = 0u; i < 8u; ++i) v[i] = 0.0;
  if (k >= p.K) return;
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
      v[i] = float(b[((img * p.C + g_batch * p.Cg + c) * p.H + uint(iy)) * p.W + uint(ix)]);
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
#endif

// Element offsets of a vector chunk's first element (A_VEC / B_VEC only).
uint a_offset(uint m, uint k) { return a_base + m * p.K + k; }
#ifdef GPUU_CONV
uint b_offset(uint k, uint n) { return 0u; }  // im2col is gathered (B_VEC is 0)
#else
uint b_offset(uint k, uint n) { return b_base + k * p.b_stride_k + n * p.b_stride_n; }
#endif

// One result, in bounds: bias added, stored in the output's layout.
void store_y(uint m, uint n, float v) {
#ifdef GPUU_CONV
  uint oc = g_batch * p.M + m;
  if (HAS_BIAS != 0) v += float(bias[oc]);
  uint pixels = p.OH * p.OW;
  uint img = n / pixels, pix = n % pixels;
  y[(img * p.O + oc) * pixels + pix] = T(v);
#else
  if (HAS_BIAS != 0) v += float(bias[n]);
  y[(g_batch * p.M + m) * p.N + n] = T(v);
#endif
}
