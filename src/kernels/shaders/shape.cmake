# Data-movement kernels: dtype-generic (the element size is a specialization
# constant; elements move as 32-bit words), so one variant each.
gpuu_shader(strided_copy strided_copy.comp)
gpuu_shader(pad_constant pad_constant.comp)
gpuu_shader(concat_inputs concat_inputs.comp)
gpuu_shader(where_select where_select.comp)
gpuu_shader(cast_convert cast_convert.comp)
