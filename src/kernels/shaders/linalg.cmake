# Linear-algebra shader variants: the GEMMs behind matmul and linear. gemm.comp
# on the shader cores with a 64x64 tile (CPU devices) and a 128x128 one
# (GPUs); gemm_coopmat.comp on matrix cores (f16); gemv.comp for GEMMs of at
# most 4 rows or columns. The kernel selector (gemm_select.cpp) picks.
gpuu_float_shader(gemm_@T@ gemm.comp)
gpuu_float_shader(gemm_@T@_t8 gemm.comp GPUU_GEMM_TM=8)
gpuu_coopmat_shader(gemm_coopmat_f16 gemm_coopmat.comp GPUU_COOP_BK=64)
gpuu_coopmat_shader(gemm_coopmat_tall_f16 gemm_coopmat.comp GPUU_COOP_BK=32)
# 64x64 tiles on 4 subgroups (2 x 2 of 32 x 32), for GEMMs of too few 128x128 tiles to fill the GPU.
gpuu_coopmat_shader(gemm_coopmat_small_f16 gemm_coopmat.comp GPUU_COOP_BK=64 GPUU_WG=128 GPUU_COOP_WM=32)
gpuu_float_shader(gemv_@T@ gemv.comp)
# Split-K's reduction of the partials (matmul, linear and conv2d).
gpuu_float_shader(gemm_split_reduce_@T@ gemm_split_reduce.comp)
# ... with the layer norm of each row after it (fusion.h's norm_after units).
gpuu_float_shader(gemm_split_reduce_norm_@T@ gemm_split_reduce_norm.comp)
# linear_dequant: the same kernels reading 8- or 4-bit weights (GPUU_QW).
foreach(bits 8 4)
  gpuu_float_shader(gemm_qw${bits}_@T@ gemm.comp GPUU_QW=${bits})
  gpuu_float_shader(gemm_qw${bits}_@T@_t8 gemm.comp GPUU_QW=${bits} GPUU_GEMM_TM=8)
  gpuu_float_shader(gemv_qw${bits}_@T@ gemv.comp GPUU_QW=${bits})
endforeach()
# Workgroup-scope matrices with tensor addressing (VK_NV_cooperative_matrix2; built where Arm's glslc is found).
gpuu_coopmat2_shader(gemm_coopmat2_f16 gemm_coopmat2.comp)
gpuu_coopmat2_shader(gemm_coopmat2_tall_f16 gemm_coopmat2.comp GPUU_COOP2_TM=256)
