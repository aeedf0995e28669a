// TOSA graphs <-> SPIR-V graph modules (SPV_ARM_graph, SPV_ARM_tensors,
// OpExtInst of "TOSA.001000.1"): the module a VGF GRAPH segment carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "vgf/tosa_graph.h"

namespace gpuu::vgf {

// A complete SPIR-V 1.6 module for `graph` (validated first; kInvalidArgument
// names what is wrong). Deterministic: ids are numbered in order of first
// appearance, as spirv-as numbers them, and the layout is the one of
// spirv-tosa-graph.md §7, so y = sin(x)·x reproduces sin_mul.spv word for word.
// Layout: capabilities (Shader, VulkanMemoryModel, Int8/Int16/Int64/Float16 as
// used, TensorsARM, GraphARM), extensions, the TOSA import, Logical Vulkan,
// OpName of named interface variables and constants, DescriptorSet/Binding,
// scalar types (f32, f16, u32, u8, u16, u64, bool), scalar constants by type
// then value, shape arrays, shape constants and tensor types in first-use
// order, pointers, variables (inputs, outputs), attribute tensors, graph
// constants, the graph type, then the graph.
Result<std::vector<uint32_t>> emit_tosa_module(const TosaGraph& graph);

// Reads a module back: everything emit_tosa_module writes, plus what Arm's
// tools put in such modules (OpConstantNull and OpConstantCompositeReplicateEXT
// attributes, NonWritable/NonReadable, debug instructions, signed ints, the
// GLSL450 memory model). Every id, opcode, operand count and type is checked
// against the grammar and validate_tosa_graph(); errors are kInvalidFormat
// ("word 57 (OpExtInst): ...") or kUnsupported for valid SPIR-V gpuu does not
// take (several graphs, unshaped tensors, bf16/fp8). Never reads past `count`.
// Constants: OpGraphConstantARM -> kGraphConstant without data (attach it
// with set_graph_constant_data); a tensor constant instruction used as an
// operator's tensor operand or as a graph output (or used by nothing) -> kInline.
Result<TosaGraph> parse_tosa_module(const uint32_t* words, size_t count);

}  // namespace gpuu::vgf
