// The VGF file (Arm ML SDK for Vulkan container) as plain C++ values, with a
// verifying decoder (formats 0.0-0.5.x), a byte-exact 0.4.3 encoder and vgf_dump's JSON view.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/blob.h"
#include "base/status.h"

namespace gpuu::vgf {

inline constexpr size_t kHeaderSize = 128;
// VGF's "no descriptor type" (CONSTANT resources) and the Vulkan values VGF uses most.
inline constexpr uint32_t kNoDescriptorType = 0xFFFFFFFFu;
inline constexpr uint32_t kVkDescriptorTypeStorageBuffer = 7;
inline constexpr uint32_t kVkDescriptorTypeTensorArm = 1000460000u;
// Schema defaults meaning "not set" (never written by the encoder).
inline constexpr uint32_t kNoAliasGroup = 0xFFFFFFFFu;
inline constexpr uint32_t kUnsetSetIndex = 0xFFFFFFFFu;

// Enum values are the on-disk values (vgf-format.md §3.1).
enum class ModuleType : uint8_t { kCompute = 0, kGraph = 1 };
enum class CodeType : uint8_t { kNone = 0, kSpirv = 1, kGlsl = 2, kHlsl = 3 };
enum class ResourceCategory : uint8_t { kInput = 0, kOutput = 1, kIntermediate = 2, kConstant = 3 };

const char* to_string(ModuleType type);             // "COMPUTE", "GRAPH"
const char* to_string(ResourceCategory category);   // "INPUT", ..., "CONSTANT"
const char* to_string(CodeType code_type);          // "NONE", "SPIR-V", "GLSL", "HLSL"

struct FormatVersion {
  uint8_t major = 0;
  uint8_t minor = 4;
  uint8_t patch = 3;
  bool operator==(const FormatVersion& o) const {
    return major == o.major && minor == o.minor && patch == o.patch;
  }
  bool operator!=(const FormatVersion& o) const { return !(*this == o); }
};

struct Header {
  // True when the file starts with the pre-FourCC magic C3 D2 E1 F0 instead of "VGF1".
  bool legacy_magic = false;
  // VK_HEADER_VERSION of the producer's Vulkan headers; 0 = none (model-converter).
  uint16_t vk_header_version = 0;
  // The version read from a file; encode_vgf always writes 0.4.3 whatever this says.
  FormatVersion version;
};

// A shader or graph. `code_type` is kept even when the code itself is absent
// (a placeholder supplied at load time).
struct Module {
  ModuleType type = ModuleType::kCompute;
  std::string name;         // unique debugging name, e.g. "graph_partition_0"
  std::string entry_point;  // OpEntryPoint / OpGraphEntryPointARM name, e.g. "main"
  CodeType code_type = CodeType::kSpirv;
  bool has_code = false;
  std::vector<uint32_t> spirv;  // code_type kSpirv and has_code: the SPIR-V words
  std::string source;           // code_type kGlsl/kHlsl and has_code: the source text

  static Module with_spirv(ModuleType type, std::string name, std::string entry_point,
                           std::vector<uint32_t> words);
};

// Sampler state for image resources (format 0.4.2+).
struct SamplerConfig {
  uint32_t min_filter = 0;  // VkFilter
  uint32_t mag_filter = 0;
  uint32_t address_mode_u = 0;  // VkSamplerAddressMode
  uint32_t address_mode_v = 0;
  uint32_t border_color = 0;  // VkBorderColor
  bool operator==(const SamplerConfig& o) const {
    return min_filter == o.min_filter && mag_filter == o.mag_filter && address_mode_u == o.address_mode_u &&
           address_mode_v == o.address_mode_v && border_color == o.border_color;
  }
  bool operator!=(const SamplerConfig& o) const { return !(*this == o); }
};

// One model resource table (MRT) entry: a tensor, buffer or image living outside a segment.
struct Resource {
  ResourceCategory category = ResourceCategory::kInput;
  uint32_t vk_descriptor_type = kVkDescriptorTypeTensorArm;  // kNoDescriptorType for constants
  uint32_t vk_format = 0;                                    // raw VkFormat
  std::vector<int64_t> shape;                                // outermost first; -1 = dynamic
  std::vector<int64_t> strides;                              // empty = packed
  std::optional<SamplerConfig> sampler;
  uint32_t alias_group_id = kNoAliasGroup;  // entries sharing an id share storage
};

// Binds MRT entry `mrt_index` at Vulkan binding number `binding`.
struct BindingSlot {
  uint32_t binding = 0;
  uint32_t mrt_index = 0;
  bool operator==(const BindingSlot& o) const { return binding == o.binding && mrt_index == o.mrt_index; }
  bool operator!=(const BindingSlot& o) const { return !(*this == o); }
};

struct DescriptorSetInfo {
  std::vector<BindingSlot> bindings;
  uint32_t set_index = kUnsetSetIndex;  // unset: the set number is the position in the segment
  // The descriptor set number of this set when it is the `position`-th of its segment.
  uint32_t set_number(size_t position) const {
    return set_index != kUnsetSetIndex ? set_index : static_cast<uint32_t>(position);
  }
};

// Graph constant `graph_constant_id` (OpGraphConstantARM) takes constant record
// `constant_table_index` (format 0.5.0).
struct GraphConstantBinding {
  uint32_t graph_constant_id = 0;
  uint32_t constant_table_index = 0;
  bool operator==(const GraphConstantBinding& o) const {
    return graph_constant_id == o.graph_constant_id && constant_table_index == o.constant_table_index;
  }
};

struct PushConstantRange {
  uint32_t stage_flags = 0;  // VkShaderStageFlags
  uint32_t offset = 0;       // bytes, multiple of 4
  uint32_t size = 0;         // bytes, multiple of 4, > 0
};

// One step of the model: runs module `module_index` (its type is repeated in `type`).
struct Segment {
  ModuleType type = ModuleType::kCompute;
  std::string name;  // "graph_segment_0", "compute_segment_1", ...
  uint32_t module_index = 0;
  std::vector<DescriptorSetInfo> descriptor_sets;
  std::vector<BindingSlot> inputs;   // interface order
  std::vector<BindingSlot> outputs;  // interface order
  std::vector<uint32_t> constants;   // constant indices (= graph constant ids in 0.4.x)
  // Workgroup counts for compute segments; [0,0,0] for graphs. A file without
  // the field reads as [0,0,0]; the encoder always writes three values, as Arm's does.
  std::array<uint32_t, 3> dispatch_shape{0, 0, 0};
  std::vector<PushConstantRange> push_constant_ranges;  // compute only
  // Explicit graph constant bindings (format 0.5.0); empty: the 0.4.x rule,
  // graph constant id = constant index, for every entry of `constants`.
  std::vector<GraphConstantBinding> constant_bindings;
  // The bindings in force: the explicit ones, else those of the 0.4.x rule.
  std::vector<GraphConstantBinding> effective_constant_bindings() const;
};

struct ModelSequence {
  std::vector<Segment> segments;
  std::vector<BindingSlot> inputs;   // model inputs (INPUT resources)
  std::vector<BindingSlot> outputs;  // model outputs (OUTPUT resources)
  // Either empty or one name per input / output slot.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};

// Constant record i ("constant index i"): data for the CONSTANT resource `mrt_index`.
struct Constant {
  uint32_t mrt_index = 0;
  int32_t sparsity_dimension = -1;  // -1 dense; >= 0 dimension of 2:4 structured sparsity
  Blob data;                        // exactly the constant's bytes (no padding)
};

struct VgfFile {
  Header header;
  std::vector<Module> modules;
  std::vector<Resource> resources;  // the MRT
  ModelSequence sequence;
  std::vector<Constant> constants;
};

// Decodes and verifies a VGF file of format 0.0.x-0.5.x (either magic, CONST00 or
// legacy flatbuffer constants; 0.5.0 adds per-segment graph constant bindings). Every range, alignment, flatbuffer and index is
// checked; failures are kInvalidFormat naming the section and its file offset.
// Constants view `data` without copying: the caller keeps those bytes alive as
// long as the returned constants are used.
Result<VgfFile> decode_vgf(const uint8_t* data, size_t size);
// As above; the constants keep `file` (its owner) alive themselves.
Result<VgfFile> decode_vgf(const Blob& file);

// Checks the cross references and value rules decode_vgf applies (indices in
// range, segment type = module type, unique set numbers, ...). Errors name the item.
Status validate_vgf(const VgfFile& file);

// Writes format 0.4.3 (FourCC magic, 8-aligned sections, CONST00) by replaying
// the file through VgfBuilder, i.e. Arm's encoder calls, in this order: modules;
// resources; constants; per segment its not-yet-made binding slots (one per
// distinct (binding, resource), first use in set/input/output order), its
// descriptor set infos, push constant ranges, then the segment; finally the
// model inputs/outputs. Arm's files (one segment) come out byte-identical;
// Arm's own call interleaving for several segments is undocumented, so there
// only the content is guaranteed. Refuses what validate_vgf refuses.
Result<std::vector<uint8_t>> encode_vgf(const VgfFile& file);

// The JSON document Arm's `vgf_dump` prints for the file (keys sorted, four-space
// indent, no trailing newline), as VGF library 0.10 prints it, or as 0.11 does
// (which adds each segment's "constant_bindings", the effective ones).
enum class DumpStyle { kVgfLibrary0_10, kVgfLibrary0_11 };
std::string dump_vgf_json(const VgfFile& file, DumpStyle style = DumpStyle::kVgfLibrary0_10);

}  // namespace gpuu::vgf
