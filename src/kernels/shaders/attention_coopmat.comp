#version 450
// [[unroll]]: fragment and row arrays stay in registers only if their loops
// unroll (the bounds are specialization constants).
#extension GL_EXT_control_flow_attributes : require
// scaled_dot_product_attention on matrix cores (f16 q, k, v; f32 scores,
// softmax and output sums): attention.comp's flash-attention walk with both
// products on cooperative matrices. A workgroup of 4 subgroups of 32 takes
// BQ query rows of one (batch, head) and walks the keys in blocks of BK = 64,
// staged with the values in shared memory as f16 (the next block's loads in
// flight during this one's work). The 4 subgroups share the work as
// ROW_GROUPS groups of 16 rows by KEY_SPLIT shares of each block's keys
// (KEY_SPLIT 1: 64 rows, a subgroup all 64 keys of a block for its 16; 4: 16
// rows, each subgroup 16 keys of every block): where (batch, head, 64 rows)
// make too few workgroups to fill the GPU (a 128-token prefill: 24 for 132
// multiprocessors) the split makes 4 times the workgroups, each subgroup's
// chain of products per block a quarter as long. Per block and subgroup: S =
// Q K^T as 16 x BKS f32 (E / 16 products per 16 keys, Q's fragments held in
// registers from the start), stored to the subgroup's own scratch; the
// online softmax on it in registers (two invocations per row, BKS / 2 keys
// each: scale, mask, running max and sum in base 2), the probabilities back
// as f16; P V into fresh accumulators, stored to the scratch again and added
// to the output rows the invocations hold, each row rescaled by its max's
// change. Key shares end as partial softmaxes (max, sum, output) that the
// first share's subgroup weighs together through shared memory. The output
// stays f32 in registers (16 x Ev per subgroup, Ev / 2 per invocation)
// because a cooperative matrix's elements cannot be scaled by row. Causal blocks past the diagonal are
// never visited; a row that sees no key writes 0. One dispatch (no split
// across workgroups): the selector takes it where there are 64 rows or more
// (prefills) and leaves decode steps to attention.comp's key splits.
//
// Written against GL_NV_cooperative_matrix (rewritten to the KHR encoding at
// build time: see gemm_coopmat.comp); the shape, 16 x 16 x 16, is the
// specialization constants 5, 6, 7.
#define GPUU_F16
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define GPUU_WG 128
#include "common.glsl"

layout(constant_id = 0) const uint E4 = 16u;   // vec4 chunks of the q/k head dim E (E % 16 == 0, <= 64)
layout(constant_id = 1) const uint EV4 = 16u;  // ... of the v head dim Ev (likewise)
layout(constant_id = 4) const int MASK = 0;    // 0 none, 1 bool (true: attend), 2 added (T)
layout(constant_id = 5) const uint CM_M = 16;
layout(constant_id = 6) const uint CM_N = 16;
layout(constant_id = 7) const uint CM_K = 16;
layout(constant_id = 8) const int CAUSAL = 0;  // key j allowed for query i iff j <= i
layout(constant_id = 9) const int OUT_VEC = 0;  // vector stores of the output (f16vec4)
// The output is [batch, L, Hq, Ev] (heads inside rows), as attention.comp.
layout(constant_id = 10) const int HEADS_INNER = 0;
// q, k and v rows read as 8-half chunks (strides and offsets multiples of 8).
layout(constant_id = 11) const int IN_VEC8 = 0;
// Subgroups sharing each block's keys: 1, 2 or 4 (the host's rows per
// workgroup, 64 / KEY_SPLIT, count its row blocks).
layout(constant_id = 12) const uint KEY_SPLIT = 1u;

const uint BK = 64u, SUB_ROWS = 16u;
const uint ROW_GROUPS = 4u / KEY_SPLIT;  // subgroups along the rows
const uint BQ = SUB_ROWS * ROW_GROUPS;   // query rows per workgroup
const uint BKS = BK / KEY_SPLIT;         // a subgroup's keys of each block
const uint HALF = BKS / 2u;              // ... an invocation's (two per row)
const uint E = 4u * E4, EV = 4u * EV4;
const uint MAX_E8 = 8u;                 // E, Ev <= 64: a subgroup's 16 x Ev output fits its scratch
const uint OUT_PER = 32u;               // output columns per invocation, at most (Ev / 2)

layout(std430, set = 0, binding = 0) readonly buffer Q { float16_t q[]; };
layout(std430, set = 0, binding = 0) readonly buffer Q8 { uvec4 q8[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { float16_t k[]; };
layout(std430, set = 0, binding = 1) readonly buffer K8 { uvec4 k8[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { float16_t v[]; };
layout(std430, set = 0, binding = 2) readonly buffer V8 { uvec4 v8[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskT { float16_t mask_t[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskW { uint mask_words[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { float16_t y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out4 { f16vec4 y4[]; };

// attention.comp's push constants (the same lowering fills both).
layout(push_constant) uniform Params {
  uint L, S, E, Ev, Hq;
  uint group;
  uint q_blocks;  // ceil(L / BQ)
  float scale_log2;
  uint q_off, q_sb, q_sh, q_sl;
  uint k_off, k_sb, k_sh, k_sl;
  uint v_off, v_sb, v_sh, v_sl;
  uint m_sb, m_sh, m_sl, m_ss;
  uint splits, split_blocks;  // 1 and all here
} p;

#include "attention_mask.glsl"  // masked_score, NEG_INF, LOG2E

// Rows padded by one 8-half chunk (f16) or one vec4 (f32) against bank conflicts.
const uint KV_ROW = MAX_E8 + 1u;        // k and v tiles: [key][e] in uvec4s
const uint S_ROW = BK / 4u + 1u;        // a subgroup's f32 scratch: [row][key] in uvec4s (4 floats)
const uint P_ROW = BK / 8u + 1u;        // a subgroup's probabilities: [row][key] in uvec4s (8 halves)
const uint S_SIZE = SUB_ROWS * S_ROW;   // per subgroup; Q's staging (BQ x KV_ROW) fits in 4 of them
// 45 KiB in all: within every matrix-core device's 48.
shared uvec4 k_tile[BK * KV_ROW];
shared uvec4 v_tile[BK * KV_ROW];
shared uvec4 scratch[4u * S_SIZE];
shared uvec4 p_tile[4u * SUB_ROWS * P_ROW];

// 8-half chunk `d` of row `row` of a q/k/v tensor (row r at base + r * sl),
// zero past `limit` rows.
#define LOAD8(buf, buf8, base, sl, row, d, limit, out_v)                                                  \
  {                                                                                                       \
    out_v = uvec4(0u);                                                                                    \
    if ((row) < (limit)) {                                                                                \
      uint at_ = (base) + (row) * (sl) + 8u * (d);                                                        \
      if (IN_VEC8 != 0) {                                                                                 \
        out_v = buf8[at_ / 8u];                                                                           \
      } else {                                                                                            \
        out_v = pack8(float(buf[at_]), float(buf[at_ + 1u]), float(buf[at_ + 2u]), float(buf[at_ + 3u]),  \
                      float(buf[at_ + 4u]), float(buf[at_ + 5u]), float(buf[at_ + 6u]), float(buf[at_ + 7u])); \
      }                                                                                                   \
    }                                                                                                     \
  }

// A 64-row tile in chunks: invocation t holds chunks t + 128 i (i < CHUNKS),
// chunk c being row c / (dim / 8), column chunk c % (dim / 8). The loads of
// a block are all issued before any is stored (unrolled), and the next
// block's during this block's products: one global latency per block, not
// one per chunk.
const uint CHUNKS = BK * MAX_E8 / GPUU_WG;
uvec4 k_next[CHUNKS], v_next[CHUNKS];

void fetch_kv(uint k_base, uint v_base, uint key0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    const uint c = t + i * GPUU_WG;
    k_next[i] = uvec4(0u);
    v_next[i] = uvec4(0u);
    if (c < BK * (E / 8u)) LOAD8(k, k8, k_base, p.k_sl, key0 + c / (E / 8u), c % (E / 8u), p.S, k_next[i]);
    if (c < BK * (EV / 8u)) LOAD8(v, v8, v_base, p.v_sl, key0 + c / (EV / 8u), c % (EV / 8u), p.S, v_next[i]);
  }
}

void stage_kv(uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    const uint c = t + i * GPUU_WG;
    if (c < BK * (E / 8u)) k_tile[(c / (E / 8u)) * KV_ROW + c % (E / 8u)] = k_next[i];
    if (c < BK * (EV / 8u)) v_tile[(c / (EV / 8u)) * KV_ROW + c % (EV / 8u)] = v_next[i];
  }
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint wg = linear_group_id();
  const uint q_block = p.q_blocks - 1u - wg % p.q_blocks;  // later (longer, causal) blocks first
  const uint bh = wg / p.q_blocks;
  const uint b = bh / p.Hq, h = bh - b * p.Hq, kvh = h / p.group;
  const uint row0 = q_block * BQ;
  const uint k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  const uint v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const uint m_base = b * p.m_sb + h * p.m_sh;
  const uint s_base = sg * S_SIZE, p_base = sg * SUB_ROWS * P_ROW;
  // This subgroup's 16 rows (of the workgroup's BQ) and share of each block's keys.
  const uint rg = sg % ROW_GROUPS, share = sg / ROW_GROUPS, kb0 = share * BKS;

  // The first key block's loads, then Q's BQ rows through the scratch into
  // each subgroup's fragments.
  fetch_kv(k_base, v_base, 0u, t);
  {
    const uint q_base = p.q_off + b * p.q_sb + h * p.q_sh;
    uvec4 qc[CHUNKS];
    [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
      const uint c = t + i * GPUU_WG;
      qc[i] = uvec4(0u);
      if (c < BQ * (E / 8u)) LOAD8(q, q8, q_base, p.q_sl, row0 + c / (E / 8u), c % (E / 8u), p.L, qc[i]);
    }
    [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
      const uint c = t + i * GPUU_WG;
      if (c < BQ * (E / 8u)) scratch[(c / (E / 8u)) * KV_ROW + c % (E / 8u)] = qc[i];
    }
  }
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> qf[MAX_E8 / 2u];
  [[unroll]] for (uint e = 0u; e < MAX_E8 / 2u; ++e) {
    if (e < E / 16u) coopMatLoadNV(qf[e], scratch, (rg * SUB_ROWS) * KV_ROW + 2u * e, KV_ROW, false);
  }
  barrier();  // every subgroup has its fragments before the scratch is reused

  // Invocation `lane` holds row r = lane / 2 of its subgroup's 16, keys and
  // output columns of half `hf`.
  const uint r = lane / 2u, hf = lane % 2u;
  const uint row = row0 + rg * SUB_ROWS + r;
  float m = NEG_INF, l = 0.0;
  float o[OUT_PER];
  [[unroll]] for (uint j = 0u; j < OUT_PER; ++j) o[j] = 0.0;

  uint keys = p.S;
  if (CAUSAL != 0) keys = min(keys, row0 + BQ);
  const uint blocks = (keys + BK - 1u) / BK;
  for (uint blk = 0u; blk < blocks; ++blk) {
    const uint key0 = blk * BK;
    barrier();  // the previous block's readers of k_tile and v_tile are done
    stage_kv(t);
    barrier();
    if (blk + 1u < blocks) fetch_kv(k_base, v_base, key0 + BK, t);  // in flight during this block's work

    // S = Q K^T over the subgroup's keys, 16 at a time, into its scratch.
    [[unroll]] for (uint j = 0u; j < BK / 16u; ++j) {
      if (j < BKS / 16u) {
        fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> s = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
        [[unroll]] for (uint e = 0u; e < MAX_E8 / 2u; ++e) {
          if (e < E / 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> kf;
            coopMatLoadNV(kf, k_tile, (kb0 + 16u * j) * KV_ROW + 2u * e, KV_ROW, true);  // K^T: k rows are its columns
            s = coopMatMulAddNV(qf[e], kf, s);
          }
        }
        coopMatStoreNV(s, scratch, s_base + 4u * j, S_ROW, false);
      }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // The online softmax of row r over its HALF keys of the subgroup's share,
    // [kb0 + HALF hf, kb0 + HALF (hf + 1)) of the block.
    float sc[32];
    float block_max = NEG_INF;
    [[unroll]] for (uint c4 = 0u; c4 < 8u; ++c4) {
      if (c4 < HALF / 4u) {
        const vec4 w = uintBitsToFloat(scratch[s_base + r * S_ROW + (HALF / 4u) * hf + c4]);
        [[unroll]] for (uint e = 0u; e < 4u; ++e) {
          sc[4u * c4 + e] = masked_score(w[e] * p.scale_log2, row, key0 + kb0 + HALF * hf + 4u * c4 + e, m_base);
          block_max = max(block_max, sc[4u * c4 + e]);
        }
      }
    }
    block_max = max(block_max, subgroupShuffleXor(block_max, 1u));
    const float m_new = max(m, block_max);
    // A row with no allowed key so far keeps max -inf; 0 stands in for it so
    // that exp2(-inf - 0) = 0 rather than exp2(NaN).
    const float m_use = m_new == NEG_INF ? 0.0 : m_new;
    const float alpha = exp2(m - m_use);
    m = m_new;
    float sum = 0.0;
    [[unroll]] for (uint c8 = 0u; c8 < 4u; ++c8) {
      if (c8 < HALF / 8u) {
        float pv[8];
        [[unroll]] for (uint e = 0u; e < 8u; ++e) {
          pv[e] = exp2(sc[8u * c8 + e] - m_use);
          sum += pv[e];
        }
        p_tile[p_base + r * P_ROW + (HALF / 8u) * hf + c8] =
            pack8(pv[0], pv[1], pv[2], pv[3], pv[4], pv[5], pv[6], pv[7]);
      }
    }
    l = l * alpha + sum + subgroupShuffleXor(sum, 1u);
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // P written, S read: the scratch takes P V next

    // P V, 16 output columns at a time, into the scratch, then into o.
    [[unroll]] for (uint n = 0u; n < MAX_E8 / 2u; ++n) {
      if (n < EV / 16u) {
        fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> pvacc = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
        [[unroll]] for (uint j = 0u; j < BK / 16u; ++j) {
          if (j < BKS / 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> pf;
            fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> vf;
            coopMatLoadNV(pf, p_tile, p_base + 2u * j, P_ROW, false);
            coopMatLoadNV(vf, v_tile, (kb0 + 16u * j) * KV_ROW + 2u * n, KV_ROW, false);
            pvacc = coopMatMulAddNV(pf, vf, pvacc);
          }
        }
        coopMatStoreNV(pvacc, scratch, s_base + 4u * n, S_ROW, false);
      }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint c4 = 0u; c4 < OUT_PER / 4u; ++c4) {
      if (c4 < EV / 8u) {
        const vec4 w = uintBitsToFloat(scratch[s_base + r * S_ROW + (EV / 8u) * hf + c4]);
        [[unroll]] for (uint e = 0u; e < 4u; ++e) o[4u * c4 + e] = o[4u * c4 + e] * alpha + w[e];
      }
    }
    subgroupBarrier();  // read before the next block's S overwrites the scratch
  }

  if (KEY_SPLIT > 1u) {
    // The other shares' partial softmaxes of these rows through shared memory
    // (each share's own scratch and probability rows): the first share's
    // subgroup weighs them by their maxes' distance from the largest.
    barrier();  // every share's last block read from the scratch
    if (share != 0u) {
      [[unroll]] for (uint c4 = 0u; c4 < OUT_PER / 4u; ++c4) {
        if (c4 < EV / 8u) {
          scratch[s_base + r * S_ROW + (EV / 8u) * hf + c4] =
              floatBitsToUint(vec4(o[4u * c4], o[4u * c4 + 1u], o[4u * c4 + 2u], o[4u * c4 + 3u]));
        }
      }
      if (hf == 0u) p_tile[p_base + r * P_ROW] = uvec4(floatBitsToUint(m), floatBitsToUint(l), 0u, 0u);
    }
    barrier();
    if (share != 0u) return;
    float m_all = m;
    [[unroll]] for (uint j = 1u; j < KEY_SPLIT; ++j) {
      m_all = max(m_all, uintBitsToFloat(p_tile[(rg + j * ROW_GROUPS) * SUB_ROWS * P_ROW + r * P_ROW].x));
    }
    const float m_ref = m_all == NEG_INF ? 0.0 : m_all;  // no key in any share: every weight 0
    const float own = exp2(m - m_ref);
    l *= own;
    [[unroll]] for (uint c = 0u; c < OUT_PER; ++c) o[c] *= own;
    [[unroll]] for (uint j = 1u; j < KEY_SPLIT; ++j) {
      const uint other = rg + j * ROW_GROUPS;
      const uvec4 ml = p_tile[other * SUB_ROWS * P_ROW + r * P_ROW];
      const float w = exp2(uintBitsToFloat(ml.x) - m_ref);
      l += uintBitsToFloat(ml.y) * w;
      [[unroll]] for (uint c4 = 0u; c4 < OUT_PER / 4u; ++c4) {
        if (c4 < EV / 8u) {
          const vec4 x = uintBitsToFloat(scratch[other * S_SIZE + r * S_ROW + (EV / 8u) * hf + c4]);
          [[unroll]] for (uint e = 0u; e < 4u; ++e) o[4u * c4 + e] += x[e] * w;
        }
      }
    }
  }
  if (row >= p.L) return;
  // l = 0: the row saw no key; it is 0, not 0/0.
  const float inv = l > 0.0 ? 1.0 / l : 0.0;
  const uint out_base = (HEADS_INNER != 0 ? (b * p.L + row) * p.Hq + h : bh * p.L + row) * p.Ev + (EV / 2u) * hf;
  [[unroll]] for (uint c4 = 0u; c4 < OUT_PER / 4u; ++c4) {
    if (c4 < EV / 8u) {
      const vec4 w = vec4(o[4u * c4], o[4u * c4 + 1u], o[4u * c4 + 2u], o[4u * c4 + 3u]) * inv;
      if (OUT_VEC != 0) {
        y4[out_base / 4u + c4] = f16vec4(w);
      } else {
        [[unroll]] for (uint e = 0u; e < 4u; ++e) y[out_base + 4u * c4 + e] = float16_t(w[e]);
      }
    }
  }
}
