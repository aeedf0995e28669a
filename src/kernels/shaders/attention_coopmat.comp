#version 450
// [[unroll]]: the fragments and accumulators live in registers only if the
// loops over them unroll (their bounds are specialization constants).
#extension GL_EXT_control_flow_attributes : require
// scaled_dot_product_attention in f16 on matrix cores (VK_KHR_cooperative_matrix:
// f16 inputs, f32 accumulation), flash-attention style, with the semantics of
// attention.comp (scale, bool or added masks, causal, a row that sees no key
// writes 0, q/k/v read through strides). A workgroup is SUBGROUPS subgroups
// of 32 (1, 2 or 4: the selector takes fewer where the grid is small); each
// subgroup owns 16 query rows, so a workgroup takes BQ = 16 * SUBGROUPS rows
// of one (batch, head). Keys and values go through shared memory in blocks of
// BK (32 or 64), each block's fetched into registers while the previous one
// is multiplied. Per block and subgroup:
//   S = Q K^T           coopmat products (Q's fragments stay in registers),
//                       stored to the subgroup's scratch in f32;
//   online softmax      in f32 by the subgroup's invocations, two per row
//                       (each half of the block's keys): scale, mask, block
//                       max (exchanged through shared memory), P = exp2(S - m)
//                       written back as f16 over the scores, and the rows'
//                       rescale factors as an accumulator-shaped tile;
//   O = O * alpha + P V the factors loaded as an accumulator of O's type and
//                       multiplied in element by element (one type: one
//                       element layout), then coopmat products.
// The output is stored through the scratch, normalised by the row sums, as f16.
// A subgroup whose rows are all masked for a block (causal: the block starts
// past its last row) or past L skips the block's work.
//
// GPUU_MMA_EMULATED builds the same kernel without cooperative matrices, for
// devices that lack them (lavapipe), so that tests run every part of it but
// the matrix products themselves (see the emulation below; 16x16x16 only).
// Its subgroups of 32 are emulated, their syncs workgroup barriers, so no
// subgroup may skip a block there.
//
// Written against GL_NV_cooperative_matrix, as gemm_coopmat.comp (see there):
// the build's spirv_coopmat_khr rewrites the SPIR-V into the KHR encoding,
// the matrix uses recovered from the dimensions CM_M, CM_N, CM_K (ids 5, 6, 7).
#define GPUU_F16
#ifndef GPUU_MMA_EMULATED
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#endif
#include "common.glsl"

// The workgroup size (32 * SUBGROUPS) is a specialization constant.
layout(local_size_x_id = 11) in;
const uint WG = gl_WorkGroupSize.x;
const uint SUBGROUPS = WG / 32u;
const uint BQ = 16u * SUBGROUPS;  // query rows per workgroup

layout(constant_id = 0) const uint E8 = 8u;     // q/k head dim E in chunks of 8 halves (a uvec4)
layout(constant_id = 1) const uint EV8 = 8u;    // v head dim Ev in chunks
layout(constant_id = 2) const uint KV_ROW = 9u; // shared row stride of the q/k/v tiles in chunks: odd, >= E8 and EV8
layout(constant_id = 3) const int MASK = 0;     // 0 none, 1 bool (true: attend), 2 added (f16)
layout(constant_id = 4) const int CAUSAL = 0;   // key j allowed for query i iff j <= i
layout(constant_id = 5) const uint CM_M = 16u;  // the cooperative-matrix shape: M must be 16
layout(constant_id = 6) const uint CM_N = 16u;
layout(constant_id = 7) const uint CM_K = 16u;
// Chunk reads of q, k, v (strides and offsets multiples of 8) and writes of the output.
layout(constant_id = 8) const int IN_VEC = 0;
layout(constant_id = 9) const int OUT_VEC = 0;
layout(constant_id = 10) const uint BK = 64u;   // keys per block: 32 or 64

const uint TILES_E = E8 * 8u / CM_K;   // Q's fragments along E
const uint TILES_V = EV8 * 8u / CM_N;  // O's accumulators along Ev
const uint HALF = BK / 2u;             // keys per invocation in the softmax
const uint ROUND = BK / CM_N;          // O's accumulators per pass through the scratch at the end

layout(std430, set = 0, binding = 0) readonly buffer Q { T q[]; };
layout(std430, set = 0, binding = 0) readonly buffer Q8 { uvec4 q8[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { T k[]; };
layout(std430, set = 0, binding = 1) readonly buffer K8 { uvec4 k8[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { T v[]; };
layout(std430, set = 0, binding = 2) readonly buffer V8 { uvec4 v8[]; };
// Bound to q when there is no mask (never read then).
layout(std430, set = 0, binding = 3) readonly buffer MaskT { T mask_t[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskW { uint mask_words[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { T y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out8 { uvec4 y8[]; };

// attention.comp's push constants (the same lowering fills both).
layout(push_constant) uniform Params {
  uint L, S, E, Ev, Hq;
  uint group;         // Hq / Hkv: query heads per kv head
  uint q_blocks;      // ceil(L / BQ)
  float scale_log2;   // scale * log2(e): scores are kept in base 2
  uint q_off, q_sb, q_sh, q_sl;
  uint k_off, k_sb, k_sh, k_sl;
  uint v_off, v_sb, v_sh, v_sl;
  uint m_sb, m_sh, m_sl, m_ss;
} p;

// K's block, then V's (BK rows each); Q's rows over both at the start. Rows in
// chunks of 8 halves, padded to an odd stride so that the 16-byte rows a
// matrix load reads fall in different banks.
shared uvec4 kv[2u * BK * KV_ROW];
// Per subgroup: 16 rows of BK f32 scores; over them, once read, 16 rows of BK
// f16 probabilities and the 16 x CM_N rescale tile; at the end, O's rows.
const uint S_ROW = BK / 4u + 1u;
const uint P_ROW = BK / 8u + 1u;
const uint ALPHA_AT = 16u * P_ROW;
const uint SCRATCH = 16u * S_ROW;  // >= ALPHA_AT + 4 * CM_N for BK >= 32
shared uvec4 scratch[SUBGROUPS * SCRATCH];
shared float exchange[WG];  // a value per invocation, read by its row's other invocation

#define NEG_INF uintBitsToFloat(0xFF800000u)
const float LOG2E = 1.4426950408889634;

#ifdef GPUU_MMA_EMULATED
// An accumulator holds element i * 32 + lane of its 16x16 tile (row-major) as
// element i. An A or B fragment is where it was loaded from in shared memory,
// read when multiplied: every one is used before its memory changes, Q's
// included (it gets a tile of its own here), so products need no exchange
// between invocations, and no barrier (lavapipe's compile time grows fast
// with barriers).
shared uvec4 q_tile[BQ * KV_ROW];
#define Q_TILE q_tile
struct Acc {
  float e[8];
};
struct FragRef {
  uint array, off, stride;  // array: 0 kv, 1 scratch, 2 q_tile; offset and stride in chunks
  bool col_major;
};
#define ARRAY_kv 0u
#define ARRAY_scratch 1u
#define ARRAY_Q_TILE 2u
#define FRAG_A FragRef
#define FRAG_B FragRef
#define ACC Acc
#define FRAG_LENGTH(f) 8
#define ELEMENT(f, i) f.e[i]
uint g_lane;
Acc zero_acc() {
  Acc a;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) a.e[i] = 0.0;
  return a;
}
#define ACC_ZERO zero_acc()
#define LOAD_H(frag, arr, off_, stride_, col_major_) frag = FragRef(ARRAY_##arr, off_, stride_, col_major_)
// Element (r, c) of a fragment: half (off + r * stride) * 8 + c, or
// (off + c * stride) * 8 + r column-major.
float element_of(const FragRef f, uint r, uint c) {
  const uint h = f.col_major ? (f.off + c * f.stride) * 8u + r : (f.off + r * f.stride) * 8u + c;
  uvec4 chunk;
  if (f.array == 0u) {
    chunk = kv[h / 8u];
  } else if (f.array == 1u) {
    chunk = scratch[h / 8u];
  } else {
    chunk = q_tile[h / 8u];
  }
  return unpackHalf2x16(chunk[(h % 8u) / 2u])[h % 2u];
}
void mul_add(inout Acc c, const FragRef a, const FragRef b) {
  [[dont_unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint at = i * 32u + g_lane, r = at / 16u, n = at % 16u;
    float sum = c.e[i];
    [[dont_unroll]] for (uint kk = 0u; kk < 16u; ++kk) sum += element_of(a, r, kk) * element_of(b, kk, n);
    c.e[i] = sum;
  }
}
#define MUL_ADD(c, a, b) mul_add(c, a, b)
// f32 elements, row-major: (r, c) at float (off + r * stride) * 4 + c.
#define LOAD_F(acc, arr, off, stride)                                                                 \
  [[unroll]] for (uint i_ = 0u; i_ < 8u; ++i_) {                                                      \
    uint at_ = i_ * 32u + g_lane, f_ = ((off) + (at_ / 16u) * (stride)) * 4u + at_ % 16u;             \
    acc.e[i_] = uintBitsToFloat(arr[f_ / 4u][f_ % 4u]);                                               \
  }
#define STORE_F(acc, arr, off, stride)                                                                \
  [[unroll]] for (uint i_ = 0u; i_ < 8u; ++i_) {                                                      \
    uint at_ = i_ * 32u + g_lane, f_ = ((off) + (at_ / 16u) * (stride)) * 4u + at_ % 16u;             \
    arr[f_ / 4u][f_ % 4u] = floatBitsToUint(acc.e[i_]);                                               \
  }
// Subgroups are emulated: their syncs are the workgroup's.
#define SUBGROUP_SYNC() barrier()
// Loops over products stay loops: unrolled, they take lavapipe minutes to compile.
#define PRODUCTS_LOOP [[dont_unroll]]
#else
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N>
#define ACC fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>
#define FRAG_LENGTH(f) f.length()
#define ELEMENT(f, i) f[i]
#define ACC_ZERO ACC(0.0)
#define PRODUCTS_LOOP [[unroll]]
#define Q_TILE kv  // Q's rows, read into fragments before the first block overwrites them
#define LOAD_H(frag, arr, off, stride, col_major) coopMatLoadNV(frag, arr, off, stride, col_major)
#define LOAD_F(frag, arr, off, stride) coopMatLoadNV(frag, arr, off, stride, false)
#define STORE_F(frag, arr, off, stride) coopMatStoreNV(frag, arr, off, stride, false)
#define MUL_ADD(c, a, b) c = coopMatMulAddNV(a, b, c)
#define SUBGROUP_SYNC()          \
  subgroupMemoryBarrierShared(); \
  subgroupBarrier()
#endif

// Chunk (8 halves) of a q/k/v tensor from element `at`.
#define LOAD_CHUNK(buf, buf8, at)                                                                    \
  (IN_VEC != 0 ? buf8[(at) / 8u]                                                                     \
               : uvec4(packFloat2x16(f16vec2(buf[(at)], buf[(at) + 1u])),                            \
                       packFloat2x16(f16vec2(buf[(at) + 2u], buf[(at) + 3u])),                       \
                       packFloat2x16(f16vec2(buf[(at) + 4u], buf[(at) + 5u])),                       \
                       packFloat2x16(f16vec2(buf[(at) + 6u], buf[(at) + 7u]))))

uint g_k_base, g_v_base;
// The next block of K and V, on its way to shared memory; rows past S are 0
// (their probabilities are 0, and 0 * garbage could be NaN).
const uint K_CHUNKS = (BK * E8 + WG - 1u) / WG;
const uint V_CHUNKS = (BK * EV8 + WG - 1u) / WG;
uvec4 next_k[K_CHUNKS], next_v[V_CHUNKS];

void fetch_kv(uint key0, uint t) {
  [[unroll]] for (uint i = 0u; i < K_CHUNKS; ++i) {
    const uint c = t + i * WG, row = c / E8;
    next_k[i] = uvec4(0u);
    if (c < BK * E8 && key0 + row < p.S) next_k[i] = LOAD_CHUNK(k, k8, g_k_base + (key0 + row) * p.k_sl + 8u * (c % E8));
  }
  [[unroll]] for (uint i = 0u; i < V_CHUNKS; ++i) {
    const uint c = t + i * WG, row = c / EV8;
    next_v[i] = uvec4(0u);
    if (c < BK * EV8 && key0 + row < p.S) next_v[i] = LOAD_CHUNK(v, v8, g_v_base + (key0 + row) * p.v_sl + 8u * (c % EV8));
  }
}

void stage_kv(uint t) {
  [[unroll]] for (uint i = 0u; i < K_CHUNKS; ++i) {
    const uint c = t + i * WG;
    if (c < BK * E8) kv[(c / E8) * KV_ROW + c % E8] = next_k[i];
  }
  [[unroll]] for (uint i = 0u; i < V_CHUNKS; ++i) {
    const uint c = t + i * WG;
    if (c < BK * EV8) kv[(BK + c / EV8) * KV_ROW + c % EV8] = next_v[i];
  }
}

bool mask_allows(uint at) { return ((mask_words[at >> 2u] >> ((at & 3u) * 8u)) & 0xFFu) != 0u; }

void main() {
  const uint t = gl_LocalInvocationID.x;
#ifdef GPUU_MMA_EMULATED
  const uint sg = t / 32u, lane = t % 32u;
  g_lane = lane;
#else
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
#endif
  const uint wg = linear_group_id();
  // Later query blocks see more keys under a causal mask: they go first.
  const uint q_block = p.q_blocks - 1u - wg % p.q_blocks;
  const uint bh = wg / p.q_blocks;  // batch * Hq + head
  const uint b = bh / p.Hq, h = bh - b * p.Hq, kvh = h / p.group;
  const uint row0 = q_block * BQ;
  const uint sg_row0 = row0 + 16u * sg;  // the subgroup's first row
  g_k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  g_v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const uint m_base = b * p.m_sb + h * p.m_sh;
  const uint sbase = sg * SCRATCH;
  // The invocation's softmax row (of the subgroup's 16) and half of each block's keys.
  const uint r = lane % 16u, half_keys = lane / 16u;
  const uint row = sg_row0 + r;

  const uint q_base = p.q_off + b * p.q_sb + h * p.q_sh;
  for (uint c = t; c < BQ * E8; c += WG) {
    const uint qr = c / E8;
    uvec4 chunk = uvec4(0u);
    if (row0 + qr < p.L) chunk = LOAD_CHUNK(q, q8, q_base + (row0 + qr) * p.q_sl + 8u * (c % E8));
    Q_TILE[qr * KV_ROW + c % E8] = chunk;
  }
  // Causal: keys past the workgroup's last row are masked for all its rows.
  const uint keys = CAUSAL != 0 ? min(p.S, row0 + BQ) : p.S;
  const uint blocks = (keys + BK - 1u) / BK;
  if (blocks > 0u) fetch_kv(0u, t);
  barrier();
  FRAG_A qa[TILES_E];
  [[unroll]] for (uint kk = 0u; kk < TILES_E; ++kk) {
    LOAD_H(qa[kk], Q_TILE, 16u * sg * KV_ROW + kk * CM_K / 8u, KV_ROW, false);
  }
  ACC o[TILES_V];
  [[unroll]] for (uint j = 0u; j < TILES_V; ++j) o[j] = ACC_ZERO;
  float m = NEG_INF;  // the row's running max (base 2), the same in both its invocations
  float l = 0.0;      // this invocation's share of the row's running sum

  for (uint blk = 0u; blk < blocks; ++blk) {
    const uint key0 = blk * BK;
    barrier();  // every subgroup is done with the previous block (and Q's rows)
    stage_kv(t);
    barrier();
    // Issued after the barrier, so that it does not wait for these reads.
    if (blk + 1u < blocks) fetch_kv(key0 + BK, t);
#ifdef GPUU_MMA_EMULATED
    const bool works = true;
#else
    const bool works = sg_row0 < p.L && (CAUSAL == 0 || key0 <= sg_row0 + 15u);
#endif
    if (!works) continue;

    // S = Q K^T, one CM_N-key tile at a time, into the scratch.
    PRODUCTS_LOOP for (uint j = 0u; j < BK / CM_N; ++j) {
      ACC s = ACC_ZERO;
      PRODUCTS_LOOP for (uint kk = 0u; kk < TILES_E; ++kk) {
        FRAG_B kb;
        LOAD_H(kb, kv, j * CM_N * KV_ROW + kk * CM_K / 8u, KV_ROW, true);
        MUL_ADD(s, qa[kk], kb);
      }
      STORE_F(s, scratch, sbase + j * CM_N / 4u, S_ROW);
    }
    SUBGROUP_SYNC();

    // The softmax of the invocation's row over its half of the block.
    float sc[HALF];
    float block_max = NEG_INF;
    [[unroll]] for (uint c4 = 0u; c4 < HALF / 4u; ++c4) {
      const vec4 w = uintBitsToFloat(scratch[sbase + r * S_ROW + half_keys * (HALF / 4u) + c4]);
      [[unroll]] for (uint e = 0u; e < 4u; ++e) {
        const uint j = 4u * c4 + e, key = key0 + half_keys * HALF + j;
        float s = w[e] * p.scale_log2;
        bool allowed = key < p.S && (CAUSAL == 0 || key <= row);
        if (MASK != 0 && allowed && row < p.L) {
          const uint at = m_base + row * p.m_sl + key * p.m_ss;
          if (MASK == 1) {
            allowed = mask_allows(at);
          } else {
            s += float(mask_t[at]) * LOG2E;
          }
        }
        sc[j] = allowed ? s : NEG_INF;
        block_max = max(block_max, sc[j]);
      }
    }
    exchange[sg * 32u + lane] = block_max;
    SUBGROUP_SYNC();  // also: every invocation has read its scores, which P overwrites
    block_max = max(block_max, exchange[sg * 32u + (lane ^ 16u)]);
    const float m_new = max(m, block_max);
    // A row with no allowed key so far keeps max -inf; 0 stands in for it so
    // that exp2(-inf - 0) = 0 rather than exp2(NaN).
    const float m_use = m_new == NEG_INF ? 0.0 : m_new;
    const float alpha = exp2(m - m_use);
    m = m_new;
    float sum = 0.0;
    [[unroll]] for (uint c8 = 0u; c8 < HALF / 8u; ++c8) {
      float pr[8];
      [[unroll]] for (uint e = 0u; e < 8u; ++e) {
        pr[e] = exp2(sc[8u * c8 + e] - m_use);
        sum += pr[e];
      }
      scratch[sbase + r * P_ROW + half_keys * (HALF / 8u) + c8] =
          uvec4(packFloat2x16(f16vec2(pr[0], pr[1])), packFloat2x16(f16vec2(pr[2], pr[3])),
                packFloat2x16(f16vec2(pr[4], pr[5])), packFloat2x16(f16vec2(pr[6], pr[7])));
    }
    l = l * alpha + sum;
    [[unroll]] for (uint c4 = 0u; c4 < CM_N / 8u; ++c4) {
      scratch[sbase + ALPHA_AT + r * (CM_N / 4u) + half_keys * (CM_N / 8u) + c4] = uvec4(floatBitsToUint(alpha));
    }
    SUBGROUP_SYNC();

    // O = O * alpha + P V.
    ACC scale;
    LOAD_F(scale, scratch, sbase + ALPHA_AT, CM_N / 4u);
    [[unroll]] for (uint j = 0u; j < TILES_V; ++j) {
      for (int i = 0; i < FRAG_LENGTH(scale); ++i) ELEMENT(o[j], i) *= ELEMENT(scale, i);
    }
    PRODUCTS_LOOP for (uint kk = 0u; kk < BK / CM_K; ++kk) {
      FRAG_A pa;
      LOAD_H(pa, scratch, sbase + kk * CM_K / 8u, P_ROW, false);
      PRODUCTS_LOOP for (uint j = 0u; j < TILES_V; ++j) {
        FRAG_B vb;
        LOAD_H(vb, kv, (BK + kk * CM_K) * KV_ROW + j * CM_N / 8u, KV_ROW, false);
        MUL_ADD(o[j], pa, vb);
      }
    }
  }

  // The rows' sums; O / sum through the scratch, BK / CM_N accumulators at a
  // time, each invocation writing half of its row's columns.
  exchange[sg * 32u + lane] = l;
  SUBGROUP_SYNC();
  const float total = l + exchange[sg * 32u + (lane ^ 16u)];
  // total = 0: the row saw no key; it is 0, not 0/0.
  const float inv = total > 0.0 ? 1.0 / total : 0.0;
  const uint out_base = (bh * p.L + row) * p.Ev;
  [[unroll]] for (uint j0 = 0u; j0 < TILES_V; j0 += ROUND) {
    SUBGROUP_SYNC();  // the last products' (or round's) reads of the scratch are done
    [[unroll]] for (uint jj = 0u; jj < ROUND; ++jj) {
      if (j0 + jj < TILES_V) STORE_F(o[j0 + jj], scratch, sbase + jj * CM_N / 4u, S_ROW);
    }
    SUBGROUP_SYNC();
    const uint cols = min(ROUND, TILES_V - j0) * CM_N;  // a multiple of 16
    [[unroll]] for (uint c8 = 0u; c8 < ROUND * CM_N / 16u; ++c8) {
      const uint col = half_keys * (cols / 2u) + 8u * c8;  // within the round
      if (8u * c8 < cols / 2u && row < p.L) {
        const uint at = sbase + r * S_ROW + col / 4u;
        const vec4 lo = uintBitsToFloat(scratch[at]) * inv, hi = uintBitsToFloat(scratch[at + 1u]) * inv;
        const uint dst = out_base + j0 * CM_N + col;
        if (OUT_VEC != 0) {
          y8[dst / 8u] = uvec4(packFloat2x16(f16vec2(lo.xy)), packFloat2x16(f16vec2(lo.zw)),
                               packFloat2x16(f16vec2(hi.xy)), packFloat2x16(f16vec2(hi.zw)));
        } else {
          [[unroll]] for (uint e = 0u; e < 4u; ++e) {
            y[dst + e] = T(lo[e]);
            y[dst + 4u + e] = T(hi[e]);
          }
        }
      }
    }
  }
}
