#version 450
// [[unroll]]: the register block must unroll, or the accumulators end in
// local memory (as in gemm.comp).
#extension GL_EXT_control_flow_attributes : require
// Tiled int8 GEMM with zero points, i32 results that wrap: matmul_int
// ([B,M,K] x [B,K,N]) and, with GPUU_CONV, conv2d_int as an implicit GEMM per
// group (A = the group's weight rows [O/groups, C/groups*kH*kW], B = the
// im2col view of the input, gathered while a slice loads). The same sums as
// conv2d_int.comp and matmul_int.comp, bit for bit.
//
// Operands are i8 elements in 32-bit words (int_io.glsl). A slice of K is
// staged in shared memory as words of 4 consecutive k (A's rows are read as
// they lie where K is a multiple of 4; B is gathered byte by byte), and each
// invocation multiplies a TM x TM block of words: with GPUU_DOT by OpSDot on
// the packed words (SPV_KHR_integer_dot_product), else by unpacked
// multiply-adds. The zero points leave the packed products through
//   sum (a - az)(b - bz) = sum ab - bz sum a - az sum b + K az bz,
// the row sums of A and column sums of B taken as the slices load. Outside
// K both operands are 0, so they add nothing to any sum; conv2d's padding is
// B = bz (a zero point is an i8, so it packs), whose term is 0 as in the
// direct kernel, where padding contributes nothing.
#ifdef GPUU_DOT
#extension GL_EXT_spirv_intrinsics : require
#endif
#include "common.glsl"

#ifndef GPUU_GEMM_TM
#define GPUU_GEMM_TM 4
#endif
#define TM uint(GPUU_GEMM_TM)
#define BM (16u * TM)  // output tile BM x BN: 64 x 64 (CPU devices) or 128 x 128
#define BN BM
#define BKW 8u  // K words per slice: 32 k
#define BMV (BM / 4u + 1u)  // tile rows in uvec4s of 4 rows, one of padding
#define BNV (BN / 4u + 1u)
#define CHUNKS (BM * BKW / GPUU_WG)  // words of A (and of B) each invocation loads per slice

layout(constant_id = 0) const int HAS_BIAS = 0;
// K is a multiple of 4: A's rows start on word boundaries and are read as words.
layout(constant_id = 1) const int A_WORDS = 0;
// conv2d_int: B is the im2col view materialized beforehand, as for
// int8_gemm_coopmat.comp (its CONV_IM2COL), read as the matmul form reads B.
layout(constant_id = 2) const int CONV_IM2COL = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { uint a_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { uint b_words[]; };
// conv2d_int's bias per output channel; bound to A otherwise (never read then).
layout(std430, set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { int y[]; };

layout(push_constant) uniform Params {
  uint M;  // conv: output channels per group
  uint N;  // conv: batch * OH * OW
  uint K;  // conv: C/groups * kH * kW
  uint tiles_n;
  uint tiles_m;
  uint tile_count;  // tiles_n * tiles_m * batches
  int a_zp, b_zp;   // conv: the weight's and the input's
#ifdef GPUU_CONV
  uint C, H, W, O, OH, OW;
  uint kh, kw, sh, sw, ph, pw, dh, dw;
  uint Cg;  // input channels per group
#endif
} p;

#ifdef GPUU_DOT
// OpSDot (4450) on two 4 x i8 packed words (PackedVectorFormat4x8Bit = 0),
// capabilities DotProduct (6019) and DotProductInput4x8BitPacked (6018).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int format);
int byte_sum(uint w) { return sdot_packed(w, 0x01010101u, 0); }
#else
ivec4 unpack(uint w) {
  int s = int(w);
  return ivec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), bitfieldExtract(s, 16, 8), bitfieldExtract(s, 24, 8));
}
int byte_sum(uint w) {
  ivec4 v = unpack(w);
  return v.x + v.y + v.z + v.w;
}
#endif

// k-major: As[buf][kw][m / 4][m % 4] holds A[m][4 kw .. 4 kw + 3].
shared uvec4 As[2][BKW][BMV];
shared uvec4 Bs[2][BKW][BNV];
// The zero points' sums: each chunk's share (indexed by chunk), then the
// tile's row sums of A and column sums of B.
shared int a_part[BM * BKW];
shared int b_part[BN * BKW];
shared int row_sum[BM];
shared int col_sum[BN];

uint g_batch, g_m0, g_n0, a_base;

// A chunk: one word of a row (neighbours along k). B chunk: one word of a
// column (neighbours along n: an output row's pixels in a convolution).
// Both stay the invocation's through every slice, so each keeps the sums of
// its rows and columns in registers.
uint chunk_m(uint c) { return c / BKW; }
uint chunk_a_kw(uint c) { return c % BKW; }
uint chunk_n(uint c) { return c % BN; }
uint chunk_b_kw(uint c) { return c / BN; }

uint ra[CHUNKS], rb[CHUNKS];  // the next slice, on its way to shared memory
int a_sums[CHUNKS], b_sums[CHUNKS];

// A[m][k .. k+3] as a word, 0 outside A.
uint fetch_a(uint m, uint k) {
  if (m >= p.M || k >= p.K) return 0u;
  uint i = a_base + m * p.K + k;
  if (A_WORDS != 0) return a_words[i >> 2u];
  uint w = 0u;
  for (uint j = 0u; j < 4u && k + j < p.K; ++j, ++i) w |= ((a_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu) << (8u * j);
  return w;
}

#ifdef GPUU_CONV
// The invocation's B columns, decoded once: input element (channel 0 of
// the group, row iy0, column ix0) of each column's window (CONV_IM2COL: the
// column itself), or ~0u past N.
uint b_img_base[CHUNKS];
int b_iy0[CHUNKS], b_ix0[CHUNKS];

void place_columns(uint t) {
  uint pixels = p.OH * p.OW;
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint n = g_n0 + chunk_n(t + i * GPUU_WG);
    uint img = n / pixels, pix = n % pixels;
    b_img_base[i] = n >= p.N ? ~0u : CONV_IM2COL != 0 ? n : (img * p.C + g_batch * p.Cg) * p.H * p.W;
    b_iy0[i] = int((pix / p.OW) * p.sh) - int(p.ph);
    b_ix0[i] = int((pix % p.OW) * p.sw) - int(p.pw);
  }
}

// The im2col view's B[k .. k+3][column i], packed; the input zero point
// where the window lies in the padding, 0 past K.
uint fetch_b(uint i, uint k) {
  if (b_img_base[i] == ~0u || k >= p.K) return 0u;
  if (CONV_IM2COL != 0) {  // b_img_base holds the column
    uint row_bytes = (p.N + 15u) / 16u * 16u;
    uint e = (g_batch * p.K + k) * row_bytes + b_img_base[i], w = 0u;
    for (uint j = 0u; j < 4u && k + j < p.K; ++j, e += row_bytes) w |= ((b_words[e >> 2u] >> ((e & 3u) * 8u)) & 0xFFu) << (8u * j);
    return w;
  }
  uint taps = p.kh * p.kw;
  uint c = k / taps, tap = k % taps;
  uint ky = tap / p.kw, kx = tap % p.kw;
  uint pad = uint(p.b_zp) & 0xFFu;
  uint w = 0u;
  for (uint j = 0u; j < 4u && k + j < p.K; ++j) {
    int iy = b_iy0[i] + int(ky * p.dh), ix = b_ix0[i] + int(kx * p.dw);
    uint v = pad;
    if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) {
      uint e = b_img_base[i] + (c * p.H + uint(iy)) * p.W + uint(ix);
      v = (b_words[e >> 2u] >> ((e & 3u) * 8u)) & 0xFFu;
    }
    w |= v << (8u * j);
    if (++kx == p.kw) {
      kx = 0u;
      if (++ky == p.kh) {
        ky = 0u;
        ++c;
      }
    }
  }
  return w;
}
#else
uint b_base;
uint b_col[CHUNKS];
void place_columns(uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) b_col[i] = g_n0 + chunk_n(t + i * GPUU_WG);
}
// B[k .. k+3][column i], packed; 0 outside B.
uint fetch_b(uint i, uint k) {
  uint n = b_col[i];
  if (n >= p.N || k >= p.K) return 0u;
  uint w = 0u;
  uint e = b_base + k * p.N + n;
  for (uint j = 0u; j < 4u && k + j < p.K; ++j, e += p.N) w |= ((b_words[e >> 2u] >> ((e & 3u) * 8u)) & 0xFFu) << (8u * j);
  return w;
}
#endif

void fetch(uint k0, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint c = t + i * GPUU_WG;
    ra[i] = fetch_a(g_m0 + chunk_m(c), k0 + 4u * chunk_a_kw(c));
    rb[i] = fetch_b(i, k0 + 4u * chunk_b_kw(c));
    a_sums[i] += byte_sum(ra[i]);
    b_sums[i] += byte_sum(rb[i]);
  }
}

void stage(uint buf, uint t) {
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    uint c = t + i * GPUU_WG;
    uint m = chunk_m(c), n = chunk_n(c);
    As[buf][chunk_a_kw(c)][m / 4u][m % 4u] = ra[i];
    Bs[buf][chunk_b_kw(c)][n / 4u][n % 4u] = rb[i];
  }
}

int acc[TM][TM];

// Which rows and columns of the tile an invocation owns, as in gemm.comp:
// rows 4 * (row0 + row_step * h) + 0..3, columns likewise, h < TM / 4.
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

void multiply(uint buf) {
  [[unroll]] for (uint kk = 0u; kk < BKW; ++kk) {
    uvec4 av[TM / 4u], bv[TM / 4u];
    [[unroll]] for (uint h = 0u; h < TM / 4u; ++h) {
      av[h] = As[buf][kk][row0 + row_step * h];
      bv[h] = Bs[buf][kk][col0 + col_step * h];
    }
#ifdef GPUU_DOT
    [[unroll]] for (uint i = 0u; i < TM; ++i) {
      [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] += sdot_packed(av[i / 4u][i % 4u], bv[j / 4u][j % 4u], 0);
    }
#else
    ivec4 ai[TM], bj[TM];
    [[unroll]] for (uint i = 0u; i < TM; ++i) {
      ai[i] = unpack(av[i / 4u][i % 4u]);
      bj[i] = unpack(bv[i / 4u][i % 4u]);
    }
    [[unroll]] for (uint i = 0u; i < TM; ++i) {
      [[unroll]] for (uint j = 0u; j < TM; ++j) {
        acc[i][j] += ai[i].x * bj[j].x + ai[i].y * bj[j].y + ai[i].z * bj[j].z + ai[i].w * bj[j].w;
      }
    }
#endif
  }
}

void main() {
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= p.tile_count) return;  // past the last tile: the whole workgroup leaves
  uint per_batch = p.tiles_n * p.tiles_m;
  g_batch = tile / per_batch;
  uint rest = tile - g_batch * per_batch;
  g_m0 = (rest / p.tiles_n) * BM;
  g_n0 = (rest % p.tiles_n) * BN;
  a_base = g_batch * p.M * p.K;  // matmul: the batch's A; conv: the group's weight rows
#ifndef GPUU_CONV
  b_base = g_batch * p.K * p.N;
#endif
  uint t = gl_LocalInvocationID.x;
  place(t);
  place_columns(t);
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    a_sums[i] = 0;
    b_sums[i] = 0;
  }
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] = 0;
  }

  const uint step = 4u * BKW;
  fetch(0u, t);
  stage(0u, t);
  barrier();
  uint buf = 0u;
  for (uint k0 = 0u; k0 < p.K; k0 += step) {
    bool more = k0 + step < p.K;
    if (more) fetch(k0 + step, t);  // global reads in flight during the multiply
    multiply(buf);
    if (more) {
      // The other buffer was last read before the previous barrier.
      stage(buf ^ 1u, t);
      barrier();
      buf ^= 1u;
    }
  }

  // The zero points' sums, added in a fixed order (so no atomics, whose
  // device scope a device without vulkanMemoryModelDeviceScope refuses).
  [[unroll]] for (uint i = 0u; i < CHUNKS; ++i) {
    a_part[t + i * GPUU_WG] = a_sums[i];
    b_part[t + i * GPUU_WG] = b_sums[i];
  }
  barrier();
  if (t < BM) {  // row t's chunks: t * BKW + kw
    int sum = 0;
    for (uint kw = 0u; kw < BKW; ++kw) sum += a_part[t * BKW + kw];
    row_sum[t] = sum;
  }
  if (t < BN) {  // column t's chunks: kw * BN + t
    int sum = 0;
    for (uint kw = 0u; kw < BKW; ++kw) sum += b_part[kw * BN + t];
    col_sum[t] = sum;
  }
  barrier();

  const int zz = int(p.K) * p.a_zp * p.b_zp;
#ifdef GPUU_CONV
  const uint pixels = p.OH * p.OW;
#endif
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    uint ml = 4u * (row0 + row_step * (i / 4u)) + i % 4u;
    uint m = g_m0 + ml;
    if (m >= p.M) continue;
    int row_term = zz - p.b_zp * row_sum[ml];
#ifdef GPUU_CONV
    uint oc = g_batch * p.M + m;
    if (HAS_BIAS != 0) row_term += bias[oc];
#endif
    [[unroll]] for (uint j = 0u; j < TM; ++j) {
      uint nl = 4u * (col0 + col_step * (j / 4u)) + j % 4u;
      uint n = g_n0 + nl;
      if (n >= p.N) continue;
      int v = acc[i][j] - p.a_zp * col_sum[nl] + row_term;
#ifdef GPUU_CONV
      y[nchw_index(n, oc, pixels, p.O)] = v;
#else
      y[(g_batch * p.M + m) * p.N + n] = v;
#endif
    }
  }
}
