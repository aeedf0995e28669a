#version 450
// scaled_dot_product_attention on workgroup-scope cooperative matrices
// (VK_NV_cooperative_matrix2), f16 q, k, v with f32 scores, softmax and
// output sums: attention_coopmat.comp's walk with every step on matrices.
// A workgroup takes BR query rows of one (batch, head) and walks the keys in
// blocks of BC = 64: S = Q K^T, the mask and scale per element (row and
// column known: coopMatPerElementNV), the running row max by a row reduction,
// P = exp2(S - max) converted to f16 as the A operand of both P V and P 1
// (the row sums, on the matrix cores), the output rescaled by its rows' max
// change per element. Nothing goes through shared memory by hand: no score
// scratch, no output rows in registers, no barriers; q, k and v load through
// clamped tensor layouts (rows past L and S read zeros) and the output stores
// through one (rows past L dropped). The driver stages the loads.
//
// Same bindings, push constants and dispatch as attention_coopmat.comp (the
// host picks one or the other): BR = 64 / KEY_SPLIT rows a workgroup. Needs
// head dims multiples of 16 up to 64 and q, k, v and the output starting
// rows and heads on 8-half chunks (IN_VEC8: tensor loads want 16-byte
// aligned bases). Compiled by Arm's glslc (src/kernels/CMakeLists.txt).
#extension GL_EXT_control_flow_attributes : require
#define GPUU_F16
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#define GPUU_WG 128
#include "common.glsl"

layout(constant_id = 0) const uint E4 = 16u;   // vec4 chunks of the q/k head dim E
layout(constant_id = 1) const uint EV4 = 16u;  // ... of the v head dim Ev
layout(constant_id = 4) const int MASK = 0;    // 0 none, 1 bool (true: attend), 2 added (T)
layout(constant_id = 8) const int CAUSAL = 0;  // key j allowed for query i iff j <= i
// The output is [batch, L, Hq, Ev] (heads inside rows), as attention.comp.
layout(constant_id = 10) const int HEADS_INNER = 0;
layout(constant_id = 12) const uint KEY_SPLIT = 1u;  // rows a workgroup: 64 / KEY_SPLIT

const uint BC = 64u;
const uint BR = 64u / KEY_SPLIT;
const uint E = 4u * E4, EV = 4u * EV4;

layout(std430, set = 0, binding = 0) readonly buffer Q { float16_t q[]; };
layout(std430, set = 0, binding = 1) readonly buffer K { float16_t k[]; };
layout(std430, set = 0, binding = 2) readonly buffer V { float16_t v[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskT { float16_t mask_t[]; };
layout(std430, set = 0, binding = 3) readonly buffer MaskW { uint mask_words[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { float16_t y[]; };

// attention.comp's push constants (the same lowering fills both).
layout(push_constant) uniform Params {
  uint L, S, E, Ev, Hq;
  uint group;
  uint q_blocks;  // ceil(L / BR)
  float scale_log2;
  uint q_off, q_sb, q_sh, q_sl;
  uint k_off, k_sb, k_sh, k_sl;
  uint v_off, v_sb, v_sh, v_sl;
  uint m_sb, m_sh, m_sl, m_ss;
  uint splits, split_blocks;  // 1 and all here
} p;

#include "attention_mask.glsl"  // masked_score, NEG_INF

#define ROWS_BY(C) coopmat<float, gl_ScopeWorkgroup, BR, C, gl_MatrixUseAccumulator>
#define CLAMPED tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>

// The running max starts at the lowest finite float over 2, not -inf: a row
// whose keys are all masked so far keeps it, and exp2(-inf - it) is 0 where
// exp2(-inf - -inf) would be NaN.
const float MAX_START = -1.7014117e38;

// Where the element functions are: the workgroup's first row, the block's
// first key, the mask's row of this (batch, head).
uint g_row0, g_key0, g_m_base;

float scaled_masked(const in uint32_t r, const in uint32_t c, const in float s) {
  return masked_score(s * p.scale_log2, g_row0 + r, g_key0 + c, g_m_base);
}
float larger(const in uint32_t r, const in uint32_t c, const in float a, const in float b) { return max(a, b); }
float power_of_two(const in uint32_t r, const in uint32_t c, const in float x) { return exp2(x); }
float reciprocal_or_zero(const in uint32_t r, const in uint32_t c, const in float x) {
  return x > 0.0 ? 1.0 / x : 0.0;  // a row that saw no key is 0, not 0/0
}
float max_of(const in float a, const in float b) { return max(a, b); }
float first_of(const in float a, const in float b) { return a; }  // a row's value, spread to another width

void main() {
  const uint wg = linear_group_id();
  const uint q_block = p.q_blocks - 1u - wg % p.q_blocks;  // later (longer, causal) blocks first
  const uint bh = wg / p.q_blocks;
  const uint b = bh / p.Hq, h = bh - b * p.Hq, kvh = h / p.group;
  const uint row0 = q_block * BR;
  g_row0 = row0;
  g_m_base = b * p.m_sb + h * p.m_sh;

  CLAMPED lq = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  lq = setTensorLayoutDimensionNV(lq, p.L, E);
  lq = setTensorLayoutStrideNV(lq, p.q_sl, 1);
  CLAMPED lk = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  lk = setTensorLayoutDimensionNV(lk, p.S, E);
  lk = setTensorLayoutStrideNV(lk, p.k_sl, 1);
  CLAMPED lv = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  lv = setTensorLayoutDimensionNV(lv, p.S, EV);
  lv = setTensorLayoutStrideNV(lv, p.v_sl, 1);
  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

  coopmat<float16_t, gl_ScopeWorkgroup, BR, E, gl_MatrixUseA> qa;
  coopMatLoadTensorNV(qa, q, p.q_off + b * p.q_sb + h * p.q_sh, sliceTensorLayoutNV(lq, row0, BR, 0, E));
  const uint k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  const uint v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;

  const coopmat<float16_t, gl_ScopeWorkgroup, BC, BC, gl_MatrixUseB> ones =
      coopmat<float16_t, gl_ScopeWorkgroup, BC, BC, gl_MatrixUseB>(1.0);
  ROWS_BY(EV) o = ROWS_BY(EV)(0.0);
  ROWS_BY(BC) m = ROWS_BY(BC)(MAX_START), l = ROWS_BY(BC)(0.0);

  uint keys = p.S;
  if (CAUSAL != 0) keys = min(keys, row0 + BR);  // blocks past the diagonal: never visited
  const uint blocks = (keys + BC - 1u) / BC;
  for (uint blk = 0u; blk < blocks; ++blk) {
    const uint key0 = blk * BC;
    g_key0 = key0;
    coopmat<float16_t, gl_ScopeWorkgroup, E, BC, gl_MatrixUseB> kt;  // K^T: k rows are its columns
    coopMatLoadTensorNV(kt, k, k_base, sliceTensorLayoutNV(lk, key0, BC, 0, E), transposed);
    ROWS_BY(BC) s = coopMatMulAdd(qa, kt, ROWS_BY(BC)(0.0));
    coopMatPerElementNV(s, s, scaled_masked);

    ROWS_BY(BC) block_max, m_old = m, alpha, pr;
    coopMatReduceNV(block_max, s, gl_CooperativeMatrixReduceRowNV, max_of);
    coopMatPerElementNV(m, block_max, larger, m_old);
    coopMatPerElementNV(pr, s - m, power_of_two);
    coopMatPerElementNV(alpha, m_old - m, power_of_two);
    const coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA> pa =
        coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA>(pr);
    // Row sums of the f16 probabilities P V multiplies, on the matrix cores.
    l = alpha * l + coopMatMulAdd(pa, ones, ROWS_BY(BC)(0.0));

    ROWS_BY(EV) alpha_o;
    coopMatReduceNV(alpha_o, alpha, gl_CooperativeMatrixReduceRowNV, first_of);
    coopmat<float16_t, gl_ScopeWorkgroup, BC, EV, gl_MatrixUseB> vb;
    coopMatLoadTensorNV(vb, v, v_base, sliceTensorLayoutNV(lv, key0, BC, 0, EV));
    o = coopMatMulAdd(pa, vb, o * alpha_o);
  }

  ROWS_BY(EV) inv;
  coopMatReduceNV(inv, l, gl_CooperativeMatrixReduceRowNV, first_of);
  coopMatPerElementNV(inv, inv, reciprocal_or_zero);
  const coopmat<float16_t, gl_ScopeWorkgroup, BR, EV, gl_MatrixUseAccumulator> out16 =
      coopmat<float16_t, gl_ScopeWorkgroup, BR, EV, gl_MatrixUseAccumulator>(o * inv);
  // [bh, L, Ev], or with HEADS_INNER [b, L, Hq, Ev]: rows Hq * Ev apart.
  CLAMPED ly = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  ly = setTensorLayoutDimensionNV(ly, p.L, EV);
  uint y_base = bh * p.L * p.Ev;
  if (HEADS_INNER != 0) {
    ly = setTensorLayoutStrideNV(ly, p.Hq * p.Ev, 1);
    y_base = (b * p.L * p.Hq + h) * p.Ev;
  }
  coopMatStoreTensorNV(out16, y, y_base, sliceTensorLayoutNV(ly, row0, BR, 0, EV));
}
