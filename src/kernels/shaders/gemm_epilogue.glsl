// An elementwise chain applied to a GEMM's result as it is stored: the kernel
// graph folds the ops that alone read a GEMM's (matmul, linear, conv2d)
// output into its dispatch (fusion.cpp), so that output never goes through
// memory. Encoded as in fused_elementwise.comp: instruction k is
// op | a << 8 | b << 16 | c << 24 over registers 0 = the GEMM's result (bias added),
// 1..3 = the extra inputs, 4..7 = the immediates (the chain's scalar
// constants, compiled in), 8 + k = instruction k's result; the last one is
// stored. Each extra input is read (EPI_MODES, 2 bits each) at the output
// element, at its row (conv2d: the output channel), at its column, or once.
// A chain that transposes the GEMM's last axis to axis 1 (ConvNeXt's
// [B, H, W, C] -> [B, C, H, W]) is stored channels-first: EPI_PLANE is the
// pixels per image (0: row-major), and inputs read at the output element are
// read in that layout. The including shader defines EPI_ID, its first free
// constant id (16 are used), and EPI_BINDING, its first free binding.
#include "op_math.glsl"  // fused_apply

#define EPI_MAX 8
#define EPI_FULL 0u
#define EPI_ROW 1u
#define EPI_COLUMN 2u
#define EPI_SCALAR 3u

layout(constant_id = EPI_ID) const int EPI_N = 0;       // instructions; 0: no epilogue
layout(constant_id = EPI_ID + 1) const int EPI_INPUTS = 0;
layout(constant_id = EPI_ID + 2) const int EPI_MODES = 0;
layout(constant_id = EPI_ID + 3) const int EPI_C0 = 0;
layout(constant_id = EPI_ID + 4) const int EPI_C1 = 0;
layout(constant_id = EPI_ID + 5) const int EPI_C2 = 0;
layout(constant_id = EPI_ID + 6) const int EPI_C3 = 0;
layout(constant_id = EPI_ID + 7) const int EPI_C4 = 0;
layout(constant_id = EPI_ID + 8) const int EPI_C5 = 0;
layout(constant_id = EPI_ID + 9) const int EPI_C6 = 0;
layout(constant_id = EPI_ID + 10) const int EPI_C7 = 0;
layout(constant_id = EPI_ID + 11) const float EPI_IMM0 = 0.0;
layout(constant_id = EPI_ID + 12) const float EPI_IMM1 = 0.0;
layout(constant_id = EPI_ID + 13) const float EPI_IMM2 = 0.0;
layout(constant_id = EPI_ID + 14) const float EPI_IMM3 = 0.0;
layout(constant_id = EPI_ID + 15) const int EPI_PLANE = 0;
#define EPI_RESULTS 8  // the register of instruction 0's result

// Bound to some read-only tensor where the epilogue has fewer inputs (never read then).
layout(std430, set = 0, binding = EPI_BINDING) readonly buffer Epi1 { T epi1[]; };
layout(std430, set = 0, binding = EPI_BINDING + 1) readonly buffer Epi2 { T epi2[]; };
layout(std430, set = 0, binding = EPI_BINDING + 2) readonly buffer Epi3 { T epi3[]; };

// Where the result at GEMM row `row` (counting every batch's rows) and
// column `n` of `N` is stored: row-major, or channels-first.
uint epi_store_index(uint row, uint n, uint N) {
  if (EPI_PLANE == 0) return row * N + n;
  uint image = row / uint(EPI_PLANE);
  return (image * N + n) * uint(EPI_PLANE) + (row - image * uint(EPI_PLANE));
}

uint epi_index(int which, uint index, uint row, uint column) {
  uint mode = (uint(EPI_MODES) >> (2u * uint(which - 1))) & 3u;
  return mode == EPI_FULL ? index : mode == EPI_ROW ? row : mode == EPI_COLUMN ? column : 0u;
}

float epi_load(int which, uint index, uint row, uint column) {
  if (which > EPI_INPUTS) return 0.0;
  uint i = epi_index(which, index, row, column);
  return which == 1 ? float(epi1[i]) : which == 2 ? float(epi2[i]) : float(epi3[i]);
}

// Specialised away: the ops and registers are constants.
#define EPI_STEP(R, k, CODE)                                                                                \
  if (k < EPI_N) {                                                                                          \
    R[EPI_RESULTS + k] = fused_apply((CODE) & 0xff, R[((CODE) >> 8) & 0xff], R[((CODE) >> 16) & 0xff],      \
                                     R[((CODE) >> 24) & 0xff]);                                           \
  }

// `v` through the chain, for the output element `index` at (`row`, `column`).
float epilogue(float v, uint index, uint row, uint column) {
  if (EPI_N == 0) return v;
  float r[EPI_RESULTS + EPI_MAX];  // indexed by constants only: registers
  r[0] = v;
  r[1] = epi_load(1, index, row, column);
  r[2] = epi_load(2, index, row, column);
  r[3] = epi_load(3, index, row, column);
  r[4] = EPI_IMM0;
  r[5] = EPI_IMM1;
  r[6] = EPI_IMM2;
  r[7] = EPI_IMM3;
  EPI_STEP(r, 0, EPI_C0) EPI_STEP(r, 1, EPI_C1) EPI_STEP(r, 2, EPI_C2) EPI_STEP(r, 3, EPI_C3)
  EPI_STEP(r, 4, EPI_C4) EPI_STEP(r, 5, EPI_C5) EPI_STEP(r, 6, EPI_C6) EPI_STEP(r, 7, EPI_C7)
  return r[EPI_RESULTS + EPI_N - 1];
}
