# Integer (TOSA INT profile) kernels over i8/i32 words: rescale and the
# average pool need 64-bit shader integers (shaderInt64).
gpuu_shader(rescale rescale.comp)
# ... applied as an a16w8 convolution's two int8 GEMMs' sums are joined (int16_join.glsl).
gpuu_shader(rescale_join rescale.comp GPUU_JOIN)
gpuu_shader(conv2d_int conv2d_int.comp)
gpuu_shader(conv2d_int16 conv2d_int16.comp)
# a16w8 convolutions on the int8 GEMMs: the i16 input split into two i8
# halves, and the two GEMMs' sums joined into the i64 output.
gpuu_shader(int16_split int16_parts.comp GPUU_SPLIT)
gpuu_shader(int16_join int16_parts.comp)
gpuu_shader(matmul_int matmul_int.comp)
# conv2d_int's im2col view of i8 bytes, materialized before an int8 GEMM that
# reads it in runs (int8_gemm_coopmat.comp's CONV_IM2COL).
gpuu_shader(im2col_i8 im2col.comp GPUU_I8)
# The tiled int8 GEMMs (int8_gemm.comp) behind conv2d_int and matmul_int:
# packed dot products (OpSDot, where the device has shaderIntegerDotProduct)
# or multiply-adds; 64x64 tiles (CPU devices) or 128x128 (_t8, GPUs).
foreach(op matmul_int conv2d_int)
  set(_gpuu_form "")
  if(op STREQUAL conv2d_int)
    set(_gpuu_form GPUU_CONV)
  endif()
  gpuu_shader(${op}_tiled int8_gemm.comp ${_gpuu_form})
  gpuu_shader(${op}_tiled_dot int8_gemm.comp ${_gpuu_form} GPUU_DOT)
  gpuu_shader(${op}_tiled_t8 int8_gemm.comp ${_gpuu_form} GPUU_GEMM_TM=8)
  gpuu_shader(${op}_tiled_dot_t8 int8_gemm.comp ${_gpuu_form} GPUU_DOT GPUU_GEMM_TM=8)
endforeach()
gpuu_shader(pool2d_int pool2d_int.comp)
gpuu_shader(pool2d_int_max pool2d_int.comp GPUU_MAX_ONLY)
gpuu_shader(table_lookup table_lookup.comp)
gpuu_shader(int_shift int_shift.comp)
# The int8 GEMMs on matrix cores (int8_gemm_coopmat.comp): 128x128 tiles on 8
# subgroups, 64x64 on 4 (_small), and the split-K reduction; each storing i32
# sums or requantizing in the store (_rq: the rescale that alone reads the
# sums, i8 out). The reduction also adds a residual block's int8 add after the
# rescale (_rqres; in the GEMM's store it slowed the whole GEMM).
foreach(store "" _rq)
  set(_gpuu_store "")
  if(store STREQUAL _rq)
    set(_gpuu_store GPUU_RESCALE)
  endif()
  foreach(op matmul_int conv2d_int)
    set(_gpuu_form "")
    if(op STREQUAL conv2d_int)
      set(_gpuu_form GPUU_CONV)
    endif()
    gpuu_coopmat_shader(${op}_coopmat${store} int8_gemm_coopmat.comp ${_gpuu_form} ${_gpuu_store})
    gpuu_coopmat_shader(${op}_coopmat_small${store} int8_gemm_coopmat.comp ${_gpuu_form} GPUU_WG=128 ${_gpuu_store})
  endforeach()
  gpuu_shader(int8_gemm_split_reduce${store} int8_gemm_split_reduce.comp ${_gpuu_store})
endforeach()
gpuu_shader(int8_gemm_split_reduce_rqres int8_gemm_split_reduce.comp GPUU_RESCALE GPUU_RESIDUAL)
