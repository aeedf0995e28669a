# Linear-algebra shader variants: the GEMMs behind matmul and linear. gemm.comp
# on the shader cores with a 64x64 tile (CPU devices) and a 128x128 one
# (GPUs); gemm_coopmat.comp on matrix cores (f16). The kernel selector
# (families/gemm_select.cpp) picks.
foreach(t f32 f16)
  if(t STREQUAL f16)
    set(def GPUU_F16)
  else()
    set(def "")
  endif()
  gpuu_shader(gemm_${t} gemm.comp ${def})
  gpuu_shader(gemm_${t}_t8 gemm.comp GPUU_GEMM_TM=8 ${def})
endforeach()
gpuu_shader(gemm_f32_t8_k16 gemm.comp GPUU_GEMM_TM=8 GPUU_GEMM_BK=16)
gpuu_shader(gemm_f32_t8_k16s gemm.comp GPUU_GEMM_TM=8 GPUU_GEMM_BK=16 GPUU_GEMM_STAGES=1)
gpuu_coopmat_shader(gemm_coopmat_f16 gemm_coopmat.comp)
gpuu_coopmat_shader(gemm_coopmat_s1_f16 gemm_coopmat.comp GPUU_COOP_STAGES=1)
gpuu_coopmat_shader(gemm_coopmat_s1k64_f16 gemm_coopmat.comp GPUU_COOP_STAGES=1 GPUU_COOP_BK=64)
gpuu_coopmat_shader(gemm_coopmat_k16_f16 gemm_coopmat.comp GPUU_COOP_BK=16)
gpuu_shader(gemm_f32_t8w gemm.comp GPUU_GEMM_TM=8 GPUU_GEMM_WARP_TILED)
