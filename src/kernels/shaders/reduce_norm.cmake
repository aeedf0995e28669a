# Reduction and normalization shaders, as _f32 and _f16 (GPUU_F16: 16-bit
# storage; math stays f32). The f16 reduction has two more variants for its
# two-pass form: f16 in -> f32 partials, and f32 partials -> f16 out.
gpuu_float_shader(reduce_axes_@T@ reduce_axes.comp)
gpuu_float_shader(softmax_axis_@T@ softmax_axis.comp)
gpuu_float_shader(layer_norm_rows_@T@ layer_norm_rows.comp)
gpuu_shader(reduce_axes_f16_to_f32 reduce_axes.comp GPUU_F16 GPUU_OUT_F32)
gpuu_shader(reduce_axes_f32_to_f16 reduce_axes.comp GPUU_F16 GPUU_IN_F32)
# Integer and bool reductions (_i32 also serves bool any/all), argmax/argmin
# (one variant: values read as words), cumsum for every dtype it takes.
gpuu_shader(reduce_int_i32 reduce_int.comp)
gpuu_shader(reduce_int_i64 reduce_int.comp GPUU_I64)
gpuu_shader(arg_reduce arg_reduce.comp)
gpuu_shader(cumsum_axis_f32 cumsum_axis.comp)
gpuu_shader(cumsum_axis_f16 cumsum_axis.comp GPUU_F16)
gpuu_shader(cumsum_axis_i32 cumsum_axis.comp GPUU_INT)
gpuu_shader(cumsum_axis_i64 cumsum_axis.comp GPUU_INT GPUU_I64)
# topk (and sort) along one axis, for every dtype it takes.
gpuu_shader(topk_axis_f32 topk_axis.comp)
gpuu_shader(topk_axis_f16 topk_axis.comp GPUU_F16)
gpuu_shader(topk_axis_i32 topk_axis.comp GPUU_INT)
gpuu_shader(topk_axis_i64 topk_axis.comp GPUU_INT GPUU_I64)
