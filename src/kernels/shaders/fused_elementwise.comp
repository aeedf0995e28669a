#version 450
// A chain of elementwise ops in one dispatch. The chain is baked in as
// specialization constants (one instruction word each: op | a << 8 |
// b << 16 | c << 24, c for where's third operand; operands naming registers: 0..3 the inputs, 4..7 the immediates (scalar
// constants of the chain, compiled in rather than bound: hardswish's 3 and 6
// would otherwise take two of the four bindings), 8 + k the result of
// instruction k), so the driver unrolls it into straight-line code: each
// element is read once, computed in registers, and written once.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "op_math.glsl"  // generated from op_codes.txt: fused_apply, the fusable ops
#include "int_convert.glsl"
#include "int_load.glsl"

#define MAX_INPUTS LIMIT_FUSED_MAX_INPUTS
#if LIMIT_FUSED_MAX_INSTRUCTIONS != 40
#error "the lists below (C0..C39, STEP 0..39) are written for 40 instructions"
#endif
#define MAX_INSTRUCTIONS LIMIT_FUSED_MAX_INSTRUCTIONS
#define MAX_IMMEDIATES LIMIT_FUSED_MAX_IMMEDIATES
#if MAX_IMMEDIATES != 4
#error "the immediates below (IMM0..IMM3) are written for 4"
#endif
#define RESULTS (MAX_INPUTS + MAX_IMMEDIATES)  // the register of instruction 0's result

layout(constant_id = 0) const int N_INPUTS = 1;
layout(constant_id = 1) const int N_INSTRUCTIONS = 1;
layout(constant_id = 2) const int C0 = 0;
layout(constant_id = 3) const int C1 = 0;
layout(constant_id = 4) const int C2 = 0;
layout(constant_id = 5) const int C3 = 0;
layout(constant_id = 6) const int C4 = 0;
layout(constant_id = 7) const int C5 = 0;
layout(constant_id = 8) const int C6 = 0;
layout(constant_id = 9) const int C7 = 0;
layout(constant_id = 10) const int C8 = 0;
layout(constant_id = 11) const int C9 = 0;
layout(constant_id = 12) const int C10 = 0;
layout(constant_id = 13) const int C11 = 0;
layout(constant_id = 14) const int C12 = 0;
layout(constant_id = 15) const int C13 = 0;
layout(constant_id = 16) const int C14 = 0;
layout(constant_id = 17) const int C15 = 0;
layout(constant_id = 18) const int C16 = 0;
layout(constant_id = 19) const int C17 = 0;
layout(constant_id = 20) const int C18 = 0;
layout(constant_id = 21) const int C19 = 0;
layout(constant_id = 22) const int C20 = 0;
layout(constant_id = 23) const int C21 = 0;
layout(constant_id = 24) const int C22 = 0;
layout(constant_id = 25) const int C23 = 0;
layout(constant_id = 26) const int C24 = 0;
layout(constant_id = 27) const int C25 = 0;
layout(constant_id = 28) const int C26 = 0;
layout(constant_id = 29) const int C27 = 0;
layout(constant_id = 30) const int C28 = 0;
layout(constant_id = 31) const int C29 = 0;
layout(constant_id = 32) const int C30 = 0;
layout(constant_id = 33) const int C31 = 0;
layout(constant_id = 34) const int C32 = 0;
layout(constant_id = 35) const int C33 = 0;
layout(constant_id = 36) const int C34 = 0;
layout(constant_id = 37) const int C35 = 0;
layout(constant_id = 38) const int C36 = 0;
layout(constant_id = 39) const int C37 = 0;
layout(constant_id = 40) const int C38 = 0;
layout(constant_id = 41) const int C39 = 0;
// Bit k set: input k has the output's shape, so element i is at index i.
layout(constant_id = 42) const int CONTIGUOUS = 0;
layout(constant_id = 43) const float IMM0 = 0.0;
layout(constant_id = 44) const float IMM1 = 0.0;
layout(constant_id = 45) const float IMM2 = 0.0;
layout(constant_id = 46) const float IMM3 = 0.0;

#ifdef GPUU_F16
layout(std430, set = 0, binding = 0) readonly buffer In0 { T in0[]; };
layout(std430, set = 0, binding = 1) readonly buffer In1 { T in1[]; };
layout(std430, set = 0, binding = 2) readonly buffer In2 { T in2[]; };
layout(std430, set = 0, binding = 3) readonly buffer In3 { T in3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { T y[]; };
#else
// An f32 chain binds 32-bit words, which also hold its integer edges.
layout(std430, set = 0, binding = 0) readonly buffer In0 { uint in0[]; };
layout(std430, set = 0, binding = 1) readonly buffer In1 { uint in1[]; };
layout(std430, set = 0, binding = 2) readonly buffer In2 { uint in2[]; };
layout(std430, set = 0, binding = 3) readonly buffer In3 { uint in3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { uint y[]; };
#endif

// Where an input read through a view (a slice) starts in its bound range, in
// elements: the part of the view's offset below the device's binding
// alignment (the binding starts at the rest). Constants, not push constants:
// the push constants fill the 128 bytes every device has.
layout(constant_id = 47) const uint OFFSET0 = 0u;
layout(constant_id = 48) const uint OFFSET1 = 0u;
layout(constant_id = 49) const uint OFFSET2 = 0u;
layout(constant_id = 50) const uint OFFSET3 = 0u;

// A concat of two parts of equal shape along merged dim CONCAT_DIM (-1: no
// concat), each part an elementwise chain or an input: the inputs are read
// at the element's coordinates within its part (CONCAT_PART long along that
// dim), both parts' chains run, and the element takes register CONCAT_A's
// result in the first part, CONCAT_B's in the second. RoPE's rotate-half
// form is one dispatch so, instead of a chain per half and a concat.
layout(constant_id = 51) const int CONCAT_DIM = -1;
layout(constant_id = 52) const uint CONCAT_PART = 1u;
layout(constant_id = 53) const int CONCAT_A = 0;
layout(constant_id = 54) const int CONCAT_B = 0;

// Integer edges, f32 chains only: bits 4k..4k+3 of INT_INPUTS are input k's
// element bytes where it is an i8 or i16 tensor that a cast in the chain
// reads (0: f32), and OUT_BYTES the output's where the chain ends in a cast
// to i8 or i16 (0: f32). A quantized model's dequantize (cast, sub, mul) and
// quantize (mul, round, add, clamp, cast) are then one dispatch each. An
// integer output is stored a word at a time: an invocation's elements are
// then neighbours, not a slice apart.
layout(constant_id = 55) const int INT_INPUTS = 0;
layout(constant_id = 56) const int OUT_BYTES = 0;

// Input strides over the output shape (0 on broadcast axes), four inputs.
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[MAX_RANK];
  uint strides[MAX_INPUTS * MAX_RANK];
} p;

// Element i's coordinates over the output shape, once for all the inputs
// that need them: integer division is a long dependent chain on GPUs, and a
// small chain (a decode step's RoPE over 12 x 32 elements) is nothing but
// that latency. The lowering drops unit dims and merges dims every input
// walks in order, so the rank here is the fewest that describes the reads.
void coordinates(uint i, out uint c[MAX_RANK]) {
  [[unroll]] for (int d = MAX_RANK - 1; d >= 0; --d) {
    c[d] = 0u;
    if (d < int(p.rank)) {
      if (d == 0) {
        c[d] = i;  // the outermost dim takes what is left: no division
      } else {
        c[d] = i % p.shape[d];
        i /= p.shape[d];
      }
    }
  }
}

uint input_offset(uint i, const uint c[MAX_RANK], int which) {
  if ((CONTIGUOUS & (1 << which)) != 0) return i;
  uint off = which == 0 ? OFFSET0 : which == 1 ? OFFSET1 : which == 2 ? OFFSET2 : OFFSET3;
  [[unroll]] for (int d = 0; d < MAX_RANK; ++d) {
    if (d < int(p.rank)) off += c[d] * p.strides[which * MAX_RANK + d];
  }
  return off;
}

// The chain, walked by a loop the driver unrolls once N_INSTRUCTIONS is
// known: after unrolling, each instruction's op and operand registers are
// constants, so its switch folds away and the register file stays in
// registers. The file is sized by the chain's own length: one sized for the
// longest chain was left in local memory by the H100 driver, at half the
// bandwidth. A loop, not 40 unrolled slots: the shader then holds one copy
// of fused_apply, not 160 (4 elements x 40 slots), which made 690 KB of
// SPIR-V and took lavapipe 0.3 s per pipeline (now 21 KB, 16 ms).
int code_at(int k) {
  const int codes[MAX_INSTRUCTIONS] = int[](
      C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13, C14, C15, C16, C17, C18, C19,
      C20, C21, C22, C23, C24, C25, C26, C27, C28, C29, C30, C31, C32, C33, C34, C35, C36, C37, C38, C39);
  return codes[k];
}
#define RUN(R)                                                                                      \
  [[unroll]] for (int step = 0; step < N_INSTRUCTIONS; ++step) {                                     \
    const int code = code_at(step);                                                                  \
    R[RESULTS + step] =                                                                              \
        fused_apply(code & 0xff, R[(code >> 8) & 0xff], R[(code >> 16) & 0xff], R[(code >> 24) & 0xff]); \
  }

#ifdef GPUU_F16
#define LOAD_AS(words, which, at) float(words[at])
#else
int input_bytes(int which) { return (INT_INPUTS >> (4 * which)) & 0xf; }
#define LOAD_AS(words, which, at)                                        \
  (input_bytes(which) == 1   ? float(LOAD_I8(words, at))                 \
   : input_bytes(which) == 2 ? float(LOAD_I16(words, at))                \
                             : uintBitsToFloat(words[at]))
#endif

float load(uint i, const uint c[MAX_RANK], int which) {
  switch (which) {
    case 0: return LOAD_AS(in0, 0, input_offset(i, c, 0));
    case 1: return LOAD_AS(in1, 1, input_offset(i, c, 1));
    case 2: return LOAD_AS(in2, 2, input_offset(i, c, 2));
    default: return LOAD_AS(in3, 3, input_offset(i, c, 3));
  }
}

// Output element i's value as the chain's last op (a cast to i8/i16 where
// OUT_BYTES says so: truncated and saturated, as cast_convert does) stores it.
void store(uint i, float result) {
#ifdef GPUU_F16
  y[i] = T(result);
#else
  if (OUT_BYTES == 0) y[i] = floatBitsToUint(result);
#endif
}

#ifndef GPUU_F16
// An integer output's words from an invocation's LIMIT_FUSED_PER_THREAD
// neighbouring results, the first at element `first`; bits past the end are 0.
void store_words(uint first, const float results[LIMIT_FUSED_PER_THREAD]) {
  const uint per_word = 4u / uint(OUT_BYTES), bits = 8u * uint(OUT_BYTES);
  const int hi = OUT_BYTES == 1 ? 127 : 32767;
  [[unroll]] for (uint w = 0u; w < uint(LIMIT_FUSED_PER_THREAD) / per_word; ++w) {
    uint word = 0u;
    [[unroll]] for (uint k = 0u; k < per_word; ++k) {
      uint e = w * per_word + k;
      if (first + e < p.count) {
        word |= bitfieldExtract(uint(float_to_int_saturated(results[e], -hi - 1, hi)), 0, int(bits)) << (bits * k);
      }
    }
    if (first + w * per_word < p.count) y[(first >> (OUT_BYTES == 1 ? 2u : 1u)) + w] = word;
  }
}
#endif

// Whether some input is read at other than the output's index.
const bool STRIDED = CONCAT_DIM >= 0 || (CONTIGUOUS & ((1 << N_INPUTS) - 1)) != ((1 << N_INPUTS) - 1);

// Each invocation takes LIMIT_FUSED_PER_THREAD elements a slice of the tensor
// apart: all their loads are issued before any arithmetic, so a memory-bound
// chain keeps enough bytes in flight to reach the bus's bandwidth, while
// neighbouring invocations still read neighbouring words.
void main() {
  const uint slice = (p.count + LIMIT_FUSED_PER_THREAD - 1) / LIMIT_FUSED_PER_THREAD;
  uint t = linear_id();
  if (t >= slice) return;
  // Element k of this invocation: a slice apart, or neighbours for words.
  const uint first = OUT_BYTES == 0 ? t : t * uint(LIMIT_FUSED_PER_THREAD);
  const uint step = OUT_BYTES == 0 ? slice : 1u;
  float r[LIMIT_FUSED_PER_THREAD][RESULTS + N_INSTRUCTIONS];
  bool second[LIMIT_FUSED_PER_THREAD];  // in the concat's second part
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    uint i = min(first + uint(k) * step, p.count - 1);  // past the end: a harmless re-read
    uint c[MAX_RANK];
    if (STRIDED) {
      coordinates(i, c);
    } else {
      [[unroll]] for (int d = 0; d < MAX_RANK; ++d) c[d] = 0u;
    }
    second[k] = false;
    if (CONCAT_DIM >= 0) {
      [[unroll]] for (int d = 0; d < MAX_RANK; ++d) {
        if (d == CONCAT_DIM && c[d] >= CONCAT_PART) {
          second[k] = true;
          c[d] -= CONCAT_PART;
        }
      }
    }
    [[unroll]] for (int j = 0; j < MAX_INPUTS; ++j) r[k][j] = j < N_INPUTS ? load(i, c, j) : 0.0;
    r[k][MAX_INPUTS] = IMM0;
    r[k][MAX_INPUTS + 1] = IMM1;
    r[k][MAX_INPUTS + 2] = IMM2;
    r[k][MAX_INPUTS + 3] = IMM3;
  }
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    RUN(r[k])
  }
  float results[LIMIT_FUSED_PER_THREAD];
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    results[k] = CONCAT_DIM < 0 ? r[k][RESULTS + N_INSTRUCTIONS - 1]
                                : second[k] ? r[k][CONCAT_B] : r[k][CONCAT_A];
  }
#ifndef GPUU_F16
  if (OUT_BYTES != 0) {
    store_words(first, results);
    return;
  }
#endif
  [[unroll]] for (int k = 0; k < LIMIT_FUSED_PER_THREAD; ++k) {
    uint i = first + uint(k) * step;
    if (i < p.count) store(i, results[k]);
  }
}
