# Integer (TOSA INT profile) kernels over i8/i32 words: rescale and the
# average pool need 64-bit shader integers (shaderInt64).
gpuu_shader(rescale rescale.comp)
gpuu_shader(conv2d_int conv2d_int.comp)
gpuu_shader(matmul_int matmul_int.comp)
gpuu_shader(pool2d_int pool2d_int.comp)
gpuu_shader(pool2d_int_max pool2d_int.comp GPUU_MAX_ONLY)
gpuu_shader(table_lookup table_lookup.comp)
gpuu_shader(int_shift int_shift.comp)
