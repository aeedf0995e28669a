# Elementwise shader variants (gpuu_shader(<name> <file> [defines])). Float
# kernels come as _f32 and _f16 (GPUU_F16: 16-bit storage and math).
foreach(t f32 f16)
  if(t STREQUAL f16)
    set(def GPUU_F16)
  else()
    set(def "")
  endif()
  gpuu_shader(unary_${t} unary.comp ${def})
  gpuu_shader(binary_${t} binary.comp ${def})
  gpuu_shader(compare_${t} binary.comp GPUU_COMPARE ${def})
endforeach()
