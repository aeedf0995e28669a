#version 450
// [[unroll]]: the score and output tiles live in registers only if their
// loops unroll (the bounds are specialization constants).
#extension GL_EXT_control_flow_attributes : require
// scaled_dot_product_attention, flash-attention style: softmax(q k^T * scale +
// mask) v without the L x S score matrix. One workgroup of 128 invocations
// takes BQ = 32 query rows of one (batch, head) and streams the keys and
// values through shared memory in blocks of BK = 32, keeping an online
// softmax per row (running max and sum, f32) and its 32 x Ev output in
// registers; whatever T is, the math is f32. Per key block: stage K (loaded
// during the previous block's P V), scores (4 rows x KEYS keys per
// invocation) while V loads, the rows' block max through shared memory,
// probabilities into shared memory, stage V (over K), output += P V (4 rows x
// 4*NC output columns per invocation) while the next K loads. BK = 32 keys
// per block, or 16 where the device's shared memory is too small for 32
// (lavapipe's 32 KiB at head dims past 96). Causal blocks past the diagonal
// are never visited. A row that sees no key (every score -inf)
// writes 0, as PyTorch's _safe_softmax.
//
// Split over keys (SPLIT = 1, flash-decoding): where (batch, head, query
// block) workgroups are too few to fill the GPU (a decode step: one query
// row, 12-32 heads), workgroup `split` of a row block takes key blocks
// [split * p.split_blocks, +p.split_blocks) only and writes its rows'
// unnormalised output, running max and sum (f32) to `part`;
// attention_combine.comp then weighs the splits into the output.
//
// Invocation t owns query rows r + 8 * i (r = t / 16, i < 4), key columns
// c + 16 * j of a block (c = t % 16, j < KEYS) and output chunks (vec4s)
// c + 16 * n (n < NC): the 16 invocations of a row group hold the same rows,
// so a row's statistics are reduced among them alone.
#define GPUU_WG 128
#include "common.glsl"

#ifdef GPUU_F16
#define T4 f16vec4
#else
#define T4 vec4
#endif

#define BQ 32u
#define ROWS 4u      // query rows per invocation
#define GROUP 16u    // invocations sharing a row group
#define MAX_KEYS 2u  // key columns per invocation
#define MAX_NC 2u    // output chunks per invocation (out0, out1): Ev <= 128

layout(constant_id = 0) const uint E4 = 16u;   // vec4 chunks of the q/k head dim E
layout(constant_id = 1) const uint EV4 = 16u;  // vec4 chunks of the v head dim Ev
layout(constant_id = 2) const uint RS = 17u;   // shared row stride in vec4s: odd, >= E4 and EV4
layout(constant_id = 3) const uint NC = 1u;    // output chunks per invocation, ceil(EV4 / 16)
layout(constant_id = 4) const int MASK = 0;    // 0 none, 1 bool (true: attend), 2 added (T)
layout(constant_id = 5) const int CAUSAL = 0;  // key j allowed for query i iff j <= i
// Vector reads of q, k, v (E and Ev multiples of 4, strides and offsets too)
// and vector writes of the output (Ev a multiple of 4).
layout(constant_id = 6) const int IN_VEC = 0;
layout(constant_id = 7) const int OUT_VEC = 0;
layout(constant_id = 8) const uint KEYS = 2u;  // key columns per invocation, 1 or 2
const uint BK = GROUP * KEYS;                  // keys per block
layout(constant_id = 9) const int SPLIT = 0;   // write partials for attention_combine (see above)
// The output is [batch, L, Hq, Ev] (heads inside rows): the transpose a
// transformer reads before its output projection, written in place.
layout(constant_id = 10) const int HEADS_INNER = 0;

layout(std430, set = 0, binding = 0) readonly buffer Q { T q[]; };
layout(std430, set = 0, binding = 0) readonly buffer Q4 { T4 q4[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { T k[]; };
layout(std430, set = 0, binding = 1) readonly buffer K4 { T4 k4[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { T v[]; };
layout(std430, set = 0, binding = 2) readonly buffer V4 { T4 v4[]; };
// Bound to q when there is no mask (never read then).
layout(std430, set = 0, binding = 3) readonly buffer MaskT { T mask_t[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskW { uint mask_words[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { T y[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out4 { T4 y4[]; };
// SPLIT: per (batch * Hq + head, row, split) EV4 output chunks, then
// vec4(max, sum, 0, 0). Bound to the output, never written, otherwise.
layout(std430, set = 0, binding = 5) writeonly buffer Part { vec4 part[]; };

// Strides in elements. q, k and v are read through them (b: the batch dims,
// flattened; h: head; l: row; the head dim is contiguous), so a transposed or
// sliced view of another tensor needs no copy; the mask's are 0 where it
// broadcasts. The output is contiguous [batch, Hq, L, Ev] (or, HEADS_INNER,
// [batch, L, Hq, Ev]).
layout(push_constant) uniform Params {
  uint L, S, E, Ev, Hq;
  uint group;         // Hq / Hkv: query heads per kv head
  uint q_blocks;      // ceil(L / BQ)
  float scale_log2;   // scale * log2(e): scores are kept in base 2
  uint q_off, q_sb, q_sh, q_sl;
  uint k_off, k_sb, k_sh, k_sl;
  uint v_off, v_sb, v_sh, v_sl;
  uint m_sb, m_sh, m_sl, m_ss;
  uint splits, split_blocks;  // key splits per row block, key blocks per split (1, all without SPLIT)
} p;

#include "attention_mask.glsl"  // masked_score, NEG_INF, LOG2E

shared vec4 q_tile[BQ * RS];
shared vec4 kv_tile[BK * RS];        // K, then V, of the current block
shared vec4 p_tile[BQ * (BK / 4u + 1u)];  // probabilities, rows padded by one vec4
shared vec4 row_part[BQ * (GROUP / 4u)];  // one partial per row and invocation of its group
#define P_STRIDE (BK / 4u + 1u)

// Chunk d (4 elements from 4 * d) of row `row` of a q/k/v tensor at `base`,
// zero past the head dim `dim`.
#define LOAD_CHUNK(buf, buf4, base, d, dim, out_v)                                               \
  {                                                                                            \
    uint at_ = (base) + 4u * (d);                                                              \
    if (IN_VEC != 0) {                                                                         \
      out_v = vec4(buf4[at_ / 4u]);                                                            \
    } else {                                                                                   \
      out_v = vec4(0.0);                                                                       \
      [[unroll]] for (uint e_ = 0u; e_ < 4u; ++e_) {                                           \
        if (4u * (d) + e_ < (dim)) out_v[e_] = float(buf[at_ + e_]);                           \
      }                                                                                        \
    }                                                                                          \
  }

void stage_q(uint q_base, uint row0, uint t) {
  for (uint idx = t; idx < BQ * E4; idx += GPUU_WG) {
    uint row = idx / E4, d = idx - row * E4;
    vec4 val = vec4(0.0);
    if (row0 + row < p.L) LOAD_CHUNK(q, q4, q_base + (row0 + row) * p.q_sl, d, p.E, val);
    q_tile[row * RS + d] = val * p.scale_log2;
  }
}

// The K or V block in flight: each invocation carries its chunks of the next
// block from memory in registers while the current one is multiplied, so
// that a block's loads are not waited for between its barriers. At most
// 32 keys x 32 chunks over 128 invocations: the host takes head dims up to
// 128 (kMaxHeadDim) and blocks of at most 32 keys.
#define MAX_PRE 8u
vec4 pre[MAX_PRE];

// Loads into `pre` this invocation's chunks of the BK key rows from key0 of
// the tensor at `base` (row stride `sl`, `chunks` chunks a row, head dim
// `dim`); rows past S stay 0 (a value row's probability is 0 there, and 0 *
// garbage could be NaN).
#define FETCH(buf, buf4, base, sl, chunks, dim, key0, t)                                \
  [[unroll]] for (uint i_ = 0u; i_ < MAX_PRE; ++i_) {                                     \
    const uint idx_ = (t) + i_ * GPUU_WG;                                                 \
    if (idx_ < BK * (chunks)) {                                                           \
      const uint row_ = idx_ / (chunks), d_ = idx_ - row_ * (chunks);                     \
      pre[i_] = vec4(0.0);                                                                \
      if ((key0) + row_ < p.S) LOAD_CHUNK(buf, buf4, (base) + ((key0) + row_) * (sl), d_, dim, pre[i_]); \
    }                                                                                     \
  }

// The fetched block into kv_tile (`chunks` per key row).
void put_block(uint chunks, uint t) {
  [[unroll]] for (uint i = 0u; i < MAX_PRE; ++i) {
    const uint idx = t + i * GPUU_WG;
    if (idx < BK * chunks) {
      const uint row = idx / chunks, d = idx - row * chunks;
      kv_tile[row * RS + d] = pre[i];
    }
  }
}

// The sum over a row group of each invocation's `part` for its rows.
void group_sum_or_max(inout float part[ROWS], bool is_max, uint r, uint c) {
  [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
    uint row = r + 8u * i;
    row_part[row * (GROUP / 4u) + c / 4u][c % 4u] = part[i];
  }
  barrier();
  [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
    uint row = r + 8u * i;
    float acc = is_max ? NEG_INF : 0.0;
    [[unroll]] for (uint g = 0u; g < GROUP / 4u; ++g) {
      vec4 w = row_part[row * (GROUP / 4u) + g];
      if (is_max) {
        acc = max(acc, max(max(w.x, w.y), max(w.z, w.w)));
      } else {
        acc += (w.x + w.y) + (w.z + w.w);
      }
    }
    part[i] = acc;
  }
}

// out[i] += the 4 probabilities pv[i] times the 4 value rows of chunk `at`.
void add_pv(inout vec4 out_chunk[ROWS], const vec4 pv[ROWS], uint at) {
  const vec4 v0 = kv_tile[at], v1 = kv_tile[at + RS], v2 = kv_tile[at + 2u * RS], v3 = kv_tile[at + 3u * RS];
  [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
    out_chunk[i] += pv[i].x * v0 + pv[i].y * v1 + pv[i].z * v2 + pv[i].w * v3;
  }
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint r = t / GROUP, c = t % GROUP;
  const uint wg = linear_group_id() / p.splits, split = linear_group_id() % p.splits;
  // Later query blocks see more keys under a causal mask: they go first.
  const uint q_block = p.q_blocks - 1u - wg % p.q_blocks;
  const uint bh = wg / p.q_blocks;  // batch * Hq + head
  const uint b = bh / p.Hq, h = bh - b * p.Hq, kvh = h / p.group;
  const uint row0 = q_block * BQ;
  const uint k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  const uint v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const uint m_base = b * p.m_sb + h * p.m_sh;

  stage_q(p.q_off + b * p.q_sb + h * p.q_sh, row0, t);

  float m[ROWS], l[ROWS];  // running max (base 2) and this invocation's share of the running sum
  // Output chunks c and c + 16 of each row (named, not an array indexed by
  // chunk: loops over such an index stayed loops, the array in local memory).
  vec4 out0[ROWS], out1[ROWS];
  [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
    m[i] = NEG_INF;
    l[i] = 0.0;
    out0[i] = vec4(0.0);
    out1[i] = vec4(0.0);
  }

  // Causal: keys past the block's last row are masked for all its rows.
  uint keys = p.S;
  if (CAUSAL != 0) keys = min(keys, row0 + BQ);
  const uint blocks = min((keys + BK - 1u) / BK, (split + 1u) * p.split_blocks);
  const uint first = split * p.split_blocks;
  if (first < blocks) FETCH(k, k4, k_base, p.k_sl, E4, p.E, first * BK, t);
  for (uint blk = first; blk < blocks; ++blk) {
    const uint key0 = blk * BK;
    barrier();  // the previous block's readers of kv_tile and p_tile are done
    put_block(E4, t);
    barrier();
    FETCH(v, v4, v_base, p.v_sl, EV4, p.Ev, key0, t);  // in flight during the scores

    float s[ROWS][MAX_KEYS];
    [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
      [[unroll]] for (uint j = 0u; j < MAX_KEYS; ++j) s[i][j] = 0.0;
    }
    // Unrolled (E4 is a specialization constant: the driver unrolls): the
    // next chunks' shared reads issue before this one's products need them.
    [[unroll]] for (uint d = 0u; d < E4; ++d) {
      vec4 qv[ROWS], kv[MAX_KEYS];
      [[unroll]] for (uint i = 0u; i < ROWS; ++i) qv[i] = q_tile[(r + 8u * i) * RS + d];
      [[unroll]] for (uint j = 0u; j < MAX_KEYS; ++j) {
        if (j < KEYS) kv[j] = kv_tile[(c + GROUP * j) * RS + d];
      }
      [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
        [[unroll]] for (uint j = 0u; j < MAX_KEYS; ++j) {
          if (j < KEYS) s[i][j] += dot(qv[i], kv[j]);
        }
      }
    }
    float block_max[ROWS];
    [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
      const uint row = row0 + r + 8u * i;
      block_max[i] = NEG_INF;
      [[unroll]] for (uint j = 0u; j < MAX_KEYS; ++j) {
        if (j < KEYS) {
          s[i][j] = masked_score(s[i][j], row, key0 + c + GROUP * j, m_base);
          block_max[i] = max(block_max[i], s[i][j]);
        }
      }
    }
    group_sum_or_max(block_max, true, r, c);  // barrier inside: every invocation is past its kv_tile reads

    [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
      const float m_new = max(m[i], block_max[i]);
      // A row with no allowed key so far keeps max -inf; 0 stands in for it so
      // that exp2(-inf - 0) = 0 rather than exp2(NaN).
      const float m_use = m_new == NEG_INF ? 0.0 : m_new;
      const float alpha = exp2(m[i] - m_use);
      m[i] = m_new;
      float sum = 0.0;
      [[unroll]] for (uint j = 0u; j < MAX_KEYS; ++j) {
        if (j < KEYS) {
          const float pj = exp2(s[i][j] - m_use);
          sum += pj;
          const uint col = c + GROUP * j;
          p_tile[(r + 8u * i) * P_STRIDE + col / 4u][col % 4u] = pj;
        }
      }
      l[i] = l[i] * alpha + sum;
      out0[i] *= alpha;
      out1[i] *= alpha;
    }
    put_block(EV4, t);
    barrier();
    if (blk + 1u < blocks) FETCH(k, k4, k_base, p.k_sl, E4, p.E, key0 + BK, t);  // in flight during P V

    [[unroll]] for (uint j4 = 0u; j4 < BK / 4u; ++j4) {
      vec4 pv[ROWS];
      [[unroll]] for (uint i = 0u; i < ROWS; ++i) pv[i] = p_tile[(r + 8u * i) * P_STRIDE + j4];
      if (c < EV4) add_pv(out0, pv, 4u * j4 * RS + c);
      if (NC > 1u && c + GROUP < EV4) add_pv(out1, pv, 4u * j4 * RS + c + GROUP);
    }
  }

  // row_part is free: its last readers were before the last block's final barrier.
  group_sum_or_max(l, false, r, c);
  [[unroll]] for (uint i = 0u; i < ROWS; ++i) {
    const uint row = row0 + r + 8u * i;
    if (SPLIT != 0) {
      // Unnormalised: the combine weighs this split's rows by exp2(m - max).
      const uint at = ((bh * p.L + row) * p.splits + split) * (EV4 + 1u);
      [[unroll]] for (uint n = 0u; n < MAX_NC; ++n) {
        const uint chunk = c + GROUP * n;
        if (row < p.L && n < NC && chunk < EV4) part[at + chunk] = n == 0u ? out0[i] : out1[i];
      }
      if (row < p.L && c == 0u) part[at + EV4] = vec4(m[i], l[i], 0.0, 0.0);
      continue;
    }
    // l = 0: the row saw no key; it is 0, not 0/0.
    const float inv = l[i] > 0.0 ? 1.0 / l[i] : 0.0;
    const uint out_base = (HEADS_INNER != 0 ? (b * p.L + row) * p.Hq + h : bh * p.L + row) * p.Ev;
    [[unroll]] for (uint n = 0u; n < MAX_NC; ++n) {
      const uint chunk = c + GROUP * n;
      if (row < p.L && n < NC && chunk < EV4) {
        const vec4 o = (n == 0u ? out0[i] : out1[i]) * inv;
        if (OUT_VEC != 0) {
          y4[out_base / 4u + chunk] = T4(o);
        } else {
          [[unroll]] for (uint e = 0u; e < 4u; ++e) {
            if (4u * chunk + e < p.Ev) y[out_base + 4u * chunk + e] = T(o[e]);
          }
        }
      }
    }
  }
}
