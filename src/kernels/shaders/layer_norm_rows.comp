#version 450
// layer_norm over the trailing `size` elements of each row: mean, then the
// biased variance of the deviations (two passes, no E[x^2] - E[x]^2
// cancellation), then (x - mean) / sqrt(var + eps) * weight + bias, in f32.
// RMS: x / sqrt(mean(x^2) + eps) * weight, the mean taken as 0 (RMSNorm, as
// Llama writes it: the kernel graph finds the pattern, kernels/row_norm.h).
// ROW_WIDTH invocations per row: 1 (short rows), 32 (a line of a workgroup:
// rows of tens to hundreds, as convnext's 96-channel rows, which one
// invocation each walked serially and uncoalesced at 1/10 of the bandwidth),
// or the whole workgroup (long rows). Each invocation's elements stay in
// registers between the passes where they are at most MAX_PER (PER), and a
// line's sums are subgroup sums where a line is a subgroup (SUBGROUP_LINES):
// x read once, no barriers (GPT-2's 2048 x 768 norms took 15 us in three
// passes through memory and workgroup-wide tree sums; PyTorch's take 6).
//
// A layer norm's chains (f32 only; fusion.h's LoweringUnit::norm_chains):
// an elementwise chain of x's one tensor and scalar constants, applied as x
// is loaded, and one of y's, applied as y is stored: a quantized model's
// dequantize before the norm and quantize after it, with the integers
// loaded and stored as fused_elementwise.comp does (X_BYTES, Y_BYTES: 1 or 2
// for i8/i16, 0 for f32). Registers: 0 the value, 1..4 the immediates, 5 + k
// instruction k's result.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "op_math.glsl"  // fused_apply
#include "int_convert.glsl"
#include "int_load.glsl"

layout(constant_id = 0) const uint ROW_WIDTH = GPUU_WG;
layout(constant_id = 1) const bool HAS_WEIGHT = false;
layout(constant_id = 2) const bool HAS_BIAS = false;
layout(constant_id = 3) const bool RMS = false;
layout(constant_id = 4) const int X_BYTES = 0;
layout(constant_id = 5) const int Y_BYTES = 0;
layout(constant_id = 6) const int N_BEFORE = 0;  // instructions applied to x (at most 8)
layout(constant_id = 7) const int N_AFTER = 0;   // ... to y (at most 8)
layout(constant_id = 8) const int B0 = 0;
layout(constant_id = 9) const int B1 = 0;
layout(constant_id = 10) const int B2 = 0;
layout(constant_id = 11) const int B3 = 0;
layout(constant_id = 12) const int B4 = 0;
layout(constant_id = 13) const int B5 = 0;
layout(constant_id = 14) const int B6 = 0;
layout(constant_id = 15) const int B7 = 0;
layout(constant_id = 16) const int A0 = 0;
layout(constant_id = 17) const int A1 = 0;
layout(constant_id = 18) const int A2 = 0;
layout(constant_id = 19) const int A3 = 0;
layout(constant_id = 20) const int A4 = 0;
layout(constant_id = 21) const int A5 = 0;
layout(constant_id = 22) const int A6 = 0;
layout(constant_id = 23) const int A7 = 0;
layout(constant_id = 24) const float IMM0 = 0.0;
layout(constant_id = 25) const float IMM1 = 0.0;
layout(constant_id = 26) const float IMM2 = 0.0;
layout(constant_id = 27) const float IMM3 = 0.0;
layout(constant_id = 28) const uint PER = 0u;  // elements per invocation held in registers (0: re-read)
layout(constant_id = 29) const bool SUBGROUP_LINES = false;  // ROW_WIDTH is the subgroup size: subgroupAdd
// Rows read and written four elements at a time (8- or 16-byte loads and
// stores, a quarter of the instructions) where the host found them
// contiguous and aligned, the row a multiple of 4 x ROW_WIDTH (> 1), PER <=
// MAX_PER, no chains. H100, GPT-2's 2048 x 768 f16 norms with weight and
// bias: 14.0 -> 6.4 us each in the batch-4 profile (2026-12-06).
layout(constant_id = 30) const bool VEC4 = false;
#define MAX_PER 32u

#ifdef GPUU_F16
layout(std430, set = 0, binding = 0) readonly buffer In { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { T w[]; };  // bound to x when absent
layout(std430, set = 0, binding = 2) readonly buffer Bias { T b[]; };    // bound to x when absent
layout(std430, set = 0, binding = 3) writeonly buffer Out { T y[]; };
#define X_AT(i) float(x[i])
#define W_AT(i) float(w[i])
#define B_AT(i) float(b[i])
#else
// f32 binds 32-bit words, which also hold the chains' integer edges.
layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { uint w[]; };  // bound to x when absent
layout(std430, set = 0, binding = 2) readonly buffer Bias { uint b[]; };    // bound to x when absent
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint y[]; };
#define X_AT(i) (X_BYTES == 1 ? float(LOAD_I8(x, i)) : X_BYTES == 2 ? float(LOAD_I16(x, i)) : uintBitsToFloat(x[i]))
#define W_AT(i) uintBitsToFloat(w[i])
#define B_AT(i) uintBitsToFloat(b[i])
#endif
layout(push_constant) uniform Params {
  uint rows;
  uint size;
  float eps;
  uint w_offset, w_stride;  // weight element j at w_offset + j * w_stride (0: one weight for all)
  // x's element j of row r at x_offset + (r / inner_rows) * outer_stride +
  // (r % inner_rows) * inner_stride + j * element_stride (row_norm.h's
  // Layout: a permuted value read in place); y is row-major.
  uint x_offset, inner_rows, outer_stride, inner_stride, element_stride;
} p;

shared float sums[GPUU_WG];

// The chain `codes` (n instructions) applied to v, walked by a loop the
// driver unrolls: as fused_elementwise.comp's, its switch folds away.
float run_chain(float v, const int codes[8], int n) {
  float r[5 + 8];
  r[0] = v;
  r[1] = IMM0;
  r[2] = IMM1;
  r[3] = IMM2;
  r[4] = IMM3;
  [[unroll]] for (int k = 0; k < n; ++k) {
    const int code = codes[k];
    r[5 + k] = fused_apply(code & 0xff, r[(code >> 8) & 0xff], r[(code >> 16) & 0xff], r[(code >> 24) & 0xff]);
  }
  return n == 0 ? v : r[5 + n - 1];
}

float load_x(uint i) {
  const int before[8] = int[](B0, B1, B2, B3, B4, B5, B6, B7);
  return run_chain(X_AT(i), before, N_BEFORE);
}

float finish(float v) {
  const int after[8] = int[](A0, A1, A2, A3, A4, A5, A6, A7);
  return run_chain(v, after, N_AFTER);
}

// The sum of `v` over the ROW_WIDTH invocations of this row (every invocation
// of the workgroup calls it: uniform control flow).
float row_sum(float v, uint t, uint lane) {
  if (ROW_WIDTH == 1u) return v;
  if (SUBGROUP_LINES) return subgroupAdd(v);
  sums[t] = v;
  barrier();
  for (uint s = ROW_WIDTH / 2u; s > 0u; s >>= 1u) {
    if (lane < s) sums[t] += sums[t + s];
    barrier();
  }
  float r = sums[t - lane];
  barrier();  // read before the next call writes
  return r;
}

// The same bindings four elements a word (VEC4): four halves in a uvec2,
// four floats in a uvec4.
#ifdef GPUU_F16
#define QUAD uvec2
vec4 unpack_quad(uvec2 r) { return vec4(unpackHalf2x16(r.x), unpackHalf2x16(r.y)); }
uvec2 pack_quad(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }
#else
#define QUAD uvec4
vec4 unpack_quad(uvec4 r) { return uintBitsToFloat(r); }
uvec4 pack_quad(vec4 v) { return floatBitsToUint(v); }
#endif
layout(std430, set = 0, binding = 0) readonly buffer In4 { QUAD x4[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight4 { QUAD w4[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias4 { QUAD bias4[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out4 { QUAD y4[]; };

// A row of `n` elements at x element `xbase`, y element `base`, as VEC4 says:
// invocation `lane` of its row's ROW_WIDTH holds quads lane, lane +
// ROW_WIDTH, ... Every invocation of the workgroup calls it (row_sum's
// barriers); one past the last row (`live` false) reads and writes nothing.
void norm_quads(uint xbase, uint base, uint t, uint lane, bool live, float n) {
  const uint quads = live ? PER / 4u : 0u;
  vec4 v[MAX_PER / 4u];
  vec4 sum = vec4(0.0);
  [[unroll]] for (uint i = 0u; i < MAX_PER / 4u; ++i) {
    v[i] = i < quads ? unpack_quad(x4[xbase / 4u + lane + i * ROW_WIDTH]) : vec4(0.0);
    sum += v[i];
  }
  const float mean = RMS ? 0.0 : row_sum(sum.x + sum.y + sum.z + sum.w, t, lane) / n;
  vec4 var = vec4(0.0);
  [[unroll]] for (uint i = 0u; i < MAX_PER / 4u; ++i) {
    const vec4 d = v[i] - mean;
    if (i < quads) var += d * d;
  }
  const float rstd = 1.0 / sqrt(row_sum(var.x + var.y + var.z + var.w, t, lane) / n + p.eps);
  [[unroll]] for (uint i = 0u; i < MAX_PER / 4u; ++i) {
    if (i >= quads) break;
    const uint q = lane + i * ROW_WIDTH;
    vec4 r = (v[i] - mean) * rstd;
    if (HAS_WEIGHT) r *= unpack_quad(w4[p.w_offset / 4u + q]);
    if (HAS_BIAS) r += unpack_quad(bias4[q]);
    y4[base / 4u + q] = pack_quad(r);
  }
}

// Element j of the row at `base` of y, from its normalized value r.
// `precise` here and in the sums: no multiply-add is contracted, so a norm
// whose chains quantize its result rounds as the norm and the quantize run
// apart do (the driver contracted differently in the two shaders: one int16
// step apart on the H100).
void store_y(uint base, uint j, float normalized) {
  precise float r = normalized;
  if (HAS_WEIGHT) r *= W_AT(p.w_offset + j * p.w_stride);
  if (HAS_BIAS) r += B_AT(j);
#ifdef GPUU_F16
  y[base + j] = T(finish(r));
#else
  y[base + j] = floatBitsToUint(finish(r));
#endif
}

void main() {
  uint t = gl_LocalInvocationID.x, lane = t % ROW_WIDTH;
  uint row = (linear_group_id() * GPUU_WG + t) / ROW_WIDTH;
  if (ROW_WIDTH == 1u && row >= p.rows) return;
  // Invocations past the last row still join the sums' barriers, reading nothing.
  bool live = row < p.rows;
  uint base = row * p.size, first = live ? lane : p.size, step = ROW_WIDTH;
  uint xbase = p.x_offset + (row / p.inner_rows) * p.outer_stride + (row % p.inner_rows) * p.inner_stride;
  uint xs = p.element_stride;
  float n = float(p.size);
  if (VEC4) {
    norm_quads(xbase, base, t, lane, live, n);
    return;
  }
  float xv[MAX_PER];
  [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
    const uint j = first + i * step;
    xv[i] = i < PER && j < p.size ? load_x(xbase + j * xs) : 0.0;
  }
  precise float mean = 0.0;
  if (!RMS) {
    precise float s = 0.0;
    if (PER != 0u) {
      [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) s += xv[i];
    } else {
      for (uint j = first; j < p.size; j += step) s += load_x(xbase + j * xs);
    }
    mean = row_sum(s, t, lane) / n;
  }
  precise float v = 0.0;
  if (PER != 0u) {
    [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
      precise const float d = xv[i] - mean;
      if (i < PER && first + i * step < p.size) v += d * d;
    }
  } else {
    for (uint j = first; j < p.size; j += step) {
      precise float d = load_x(xbase + j * xs) - mean;
      v += d * d;
    }
  }
  precise float rstd = 1.0 / sqrt(row_sum(v, t, lane) / n + p.eps);
#ifndef GPUU_F16
  if (Y_BYTES != 0) {
    // An integer y a word at a time (the planner keeps rows whole words):
    // each invocation the 4 / Y_BYTES elements of its words.
    const uint per = 4u / uint(Y_BYTES), bits = 8u * uint(Y_BYTES);
    const int hi = Y_BYTES == 1 ? 127 : 32767;
    if (!live) return;
    for (uint j0 = first * per; j0 < p.size; j0 += step * per) {
      uint word = 0u;
      for (uint k = 0u; k < per; ++k) {
        uint j = j0 + k;
        precise float r = (load_x(xbase + j * xs) - mean) * rstd;
        if (HAS_WEIGHT) r *= W_AT(p.w_offset + j * p.w_stride);
        if (HAS_BIAS) r += B_AT(j);
        word |= bitfieldExtract(uint(float_to_int_saturated(finish(r), -hi - 1, hi)), 0, int(bits)) << (bits * k);
      }
      y[(base + j0) / per] = word;
    }
    return;
  }
#endif
  if (PER != 0u) {
    [[unroll]] for (uint i = 0u; i < MAX_PER; ++i) {
      const uint j = first + i * step;
      precise const float r = (xv[i] - mean) * rstd;
      if (i < PER && j < p.size) store_y(base, j, r);
    }
  } else {
    for (uint j = first; j < p.size; j += step) {
      precise const float r = (load_x(xbase + j * xs) - mean) * rstd;
      store_y(base, j, r);
    }
  }
}
