// VgfBuilder: Arm's encoder call sequence on flatbuffers 2.0.8 builders. The
// object creation order here is what makes the output byte-identical (vgf-format.md §6).
#include "vgf/vgf_builder.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "vgf/schema/vgf_generated.h"
#include "vgf/vgf_layout.h"

namespace gpuu::vgf {

namespace fbs = flatbuffers;

struct VgfBuilder::State {
  VgfFile model;  // shadow of everything added, validated at finish()
  fbs::FlatBufferBuilder modules_fbb;
  fbs::FlatBufferBuilder sequence_fbb;
  std::vector<fbs::Offset<fb::Module>> module_offsets;
  std::vector<std::pair<BindingSlot, fbs::Offset<fb::BindingSlot>>> slots;
  std::vector<std::pair<DescriptorSetInfo, fbs::Offset<fb::DescriptorSetInfo>>> sets;
  std::vector<std::pair<PushConstantRange, fbs::Offset<fb::PushConstantRange>>> push_ranges;
  std::vector<fbs::Offset<fb::SegmentInfo>> segment_offsets;
  std::vector<fbs::Offset<fb::BindingSlot>> model_inputs, model_outputs;
  std::vector<fbs::Offset<fbs::String>> input_names, output_names;
  size_t code_bytes = 0;  // SPIR-V and source bytes in the module section so far
  bool io_added = false;
  bool finished = false;
  Status first_error;

  template <typename... Parts>
  void fail(const Parts&... parts) {
    if (first_error.ok()) first_error = err(StatusCode::kInvalidArgument, "vgf builder: ", parts...);
  }
  // False (and an error remembered) when `index` is not below `count`.
  bool check_ref(const char* call, const char* what, uint32_t index, size_t count) {
    if (index < count) return true;
    fail(call, ": ", what, " ref ", index, " unknown (", count, " added)");
    return false;
  }
  // The slots behind `refs`, as values and as offsets; unknown refs are skipped (and remembered).
  void resolve_slots(const char* call, const std::vector<BindingSlotRef>& refs, std::vector<BindingSlot>* values,
                     std::vector<fbs::Offset<fb::BindingSlot>>* offsets) {
    for (BindingSlotRef r : refs) {
      if (!check_ref(call, "binding slot", r.index, slots.size())) continue;
      values->push_back(slots[r.index].first);
      offsets->push_back(slots[r.index].second);
    }
  }
};

VgfBuilder::VgfBuilder(uint16_t vk_header_version) : s_(std::make_unique<State>()) {
  s_->model.header.vk_header_version = vk_header_version;
  s_->model.header.version = FormatVersion{};  // 0.4.3: what finish() writes
}
VgfBuilder::~VgfBuilder() = default;
VgfBuilder::VgfBuilder(VgfBuilder&&) noexcept = default;
VgfBuilder& VgfBuilder::operator=(VgfBuilder&&) noexcept = default;

const VgfFile& VgfBuilder::model() const { return s_->model; }

namespace {

// A module section is one flatbuffer (< 2 GiB); refuse code that cannot fit
// rather than let the flatbuffers builder abort.
constexpr size_t kMaxCodeBytes = size_t{1} << 30;

bool fits_module_section(size_t* used, size_t more) {
  if (more > kMaxCodeBytes - *used) return false;
  *used += more;
  return true;
}

// Shared tail of the module calls: strings then the table (after any code object).
fbs::Offset<fb::Module> finish_module(fbs::FlatBufferBuilder& fbb, const Module& m, fbs::Offset<void> code) {
  auto name = fbb.CreateString(m.name);
  auto entry_point = fbb.CreateString(m.entry_point);
  return fb::CreateModule(fbb, static_cast<fb::ModuleType>(m.type), name, entry_point,
                          static_cast<fb::ModuleCode>(m.code_type), code);
}

// The fields every add_*_module sets first; the code (SPIR-V, source, none) follows.
// (Shaped like op_registry.cpp's OpSchema maker: another struct, other fields.)
Module module_header(ModuleType type, std::string_view name, std::string_view entry_point, CodeType code_type,
                     bool has_code) {
  Module m;
  m.type = type;
  m.name = std::string(name);
  m.entry_point = std::string(entry_point);
  m.code_type = code_type;
  m.has_code = has_code;
  return m;
}

}  // namespace

ModuleRef VgfBuilder::add_module(ModuleType type, std::string_view name, std::string_view entry_point,
                                 const std::vector<uint32_t>& spirv) {
  Module m = module_header(type, name, entry_point, CodeType::kSpirv, true);
  auto& fbb = s_->modules_fbb;
  if (spirv.size() > kMaxCodeBytes / 4 || !fits_module_section(&s_->code_bytes, spirv.size() * 4)) {
    s_->fail("add_module: ", spirv.size(), " SPIR-V words do not fit in a module section");
    m.has_code = false;
    s_->module_offsets.push_back(finish_module(fbb, m, 0));
    s_->model.modules.push_back(std::move(m));
    return ModuleRef{static_cast<uint32_t>(s_->model.modules.size() - 1)};
  }
  m.spirv = spirv;
  auto words = fbb.CreateVector(spirv);
  auto code = fb::CreateSPIRV(fbb, words);
  s_->module_offsets.push_back(finish_module(fbb, m, code.Union()));
  s_->model.modules.push_back(std::move(m));
  return ModuleRef{static_cast<uint32_t>(s_->model.modules.size() - 1)};
}

ModuleRef VgfBuilder::add_placeholder_module(ModuleType type, std::string_view name, std::string_view entry_point,
                                             CodeType code_type) {
  Module m = module_header(type, name, entry_point, code_type, false);
  s_->module_offsets.push_back(finish_module(s_->modules_fbb, m, 0));
  s_->model.modules.push_back(std::move(m));
  return ModuleRef{static_cast<uint32_t>(s_->model.modules.size() - 1)};
}

ModuleRef VgfBuilder::add_source_module(ModuleType type, std::string_view name, std::string_view entry_point,
                                        CodeType language, std::string_view source) {
  Module m = module_header(type, name, entry_point, language, true);
  m.source = std::string(source);
  auto& fbb = s_->modules_fbb;
  fbs::Offset<void> code = 0;
  if (!fits_module_section(&s_->code_bytes, source.size())) {
    s_->fail("add_source_module: ", source.size(), " bytes of source do not fit in a module section");
  } else if (language == CodeType::kGlsl) {
    auto text = fbb.CreateString(m.source);
    code = fb::CreateGLSL(fbb, text).Union();
  } else if (language == CodeType::kHlsl) {
    auto text = fbb.CreateString(m.source);
    code = fb::CreateHLSL(fbb, text).Union();
  } else {
    s_->fail("add_source_module: language must be GLSL or HLSL, not ", to_string(language));
  }
  s_->module_offsets.push_back(finish_module(fbb, m, code));
  s_->model.modules.push_back(std::move(m));
  return ModuleRef{static_cast<uint32_t>(s_->model.modules.size() - 1)};
}

ResourceRef VgfBuilder::add_resource(const Resource& resource) {
  s_->model.resources.push_back(resource);
  return ResourceRef{static_cast<uint32_t>(s_->model.resources.size() - 1)};
}

namespace {
Resource make_resource(ResourceCategory category, uint32_t vk_descriptor_type, uint32_t vk_format,
                       const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  Resource r;
  r.category = category;
  r.vk_descriptor_type = vk_descriptor_type;
  r.vk_format = vk_format;
  r.shape = shape;
  r.strides = strides;
  return r;
}
}  // namespace

ResourceRef VgfBuilder::add_input_resource(uint32_t vk_descriptor_type, uint32_t vk_format,
                                           const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  return add_resource(make_resource(ResourceCategory::kInput, vk_descriptor_type, vk_format, shape, strides));
}

ResourceRef VgfBuilder::add_output_resource(uint32_t vk_descriptor_type, uint32_t vk_format,
                                            const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  return add_resource(make_resource(ResourceCategory::kOutput, vk_descriptor_type, vk_format, shape, strides));
}

ResourceRef VgfBuilder::add_intermediate_resource(uint32_t vk_descriptor_type, uint32_t vk_format,
                                                  const std::vector<int64_t>& shape,
                                                  const std::vector<int64_t>& strides) {
  return add_resource(
      make_resource(ResourceCategory::kIntermediate, vk_descriptor_type, vk_format, shape, strides));
}

ResourceRef VgfBuilder::add_constant_resource(uint32_t vk_format, const std::vector<int64_t>& shape,
                                              const std::vector<int64_t>& strides) {
  return add_resource(make_resource(ResourceCategory::kConstant, kNoDescriptorType, vk_format, shape, strides));
}

ConstantRef VgfBuilder::add_constant(ResourceRef resource, const void* data, size_t size,
                                     int64_t sparsity_dimension) {
  return add_constant(resource, Blob::copy_of(data, size), sparsity_dimension);
}

ConstantRef VgfBuilder::add_constant(ResourceRef resource, Blob data, int64_t sparsity_dimension) {
  s_->check_ref("add_constant", "resource", resource.index, s_->model.resources.size());
  Constant c;
  c.mrt_index = resource.index;
  c.sparsity_dimension = static_cast<int32_t>(std::clamp<int64_t>(
      sparsity_dimension, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  c.data = std::move(data);
  s_->model.constants.push_back(std::move(c));
  return ConstantRef{static_cast<uint32_t>(s_->model.constants.size() - 1)};
}

BindingSlotRef VgfBuilder::add_binding_slot(uint32_t binding, ResourceRef resource) {
  s_->check_ref("add_binding_slot", "resource", resource.index, s_->model.resources.size());
  BindingSlot slot{binding, resource.index};
  auto offset = fb::CreateBindingSlot(s_->sequence_fbb, binding, resource.index);
  s_->slots.emplace_back(slot, offset);
  return BindingSlotRef{static_cast<uint32_t>(s_->slots.size() - 1)};
}

DescriptorSetInfoRef VgfBuilder::add_descriptor_set_info(const std::vector<BindingSlotRef>& bindings,
                                                         uint32_t set_index) {
  DescriptorSetInfo info;
  info.set_index = set_index;
  std::vector<fbs::Offset<fb::BindingSlot>> offsets;
  s_->resolve_slots("add_descriptor_set_info", bindings, &info.bindings, &offsets);
  auto& fbb = s_->sequence_fbb;
  auto vec = fbb.CreateVector(offsets);
  auto offset = fb::CreateDescriptorSetInfo(fbb, vec, set_index);
  s_->sets.emplace_back(std::move(info), offset);
  return DescriptorSetInfoRef{static_cast<uint32_t>(s_->sets.size() - 1)};
}

PushConstantRangeRef VgfBuilder::add_push_const_range(uint32_t stage_flags, uint32_t offset, uint32_t size) {
  PushConstantRange range{stage_flags, offset, size};
  auto table = fb::CreatePushConstantRange(s_->sequence_fbb, stage_flags, offset, size);
  s_->push_ranges.emplace_back(range, table);
  return PushConstantRangeRef{static_cast<uint32_t>(s_->push_ranges.size() - 1)};
}

SegmentInfoRef VgfBuilder::add_segment_info(ModuleRef module, std::string_view name,
                                            const std::vector<DescriptorSetInfoRef>& descriptor_sets,
                                            const std::vector<BindingSlotRef>& inputs,
                                            const std::vector<BindingSlotRef>& outputs,
                                            const std::vector<ConstantRef>& constants,
                                            const std::array<uint32_t, 3>& dispatch_shape,
                                            const std::vector<PushConstantRangeRef>& push_constant_ranges) {
  State& s = *s_;
  Segment seg;
  seg.name = std::string(name);
  seg.module_index = module.index;
  if (s.check_ref("add_segment_info", "module", module.index, s.model.modules.size())) {
    seg.type = s.model.modules[module.index].type;
  }
  std::vector<uint32_t> constant_indices;
  for (ConstantRef c : constants) {
    s.check_ref("add_segment_info", "constant", c.index, s.model.constants.size());
    constant_indices.push_back(c.index);
  }
  seg.constants = constant_indices;
  seg.dispatch_shape = dispatch_shape;
  std::vector<fbs::Offset<fb::DescriptorSetInfo>> set_offsets;
  for (DescriptorSetInfoRef d : descriptor_sets) {
    if (!s.check_ref("add_segment_info", "descriptor set info", d.index, s.sets.size())) continue;
    seg.descriptor_sets.push_back(s.sets[d.index].first);
    set_offsets.push_back(s.sets[d.index].second);
  }
  std::vector<fbs::Offset<fb::BindingSlot>> input_offsets, output_offsets;
  s.resolve_slots("add_segment_info", inputs, &seg.inputs, &input_offsets);
  s.resolve_slots("add_segment_info", outputs, &seg.outputs, &output_offsets);
  std::vector<fbs::Offset<fb::PushConstantRange>> range_offsets;
  for (PushConstantRangeRef r : push_constant_ranges) {
    if (!s.check_ref("add_segment_info", "push constant range", r.index, s.push_ranges.size())) continue;
    seg.push_constant_ranges.push_back(s.push_ranges[r.index].first);
    range_offsets.push_back(s.push_ranges[r.index].second);
  }

  // Arm's order: every vector (even empty ones), then the name, then the table.
  auto& fbb = s.sequence_fbb;
  auto constants_vec = fbb.CreateVector(constant_indices);
  auto dispatch_vec = fbb.CreateVector(dispatch_shape.data(), dispatch_shape.size());
  auto sets_vec = fbb.CreateVector(set_offsets);
  auto inputs_vec = fbb.CreateVector(input_offsets);
  auto outputs_vec = fbb.CreateVector(output_offsets);
  auto ranges_vec = fbb.CreateVector(range_offsets);
  auto name_str = fbb.CreateString(seg.name);
  s.segment_offsets.push_back(fb::CreateSegmentInfo(fbb, static_cast<fb::ModuleType>(seg.type), name_str,
                                                    seg.module_index, sets_vec, inputs_vec, outputs_vec,
                                                    constants_vec, dispatch_vec, ranges_vec));
  s.model.sequence.segments.push_back(std::move(seg));
  return SegmentInfoRef{static_cast<uint32_t>(s.model.sequence.segments.size() - 1)};
}

void VgfBuilder::add_model_sequence_inputs_outputs(const std::vector<BindingSlotRef>& inputs,
                                                   const std::vector<std::string>& input_names,
                                                   const std::vector<BindingSlotRef>& outputs,
                                                   const std::vector<std::string>& output_names) {
  State& s = *s_;
  if (s.io_added) {
    s.fail("add_model_sequence_inputs_outputs called twice");
    return;
  }
  s.io_added = true;
  ModelSequence& seq = s.model.sequence;
  s.resolve_slots("add_model_sequence_inputs_outputs", inputs, &seq.inputs, &s.model_inputs);
  s.resolve_slots("add_model_sequence_inputs_outputs", outputs, &seq.outputs, &s.model_outputs);
  seq.input_names = input_names;
  seq.output_names = output_names;
  for (const std::string& n : input_names) s.input_names.push_back(s.sequence_fbb.CreateString(n));
  for (const std::string& n : output_names) s.output_names.push_back(s.sequence_fbb.CreateString(n));
}

namespace {

std::vector<uint8_t> section_bytes(fbs::FlatBufferBuilder& fbb) {
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

std::vector<uint8_t> build_resource_section(const std::vector<Resource>& resources) {
  fbs::FlatBufferBuilder fbb;
  std::vector<fbs::Offset<fb::ModelResourceTableEntry>> entries;
  for (const Resource& r : resources) {
    auto shape = fbb.CreateVector(r.shape);
    auto strides = fbb.CreateVector(r.strides);
    auto description = fb::CreateDescription(fbb, shape, strides);
    fbs::Offset<void> extra = 0;
    fb::ExtraConfig extra_type = fb::ExtraConfig::NONE;
    if (r.sampler) {
      const SamplerConfig& c = *r.sampler;
      extra = fb::CreateSamplerConfig(fbb, c.min_filter, c.mag_filter, c.address_mode_u, c.address_mode_v,
                                      c.border_color)
                  .Union();
      extra_type = fb::ExtraConfig::SamplerConfig;
    }
    entries.push_back(fb::CreateModelResourceTableEntry(fbb, r.vk_descriptor_type, r.vk_format,
                                                        static_cast<fb::ResourceCategory>(r.category),
                                                        description, extra_type, extra, r.alias_group_id));
  }
  auto vec = fbb.CreateVector(entries);
  fbb.Finish(fb::CreateModelResourceTable(fbb, vec));
  return section_bytes(fbb);
}

// CONST00: tag, count, records, then each payload zero-padded to 8 bytes (§4).
std::vector<uint8_t> build_constants_section(const std::vector<Constant>& constants) {
  size_t payload_size = 0;
  for (const Constant& c : constants) payload_size += layout::align8(c.data.size());
  const size_t records_end = layout::kConstantsHeaderSize + layout::kConstantRecordSize * constants.size();
  std::vector<uint8_t> out(records_end + payload_size, 0);
  std::memcpy(out.data(), layout::kConstantsTag, sizeof(layout::kConstantsTag));
  layout::store_le<uint64_t>(out.data() + 8, constants.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < constants.size(); ++i) {
    const Constant& c = constants[i];
    uint8_t* rec = out.data() + layout::kConstantsHeaderSize + layout::kConstantRecordSize * i;
    layout::store_le<uint32_t>(rec + 0, c.mrt_index);
    layout::store_le<int32_t>(rec + 4, c.sparsity_dimension);
    layout::store_le<uint64_t>(rec + 8, c.data.size());
    layout::store_le<uint64_t>(rec + 16, offset);
    if (!c.data.empty()) std::memcpy(out.data() + records_end + offset, c.data.data(), c.data.size());
    offset += layout::align8(c.data.size());
  }
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> VgfBuilder::finish() {
  State& s = *s_;
  if (s.finished) return err(StatusCode::kFailedPrecondition, "vgf builder: finish() called twice");
  s.finished = true;
  if (!s.first_error.ok()) return s.first_error;
  GPUU_RETURN_IF_ERROR(validate_vgf(s.model));

  auto& mfbb = s.modules_fbb;
  auto modules_vec = mfbb.CreateVector(s.module_offsets);
  mfbb.Finish(fb::CreateModuleTable(mfbb, modules_vec));

  // Arm's finish order: model inputs, outputs, their names, segments, root.
  auto& qfbb = s.sequence_fbb;
  auto inputs_vec = qfbb.CreateVector(s.model_inputs);
  auto outputs_vec = qfbb.CreateVector(s.model_outputs);
  auto input_names_vec = qfbb.CreateVector(s.input_names);
  auto output_names_vec = qfbb.CreateVector(s.output_names);
  auto segments_vec = qfbb.CreateVector(s.segment_offsets);
  qfbb.Finish(fb::CreateModelSequenceTable(qfbb, segments_vec, inputs_vec, outputs_vec, input_names_vec,
                                           output_names_vec));

  std::vector<uint8_t> sections[layout::kSectionCount] = {
      section_bytes(mfbb), section_bytes(qfbb), build_resource_section(s.model.resources),
      build_constants_section(s.model.constants)};

  // Header, then the sections in order, each starting 8-aligned (0.4.3 rule).
  size_t total = kHeaderSize;
  uint64_t offsets[layout::kSectionCount];
  for (int i = 0; i < layout::kSectionCount; ++i) {
    total = layout::align8(total);
    offsets[i] = total;
    total += sections[i].size();
  }
  std::vector<uint8_t> file(total, 0);
  std::memcpy(file.data(), layout::kMagic, sizeof(layout::kMagic));
  layout::store_le<uint16_t>(file.data() + 4, s.model.header.vk_header_version);
  file[8] = 0;  // format 0.4.3
  file[9] = 4;
  file[10] = 3;
  for (int i = 0; i < layout::kSectionCount; ++i) {
    layout::store_le<uint64_t>(file.data() + layout::kSectionTableOffset + 16 * i, offsets[i]);
    layout::store_le<uint64_t>(file.data() + layout::kSectionTableOffset + 16 * i + 8, sections[i].size());
    if (!sections[i].empty()) std::memcpy(file.data() + offsets[i], sections[i].data(), sections[i].size());
  }
  return file;
}

}  // namespace gpuu::vgf
