# Linear-algebra shader variants: the tiled GEMM behind matmul and linear.
gpuu_shader(gemm_f32 gemm.comp)
gpuu_shader(gemm_f16 gemm.comp GPUU_F16)
