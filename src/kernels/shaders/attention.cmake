# Attention: scaled_dot_product_attention as one flash-attention-style kernel,
# _f32 and _f16 (GPUU_F16: 16-bit storage; the math stays f32).
gpuu_float_shader(attention_@T@ attention.comp)
# Its second pass where it splits the keys (flash-decoding): the splits weighed into the output.
gpuu_float_shader(attention_combine_@T@ attention_combine.comp)
# f16 on matrix cores (head dims up to 64, one pass): the selector's pick for prefills where the device has them.
gpuu_coopmat_shader(attention_coopmat_f16 attention_coopmat.comp)
