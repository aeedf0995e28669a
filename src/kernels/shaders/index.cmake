# Index kernels: one shader for gather and index_select; the element size and
# the index dtype are specialization constants, so it serves every dtype.
gpuu_shader(index_gather index_gather.comp)
