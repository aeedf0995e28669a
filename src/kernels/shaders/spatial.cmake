# conv3d, conv_transpose2d, the 3-D pools, resize and grid_sample: direct
# kernels, one output element per invocation.
gpuu_float_shader(conv3d_direct_@T@ conv3d_direct.comp)
gpuu_float_shader(conv_transpose2d_@T@ conv_transpose2d.comp)
gpuu_float_shader(pool3d_@T@ pool3d.comp)
gpuu_float_shader(resize_@T@ resize.comp)
gpuu_float_shader(grid_sample_@T@ grid_sample.comp)
