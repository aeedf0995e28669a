# Index kernels: one shader for gather and index_select; the element size and
# the index dtype are specialization constants, so it serves every dtype.
gpuu_shader(index_gather index_gather.comp)
# scatter and index_put: forms that write (reduce "none"), by element size
# (4 and 8 bytes as words, 2 and 1 through 16- and 8-bit storage), and one
# per computing dtype that reduces.
gpuu_shader(scatter_copy scatter.comp)
gpuu_shader(scatter_copy_16 scatter.comp GPUU_STORE16)
gpuu_shader(scatter_copy_8 scatter.comp GPUU_STORE8)
gpuu_shader(scatter_reduce_f32 scatter.comp GPUU_REDUCE)
gpuu_shader(scatter_reduce_f16 scatter.comp GPUU_REDUCE GPUU_F16)
gpuu_shader(scatter_reduce_i32 scatter.comp GPUU_REDUCE GPUU_INT)
gpuu_shader(scatter_reduce_i64 scatter.comp GPUU_REDUCE GPUU_INT GPUU_I64)
