#version 450
// [[unroll]]: register-blocked loops must unroll, or the accumulators end in
// local memory (measured: the 128 tile ran at 1/15 the speed without it).
#extension GL_EXT_control_flow_attributes : require
// f16 GEMM on matrix cores (VK_KHR_cooperative_matrix): f16 A and B, f32
// accumulation, f16 results (forms and bindings: gemm_common.glsl). A
// workgroup of GPUU_WG invocations (256, or 128 for the linears' small tile)
// = KGROUPS groups of SUBGROUPS subgroups of 32 computes a TILE_M x TILE_N output tile
// (specialization constants, 64, 128 or 256 rows), the subgroups in a
// (TILE_M/WM) x (SUBGROUPS / (TILE_M/WM)) grid, each a WM-row block of it
// (WM: 64, or 32 for the small tile) as (WM/CM_M) x (WN/CM_N) accumulators
// of one supported cooperative-matrix
// shape CM_M x CM_N x CM_K, which the kernel selector picks from
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR. BK-deep slices of A and
// B (GPUU_COOP_BK: 32 or 64) go through one shared buffer as 8-half chunks
// (uvec4): two barriers per slice, with the next slice's global reads issued
// after the second so they are in flight during the multiply. One buffer
// rather than two lets 64-deep slices (half the barriers) fit in 48 KiB.
// Measured on the H100 (4096^3, before ALIGNED): 128x128 64-deep 224
// TFLOP/s, 256x128 32-deep 205, 128x256 32-deep 216, two 32-deep buffers 171;
// restaging the same slice (no global reads) 328 at 128x256: the reads cost a
// third. ALIGNED = 3 (no bounds checks) takes 128x128 64-deep to 274. The driver
// gives it 182 registers per invocation (even 32-deep takes 150): one
// workgroup per multiprocessor, so nothing else hides a slice's barriers.
//
// Written against GL_NV_cooperative_matrix because the build's glslang
// predates GL_KHR_cooperative_matrix; tools/spirv_coopmat_khr.cmake rewrites
// the SPIR-V into the SPV_KHR_cooperative_matrix encoding at build time (each
// matrix type gets its use, A / B / accumulator, from the operand it fills in
// OpCooperativeMatrixMulAdd). The dimensions are specialization constants
// partly for that reason: A (CM_M x CM_K), B (CM_K x CM_N) and the
// accumulator (CM_M x CM_N) stay three distinct SPIR-V types even when the
// picked shape is square.
#define GPUU_F16
#extension GL_NV_cooperative_matrix : require
// glslang puts cooperative-matrix shaders on the Vulkan memory model: the
// device needs vulkanMemoryModel too.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"
#include "gemm_common.glsl"

layout(constant_id = 5) const uint CM_M = 16;
layout(constant_id = 6) const uint CM_N = 16;
layout(constant_id = 7) const uint CM_K = 16;
layout(constant_id = 8) const uint TILE_M = 128;
layout(constant_id = 9) const uint TILE_N = 128;

#ifndef GPUU_COOP_BK
#define GPUU_COOP_BK 32
#endif
#define BK uint(GPUU_COOP_BK)  // slice depth
// Rows per subgroup, 64 or 32: the small tile's 4 subgroups as a 2 x 2 grid
// of 32 x 32 blocks rather than 1 x 4 of 64 x 16 load 2 A and 2 B fragments
// per 4 products instead of 4 and 1 (H100, 2026-12-06: its GEMMs of 128-197
// rows 4-8 % faster; `gemm-coopsmall-variants-*.json`).
#ifndef GPUU_COOP_WM
#define GPUU_COOP_WM 64
#endif
// Groups of subgroups (GPUU_COOP_KGROUPS, the convolutions' small tile: 2)
// that each walk every KGROUPS-th slice of the same tile into their own
// accumulators, added up as the epilogue stores: KGROUPS times the reads in
// flight per workgroup, where a small GEMM's few workgroups leave most
// multiprocessors with one workgroup (or none) and each slice waits on its
// reads. With one group the kernel compiles to the very SPIR-V it did before
// groups (the group's offsets, GROUP_AS and GROUP_BS, expand to nothing): a
// first form with groups, compiled for one, made 128-row linears 15 % slower
// on the H100 (the cause not isolated).
#ifndef GPUU_COOP_KGROUPS
#define GPUU_COOP_KGROUPS 1
#endif
#define KGROUPS uint(GPUU_COOP_KGROUPS)
#if GPUU_COOP_KGROUPS > 1
#define GROUP_WG (GPUU_WG / GPUU_COOP_KGROUPS)  // invocations per group
#define GROUP_AS g_as0 +
#define GROUP_BS g_bs0 +
uint g_as0, g_bs0;  // the group's parts of As and Bs
#else
#define GROUP_WG GPUU_WG
#define GROUP_AS
#define GROUP_BS
#endif
const uint SUBGROUPS = GROUP_WG / 32u;  // per group
const uint WM = uint(GPUU_COOP_WM);      // rows per subgroup
const uint WARPS_M = TILE_M / WM;        // subgroups along m
const uint WARPS_N = SUBGROUPS / WARPS_M;  // ... and along n
const uint WN = TILE_N / WARPS_N;        // columns per subgroup
const uint TILES_M = WM / CM_M;
const uint TILES_N = WN / CM_N;
// Shared rows in uvec4 chunks, padded by one chunk so that the 16-byte rows a
// matrix load reads fall in different banks.
const uint AS_ROW = BK / 8u + 1u;        // A: [m][k]
const uint BS_ROW = TILE_N / 8u + 1u;    // B: [k][n]
const uint BT_ROW = BK / 8u + 1u;        // B with k contiguous: [n][k]
const uint A_SIZE = TILE_M * AS_ROW;
const uint B_SIZE = TILE_N * BT_ROW;     // >= BK * BS_ROW for TILE_N >= BK
// Chunks per invocation per slice.
const uint CHUNKS_A = TILE_M * BK / 8u / GROUP_WG;
const uint CHUNKS_B = TILE_N * BK / 8u / GROUP_WG;

layout(std430, set = 0, binding = 0) readonly buffer A8 { uvec4 a8[]; };
layout(std430, set = 0, binding = 1) readonly buffer B8 { uvec4 b8[]; };
#ifdef GPUU_CONV
layout(std430, set = 0, binding = 1) readonly buffer B4 { uvec2 b4[]; };  // 4 halves
layout(std430, set = 0, binding = 3) writeonly buffer Y8 { uvec4 y8[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Partial4 { vec4 partial4[]; };

// Results (m, n..n+7) (lo, hi), n a multiple of 8: one 16-byte store of
// eight halves (or two of four partial floats) where they lie side by side
// in the output, else one store each.
void store_y8(uint m, uint n, vec4 lo, vec4 hi) {
  if (!in_m(m)) return;
  const bool whole = n + 8u <= p.N;
  if (SPLIT_K != 0 && !g_whole) {
    const uint i = partial_index(m, n);
    if (whole && p.N % 4u == 0u) {
      partial4[i / 4u] = lo;
      partial4[i / 4u + 1u] = hi;
    } else {
      [[unroll]] for (uint e = 0u; e < 8u; ++e) {
        if (n + e < p.N) partial[i + e] = e < 4u ? lo[e] : hi[e - 4u];
      }
    }
    return;
  }
  const bool chunk = whole && y_chunks();
  if (chunk && EPI_N == 0) {  // no chain: the bias alone, unrolled
    y8[y_index(m, n) / 8u] = pack8(biased(lo.x, m, n), biased(lo.y, m, n + 1u), biased(lo.z, m, n + 2u),
                                   biased(lo.w, m, n + 3u), biased(hi.x, m, n + 4u), biased(hi.y, m, n + 5u),
                                   biased(hi.z, m, n + 6u), biased(hi.w, m, n + 7u));
    return;
  }
  // With a chain, not unrolled, so that the epilogue is compiled once, not
  // eight times (4.5x the SPIR-V); the results move through registers by
  // shifts, not by indexing (which put them in memory: slower than one
  // store each).
  vec4 next = lo, after = hi;
  uvec4 halves = uvec4(0u);
  [[dont_unroll]] for (uint e = 0u; e < 8u; ++e) {
    const uint i = y_index(m, n + e);
    float o = 0.0;
    if (n + e < p.N) o = finish_y(next.x, m, n + e, i);  // past the last column the chain's inputs end
    next = vec4(next.yzw, after.x);
    after = vec4(after.yzw, 0.0);
    if (chunk) {
      // Into the top half of a 128-bit shift register: after eight, result 0 is at the bottom.
      const uint h = packFloat2x16(f16vec2(o, 0.0)) << 16u;
      halves = uvec4((halves.x >> 16u) | (halves.y << 16u), (halves.y >> 16u) | (halves.z << 16u),
                     (halves.z >> 16u) | (halves.w << 16u), (halves.w >> 16u) | h);
    } else if (n + e < p.N) {
      y[i] = T(o);
    }
  }
  if (chunk) y8[y_index(m, n) / 8u] = halves;
}
#endif

#if GPUU_COOP_KGROUPS > 1
shared uvec4 As[KGROUPS * A_SIZE];  // each group's own slice
shared uvec4 Bs[KGROUPS * B_SIZE];
#else
shared uvec4 As[A_SIZE];
shared uvec4 Bs[B_SIZE];
#endif

uvec4 ra[CHUNKS_A], rb[CHUNKS_B];  // the next slice, on its way to shared memory

#ifdef GPUU_CONV
// Halves n..n+7 of row k of a pointwise convolution's B whose images' pixels
// are not whole 8-half chunks (14x14 and 7x7 planes): two 8-byte reads where
// the run lies in one image and starts on a multiple of 4 halves (196
// pixels), else gathered a half at a time.
uvec4 pointwise_chunk(uint k, uint n) {
  const uint pixels = p.OH * p.OW, img = n / pixels, pix = n - img * pixels;
  const uint at = (img * p.C + g_batch * p.Cg + k) * pixels + pix;
  if (k < g_k_end && pix + 8u <= pixels && n + 8u <= p.N && at % 4u == 0u) {
    return uvec4(b4[at / 4u], b4[at / 4u + 1u]);
  }
  float v[8];
  gather_b_row(k, n, 8u, v);
  return pack8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}
#endif

void fetch(uint k0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) {
    uint c = t + i * GROUP_WG;
    // A: 8 consecutive k of one row.
    uint m = g_m0 + c / (BK / 8u), k = k0 + (c % (BK / 8u)) * 8u;
    if (A_VEC != 0) {
      ra[i] = (in_m(m) && in_k(k)) ? a8[a_offset(m, k) / 8u] : uvec4(0u);
    } else {
      ra[i] = pack8(load_a(m, k), load_a(m, k + 1u), load_a(m, k + 2u), load_a(m, k + 3u), load_a(m, k + 4u),
                    load_a(m, k + 5u), load_a(m, k + 6u), load_a(m, k + 7u));
    }
  }
  [[unroll]] for (uint i = 0u; i < CHUNKS_B; ++i) {
    uint c = t + i * GROUP_WG;
    if (B_K_CONTIGUOUS != 0) {  // 8 consecutive k of one n
      uint n = g_n0 + c / (BK / 8u), k = k0 + (c % (BK / 8u)) * 8u;
      if (B_VEC != 0) {
        rb[i] = (in_n(n) && in_k(k)) ? b8[b_offset(k, n) / 8u] : uvec4(0u);
      } else {
        rb[i] = pack8(load_b(k, n), load_b(k + 1u, n), load_b(k + 2u, n), load_b(k + 3u, n), load_b(k + 4u, n),
                      load_b(k + 5u, n), load_b(k + 6u, n), load_b(k + 7u, n));
      }
    } else {  // 8 consecutive n of one k
      uint n = g_n0 + (c % (TILE_N / 8u)) * 8u, k = k0 + c / (TILE_N / 8u);
      if (B_VEC != 0) {
        rb[i] = (in_n(n) && in_k(k)) ? b8[b_offset(k, n) / 8u] : uvec4(0u);
      } else {
#ifdef GPUU_CONV
        if (CONV_B == CONV_POINTWISE) {
          rb[i] = pointwise_chunk(k, n);
        } else {
          float v[8];
          gather_b_row(k, n, 8u, v);
          rb[i] = pack8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        }
#else
        rb[i] = pack8(load_b(k, n), load_b(k, n + 1u), load_b(k, n + 2u), load_b(k, n + 3u), load_b(k, n + 4u),
                      load_b(k, n + 5u), load_b(k, n + 6u), load_b(k, n + 7u));
#endif
      }
    }
  }
}

void stage(uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS_A; ++i) {
    uint c = t + i * GROUP_WG;
    As[GROUP_AS(c / (BK / 8u)) * AS_ROW + c % (BK / 8u)] = ra[i];
  }
  [[unroll]] for (uint i = 0u; i < CHUNKS_B; ++i) {
    uint c = t + i * GROUP_WG;
    if (B_K_CONTIGUOUS != 0) {
      Bs[GROUP_BS(c / (BK / 8u)) * BT_ROW + c % (BK / 8u)] = rb[i];
    } else {
      Bs[GROUP_BS(c / (TILE_N / 8u)) * BS_ROW + c % (TILE_N / 8u)] = rb[i];
    }
  }
}

fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[TILES_M][TILES_N];

// The staged slice into the accumulators; each A fragment serves a row of
// TILES_N products, each B fragment is loaded where used.
void multiply(uint wm0, uint wn0) {
  [[unroll]] for (uint kk = 0u; kk < BK; kk += CM_K) {
    fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> fa[TILES_M];
    [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
      coopMatLoadNV(fa[i], As, GROUP_AS(wm0 + i * CM_M) * AS_ROW + kk / 8u, AS_ROW, false);
    }
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> fb;
      if (B_K_CONTIGUOUS != 0) {
        coopMatLoadNV(fb, Bs, GROUP_BS(wn0 + j * CM_N) * BT_ROW + kk / 8u, BT_ROW, true);
      } else {
        coopMatLoadNV(fb, Bs, GROUP_BS kk * BS_ROW + (wn0 + j * CM_N) / 8u, BS_ROW, false);
      }
      [[unroll]] for (uint i = 0u; i < TILES_M; ++i) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
    }
  }
}

#if GPUU_COOP_KGROUPS > 1
const uint STASH = SUBGROUPS * WM * WN / 4u;  // uvec4s of a group's accumulators

// Where group g's subgroup sg stashes its accumulator ij (g >= 1).
uint stash_at(uint g, uint sg, uint ij) {
  return (g - 1u) * STASH + (sg * TILES_M * TILES_N + ij) * (CM_M * CM_N / 4u);
}

// Chunk q (four results) of accumulator ij of group 0's subgroup sg: its own
// (stored at `scratch`) plus the other groups'.
vec4 summed(uint scratch, uint sg, uint ij, uint q) {
  vec4 v = uintBitsToFloat(As[scratch + q]);
  [[unroll]] for (uint g = 1u; g < KGROUPS; ++g) v += uintBitsToFloat(Bs[stash_at(g, sg, ij) + q]);
  return v;
}

// ... its result e alone (one word read from each part).
float summed1(uint scratch, uint sg, uint ij, uint e) {
  float v = uintBitsToFloat(As[scratch + e / 4u][e % 4u]);
  [[unroll]] for (uint g = 1u; g < KGROUPS; ++g) v += uintBitsToFloat(Bs[stash_at(g, sg, ij) + e / 4u][e % 4u]);
  return v;
}
#else
// Unparenthesized, so that one group compiles to the very SPIR-V it did
// before groups (their call sites pass sums and names only).
#define summed(scratch, sg, ij, q) uintBitsToFloat(As[scratch + q])
#define summed1(scratch, sg, ij, e) uintBitsToFloat(As[scratch + e / 4u][e % 4u])
#endif

void main() {
  if (!gemm_tile(TILE_M, TILE_N)) return;
#if GPUU_COOP_KGROUPS > 1
  // Groups by subgroup (of 32: the selector checks), so that a group's
  // condition is uniform in each of its subgroups.
  const uint group = gl_SubgroupID / SUBGROUPS;
  uint sg = gl_SubgroupID % SUBGROUPS;
  uint t = sg * 32u + gl_SubgroupInvocationID;
  g_as0 = group * A_SIZE;
  g_bs0 = group * B_SIZE;
#else
  uint t = gl_LocalInvocationID.x;
  uint sg = gl_SubgroupID;
#endif
  uint wm0 = (sg / WARPS_N) * WM, wn0 = (sg % WARPS_N) * WN;

  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
  }

#if GPUU_COOP_KGROUPS > 1
  // Group g takes slices g, g + KGROUPS, ...; every group runs every round's
  // barriers (as many as group 0), a group past the share's end with nothing
  // to multiply.
  uint k0 = g_k0 + group * BK;
  if (k0 < g_k_end) fetch(k0, t);
  for (; k0 < g_k_end + group * BK; k0 += KGROUPS * BK) {
    const bool mine = k0 < g_k_end;
    barrier();  // every subgroup is done reading the previous slice
    if (mine) stage(t);
    barrier();
    if (k0 + KGROUPS * BK < g_k_end) fetch(k0 + KGROUPS * BK, t);
    if (mine) multiply(wm0, wn0);
  }
  // The other groups' accumulators go to B's part of shared memory (STASH
  // uvec4s a group: (KGROUPS - 1) x STASH <= KGROUPS x B_SIZE for the small
  // tile, the only one with groups) and are added as group 0 stores its own
  // (a sum of fragments in registers needs the SPIR-V optimizer, which
  // crashes on it).
  barrier();  // every subgroup is done reading the slice
  if (group != 0u) {
    [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
      [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
        coopMatStoreNV(acc[i][j], Bs, stash_at(group, sg, i * TILES_N + j), CM_N / 4u, false);
      }
    }
  }
#else
  fetch(g_k0, t);
  for (uint k0 = g_k0; k0 < g_k_end; k0 += BK) {
    barrier();  // every subgroup is done reading the previous slice
    stage(t);
    barrier();
    // Issued after the barrier, so that it does not wait for these reads.
    if (k0 + BK < g_k_end) fetch(k0 + BK, t);
    multiply(wm0, wn0);
  }
#endif

  // Epilogue through shared memory (bounds, bias, f16, the conv layout): each
  // subgroup stores one f32 accumulator at a time into its own part of As and
  // its invocations write that out. SUBGROUPS x CM_M*CM_N/4 <= 512 uvec4s fit
  // in A's part (>= 576).
  barrier();  // every subgroup is done reading the slice (groups: stashing)
#if GPUU_COOP_KGROUPS > 1
  if (group != 0u) return;
#endif
  const uint scratch = sg * (CM_M * CM_N / 4u);
  const uint lane = gl_SubgroupInvocationID;
#ifdef GPUU_CONV
  // A convolution's results in runs of eight of a row (CM_N % 8 == 0 and
  // subgroups of 32: the selector checks), the accumulators in a loop not
  // unrolled so that the stores (and the epilogue they inline) are compiled
  // once: each pass stores the one accumulator it names, indexed by
  // constants (registers stay registers). H100, 2026-12-06: resnet50 f16 at
  // batch 8 2.43 -> 1.91 ms. Linears keep a store per result below: this
  // form made GPT-2's 2048-row GEMMs 5-11 % slower (its fully unrolled form
  // was 1-3 % faster, at 4.5x the SPIR-V: gemm-coopmat-stores-*.json).
  [[dont_unroll]] for (uint ij = 0u; ij < TILES_M * TILES_N; ++ij) {
    [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
      [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
        if (ij == i * TILES_N + j) coopMatStoreNV(acc[i][j], As, scratch, CM_N / 4u, false);
      }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    const uint m0 = g_m0 + wm0 + (ij / TILES_N) * CM_M, n0 = g_n0 + wn0 + (ij % TILES_N) * CM_N;
    [[unroll]] for (uint r = 0u; r < (CM_M * CM_N / 8u + 31u) / 32u; ++r) {
      const uint e = (r * 32u + lane) * 8u;  // the run's first element in the accumulator
      if (e >= CM_M * CM_N) break;
      store_y8(m0 + e / CM_N, n0 + e % CM_N, summed(scratch, sg, ij, e / 4u), summed(scratch, sg, ij, e / 4u + 1u));
    }
    subgroupBarrier();  // read before the next store overwrites
  }
#else
  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      coopMatStoreNV(acc[i][j], As, scratch, CM_N / 4u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint r = 0u; r < CM_M * CM_N / 32u; ++r) {  // subgroups of 32 (the selector checks)
        const uint e = r * 32u + lane;
        const uint m = g_m0 + wm0 + i * CM_M + e / CM_N, n = g_n0 + wn0 + j * CM_N + e % CM_N;
        if (in_m(m) && in_n(n)) store_y(m, n, summed1(scratch, sg, i * TILES_N + j, e));
      }
      subgroupBarrier();  // read before the next store overwrites
    }
  }
#endif
}
