#version 450
// [[unroll]]: register-blocked loops must unroll, or the accumulators end in
// local memory (measured: the 128 tile ran at 1/15 the speed without it).
#extension GL_EXT_control_flow_attributes : require
// Tiled GEMM on the shader cores, accumulated in f32 whatever T is (forms and
// bindings: gemm_common.glsl). Each workgroup of 256 invocations computes one
// BM x BN output tile, each invocation a TM x TM block of it in registers:
// TM = 4 (64x64 tiles) for CPU devices, where wide tiles only waste work on
// edges; TM = 8 (128x128) for GPUs, where the larger block halves the
// shared-memory reads per multiply-add (the build makes both, GPUU_GEMM_TM;
// the kernel selector picks). BK-deep slices of A and B are double-buffered
// in shared memory: the next slice is read from global memory into registers
// while the current one is multiplied, so one barrier per slice; the 128x128
// tile reads two slices ahead (below). (Measured on the H100, 4096^3 f32:
// 16-deep slices, double- or single-buffered, were no faster.)
#include "common.glsl"
#include "gemm_common.glsl"

#ifndef GPUU_GEMM_TM
#define GPUU_GEMM_TM 4
#endif
#define TM uint(GPUU_GEMM_TM)
#if GPUU_GEMM_TM == 8
#define BM uint(LIMIT_GEMM_TILE_LARGE)
#else
#define BM uint(LIMIT_GEMM_TILE_SMALL)
#endif
#define BN BM  // = 16 * TM
// Slice depth: one 4-element chunk of A and one of B per invocation per slice
// (16 for the 64 tile, 8 for the 128 one: 16.5 KiB of shared memory, within
// every device's limit).
#define BK (4u * GPUU_WG / BM)
// Rows of the shared tiles in vec4s, one of padding against bank conflicts
// when chunks along k are scattered into them.
#define BMV (BM / 4u + 1u)
#define BNV (BN / 4u + 1u)
#define CHUNKS (BM * BK / 4u / GPUU_WG)  // = 1

#ifdef GPUU_F16
#define T4 f16vec4
#else
#define T4 vec4
#endif
layout(std430, set = 0, binding = 0) readonly buffer A4 { T4 a4[]; };
#ifndef GPUU_QW
layout(std430, set = 0, binding = 1) readonly buffer B4 { T4 b4[]; };
#endif

// k-major: As[buf][k][m], Bs[buf][k][n], read as vec4s (see place()).
shared vec4 As[2][BK][BMV];
shared vec4 Bs[2][BK][BNV];

vec4 ra[CHUNKS], rb[CHUNKS];  // the next slice, on its way to shared memory
#if GPUU_GEMM_TM == 8
vec4 ra1[CHUNKS], rb1[CHUNKS];  // the slice after it, waiting to be staged
#endif

// Chunk c of the A slice: 4 consecutive k of one row (neighbours read along k).
void chunk_a(uint c, out uint m, out uint k) {
  m = c / (BK / 4u);
  k = (c % (BK / 4u)) * 4u;
}
// Chunk c of the B slice: 4 consecutive n of one k, or 4 consecutive k of one
// n where k is B's contiguous axis.
void chunk_b(uint c, out uint k, out uint n) {
  if (B_K_CONTIGUOUS != 0) {
    n = c / (BK / 4u);
    k = (c % (BK / 4u)) * 4u;
  } else {
    k = c / (BN / 4u);
    n = (c % (BN / 4u)) * 4u;
  }
}

void fetch(uint k0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint m, k;
    chunk_a(t + i * GPUU_WG, m, k);
    m += g_m0;
    k += k0;
    if (A_VEC != 0) {
      ra[i] = (in_m(m) && in_k(k)) ? vec4(a4[a_offset(m, k) / 4u]) : vec4(0.0);
    } else {
      ra[i] = vec4(load_a(m, k), load_a(m, k + 1u), load_a(m, k + 2u), load_a(m, k + 3u));
    }
    uint n;
    chunk_b(t + i * GPUU_WG, k, n);
    k += k0;
    n += g_n0;
    if (B_K_CONTIGUOUS != 0) {
      if (B_VEC != 0) {
#ifdef GPUU_QW
        rb[i] = (in_n(n) && in_k(k)) ? qw_chunk(k, n) : vec4(0.0);
#else
        rb[i] = (in_n(n) && in_k(k)) ? vec4(b4[b_offset(k, n) / 4u]) : vec4(0.0);
#endif
      } else {
        rb[i] = vec4(load_b(k, n), load_b(k + 1u, n), load_b(k + 2u, n), load_b(k + 3u, n));
      }
    } else {
#ifndef GPUU_QW  // a quantized weight is always read along k
      if (B_VEC != 0) {
        rb[i] = (in_n(n) && in_k(k)) ? vec4(b4[b_offset(k, n) / 4u]) : vec4(0.0);
      } else {
#ifdef GPUU_CONV
        float v[8];
        gather_b_row(k, n, 4u, v);
        rb[i] = vec4(v[0], v[1], v[2], v[3]);
#else
        rb[i] = vec4(load_b(k, n), load_b(k, n + 1u), load_b(k, n + 2u), load_b(k, n + 3u));
#endif
      }
#endif
    }
  }
}

void stage(uint buf, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint m, k;
    chunk_a(t + i * GPUU_WG, m, k);
    [[unroll]] for (uint j = 0u; j < 4u; ++j) As[buf][k + j][m / 4u][m % 4u] = ra[i][j];
    uint n;
    chunk_b(t + i * GPUU_WG, k, n);
    if (B_K_CONTIGUOUS != 0) {
      [[unroll]] for (uint j = 0u; j < 4u; ++j) Bs[buf][k + j][n / 4u][n % 4u] = rb[i][j];
    } else {
      Bs[buf][k][n / 4u] = rb[i];
    }
  }
}

float acc[TM][TM];  // this invocation's TM x TM results

// Which rows and columns of the tile an invocation owns, in vec4s: rows
// 4 * (row0 + row_step * h) + 0..3, columns likewise, h < TM / 4. TM = 4: a
// 16 x 16 grid. TM = 8: each subgroup of 32 owns a 32 x 64 block, its
// invocations a 4 x 8 grid in it, so a subgroup's shared reads per step are 4
// A and 8 B vec4s, one pass each (a 16 x 16 grid reads 2 and 16: three
// passes; measured 3.6 % faster on the H100).
uint row0, row_step, col0, col_step;
void place(uint t) {
#if GPUU_GEMM_TM == 8
  uint w = t / 32u, lane = t % 32u;
  row0 = 8u * (w / 2u) + lane / 8u;
  row_step = 4u;
  col0 = 16u * (w % 2u) + lane % 8u;
  col_step = 8u;
#else
  row0 = t / 16u;
  row_step = 16u;
  col0 = t % 16u;
  col_step = 16u;
#endif
}

// The slice in shared buffer `buf` into the results.
void multiply(uint buf) {
  [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
    vec4 av[TM / 4u], bv[TM / 4u];
    [[unroll]] for (uint h = 0u; h < TM / 4u; ++h) {
      av[h] = As[buf][kk][row0 + row_step * h];
      bv[h] = Bs[buf][kk][col0 + col_step * h];
    }
    [[unroll]] for (uint i = 0u; i < TM; ++i) {
      [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] += av[i / 4u][i % 4u] * bv[j / 4u][j % 4u];
    }
  }
}

void main() {
  if (!gemm_tile(BM, BN)) return;
  uint t = gl_LocalInvocationID.x;
  place(t);

  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] = 0.0;
  }

#if GPUU_GEMM_TM == 8
  // Reads two slices ahead of the multiply (the registers' roles swap by
  // copies; two slices an iteration): one ahead left the reads' latency
  // exposed. H100, f32, against one ahead in the same process: 4096^3 32.2 ->
  // 43.7 TFLOP/s, GPT-2's 2048-row linears 20-31 -> 26-39, a batch-16 3x3
  // convolution 2080 -> 1869 us. This exact form: a version with the step in
  // a function called twice an iteration compiled slower than one ahead.
  // The 64x64 tile keeps one ahead (not measured two ahead in this form).
  fetch(g_k0, t);
  stage(0u, t);
  if (g_k0 + BK < g_k_end) { fetch(g_k0 + BK, t); ra1 = ra; rb1 = rb; }
  barrier();
  uint buf = 0u;
  for (uint k0 = g_k0; k0 < g_k_end; k0 += 2u * BK) {
    // slice k0 staged in buf; k0 + BK in ra1/rb1
    if (k0 + 2u * BK < g_k_end) fetch(k0 + 2u * BK, t);  // into ra/rb
    multiply(buf);
    if (k0 + BK >= g_k_end) break;
    { vec4 sa[CHUNKS] = ra, sb[CHUNKS] = rb; ra = ra1; rb = rb1; stage(buf ^ 1u, t); ra1 = sa; rb1 = sb; }
    barrier();
    buf ^= 1u;
    // slice k0 + BK staged in buf; k0 + 2BK in ra1/rb1
    if (k0 + 3u * BK < g_k_end) fetch(k0 + 3u * BK, t);
    multiply(buf);
    if (k0 + 2u * BK >= g_k_end) break;
    { vec4 sa[CHUNKS] = ra, sb[CHUNKS] = rb; ra = ra1; rb = rb1; stage(buf ^ 1u, t); ra1 = sa; rb1 = sb; }
    barrier();
    buf ^= 1u;
  }
#else
  fetch(g_k0, t);
  stage(0u, t);
  barrier();
  uint buf = 0u;
  for (uint k0 = g_k0; k0 < g_k_end; k0 += BK) {
    bool more = k0 + BK < g_k_end;
    if (more) fetch(k0 + BK, t);  // global reads in flight during the multiply
    multiply(buf);
    if (more) {
      // The other buffer was last read before the previous barrier.
      stage(buf ^ 1u, t);
      barrier();
      buf ^= 1u;
    }
  }
#endif

  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    uint m = g_m0 + 4u * (row0 + row_step * (i / 4u)) + i % 4u;
    if (!in_m(m)) continue;
    [[unroll]] for (uint j = 0u; j < TM; ++j) {
      uint n = g_n0 + 4u * (col0 + col_step * (j / 4u)) + j % 4u;
      if (in_n(n)) store_y(m, n, acc[i][j]);
    }
  }
}
