// Core SPIR-V numbers the TOSA graph emitter and parser use (SPIR-V 1.6
// unified grammar; the same values spirv-tosa-graph.md §8 lists). The
// SPV_ARM_* numbers come from the generated tosa_grammar.h.
#pragma once

#include <cstdint>

namespace gpuu::vgf::spv {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kVersion16 = 0x00010600;
constexpr uint32_t kHeaderWords = 5;

// Opcodes.
constexpr uint16_t kOpNop = 0;
constexpr uint16_t kOpSource = 3;
constexpr uint16_t kOpSourceExtension = 4;
constexpr uint16_t kOpName = 5;
constexpr uint16_t kOpMemberName = 6;
constexpr uint16_t kOpString = 7;
constexpr uint16_t kOpLine = 8;
constexpr uint16_t kOpExtension = 10;
constexpr uint16_t kOpExtInstImport = 11;
constexpr uint16_t kOpExtInst = 12;
constexpr uint16_t kOpMemoryModel = 14;
constexpr uint16_t kOpCapability = 17;
constexpr uint16_t kOpTypeBool = 20;
constexpr uint16_t kOpTypeInt = 21;
constexpr uint16_t kOpTypeFloat = 22;
constexpr uint16_t kOpTypeArray = 28;
constexpr uint16_t kOpTypeStruct = 30;
constexpr uint16_t kOpTypePointer = 32;
constexpr uint16_t kOpConstantTrue = 41;
constexpr uint16_t kOpConstantFalse = 42;
constexpr uint16_t kOpConstant = 43;
constexpr uint16_t kOpConstantComposite = 44;
constexpr uint16_t kOpConstantNull = 46;
constexpr uint16_t kOpVariable = 59;
constexpr uint16_t kOpDecorate = 71;
constexpr uint16_t kOpCompositeExtract = 81;
constexpr uint16_t kOpNoLine = 317;
constexpr uint16_t kOpModuleProcessed = 330;
constexpr uint16_t kOpConstantCompositeReplicateEXT = 4461;

// Capabilities (TensorsARM / GraphARM: tosa_grammar.h).
constexpr uint32_t kCapabilityShader = 1;
constexpr uint32_t kCapabilityFloat16 = 9;
constexpr uint32_t kCapabilityInt64 = 11;
constexpr uint32_t kCapabilityInt16 = 22;
constexpr uint32_t kCapabilityInt8 = 39;
constexpr uint32_t kCapabilityVulkanMemoryModel = 5345;
constexpr uint32_t kCapabilityReplicatedCompositesEXT = 6024;

constexpr uint32_t kAddressingLogical = 0;
constexpr uint32_t kMemoryModelGlsl450 = 1;
constexpr uint32_t kMemoryModelVulkan = 3;
constexpr uint32_t kStorageClassUniformConstant = 0;

constexpr uint32_t kDecorationNonWritable = 24;
constexpr uint32_t kDecorationNonReadable = 25;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;

}  // namespace gpuu::vgf::spv
