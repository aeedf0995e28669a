#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// GEMMs with at most 4 rows or 4 columns (a decode step's or a batch-1 MLP's
// linears, a squeeze-excite block's 1x1 convolutions on one pixel), where a
// tiled kernel would leave almost all of its tile idle and walk K serially.
// Forms and bindings: gemm_common.glsl. The longer output axis is cut into
// lines (a column n, or a row m where LINES_ARE_COLUMNS is 0), each a dot
// product along K for each of the <= 4 outputs across the line: 32
// invocations share one line, each summing every 32nd 4-element chunk of K
// (neighbours read neighbouring chunks: coalesced), then their sums are added
// up (one subgroup's add where a subgroup is a line, else a tree in shared
// memory). A workgroup of 256 takes 8 lines. The line's own operand (B's
// column, or A's row) is read once for all its outputs; the other operand is
// small and stays in cache. B is read along K: the selector takes this kernel
// for a column line only where B's contiguous axis is K (linear's weight), and
// conv2d's B is gathered element by element.
#include "common.glsl"
#include "gemm_common.glsl"

layout(constant_id = 5) const int LINES_ARE_COLUMNS = 1;
// 1 where the device's subgroups are LINE_WIDTH wide and add in compute
// shaders: a line is a subgroup, summed by one subgroupAdd instead of five
// barrier-separated steps in shared memory (the host checks; the module
// declares the arithmetic capability either way, which every Vulkan 1.1
// device this runs on has).
layout(constant_id = 6) const int SUBGROUP_LINES = 0;
// GPUU_QW with column lines: each invocation reads its line's weights a uvec4
// at a time (32 4-bit or 16 8-bit weights under one scale: the host checks K
// and the group) and turns them into floats by exponent bits, not integer
// conversions. The 4-element reads left the H100's 1B decode slower in 4 bits
// than in f16: four times the loads per byte and a conversion per weight.
layout(constant_id = 7) const int QW_WIDE = 0;

#define LINE_WIDTH uint(LIMIT_GEMV_LINE_WIDTH)
#define LINES (GPUU_WG / LINE_WIDTH)
#define ACROSS uint(LIMIT_GEMV_ACROSS)  // outputs across a line, at most
#define UNROLL 8u  // chunks of K in flight per invocation
// The tile gemm_tile() hands out: LINES lines by ACROSS outputs.
#define TILE_M (LINES_ARE_COLUMNS != 0 ? ACROSS : LINES)
#define TILE_N (LINES_ARE_COLUMNS != 0 ? LINES : ACROSS)

#ifdef GPUU_F16
#define T4 f16vec4
#else
#define T4 vec4
#endif
layout(std430, set = 0, binding = 0) readonly buffer A4 { T4 a4[]; };
#ifndef GPUU_QW
layout(std430, set = 0, binding = 1) readonly buffer B4 { T4 b4[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer BQ16 { uvec4 bq16[]; };
const uint QE = 128u / uint(GPUU_QW);  // weights per uvec4
#define QW_UNROLL 4u                   // uvec4s in flight per invocation

// The QE weights of `w`, unscaled: each integer q is read as the float whose
// mantissa it fills under 2^23's exponent (q's bits made unsigned by flipping
// the sign bit, so 2^23 + q + 2^(bits-1)), less that offset; exact.
void qw_unpack(uvec4 w, out float x[QE]) {
  [[unroll]] for (uint word = 0u; word < 4u; ++word) {
#if GPUU_QW == 8
    uint u = w[word] ^ 0x80808080u;
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      x[word * 4u + j] = uintBitsToFloat(((u >> (8u * j)) & 0xFFu) | 0x4B000000u) - 8388736.0;
    }
#else
    uint u = w[word] ^ 0x88888888u;
    [[unroll]] for (uint j = 0u; j < 8u; ++j) {
      x[word * 8u + j] = uintBitsToFloat(((u >> (4u * j)) & 0xFu) | 0x4B000000u) - 8388616.0;
    }
#endif
  }
}
#endif

shared vec4 sums[GPUU_WG];

// Elements k..k+3 of A's row m and of B's column n (zeros past K or the edge).
vec4 a_chunk(uint m, uint k) {
  if (A_VEC != 0) return (in_m(m) && in_k(k)) ? vec4(a4[a_offset(m, k) / 4u]) : vec4(0.0);
  return vec4(load_a(m, k), load_a(m, k + 1u), load_a(m, k + 2u), load_a(m, k + 3u));
}
vec4 b_chunk(uint k, uint n) {
#ifdef GPUU_QW
  if (B_VEC != 0) return (in_n(n) && in_k(k)) ? qw_chunk(k, n) : vec4(0.0);
#elif !defined(GPUU_CONV)
  if (B_K_CONTIGUOUS != 0 && B_VEC != 0) return (in_n(n) && in_k(k)) ? vec4(b4[b_offset(k, n) / 4u]) : vec4(0.0);
#endif
  return vec4(load_b(k, n), load_b(k + 1u, n), load_b(k + 2u, n), load_b(k + 3u, n));
}

void main() {
  if (!gemm_tile(TILE_M, TILE_N)) return;
  uint t = gl_LocalInvocationID.x;
  uint line = t / LINE_WIDTH, lane = t % LINE_WIDTH;
  if (SUBGROUP_LINES != 0) {
    // Whichever invocations the device groups, a line is one subgroup.
    line = gl_SubgroupID;
    lane = gl_SubgroupInvocationID;
  }
  // Output r of this line: (row, column); `across` of them exist (uniform:
  // a decode step's single row reads one A chunk per B chunk, not four).
  uint m0 = g_m0 + (LINES_ARE_COLUMNS != 0 ? 0u : line);
  uint n0 = g_n0 + (LINES_ARE_COLUMNS != 0 ? line : 0u);
  uint across = LINES_ARE_COLUMNS != 0 ? min(ACROSS, p.M - g_m0) : min(ACROSS, p.N - g_n0);
  bool live = in_m(m0) && in_n(n0);

  // Each pass reads UNROLL chunks of the line's operand before using any, so
  // that many loads are in flight per invocation (fewer left the GEMV bound
  // by the loads' round trips: a 2048-deep f16 line is 16 chunks a lane).
  vec4 acc = vec4(0.0);  // one sum per output across the line
#ifdef GPUU_QW
  if (QW_WIDE != 0 && LINES_ARE_COLUMNS != 0) {
    for (uint k0 = g_k0 + QE * lane; live && k0 < g_k_end; k0 += QE * LINE_WIDTH * QW_UNROLL) {
      uvec4 own[QW_UNROLL];
      [[unroll]] for (uint u = 0u; u < QW_UNROLL; ++u) {
        uint k = k0 + u * QE * LINE_WIDTH;
        own[u] = k >= g_k_end ? uvec4(0u) : bq16[(n0 * p.K + k) / QE];
      }
      [[unroll]] for (uint u = 0u; u < QW_UNROLL; ++u) {
        uint k = k0 + u * QE * LINE_WIDTH;
        if (k >= g_k_end) break;
        float x[QE];
        qw_unpack(own[u], x);
        float scale = qw_scale(k, n0);
        [[unroll]] for (uint r = 0u; r < ACROSS; ++r) {
          if (r >= across) break;
          float d = 0.0;
          [[unroll]] for (uint c = 0u; c < QE / 4u; ++c) {
            d += dot(vec4(x[4u * c], x[4u * c + 1u], x[4u * c + 2u], x[4u * c + 3u]), a_chunk(m0 + r, k + 4u * c));
          }
          acc[r] += scale * d;
        }
      }
    }
  } else if (live) {
#else
  if (live) {
#endif
    for (uint k0 = g_k0 + 4u * lane; k0 < g_k_end; k0 += 4u * LINE_WIDTH * UNROLL) {
      vec4 own[UNROLL];
      [[unroll]] for (uint u = 0u; u < UNROLL; ++u) {
        uint k = k0 + u * 4u * LINE_WIDTH;
        own[u] = k >= g_k_end ? vec4(0.0) : LINES_ARE_COLUMNS != 0 ? b_chunk(k, n0) : a_chunk(m0, k);
      }
      [[unroll]] for (uint u = 0u; u < UNROLL; ++u) {
        uint k = k0 + u * 4u * LINE_WIDTH;
        if (k >= g_k_end) break;
        [[unroll]] for (uint r = 0u; r < ACROSS; ++r) {
          if (r >= across) break;
          acc[r] += LINES_ARE_COLUMNS != 0 ? dot(a_chunk(m0 + r, k), own[u]) : dot(own[u], b_chunk(k, n0 + r));
        }
      }
    }
  }

  vec4 total;
  if (SUBGROUP_LINES != 0) {
    total = subgroupAdd(acc);
  } else {
    sums[t] = acc;
    barrier();
    [[unroll]] for (uint s = LINE_WIDTH / 2u; s > 0u; s >>= 1u) {
      if (lane < s) sums[t] += sums[t + s];
      barrier();
    }
    total = sums[t];
  }
  if (lane != 0u || !live) return;
  [[unroll]] for (uint r = 0u; r < ACROSS; ++r) {
    uint m = LINES_ARE_COLUMNS != 0 ? m0 + r : m0, n = LINES_ARE_COLUMNS != 0 ? n0 : n0 + r;
    if (in_m(m) && in_n(n)) store_y(m, n, total[r]);
  }
}
