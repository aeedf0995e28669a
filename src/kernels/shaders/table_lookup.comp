#version 450
// table: y = table[x + 128] for i8 x and a 256-entry i8 table.
#include "common.glsl"

const int OUT_BYTES = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { uint x_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Table { uint table_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Params { uint count; } p;

#define COUNT p.count
#include "int_io.glsl"

int compute(uint i) { return LOAD_I8(table_words, uint(LOAD_I8(x_words, i) + 128)); }
