// Shared by every gpuu compute shader: the element type T (f32, or f16 where
// the device stores and computes 16-bit floats) and a linear invocation id
// (and workgroup id) that spans 2-D dispatches, so tensors past 65535
// workgroups still fit.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#ifdef GPUU_F16
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#else
#define T float
#endif

#include "op_codes.glsl"  // generated from op_codes.txt

#ifndef GPUU_WG  // a kernel that owns its tile layout may set its own
#define GPUU_WG LIMIT_WORKGROUP_SIZE
#endif
layout(local_size_x = GPUU_WG, local_size_y = 1, local_size_z = 1) in;

uint linear_id() {
  return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * GPUU_WG;
}

// Linear workgroup id over a 2-D dispatch (see linear_id()).
uint linear_group_id() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

// Where a convolution's GEMM result lies in its NCHW output: column n (image
// x pixels + pixel) of output channel `channel`, `channels` channels of
// `pixels` pixels an image.
uint nchw_index(uint n, uint channel, uint pixels, uint channels) {
  uint img = n / pixels;
  return (img * channels + channel) * pixels + (n - img * pixels);
}

#ifdef GPUU_F16
// Eight values as halves in one 16-byte word: the chunk f16 kernels stage
// and store 8 halves at a time.
uvec4 pack8(float v0, float v1, float v2, float v3, float v4, float v5, float v6, float v7) {
  return uvec4(packFloat2x16(f16vec2(v0, v1)), packFloat2x16(f16vec2(v2, v3)), packFloat2x16(f16vec2(v4, v5)),
               packFloat2x16(f16vec2(v6, v7)));
}
#endif

#define MAX_RANK LIMIT_MAX_RANK
