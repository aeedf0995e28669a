#version 450
// [[unroll]]: the accumulators must stay in registers (see gemm_coopmat.comp).
#extension GL_EXT_control_flow_attributes : require
// int8 GEMM on matrix cores (VK_KHR_cooperative_matrix, i8 x i8 -> i32): the
// same sums as int8_gemm.comp and the direct kernels, bit for bit (integer
// sums are exact in any order, and wrap alike). Forms as int8_gemm.comp:
// matmul_int ([B,M,K] x [B,K,N]) and, with GPUU_CONV, conv2d_int as an
// implicit GEMM per group (A = the group's weight rows, B = the im2col view
// of the input, gathered while a slice loads).
//
// A workgroup of GPUU_WG invocations (256, or 128 for the 64x64 tile) in
// subgroups of 32 computes a TILE_M x TILE_N tile, each subgroup a 64-row
// block as (64/CM_M) x (WN/CM_N) accumulators. Slices of BK = 64 k go through
// shared memory: A as rows [m][k], B as rows [k][n], both in uvec4s of 16 i8
// (B's row-major staging lets the im2col gather walk neighbouring output
// pixels of one (channel, tap), whose index math is then done once per 16).
//
// The zero points leave the products as in int8_gemm.comp:
//   sum (a - az)(b - bz) = sum ab - bz sum a - az sum b + len az bz
// over the workgroup's share of K (len = its length; beyond K both operands
// are 0 and nothing is summed, conv2d's padding is B = bz). A's row sums are
// taken as its slices load (packed dot products against 1s); B's column sums,
// needed only where az != 0 (COL_SUMS), on the matrix cores as 1s x B.
//
// Split-K (SPLIT_K): each share stores its i32 sums (the bias with share 0)
// as partials [split][batch][M][N]; int8_gemm_split_reduce.comp adds them.
//
// GPUU_RESCALE: the rescale that alone reads the sums (requantization to i8,
// int_scale.glsl's TOSA arithmetic) is applied in the store, which writes the
// i8 output (8-bit storage); under SPLIT_K the reduction applies it instead,
// and a residual block's add after it (int8_gemm_split_reduce.comp).
//
// Written against GL_NV_cooperative_matrix and GL_NV_integer_cooperative_matrix
// (as gemm_coopmat.comp, rewritten into the KHR encoding at build time, which
// marks the i8 and i32 operands signed).
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_spirv_intrinsics : require
#include "common.glsl"
#ifdef GPUU_RESCALE
#extension GL_EXT_shader_8bit_storage : require
#include "int8_requantize.glsl"
#endif

layout(constant_id = 0) const int HAS_BIAS = 0;
// A's rows (K a multiple of 16) are read as uvec4s.
layout(constant_id = 1) const int A_VEC = 0;
// B's runs of 16 along n are read as uvec4s: matmul with N a multiple of 16,
// a pointwise convolution (1x1, stride 1, no padding) with pixels a multiple of 16.
layout(constant_id = 2) const int B_VEC = 0;
// A's zero point is nonzero, so B's column sums are needed.
layout(constant_id = 3) const int COL_SUMS = 0;
layout(constant_id = 4) const int SPLIT_K = 0;
layout(constant_id = 5) const uint CM_M = 16;
layout(constant_id = 6) const uint CM_N = 16;
layout(constant_id = 7) const uint CM_K = 32;
layout(constant_id = 8) const uint TILE_M = 128;
layout(constant_id = 9) const uint TILE_N = 128;
// (10 and 11: the rescale's, int8_requantize.glsl.)
// conv2d_int: B is the im2col view materialized beforehand (im2col.comp's
// GPUU_I8: [groups][K][N rounded up to 16] bytes, the zero point in the
// padding) and read in uvec4s, instead of gathered a byte at a time.
layout(constant_id = 12) const int CONV_IM2COL = 0;

const uint BK = 64u;  // k per slice
const uint SUBGROUPS = GPUU_WG / 32u;
const uint WM = 64u;                       // rows per subgroup
const uint WARPS_M = TILE_M / WM;
const uint WARPS_N = SUBGROUPS / WARPS_M;
const uint WN = TILE_N / WARPS_N;          // columns per subgroup
const uint TILES_M = WM / CM_M;
const uint TILES_N = WN / CM_N;
// Staged rows in uvec4s, one of padding so that neighbouring rows start in
// different banks.
const uint AS_ROW = BK / 16u + 1u;          // A: [m][k]
const uint BS_ROW = TILE_N / 16u + 1u;      // B: [k][n]
const uint A_CHUNKS = TILE_M * (BK / 16u);  // uvec4s of A per slice
const uint CHUNKS_A = A_CHUNKS / GPUU_WG;   // ... per invocation
const uint CHUNKS_B = BK * (TILE_N / 16u) / GPUU_WG;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a_words[]; };
layout(std430, set = 0, binding = 0) readonly buffer A16 { uvec4 a16[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer B16 { uvec4 b16[]; };
// conv2d_int's bias per output channel, matmul_int's per column (the add
// after it, taken with its rescale); bound to A where HAS_BIAS is 0 (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { int bias[]; };
// The output, or under SPLIT_K the partials; also as ivec4s, and (the i8
// output) as words of four results.
layout(std430, set = 0, binding = 3) writeonly buffer Out { int y[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out4 { ivec4 y4[]; };

layout(push_constant) uniform Params {
  uint M;  // conv: output channels per group
  uint N;  // conv: batch * OH * OW
  uint K;  // conv: C/groups * kH * kW
  uint tiles_n;
  uint tiles_m;
  uint tile_count;  // tiles_n * tiles_m * batches (* splits)
  int a_zp, b_zp;   // conv: the weight's and the input's
#ifdef GPUU_CONV
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
#endif
  uint k_split;  // SPLIT_K: the depth one workgroup sums
  uint batches;  // conv: groups
#ifdef GPUU_RESCALE
  RQ_PUSH
#endif
} p;
#ifdef GPUU_RESCALE
layout(std430, set = 0, binding = 3) writeonly buffer Out8 { int8_t y8[]; };
#endif

// Output element `o` (its row: the output channel of conv2d; column n) = v.
void store(uint o, uint row, uint n, int v) {
#ifdef GPUU_RESCALE
  if (SPLIT_K == 0) {
#ifdef GPUU_CONV
    int r = requantize(v, row, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#else
    int r = requantize(v, n, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#endif
    y8[o] = int8_t(r);
    return;
  }
#endif
  y[o] = v;
}

// Four results v of row `row` (conv: the output channel), columns n..n+3,
// the first at output element o (under SPLIT_K: partial o): one store (a
// word of four i8, or an ivec4) where they lie side by side in the output,
// aligned (`whole`), else one each (a convolution's run may go on in the
// next image's plane).
void store4(uint o, uint row, uint n, ivec4 v, bool whole) {
#ifdef GPUU_RESCALE
  if (SPLIT_K == 0) {
    if (whole) {
      uint word = 0u;
      [[unroll]] for (uint e = 0u; e < 4u; ++e) {
#ifdef GPUU_CONV
        const int r = requantize(v[e], row, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#else
        const int r = requantize(v[e], n + e, p.rq_input_zp, p.rq_output_zp, p.rq_lo, p.rq_hi);
#endif
        word |= (uint(r) & 0xFFu) << (8u * e);
      }
      y[o / 4u] = int(word);
      return;
    }
  } else
#endif
  if (whole) {
    y4[o / 4u] = v;
    return;
  }
  [[unroll]] for (uint e = 0u; e < 4u; ++e) {
    if (n + e >= p.N) return;
    if (SPLIT_K != 0) {
      y[o + e] = v[e];
      continue;
    }
#ifdef GPUU_CONV
    const uint pixels = p.OH * p.OW, at = n + e;
    store(at / pixels * p.O * pixels + row * pixels + at % pixels, row, at, v[e]);
#else
    store(o + e, row, n + e, v[e]);
#endif
  }
}

// OpSDot (4450) on packed 4 x i8 words (PackedVectorFormat4x8Bit = 0),
// capabilities DotProduct (6019) and DotProductInput4x8BitPacked (6018).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int format);
int byte_sum(uvec4 w) {
  const uint ones = 0x01010101u;
  return sdot_packed(w.x, ones, 0) + sdot_packed(w.y, ones, 0) + sdot_packed(w.z, ones, 0) + sdot_packed(w.w, ones, 0);
}

shared uvec4 As[TILE_M * AS_ROW];
shared uvec4 Bs[BK * BS_ROW];
shared int a_part[A_CHUNKS];  // each A chunk's share of its row's sum
shared int row_sum[TILE_M];
shared int col_sum[TILE_N];

uint g_batch, g_m0, g_n0, a_base, b_base, g_split, g_k0, g_k_end;

// The workgroup's tile and share of K; false past the last tile (the 2-D
// spread of a large dispatch): the whole workgroup leaves before any barrier.
bool place_tile() {
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
  g_m0 = (rest / p.tiles_n) * TILE_M;
  g_n0 = (rest % p.tiles_n) * TILE_N;
  a_base = g_batch * p.M * p.K;  // matmul: the batch's A; conv: the group's weight rows
  b_base = g_batch * p.K * p.N;  // matmul only
  return true;
}

uint byte_at(uint e) { return (b_words[e >> 2u] >> ((e & 3u) * 8u)) & 0xFFu; }

// A[m][k .. k+15], 0 outside A and the share.
uvec4 load_a(uint m, uint k) {
  if (m >= p.M || k >= g_k_end) return uvec4(0u);
  uint i = a_base + m * p.K + k;
  if (A_VEC != 0) return a16[i >> 4u];
  uvec4 v = uvec4(0u);
  [[unroll]] for (uint j = 0u; j < 16u; ++j) {
    if (k + j < g_k_end) v[j / 4u] |= ((a_words[(i + j) >> 2u] >> (((i + j) & 3u) * 8u)) & 0xFFu) << (8u * (j % 4u));
  }
  return v;
}

#ifdef GPUU_CONV
// The im2col view's B[k][n .. n+15]: input zero point in the padding, 0 past
// N and outside the share. The (channel, tap) of k is decoded once; the
// output pixel steps along its row.
uvec4 load_b(uint k, uint n) {
  if (k >= g_k_end || n >= p.N) return uvec4(0u);
  uint pixels = p.OH * p.OW;
  uint img = n / pixels, pix = n - img * pixels;
  uint channel_base = g_batch * p.Cg;
  if (CONV_IM2COL != 0) return b16[(g_batch * p.K + k) * ((p.N + 15u) / 16u) + n / 16u];
  if (B_VEC != 0) return b16[((img * p.C + channel_base + k) * pixels + pix) >> 4u];
  uint taps = p.kh * p.kw;
  uint c = k / taps, tap = k - c * taps;
  uint ky = tap / p.kw, kx = tap - ky * p.kw;
  int dy = int(ky * p.dh) - int(p.ph), dx = int(kx * p.dw) - int(p.pw);
  uint oy = pix / p.OW, ox = pix - oy * p.OW;
  uint images = p.N / pixels;
  uint pad = uint(p.b_zp) & 0xFFu;
  uvec4 v = uvec4(0u);
  [[unroll]] for (uint j = 0u; j < 16u; ++j) {
    if (img < images) {
      int iy = int(oy * p.sh) + dy, ix = int(ox * p.sw) + dx;
      uint byte = pad;
      if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) {
        byte = byte_at(((img * p.C + channel_base + c) * p.H + uint(iy)) * p.W + uint(ix));
      }
      v[j / 4u] |= byte << (8u * (j % 4u));
      if (++ox == p.OW) {
        ox = 0u;
        if (++oy == p.OH) {
          oy = 0u;
          ++img;
        }
      }
    }
  }
  return v;
}
#else
// B[k][n .. n+15], 0 outside B and the share.
uvec4 load_b(uint k, uint n) {
  if (k >= g_k_end || n >= p.N) return uvec4(0u);
  uint i = b_base + k * p.N + n;
  if (B_VEC != 0) return b16[i >> 4u];
  uvec4 v = uvec4(0u);
  [[unroll]] for (uint j = 0u; j < 16u; ++j) {
    if (n + j < p.N) v[j / 4u] |= byte_at(i + j) << (8u * (j % 4u));
  }
  return v;
}
#endif

uvec4 ra[CHUNKS_A], rb[CHUNKS_B];  // the next slice, on its way to shared memory
int a_sums[CHUNKS_A];              // the invocation's A chunks' sums so far (a chunk keeps its row)

void fetch(uint k0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) {
    uint c = t + i * GPUU_WG;
    ra[i] = load_a(g_m0 + c / (BK / 16u), k0 + (c % (BK / 16u)) * 16u);
  }
  [[unroll]] for (uint i = 0u; i < CHUNKS_B; ++i) {
    uint c = t + i * GPUU_WG;
    rb[i] = load_b(k0 + c / (TILE_N / 16u), g_n0 + (c % (TILE_N / 16u)) * 16u);
  }
}

// A's chunks are summed here, not as they are fetched: a sum there waited for
// the loads it had just issued, before the multiply they were meant to
// overlap (H100: resnet50's 3x3s 2-8 % faster, most where K is whole).
void stage(uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) {
    uint c = t + i * GPUU_WG;
    As[(c / (BK / 16u)) * AS_ROW + c % (BK / 16u)] = ra[i];
    a_sums[i] += byte_sum(ra[i]);
  }
  [[unroll]] for (uint i = 0u; i < CHUNKS_B; ++i) {
    uint c = t + i * GPUU_WG;
    Bs[(c / (TILE_N / 16u)) * BS_ROW + c % (TILE_N / 16u)] = rb[i];
  }
}

icoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[TILES_M][TILES_N];
// COL_SUMS: 1s x B, every row of which is B's column sums.
icoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> col_acc[TILES_N];

void multiply(uint wm0, uint wn0) {
  [[unroll]] for (uint kk = 0u; kk < BK; kk += CM_K) {
    icoopmatNV<8, gl_ScopeSubgroup, CM_M, CM_K> fa[TILES_M];
    [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
      coopMatLoadNV(fa[i], As, (wm0 + i * CM_M) * AS_ROW + kk / 16u, AS_ROW, false);
    }
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      icoopmatNV<8, gl_ScopeSubgroup, CM_K, CM_N> fb;
      coopMatLoadNV(fb, Bs, kk * BS_ROW + (wn0 + j * CM_N) / 16u, BS_ROW, false);
      [[unroll]] for (uint i = 0u; i < TILES_M; ++i) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
      if (COL_SUMS != 0) {
        col_acc[j] = coopMatMulAddNV(icoopmatNV<8, gl_ScopeSubgroup, CM_M, CM_K>(int8_t(1)), fb, col_acc[j]);
      }
    }
  }
}

void main() {
  if (!place_tile()) return;
  uint t = gl_LocalInvocationID.x;
  uint sg = gl_SubgroupID;
  uint wm0 = (sg / WARPS_N) * WM, wn0 = (sg % WARPS_N) * WN;

  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) acc[i][j] = icoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0);
  }
  [[unroll]] for (uint j = 0u; j < TILES_N; ++j) col_acc[j] = icoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0);
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) a_sums[i] = 0;

  fetch(g_k0, t);
  for (uint k0 = g_k0; k0 < g_k_end; k0 += BK) {
    barrier();  // every subgroup is done reading the previous slice
    stage(t);
    barrier();
    if (k0 + BK < g_k_end) fetch(k0 + BK, t);  // in flight during the multiply
    multiply(wm0, wn0);
  }

  // The zero points' sums, added in a fixed order (no atomics): A's rows
  // from the chunks' shares, B's columns from the first row of 1s x B.
  barrier();  // every subgroup is done reading the slice
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) a_part[t + i * GPUU_WG] = a_sums[i];
  uint lane = gl_SubgroupInvocationID;
  if (COL_SUMS != 0 && wm0 == 0u) {
    uint scratch = sg * (CM_M * CM_N / 4u);
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      coopMatStoreNV(col_acc[j], Bs, scratch, CM_N / 4u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      if (lane < CM_N) col_sum[wn0 + j * CM_N + lane] = int(Bs[scratch + lane / 4u][lane % 4u]);
      subgroupBarrier();
    }
  }
  barrier();
  if (t < TILE_M) {
    int sum = 0;
    for (uint c = 0u; c < BK / 16u; ++c) sum += a_part[t * (BK / 16u) + c];
    row_sum[t] = sum;
  }
  barrier();

  // Epilogue through shared memory (bounds, zero points, bias, the output's
  // layout): each subgroup stores one accumulator at a time into its own part
  // of As and its invocations write that out.
  const int len = int(g_k_end - g_k0);
  const int zz = len * p.a_zp * p.b_zp;
  const bool with_bias = HAS_BIAS != 0 && g_split == 0u;
#ifdef GPUU_CONV
  const uint pixels = p.OH * p.OW;
#endif
  uint scratch = sg * (CM_M * CM_N / 4u);
  // An accumulator's results go out in runs of eight of a row, one per
  // invocation (CM_N is 16: int_coopmat_fits), so that the row's sums, bias
  // and output index are found once a run rather than once a result, and
  // stored four at a time. (A store per result, with its conv index's
  // divisions, was the suspect in the pointwise convolutions of resnet50 at
  // batch 8: 15 TOPS where the 3x3s reach 40-50.)
  const uint RUNS = CM_M * CM_N / 8u;
  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      coopMatStoreNV(acc[i][j], As, scratch, CM_N / 4u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint r = 0u; r < (RUNS + 31u) / 32u; ++r) {
        const uint run = r * 32u + lane;
        const uint e = run * 8u;  // the run's first result in the accumulator
        const uint ml = wm0 + i * CM_M + e / CM_N, nl = wn0 + j * CM_N + e % CM_N;
        const uint m = g_m0 + ml, n = g_n0 + nl;
        if (run < RUNS && m < p.M && n < p.N) {
          const uint row = g_batch * p.M + m;  // conv: the output channel
          int base = zz - p.b_zp * row_sum[ml];
#ifdef GPUU_CONV
          if (with_bias) base += bias[row];
#endif
          [[unroll]] for (uint h = 0u; h < 2u; ++h) {
            const uint nh = n + 4u * h;
            if (nh >= p.N) break;
            ivec4 v = ivec4(As[scratch + e / 4u + h]) + base;
            if (COL_SUMS != 0) {
              v -= p.a_zp * ivec4(col_sum[nl + 4u * h], col_sum[nl + 4u * h + 1u], col_sum[nl + 4u * h + 2u],
                                  col_sum[nl + 4u * h + 3u]);
            }
#ifndef GPUU_CONV
            if (with_bias) {  // a quantized linear's, along the columns
              [[unroll]] for (uint q = 0u; q < 4u; ++q) v[q] += nh + q < p.N ? bias[nh + q] : 0;
            }
#endif
            const bool in_row = nh + 4u <= p.N;
            if (SPLIT_K != 0) {
              const uint o = (g_split * p.batches * p.M + row) * p.N + nh;
              store4(o, row, nh, v, in_row && o % 4u == 0u);
            } else {
#ifdef GPUU_CONV
              const uint img = nh / pixels, pix = nh - img * pixels;
              const uint o = (img * p.O + row) * pixels + pix;
              store4(o, row, nh, v, in_row && pix + 4u <= pixels && o % 4u == 0u);
#else
              const uint o = row * p.N + nh;
              store4(o, row, nh, v, in_row && o % 4u == 0u);
#endif
            }
          }
        }
      }
      subgroupBarrier();  // read before the next store overwrites
    }
  }
}
