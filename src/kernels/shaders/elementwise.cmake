# Elementwise shader variants (gpuu_shader(<name> <file> [defines])). Float
# kernels come as _f32 and _f16 (GPUU_F16: 16-bit storage and math).
gpuu_float_shader(unary_@T@ unary.comp)
gpuu_float_shader(binary_@T@ binary.comp)
gpuu_float_shader(compare_@T@ binary.comp GPUU_COMPARE)
gpuu_float_shader(fused_elementwise_@T@ fused_elementwise.comp)
# Integer kernels: _i32 and _i64 (GPUU_I64: 64-bit shader integers). The
# bool-valued logic kernel reads any dtype as words: one variant.
foreach(t i32 i64)
  if(t STREQUAL i64)
    set(def GPUU_I64)
  else()
    set(def "")
  endif()
  gpuu_shader(int_unary_${t} int_unary.comp ${def})
  gpuu_shader(int_binary_${t} int_binary.comp ${def})
  gpuu_shader(int_compare_${t} int_binary.comp GPUU_COMPARE ${def})
endforeach()
gpuu_shader(logic logic.comp)
