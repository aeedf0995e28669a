# Convolution and pooling shader variants: conv2d as a tiled implicit GEMM
# (gemm.comp or gemm_coopmat.comp with GPUU_CONV) or direct, and the 2-D pools.
foreach(t f32 f16)
  if(t STREQUAL f16)
    set(def GPUU_F16)
  else()
    set(def "")
  endif()
  gpuu_shader(conv2d_gemm_${t} gemm.comp GPUU_CONV ${def})
  gpuu_shader(conv2d_gemm_${t}_t8 gemm.comp GPUU_CONV GPUU_GEMM_TM=8 ${def})
  gpuu_shader(conv2d_direct_${t} conv2d_direct.comp ${def})
  gpuu_shader(pool2d_${t} pool2d.comp ${def})
endforeach()
gpuu_coopmat_shader(conv2d_gemm_coopmat_f16 gemm_coopmat.comp GPUU_CONV)
