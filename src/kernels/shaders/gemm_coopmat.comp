#version 450
// [[unroll]]: register-blocked loops must unroll, or the accumulators end in
// local memory (measured: the 128 tile ran at 1/15 the speed without it).
#extension GL_EXT_control_flow_attributes : require
// f16 GEMM on matrix cores (VK_KHR_cooperative_matrix): f16 A and B, f32
// accumulation, f16 results (forms and bindings: gemm_common.glsl). A
// workgroup of 256 invocations = 8 subgroups of 32 computes a 128x128 tile,
// each subgroup a 64x32 block of it (GPUU_COOP_WIDE: 4 subgroups of 64x64)
// as (64/CM_M) x (WN/CM_N) accumulators of
// one supported cooperative-matrix shape CM_M x CM_N x CM_K, which the kernel
// selector picks from vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR and
// passes as specialization constants. 32-deep slices of A and B are
// double-buffered in shared memory as 8-half chunks (uvec4).
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
// GPUU_COOP_WIDE: 4 subgroups (128 invocations), each a 64x64 block: half the
// shared-memory reads per multiply-add, half the subgroups to hide latency.
#ifdef GPUU_COOP_WIDE
#define GPUU_WG 128u
#define WN 64u
#else
#define WN 32u
#endif
#define WM 64u
#define WARPS_N (BN / WN)  // subgroups along n; 2 along m
#include "common.glsl"
#include "gemm_common.glsl"

layout(constant_id = 4) const uint CM_M = 16;
layout(constant_id = 5) const uint CM_N = 16;
layout(constant_id = 6) const uint CM_K = 16;

#define BM uint(LIMIT_GEMM_COOPMAT_TILE)
#define BN BM
#define BK 32u
const uint TILES_M = WM / CM_M;
const uint TILES_N = WN / CM_N;
// Shared rows in uvec4 chunks, padded by one chunk so that the 16-byte rows a
// matrix load reads fall in different banks.
#define AS_ROW (BK / 8u + 1u)   // A: [m][k]
#define BS_ROW (BN / 8u + 1u)   // B: [k][n]
#define BT_ROW (BK / 8u + 1u)   // B with k contiguous: [n][k]
#define A_SIZE (BM * AS_ROW)
#define B_SIZE (BN * BT_ROW)    // >= BK * BS_ROW
#define CHUNKS (BM * BK / 8u / GPUU_WG)  // chunks per invocation per slice, A and B alike

layout(std430, set = 0, binding = 0) readonly buffer A8 { uvec4 a8[]; };
layout(std430, set = 0, binding = 1) readonly buffer B8 { uvec4 b8[]; };

shared uvec4 As[2 * A_SIZE];
shared uvec4 Bs[2 * B_SIZE];

uvec4 ra[CHUNKS], rb[CHUNKS];

uvec4 pack8(float v0, float v1, float v2, float v3, float v4, float v5, float v6, float v7) {
  return uvec4(packFloat2x16(f16vec2(v0, v1)), packFloat2x16(f16vec2(v2, v3)), packFloat2x16(f16vec2(v4, v5)),
               packFloat2x16(f16vec2(v6, v7)));
}

void fetch(uint k0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint c = t + i * GPUU_WG;
    // A: 8 consecutive k of one row.
    uint m = g_m0 + c / (BK / 8u), k = k0 + (c % (BK / 8u)) * 8u;
    if (A_VEC != 0) {
      ra[i] = (m < p.M && k < p.K) ? a8[a_offset(m, k) / 8u] : uvec4(0u);
    } else {
      ra[i] = pack8(load_a(m, k), load_a(m, k + 1u), load_a(m, k + 2u), load_a(m, k + 3u), load_a(m, k + 4u),
                    load_a(m, k + 5u), load_a(m, k + 6u), load_a(m, k + 7u));
    }
    if (B_K_CONTIGUOUS != 0) {  // 8 consecutive k of one n
      uint n = g_n0 + c / (BK / 8u);
      k = k0 + (c % (BK / 8u)) * 8u;
      if (B_VEC != 0) {
        rb[i] = (n < p.N && k < p.K) ? b8[b_offset(k, n) / 8u] : uvec4(0u);
      } else {
        rb[i] = pack8(load_b(k, n), load_b(k + 1u, n), load_b(k + 2u, n), load_b(k + 3u, n), load_b(k + 4u, n),
                      load_b(k + 5u, n), load_b(k + 6u, n), load_b(k + 7u, n));
      }
    } else {  // 8 consecutive n of one k
      uint n = g_n0 + (c % (BN / 8u)) * 8u;
      k = k0 + c / (BN / 8u);
      if (B_VEC != 0) {
        rb[i] = (n < p.N && k < p.K) ? b8[b_offset(k, n) / 8u] : uvec4(0u);
      } else {
#ifdef GPUU_CONV
        float v[8];
        gather_b_row(k, n, 8u, v);
        rb[i] = pack8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
#else
        rb[i] = pack8(load_b(k, n), load_b(k, n + 1u), load_b(k, n + 2u), load_b(k, n + 3u), load_b(k, n + 4u),
                      load_b(k, n + 5u), load_b(k, n + 6u), load_b(k, n + 7u));
#endif
      }
    }
  }
}

void stage(uint buf, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint c = t + i * GPUU_WG;
    As[buf * A_SIZE + (c / (BK / 8u)) * AS_ROW + c % (BK / 8u)] = ra[i];
    if (B_K_CONTIGUOUS != 0) {
      Bs[buf * B_SIZE + (c / (BK / 8u)) * BT_ROW + c % (BK / 8u)] = rb[i];
    } else {
      Bs[buf * B_SIZE + (c / (BN / 8u)) * BS_ROW + c % (BN / 8u)] = rb[i];
    }
  }
}

void main() {
  if (!gemm_tile(BM, BN)) return;
  uint t = gl_LocalInvocationID.x;
  uint sg = gl_SubgroupID;
  uint wm0 = (sg / WARPS_N) * WM, wn0 = (sg % WARPS_N) * WN;

  fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[TILES_M][TILES_N];
  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
  }

  fetch(0u, t);
  stage(0u, t);
  barrier();
  uint buf = 0u;
  for (uint k0 = 0u; k0 < p.K; k0 += BK) {
    bool more = k0 + BK < p.K;
    if (more) fetch(k0 + BK, t);
    [[unroll]] for (uint kk = 0u; kk < BK; kk += CM_K) {
      fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> fa[TILES_M];
      fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> fb[TILES_N];
      [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
        coopMatLoadNV(fa[i], As, buf * A_SIZE + (wm0 + i * CM_M) * AS_ROW + kk / 8u, AS_ROW, false);
      }
      [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
        if (B_K_CONTIGUOUS != 0) {
          coopMatLoadNV(fb[j], Bs, buf * B_SIZE + (wn0 + j * CM_N) * BT_ROW + kk / 8u, BT_ROW, true);
        } else {
          coopMatLoadNV(fb[j], Bs, buf * B_SIZE + kk * BS_ROW + (wn0 + j * CM_N) / 8u, BS_ROW, false);
        }
      }
      [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
        [[unroll]] for (uint j = 0u; j < TILES_N; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
      }
    }
    if (more) {
      stage(buf ^ 1u, t);
      barrier();
      buf ^= 1u;
    }
  }

  // Epilogue through shared memory (bounds, bias, f16, the conv layout): each
  // subgroup stores one f32 accumulator at a time into its own part of As and
  // its invocations write that out. CM_N % 4 == 0 (the selector checks), so
  // the accumulator's rows are whole uvec4s.
  barrier();  // every subgroup is done reading the slices
  uint scratch = sg * (CM_M * CM_N / 4u);
  uint lane = gl_SubgroupInvocationID;
  [[unroll]] for (uint i = 0u; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0u; j < TILES_N; ++j) {
      coopMatStoreNV(acc[i][j], As, scratch, CM_N / 4u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint r = 0u; r < CM_M * CM_N / 32u; ++r) {  // subgroups of 32 (the selector checks)
        uint e = r * 32u + lane;
        uint m = g_m0 + wm0 + i * CM_M + e / CM_N, n = g_n0 + wn0 + j * CM_N + e % CM_N;
        if (m < p.M && n < p.N) store_y(m, n, uintBitsToFloat(As[scratch + e / 4u][e % 4u]));
      }
      subgroupBarrier();  // read before the next store overwrites
    }
  }
}
