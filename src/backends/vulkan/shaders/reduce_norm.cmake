# Reduction and normalization shaders, as _f32 and _f16 (GPUU_F16: 16-bit
# storage; math stays f32). The f16 reduction has two more variants for its
# two-pass form: f16 in -> f32 partials, and f32 partials -> f16 out.
foreach(t f32 f16)
  if(t STREQUAL f16)
    set(def GPUU_F16)
  else()
    set(def "")
  endif()
  gpuu_shader(reduce_axes_${t} reduce_axes.comp ${def})
  gpuu_shader(softmax_axis_${t} softmax_axis.comp ${def})
  gpuu_shader(layer_norm_rows_${t} layer_norm_rows.comp ${def})
endforeach()
gpuu_shader(reduce_axes_f16_to_f32 reduce_axes.comp GPUU_F16 GPUU_OUT_F32)
gpuu_shader(reduce_axes_f32_to_f16 reduce_axes.comp GPUU_F16 GPUU_IN_F32)
