#version 450
// Tiled GEMM, Y = A x B (+ bias), accumulated in f32 whatever T is. Each
// workgroup computes one 64x64 output tile, staging 16-deep slices of A and B
// in shared memory; each of its 256 invocations keeps a 4x4 block of results
// in registers. Default form: matmul/linear over broadcast batches, B read
// through strides (so linear's [N,K] weight needs no transpose). GPUU_CONV
// form: conv2d as an implicit GEMM per group, A = the group's weight rows
// [O/groups, C/groups*kH*kW], B = the im2col view of the input, gathered
// while the tile loads (zero padding included), so nothing is materialized.
#include "common.glsl"

#define BM uint(LIMIT_GEMM_TILE_M)
#define BN uint(LIMIT_GEMM_TILE_N)
#define BK 16u
// Invocation (tx, ty) owns rows ty + 16*i and columns tx + 16*j of the tile:
// neighbouring invocations store neighbouring columns.
#define LANES 16u

layout(constant_id = 0) const int HAS_BIAS = 0;
// B's contiguous axis is k (linear's weight) rather than n: loads walk k
// across neighbouring invocations instead of n.
layout(constant_id = 1) const int B_K_CONTIGUOUS = 0;

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

shared float As[BK][BM];
shared float Bs[BK][BN];

void main() {
  // One workgroup per tile; workgroups past the last tile (the 2-D spread of a
  // large dispatch) leave together, before any barrier.
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= p.tile_count) return;
  uint per_batch = p.tiles_n * p.tiles_m;
  uint batch = tile / per_batch;
  uint rest = tile - batch * per_batch;
  uint m0 = (rest / p.tiles_n) * BM;
  uint n0 = (rest % p.tiles_n) * BN;
  uint t = gl_LocalInvocationID.x;
  uint tx = t % LANES;
  uint ty = t / LANES;

#ifdef GPUU_CONV
  uint group = batch;
  uint a_base = group * p.M * p.K;
  uint taps = p.kh * p.kw;
  uint pixels = p.OH * p.OW;
#else
  uint a_base = 0u, b_base = 0u;
  uint rem = batch;
  for (int d = int(p.batch_rank) - 1; d >= 0; --d) {
    uint c = rem % p.batch_shape[d];
    rem /= p.batch_shape[d];
    a_base += c * p.a_batch_stride[d];
    b_base += c * p.b_batch_stride[d];
  }
#endif

  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i) {
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  }

  for (uint k0 = 0u; k0 < p.K; k0 += BK) {
    // A tile (BM x BK): A is row-major along k, so neighbours read along k.
    for (uint i = 0u; i < (BM * BK) / GPUU_WG; ++i) {
      uint e = t + i * GPUU_WG;
      uint row = e / BK, col = e % BK;
      uint m = m0 + row, k = k0 + col;
      As[col][row] = (m < p.M && k < p.K) ? float(a[a_base + m * p.K + k]) : 0.0;
    }
    // B tile (BK x BN).
    for (uint i = 0u; i < (BK * BN) / GPUU_WG; ++i) {
      uint e = t + i * GPUU_WG;
      uint kl, nl;
      if (B_K_CONTIGUOUS != 0) {
        kl = e % BK;
        nl = e / BK;
      } else {
        kl = e / BN;
        nl = e % BN;
      }
      uint k = k0 + kl, n = n0 + nl;
      float v = 0.0;
      if (k < p.K && n < p.N) {
#ifdef GPUU_CONV
        uint c = k / taps, tap = k % taps;
        uint ky = tap / p.kw, kx = tap % p.kw;
        uint img = n / pixels, pix = n % pixels;
        uint oy = pix / p.OW, ox = pix % p.OW;
        int iy = int(oy * p.sh + ky * p.dh) - int(p.ph);
        int ix = int(ox * p.sw + kx * p.dw) - int(p.pw);
        if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) {
          v = float(b[((img * p.C + group * p.Cg + c) * p.H + uint(iy)) * p.W + uint(ix)]);
        }
#else
        v = float(b[b_base + k * p.b_stride_k + n * p.b_stride_n]);
#endif
      }
      Bs[kl][nl] = v;
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float av[4], bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = As[kk][ty + LANES * i];
      for (uint j = 0u; j < 4u; ++j) bv[j] = Bs[kk][tx + LANES * j];
      for (uint i = 0u; i < 4u; ++i) {
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
      }
    }
    barrier();  // the next slice overwrites the tiles
  }

  for (uint i = 0u; i < 4u; ++i) {
    uint m = m0 + ty + LANES * i;
    if (m >= p.M) break;
    for (uint j = 0u; j < 4u; ++j) {
      uint n = n0 + tx + LANES * j;
      if (n >= p.N) break;
      float v = acc[i][j];
#ifdef GPUU_CONV
      uint oc = group * p.M + m;
      if (HAS_BIAS != 0) v += float(bias[oc]);
      uint img = n / pixels, pix = n % pixels;
      y[(img * p.O + oc) * pixels + pix] = T(v);
#else
      if (HAS_BIAS != 0) v += float(bias[n]);
      y[(batch * p.M + m) * p.N + n] = T(v);
#endif
    }
  }
}
