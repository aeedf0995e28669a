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
// (Constants 5..9 are gemm_coopmat.comp's, 5..6 gemv.comp's.)
// Split-K: the workgroups of one output tile (its shares) each sum
// p.k_split of K and store f32 partials (binding 4); the last share to
// finish adds them up and stores the results as an unsplit tile would
// (finish_split), so the reduction needs no dispatch of its own.
layout(constant_id = 10) const int SPLIT_K = 0;
// SPLIT_K: results (and shares of each) a tile's last share sums at once
// per invocation (finish_split): 4 on GPUs, 1 on CPU devices.
layout(constant_id = 27) const uint SPLIT_LANES = 1u;
#ifdef GPUU_CONV
// A 1x1 convolution with stride 1 and no padding: the im2col view is the
// input itself, so B is read directly (in vector chunks where B_VEC).
layout(constant_id = 11) const int POINTWISE = 0;
#endif

layout(std430, set = 0, binding = 0) readonly buffer A { T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { T b[]; };
// Bound to some read-only tensor when HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { T bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
// SPLIT_K: the partials [split][batch][M][N], and per output tile the count
// of its shares done (zero between runs: the last share puts it back).
// Coherent: the last share reads what the others wrote. Bound to the output,
// never touched, without SPLIT_K.
layout(std430, set = 0, binding = 4) coherent buffer Partial { float partial[]; };
layout(std430, set = 0, binding = 8) coherent buffer Arrivals { uint arrivals[]; };
// Bindings 5..7 and constants 12..26: the epilogue (gemm_epilogue.glsl).
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
} p;
#endif

// Set by gemm_tile() for the workgroup's tile: its batch (conv2d: group),
// first row and column, the bases of A and B, and its share [g_k0, g_k_end) of K.
uint g_batch, g_m0, g_n0, a_base, b_base, g_split, g_k0, g_k_end;

// False for workgroups past the last tile (the 2-D spread of a large
// dispatch): they leave together, before any barrier.
bool gemm_tile(uint bm, uint bn) {
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= p.tile_count) return false;
  uint per_batch = p.tiles_n * p.tiles_m;
  g_split = 0u;
  g_k0 = 0u;
  g_k_end = p.K;
  if (SPLIT_K != 0) {
    uint per_split = per_batch * p.batches;
    g_split = tile / per_split;
    tile -= g_split * per_split;
    g_k0 = g_split * p.k_split;
    g_k_end = min(p.K, g_k0 + p.k_split);
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
#endif

float load_b(uint k, uint n) {
  if (k >= g_k_end || n >= p.N) return 0.0;
#ifdef GPUU_CONV
  if (POINTWISE != 0) return float(b[pointwise_b(k, n)]);
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
  if (k >= g_k_end) return;
  if (POINTWISE != 0) {
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      if (i >= count || n + i >= p.N) break;
      v[i] = float(b[pointwise_b(k, n + i)]);
    }
    return;
  }
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
// B_VEC only where POINTWISE and the output pixels are whole chunks (a chunk
// never straddles two images); otherwise im2col is gathered.
uint b_offset(uint k, uint n) { return POINTWISE != 0 ? pointwise_b(k, n) : 0u; }
#else
uint b_offset(uint k, uint n) { return b_base + k * p.b_stride_k + n * p.b_stride_n; }
#endif

// One result, in bounds: bias added, the epilogue applied, stored in the
// output's layout.
void store_result(uint m, uint n, float v) {
#ifdef GPUU_CONV
  uint oc = g_batch * p.M + m;
  if (HAS_BIAS != 0) v += float(bias[oc]);
  uint pixels = p.OH * p.OW;
  uint img = n / pixels, pix = n % pixels;
  uint i = (img * p.O + oc) * pixels + pix;
  y[i] = T(epilogue(v, i, oc, n));
#else
  if (HAS_BIAS != 0) v += float(bias[n]);
  uint i = (g_batch * p.M + m) * p.N + n;
  y[i] = T(epilogue(v, i, m, n));
#endif
}

uint partial_index(uint share, uint m, uint n) { return ((share * p.batches + g_batch) * p.M + m) * p.N + n; }

// One result of the tile, in bounds: stored, or under SPLIT_K this share's
// partial sum as it is (finish_split stores the tile).
void store_y(uint m, uint n, float v) {
  if (SPLIT_K != 0) {
    partial[partial_index(g_split, m, n)] = v;
  } else {
    store_result(m, n, v);
  }
}

shared bool g_last_share;

// Under SPLIT_K, called by every invocation after its store_y calls: the
// workgroup counts its share done on its tile, and the last one (whichever
// it is) sums the shares' partials in share order and stores the bm x bn
// tile. The pattern of a single-pass reduction: the partials are made
// visible before the count, read after it.
void finish_split(uint bm, uint bn) {
  if (SPLIT_K == 0) return;
  memoryBarrierBuffer();
  barrier();
  const uint tile = (g_batch * p.tiles_m + g_m0 / bm) * p.tiles_n + g_n0 / bn;
  const uint shares = (p.K + p.k_split - 1u) / p.k_split;
  if (gl_LocalInvocationIndex == 0u) {
    g_last_share = atomicAdd(arrivals[tile], 1u) + 1u == shares;
    if (g_last_share) arrivals[tile] = 0u;  // for the next run
  }
  barrier();
  if (!g_last_share) return;
  memoryBarrierBuffer();
  // SPLIT_LANES results per invocation, and as many shares' loads of them
  // issued before any is added: the partials come from L2, and one load at
  // a time left this loop bound by their round trips on a GPU (15 us for a
  // 64x64 tile of three shares on the H200, more than the second dispatch it
  // replaced). A CPU device takes one result at a time (less code to build).
  const uint share_stride = p.batches * p.M * p.N;
  for (uint e0 = SPLIT_LANES * gl_LocalInvocationIndex; e0 < bm * bn; e0 += SPLIT_LANES * gl_WorkGroupSize.x) {
    uint at[SPLIT_LANES];
    float v[SPLIT_LANES];
    [[unroll]] for (uint j = 0u; j < SPLIT_LANES; ++j) {
      const uint e = e0 + j, m = g_m0 + e / bn, n = g_n0 + e % bn;
      at[j] = e < bm * bn && m < p.M && n < p.N ? partial_index(0u, m, n) : ~0u;
      v[j] = 0.0;
    }
    for (uint s0 = 0u; s0 < shares; s0 += SPLIT_LANES) {
      [[unroll]] for (uint s = 0u; s < SPLIT_LANES; ++s) {
        if (s0 + s >= shares) break;
        [[unroll]] for (uint j = 0u; j < SPLIT_LANES; ++j) {
          if (at[j] != ~0u) v[j] += partial[at[j] + (s0 + s) * share_stride];
        }
      }
    }
    [[unroll]] for (uint j = 0u; j < SPLIT_LANES; ++j) {
      if (at[j] != ~0u) store_result(g_m0 + (e0 + j) / bn, g_n0 + (e0 + j) % bn, v[j]);
    }
  }
}
