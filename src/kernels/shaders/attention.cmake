# Attention: scaled_dot_product_attention as one flash-attention-style kernel.
# attention.comp on the shader cores, _f32 and _f16 (GPUU_F16: 16-bit storage;
# the math stays f32); attention_coopmat.comp on matrix cores (f16), and the
# same with its matrix products emulated, for tests on devices without them.
# The kernel selector (attention_select.cpp) picks.
gpuu_float_shader(attention_@T@ attention.comp)
gpuu_coopmat_shader(attention_coopmat_f16 attention_coopmat.comp)
gpuu_shader(attention_coopmat_emulated_f16 attention_coopmat.comp GPUU_MMA_EMULATED)
