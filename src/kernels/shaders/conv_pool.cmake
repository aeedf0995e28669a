# Convolution and pooling shader variants: conv2d as a tiled implicit GEMM
# (gemm.comp or gemm_coopmat.comp with GPUU_CONV; gemv.comp on at most 4
# output pixels) or direct (conv2d_depthwise.comp where a group has one input
# channel), and the 2-D pools; im2col.comp materializes the im2col view for
# the GEMM where gathering it in the tiles would bound it.
gpuu_float_shader(conv2d_gemm_@T@ gemm.comp GPUU_CONV)
gpuu_float_shader(conv2d_gemm_@T@_t8 gemm.comp GPUU_CONV GPUU_GEMM_TM=8)
gpuu_float_shader(conv2d_gemv_@T@ gemv.comp GPUU_CONV)
gpuu_float_shader(conv2d_direct_@T@ conv2d_direct.comp)
gpuu_float_shader(conv2d_depthwise_@T@ conv2d_depthwise.comp)
gpuu_float_shader(im2col_@T@ im2col.comp)
gpuu_float_shader(pool2d_@T@ pool2d.comp)
gpuu_coopmat_shader(conv2d_gemm_coopmat_f16 gemm_coopmat.comp GPUU_CONV GPUU_COOP_BK=64)
gpuu_coopmat_shader(conv2d_gemm_coopmat_tall_f16 gemm_coopmat.comp GPUU_CONV GPUU_COOP_BK=32)
# The small tile in two groups of 4 subgroups on alternate slices: twice the gathers in flight where a
# multiprocessor holds one tile (H100: resnet50's late 3x3 and 1x1 layers at batch 1 0.6-0.8x the time of one
# group; the same for linears was 1.1-1.5x, so they keep one).
gpuu_coopmat_shader(conv2d_gemm_coopmat_small_f16 gemm_coopmat.comp GPUU_CONV GPUU_COOP_BK=64 GPUU_WG=256
                    GPUU_COOP_KGROUPS=2)
