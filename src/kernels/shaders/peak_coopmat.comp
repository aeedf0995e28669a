#version 450
// Calibration (device_peaks.cpp): f16 matrix throughput on cooperative
// matrices (f16 A and B, f32 accumulators, as gemm_coopmat.comp). Each
// subgroup loads one A and one B fragment and runs CHAINS independent
// multiply-add chains on them, all in registers; the stores at the end keep
// the work. FLOPs per subgroup: iterations * CHAINS * 2 * CM_M * CM_N * CM_K.
// Written, like gemm_coopmat.comp, against GL_NV_cooperative_matrix and
// rewritten into the KHR encoding at build time: CM_M, CM_N and CM_K are
// specialization constants 5, 6 and 7, the shape the GEMM selector picks.
#define GPUU_F16
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"

layout(constant_id = 5) const uint CM_M = 16;
layout(constant_id = 6) const uint CM_N = 16;
layout(constant_id = 7) const uint CM_K = 16;

// A (CM_M x CM_K) then B (CM_K x CM_N), row-major, in 8-half chunks.
layout(std430, set = 0, binding = 0) readonly buffer In8 { uvec4 in8[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Params { uint iterations; } p;

const uint CHAINS = LIMIT_PEAK_COOPMAT_CHAINS;

void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, CM_M, CM_K> a;
  fcoopmatNV<16, gl_ScopeSubgroup, CM_K, CM_N> b;
  coopMatLoadNV(a, in8, 0u, CM_K / 8u, false);
  coopMatLoadNV(b, in8, CM_M * CM_K / 8u, CM_N / 8u, false);
  fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N> acc[CHAINS];
  [[unroll]] for (uint c = 0u; c < CHAINS; ++c) acc[c] = fcoopmatNV<32, gl_ScopeSubgroup, CM_M, CM_N>(0.0);
  for (uint i = 0u; i < p.iterations; ++i) {
    [[unroll]] for (uint c = 0u; c < CHAINS; ++c) acc[c] = coopMatMulAddNV(a, b, acc[c]);
  }
  uint subgroup = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  [[unroll]] for (uint c = 0u; c < CHAINS; ++c) {
    coopMatStoreNV(acc[c], y, (subgroup * CHAINS + c) * CM_M * CM_N, CM_N, false);
  }
}
