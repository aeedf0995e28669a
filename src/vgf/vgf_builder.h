// VgfBuilder: writes a VGF 0.4.3 file call by call, mirroring Arm's VGF encoder
// API one to one, so that the same calls in the same order give the same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// Handles returned by the add_* calls; each is an index in its own list
// (ResourceRef = MRT index, ConstantRef = constant index, ModuleRef = module index).
struct ModuleRef { uint32_t index = 0; };
struct ResourceRef { uint32_t index = 0; };
struct ConstantRef { uint32_t index = 0; };
struct BindingSlotRef { uint32_t index = 0; };
struct DescriptorSetInfoRef { uint32_t index = 0; };
struct PushConstantRangeRef { uint32_t index = 0; };
struct SegmentInfoRef { uint32_t index = 0; };

// Arm name -> method: CreateEncoder -> constructor, AddModule -> add_module,
// AddPlaceholderModule -> add_placeholder_module, Add{Input,Output,Intermediate,
// Constant}Resource -> add_*_resource, AddConstant -> add_constant, AddBindingSlot,
// AddDescriptorSetInfo, AddPushConstRange, AddSegmentInfo,
// AddModelSequenceInputsOutputs -> the same names in snake_case, Finish + WriteTo -> finish.
//
// Flatbuffer objects of the module and sequence sections are created when the
// call is made (as Arm's encoder does), so call order shapes the bytes. A bad
// argument (an unknown ref, a name count that does not match) is remembered and
// reported by finish(); the calls after it still return refs but write nothing useful.
class VgfBuilder {
 public:
  explicit VgfBuilder(uint16_t vk_header_version = 0);
  ~VgfBuilder();
  VgfBuilder(const VgfBuilder&) = delete;
  VgfBuilder& operator=(const VgfBuilder&) = delete;
  VgfBuilder(VgfBuilder&&) noexcept;
  VgfBuilder& operator=(VgfBuilder&&) noexcept;

  ModuleRef add_module(ModuleType type, std::string_view name, std::string_view entry_point,
                       const std::vector<uint32_t>& spirv);
  // A module whose code is supplied at load time; `code_type` says which kind.
  ModuleRef add_placeholder_module(ModuleType type, std::string_view name, std::string_view entry_point,
                                   CodeType code_type = CodeType::kSpirv);
  // GLSL or HLSL source text (format 0.4.1+ module code).
  ModuleRef add_source_module(ModuleType type, std::string_view name, std::string_view entry_point,
                              CodeType language, std::string_view source);

  ResourceRef add_input_resource(uint32_t vk_descriptor_type, uint32_t vk_format, const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& strides);
  ResourceRef add_output_resource(uint32_t vk_descriptor_type, uint32_t vk_format,
                                  const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
  ResourceRef add_intermediate_resource(uint32_t vk_descriptor_type, uint32_t vk_format,
                                        const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
  // Category CONSTANT, descriptor type kNoDescriptorType.
  ResourceRef add_constant_resource(uint32_t vk_format, const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& strides);
  // Any entry, including a sampler config or an alias group.
  ResourceRef add_resource(const Resource& resource);

  // Copies `size` bytes. `sparsity_dimension` is clamped into int32 as Arm does.
  ConstantRef add_constant(ResourceRef resource, const void* data, size_t size, int64_t sparsity_dimension = -1);
  // Keeps `data` (no copy) until finish().
  ConstantRef add_constant(ResourceRef resource, Blob data, int64_t sparsity_dimension = -1);

  BindingSlotRef add_binding_slot(uint32_t binding, ResourceRef resource);
  DescriptorSetInfoRef add_descriptor_set_info(const std::vector<BindingSlotRef>& bindings,
                                               uint32_t set_index = kUnsetSetIndex);
  PushConstantRangeRef add_push_const_range(uint32_t stage_flags, uint32_t offset, uint32_t size);
  // The segment's type is the module's type.
  SegmentInfoRef add_segment_info(ModuleRef module, std::string_view name,
                                  const std::vector<DescriptorSetInfoRef>& descriptor_sets,
                                  const std::vector<BindingSlotRef>& inputs,
                                  const std::vector<BindingSlotRef>& outputs,
                                  const std::vector<ConstantRef>& constants,
                                  const std::array<uint32_t, 3>& dispatch_shape = {0, 0, 0},
                                  const std::vector<PushConstantRangeRef>& push_constant_ranges = {});
  // At most once; names are empty or one per slot.
  void add_model_sequence_inputs_outputs(const std::vector<BindingSlotRef>& inputs,
                                         const std::vector<std::string>& input_names,
                                         const std::vector<BindingSlotRef>& outputs,
                                         const std::vector<std::string>& output_names);

  // The file described so far, as values (what decode_vgf of the result gives).
  const VgfFile& model() const;

  // Validates the whole file (validate_vgf) and writes it. The builder is spent afterwards.
  Result<std::vector<uint8_t>> finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpuu::vgf
