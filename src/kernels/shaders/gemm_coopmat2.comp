#version 450
// f16 GEMM on workgroup-scope cooperative matrices with tensor addressing
// (VK_NV_cooperative_matrix2): a workgroup's TILE_M x TILE_N output is one
// f32 accumulator; each BK-deep slice of A and B is loaded straight from
// memory into workgroup matrices through tensor layouts, which the driver
// stages through shared memory and pipelines itself (Vulkan has no
// asynchronous copies for gemm_coopmat.comp to do that by hand). Reads past
// the operands' ends are zeros (clamped layouts) and stores past the
// output's are dropped, so ragged edges need no checks. The bias and the
// epilogue's chain run element by element on the accumulator in registers;
// under SPLIT_K the f32 partial is stored as it is. Matmul and linear only,
// with A's and B's rows whole 8-half chunks and the result row-major (the
// selector checks: GemmProblem::tensor_addressable). Compiled by Arm's glslc
// (the system glslang predates GL_NV_cooperative_matrix2; src/kernels/CMakeLists.txt).
#extension GL_EXT_control_flow_attributes : require
#define GPUU_F16
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"
#include "gemm_common.glsl"

// The tile the selector dispatched for (constants 8 and 9, as
// gemm_coopmat.comp's); the matrices' sizes must be compile-time constants
// here (GPUU_COOP2_TM: 128 or 256 rows, 128 columns, 32-deep slices).
layout(constant_id = 8) const uint TILE_M = 128;
layout(constant_id = 9) const uint TILE_N = 128;
#ifndef GPUU_COOP2_TM
#define GPUU_COOP2_TM 128
#endif
const uint BM = GPUU_COOP2_TM, BN = 128, BK = 32;

#define ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

// Result (row, col) of the tile through the bias and chain (coopMatPerElementNV).
float finish(const in uint32_t row, const in uint32_t col, const in float v) {
  const uint m = g_m0 + row, n = g_n0 + col;
  return finish_y(v, m, n, y_index(m, n));
}

void main() {
  if (!gemm_tile(TILE_M, TILE_N)) return;
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  la = setTensorLayoutDimensionNV(la, p.M, g_k_end);
  la = setTensorLayoutStrideNV(la, p.K, 1);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
  if (B_K_CONTIGUOUS != 0) {  // [N, K], row n at b_stride_n
    lb = setTensorLayoutDimensionNV(lb, p.N, g_k_end);
    lb = setTensorLayoutStrideNV(lb, p.b_stride_n, 1);
  } else {  // [K, N], row k at b_stride_k
    lb = setTensorLayoutDimensionNV(lb, g_k_end, p.N);
    lb = setTensorLayoutStrideNV(lb, p.b_stride_k, 1);
  }
  ACC acc = ACC(0.0);
  for (uint k0 = g_k0; k0 < g_k_end; k0 += BK) {
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;
    coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;
    coopMatLoadTensorNV(fa, a, a_base, sliceTensorLayoutNV(la, g_m0, BM, k0, BK));
    if (B_K_CONTIGUOUS != 0) {
      coopMatLoadTensorNV(fb, b, b_base, sliceTensorLayoutNV(lb, g_n0, BN, k0, BK), transposed);
    } else {
      coopMatLoadTensorNV(fb, b, b_base, sliceTensorLayoutNV(lb, k0, BK, g_n0, BN));
    }
    acc = coopMatMulAdd(fa, fb, acc);
  }
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> ly =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  ly = setTensorLayoutDimensionNV(ly, p.M, p.N);
  // The selector splits this kernel's tiles all or none (whole_tiles 0), so
  // a share's partials start at its batch's row 0.
  if (SPLIT_K != 0) {
    coopMatStoreTensorNV(acc, partial, partial_index(0u, 0u), sliceTensorLayoutNV(ly, g_m0, BM, g_n0, BN));
    return;
  }
  if (HAS_BIAS != 0 || EPI_N != 0) coopMatPerElementNV(acc, acc, finish);
  coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> out16 =
      coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
  coopMatStoreTensorNV(out16, y, y_index(0u, 0u), sliceTensorLayoutNV(ly, g_m0, BM, g_n0, BN));
}
