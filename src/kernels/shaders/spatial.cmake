# conv3d, conv_transpose2d, the 3-D pools and resize: direct kernels, one
# output element per invocation.
foreach(t f32 f16)
  if(t STREQUAL f16)
    set(def GPUU_F16)
  else()
    set(def "")
  endif()
  gpuu_shader(conv3d_direct_${t} conv3d_direct.comp ${def})
  gpuu_shader(conv_transpose2d_${t} conv_transpose2d.comp ${def})
  gpuu_shader(pool3d_${t} pool3d.comp ${def})
  gpuu_shader(resize_${t} resize.comp ${def})
endforeach()
