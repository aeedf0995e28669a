// VGF decoder (every range, alignment and flatbuffer verified before use) and
// encode_vgf, which replays a VgfFile through VgfBuilder in Arm's call order.
#include "vgf/vgf_file.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "vgf/schema/vgf_generated.h"
#include "vgf/vgf_builder.h"
#include "vgf/vgf_layout.h"
#include "vgf/vgf_validate.h"

namespace gpuu::vgf {

namespace fbs = flatbuffers;

const char* to_string(ModuleType type) {
  switch (type) {
    case ModuleType::kCompute: return "COMPUTE";
    case ModuleType::kGraph: return "GRAPH";
  }
  return "UNKNOWN";
}

const char* to_string(ResourceCategory category) {
  switch (category) {
    case ResourceCategory::kInput: return "INPUT";
    case ResourceCategory::kOutput: return "OUTPUT";
    case ResourceCategory::kIntermediate: return "INTERMEDIATE";
    case ResourceCategory::kConstant: return "CONSTANT";
  }
  return "UNKNOWN";
}

const char* to_string(CodeType code_type) {
  switch (code_type) {
    case CodeType::kNone: return "NONE";
    case CodeType::kSpirv: return "SPIR-V";
    case CodeType::kGlsl: return "GLSL";
    case CodeType::kHlsl: return "HLSL";
  }
  return "UNKNOWN";
}

Module Module::with_spirv(ModuleType type, std::string name, std::string entry_point, std::vector<uint32_t> words) {
  Module m;
  m.type = type;
  m.name = std::move(name);
  m.entry_point = std::move(entry_point);
  m.code_type = CodeType::kSpirv;
  m.has_code = true;
  m.spirv = std::move(words);
  return m;
}

Status validate_vgf(const VgfFile& file) { return detail::check_file(file, nullptr); }

// ---------------------------------------------------------------------------
// Decoder

namespace {

using detail::FilePositions;

// One flatbuffer section, at an 8-aligned address (copied when the caller's is
// not) so that verified reads are aligned reads.
struct FlatSection {
  const uint8_t* base = nullptr;  // verified buffer
  size_t size = 0;
  uint64_t file_offset = 0;
  std::vector<uint64_t> storage;
  // File offset of a pointer into the verified buffer.
  uint64_t pos(const void* p) const {
    return file_offset + static_cast<uint64_t>(static_cast<const uint8_t*>(p) - base);
  }
};

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size, std::shared_ptr<const void> owner)
      : data_(data), size_(size), owner_(std::move(owner)) {}

  Result<VgfFile> run() {
    GPUU_RETURN_IF_ERROR(read_header());
    GPUU_RETURN_IF_ERROR(read_modules());
    GPUU_RETURN_IF_ERROR(read_resources());
    GPUU_RETURN_IF_ERROR(read_constants());
    GPUU_RETURN_IF_ERROR(read_sequence());
    GPUU_RETURN_IF_ERROR(detail::check_file(file_, &pos_));
    return std::move(file_);
  }

 private:
  template <typename... Parts>
  Status fail_header(size_t offset, const Parts&... parts) const {
    return err(StatusCode::kInvalidFormat, "vgf: header at offset ", offset, ": ", parts...);
  }
  template <typename... Parts>
  Status fail(int section, const Parts&... parts) const {
    return err(StatusCode::kInvalidFormat, "vgf: ", layout::section_name(section), " section at offset ",
               offsets_[section], ": ", parts...);
  }

  Status read_header() {
    if (size_ < kHeaderSize) {
      return fail_header(0, "the file is ", size_, " bytes, shorter than the ", kHeaderSize, "-byte header");
    }
    if (std::memcmp(data_, layout::kMagic, 4) == 0) {
      file_.header.legacy_magic = false;
    } else if (std::memcmp(data_, layout::kLegacyMagic, 4) == 0) {
      file_.header.legacy_magic = true;
    } else {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%02x %02x %02x %02x", data_[0], data_[1], data_[2], data_[3]);
      return fail_header(0, "magic ", hex, " is neither \"VGF1\" nor c3 d2 e1 f0");
    }
    file_.header.vk_header_version = layout::load_le<uint16_t>(data_ + layout::kVkHeaderVersionOffset);
    FormatVersion& v = file_.header.version;
    v.major = data_[layout::kVersionOffset];
    v.minor = data_[layout::kVersionOffset + 1];
    v.patch = data_[layout::kVersionOffset + 2];
    // Arm's rule up to library 0.10: major 0 and minor <= 4, patch ignored;
    // library 0.11 writes 0.5.0 (graph constant bindings).
    if (v.major != 0 || v.minor > 5) {
      return fail_header(layout::kVersionOffset, "format version ", int(v.major), ".", int(v.minor), ".",
                         int(v.patch), " is not supported (0.0.x to 0.5.x are)");
    }
    for (int i = 0; i < layout::kSectionCount; ++i) {
      const size_t entry = layout::kSectionTableOffset + 16 * i;
      const uint64_t offset = layout::load_le<uint64_t>(data_ + entry);
      const uint64_t size = layout::load_le<uint64_t>(data_ + entry + 8);
      if (offset > size_ || size > size_ - offset) {
        return fail_header(entry, layout::section_name(i), " section [offset ", offset, ", size ", size,
                           "] does not fit in the ", size_, "-byte file");
      }
      offsets_[i] = offset;
      sizes_[i] = size;
      pos_.sections[i] = offset;
    }
    return Status::Ok();
  }

  // Range-checked, aligned, verified flatbuffer section with root type Root.
  template <typename Root>
  Result<const Root*> open_flat(int section, const char* root_name, FlatSection* out) {
    const uint64_t offset = offsets_[section];
    const uint64_t size = sizes_[section];
    if (size < 4) return fail(section, "the section is ", size, " bytes, too small for a flatbuffer");
    if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return fail(section, "the section is ", size, " bytes, larger than a flatbuffer can be");
    }
    if (offset % 4 != 0) return fail(section, "the section does not start 4-byte aligned");
    const uint8_t* p = data_ + offset;
    out->file_offset = offset;
    out->size = static_cast<size_t>(size);
    if (reinterpret_cast<uintptr_t>(p) % 8 != 0) {
      out->storage.resize((out->size + 7) / 8);
      std::memcpy(out->storage.data(), p, out->size);
      p = reinterpret_cast<const uint8_t*>(out->storage.data());
    }
    out->base = p;
    fbs::Verifier verifier(p, out->size);  // Arm's options: depth 64, 1e6 tables, alignment checked
    if (!verifier.VerifyBuffer<Root>(nullptr)) {
      return fail(section, "not a valid ", root_name, " flatbuffer (the flatbuffers verifier refused it)");
    }
    return fbs::GetRoot<Root>(p);
  }

  Status read_modules() {
    FlatSection sec;
    GPUU_ASSIGN_OR_RETURN(const fb::ModuleTable* root, open_flat<fb::ModuleTable>(layout::kModules, "ModuleTable", &sec));
    if (!root->modules()) return Status::Ok();
    for (const fb::Module* m : *root->modules()) {
      const size_t i = file_.modules.size();
      const uint64_t at = sec.pos(m);
      pos_.modules.push_back(at);
      const auto type = static_cast<uint8_t>(m->type());
      const auto code_type = static_cast<uint8_t>(m->code_type());
      if (type > 1) {
        return fail(layout::kModules, "module ", i, " (at byte ", at, ") has type ", int(type),
                    " (COMPUTE=0 or GRAPH=1 expected)");
      }
      if (code_type > 3) {
        return fail(layout::kModules, "module ", i, " (at byte ", at, ") has code type ", int(code_type),
                    " (NONE, SPIRV, GLSL or HLSL expected)");
      }
      Module out;
      out.type = static_cast<ModuleType>(type);
      out.code_type = static_cast<CodeType>(code_type);
      if (m->name()) out.name = m->name()->str();
      if (m->entry_point()) out.entry_point = m->entry_point()->str();
      if (const fb::SPIRV* spirv = m->code_as_SPIRV()) {
        out.has_code = true;
        if (spirv->words()) out.spirv.assign(spirv->words()->begin(), spirv->words()->end());
      } else if (const fb::GLSL* glsl = m->code_as_GLSL()) {
        out.has_code = true;
        if (glsl->code()) out.source = glsl->code()->str();
      } else if (const fb::HLSL* hlsl = m->code_as_HLSL()) {
        out.has_code = true;
        if (hlsl->code()) out.source = hlsl->code()->str();
      }
      file_.modules.push_back(std::move(out));
    }
    return Status::Ok();
  }

  Status read_resources() {
    FlatSection sec;
    GPUU_ASSIGN_OR_RETURN(const fb::ModelResourceTable* root,
                          open_flat<fb::ModelResourceTable>(layout::kResources, "ModelResourceTable", &sec));
    if (!root->mrt_entry()) return Status::Ok();
    for (const fb::ModelResourceTableEntry* e : *root->mrt_entry()) {
      const size_t i = file_.resources.size();
      const uint64_t at = sec.pos(e);
      pos_.resources.push_back(at);
      const auto category = static_cast<uint8_t>(e->category());
      if (category > 3) {
        return fail(layout::kResources, "resource ", i, " (at byte ", at, ") has category ", int(category),
                    " (INPUT, OUTPUT, INTERMEDIATE or CONSTANT expected)");
      }
      const auto extra_type = static_cast<uint8_t>(e->extra_config_type());
      if (extra_type > 1) {
        return fail(layout::kResources, "resource ", i, " (at byte ", at, ") has extra config type ", int(extra_type),
                    " (NONE or SamplerConfig expected)");
      }
      Resource r;
      r.category = static_cast<ResourceCategory>(category);
      r.vk_descriptor_type = e->vk_descriptor_type();
      r.vk_format = e->vk_format();
      r.alias_group_id = e->alias_group_id();
      if (const fb::Description* d = e->description()) {
        read_i64s(d->shape(), &r.shape);
        read_i64s(d->strides(), &r.strides);
      }
      if (extra_type == 1) {
        const fb::SamplerConfig* c = e->extra_config_as_SamplerConfig();
        if (!c) {
          return fail(layout::kResources, "resource ", i, " (at byte ", at,
                      ") says it has a sampler config but carries none");
        }
        r.sampler = SamplerConfig{c->min_filter(), c->mag_filter(), c->address_mode_u(), c->address_mode_v(),
                                  c->border_color()};
      }
      file_.resources.push_back(std::move(r));
    }
    return Status::Ok();
  }

  Status read_constants() {
    const uint64_t offset = offsets_[layout::kConstants];
    const uint64_t size = sizes_[layout::kConstants];
    if (size < 8) return fail(layout::kConstants, "the section is ", size, " bytes (8 at least)");
    if (std::memcmp(data_ + offset, layout::kConstantsTag, 8) != 0) return read_legacy_constants();
    if (size < layout::kConstantsHeaderSize) {
      return fail(layout::kConstants, "the CONST00 section is ", size, " bytes, too small for its 16-byte header");
    }
    const uint8_t* sec = data_ + offset;
    const uint64_t count = layout::load_le<uint64_t>(sec + 8);
    const uint64_t room = (size - layout::kConstantsHeaderSize) / layout::kConstantRecordSize;
    if (count > room) {
      return fail(layout::kConstants, count, " constant records do not fit in the ", size, "-byte section");
    }
    const uint64_t payload_start = layout::kConstantsHeaderSize + layout::kConstantRecordSize * count;
    const uint64_t payload_size = size - payload_start;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t rec_at = layout::kConstantsHeaderSize + layout::kConstantRecordSize * i;
      const uint8_t* rec = sec + rec_at;
      pos_.constants.push_back(offset + rec_at);
      Constant c;
      c.mrt_index = layout::load_le<uint32_t>(rec);
      c.sparsity_dimension = layout::load_le<int32_t>(rec + 4);
      const uint64_t data_size = layout::load_le<uint64_t>(rec + 8);
      const uint64_t data_offset = layout::load_le<uint64_t>(rec + 16);
      if (c.sparsity_dimension < -1) {
        return fail(layout::kConstants, "record ", i, " (at byte ", offset + rec_at, ") has sparsity dimension ",
                    c.sparsity_dimension, " (-1 or more expected)");
      }
      if (data_offset > payload_size || data_size > payload_size - data_offset) {
        return fail(layout::kConstants, "record ", i, " (at byte ", offset + rec_at, ") places its data at [offset ",
                    data_offset, ", size ", data_size, "], outside the ", payload_size, "-byte payload area");
      }
      c.data = Blob::view(sec + payload_start + data_offset, static_cast<size_t>(data_size), owner_);
      // Each section reader ends alike; the modules come from flatbuffers, constants from raw records.
      file_.constants.push_back(std::move(c));
    }
    return Status::Ok();
  }

  // Format <= 0.3.x: a ConstantSection flatbuffer.
  Status read_legacy_constants() {
    FlatSection sec;
    GPUU_ASSIGN_OR_RETURN(const fb::ConstantSection* root,
                          open_flat<fb::ConstantSection>(layout::kConstants, "legacy ConstantSection", &sec));
    if (!root->data()) return Status::Ok();
    for (const fb::ConstantData* d : *root->data()) {
      const size_t i = file_.constants.size();
      const uint64_t at = sec.pos(d);
      pos_.constants.push_back(at);
      const int64_t sparsity = d->sparsity_dimension();
      if (sparsity < -1 || sparsity > std::numeric_limits<int32_t>::max()) {
        return fail(layout::kConstants, "constant ", i, " (at byte ", at, ") has sparsity dimension ", sparsity,
                    " (-1 or a dimension index expected)");
      }
      Constant c;
      c.mrt_index = d->mrt_index();
      c.sparsity_dimension = static_cast<int32_t>(sparsity);
      if (d->raw()) {
        // View the caller's bytes, not the aligned copy the verifier may have read.
        c.data = Blob::view(data_ + sec.pos(d->raw()->data()), d->raw()->size(), owner_);
      }
      file_.constants.push_back(std::move(c));
    }
    return Status::Ok();
  }

  // The verifier checks a vector's length word for 4-byte alignment only, so
  // int64 elements may sit at 4 mod 8: read them bytewise, never as int64 loads.
  static void read_i64s(const fbs::Vector<int64_t>* v, std::vector<int64_t>* out) {
    if (!v) return;
    const uint8_t* elements = reinterpret_cast<const uint8_t*>(v) + sizeof(fbs::uoffset_t);
    out->resize(v->size());
    for (size_t i = 0; i < out->size(); ++i) (*out)[i] = layout::load_le<int64_t>(elements + 8 * i);
  }

  static void read_slots(const fbs::Vector<fbs::Offset<fb::BindingSlot>>* v, std::vector<BindingSlot>* out) {
    if (!v) return;
    for (const fb::BindingSlot* s : *v) out->push_back(BindingSlot{s->binding(), s->mrt_index()});
  }

  Status read_sequence() {
    FlatSection sec;
    GPUU_ASSIGN_OR_RETURN(const fb::ModelSequenceTable* root,
                          open_flat<fb::ModelSequenceTable>(layout::kSequence, "ModelSequenceTable", &sec));
    pos_.sequence_root = sec.pos(root);
    ModelSequence& seq = file_.sequence;
    if (root->segments()) {
      for (const fb::SegmentInfo* s : *root->segments()) {
        const size_t i = seq.segments.size();
        const uint64_t at = sec.pos(s);
        pos_.segments.push_back(at);
        const auto type = static_cast<uint8_t>(s->type());
        if (type > 1) {
          return fail(layout::kSequence, "segment ", i, " (at byte ", at, ") has type ", int(type),
                      " (COMPUTE=0 or GRAPH=1 expected)");
        }
        Segment seg;
        seg.type = static_cast<ModuleType>(type);
        if (s->name()) seg.name = s->name()->str();
        seg.module_index = s->module_index();
        if (s->set_infos()) {
          for (const fb::DescriptorSetInfo* d : *s->set_infos()) {
            DescriptorSetInfo set;
            set.set_index = d->set_index();
            read_slots(d->bindings(), &set.bindings);
            seg.descriptor_sets.push_back(std::move(set));
          }
        }
        read_slots(s->inputs(), &seg.inputs);
        read_slots(s->outputs(), &seg.outputs);
        if (s->constants()) seg.constants.assign(s->constants()->begin(), s->constants()->end());
        if (const auto* shape = s->dispatch_shape()) {
          // Arm's decoder checks this one rule itself.
          if (shape->size() != 3) {
            return fail(layout::kSequence, "segment ", i, " (at byte ", at, ") has a dispatch shape of ",
                        shape->size(), " values (3 expected)");
          }
          for (int k = 0; k < 3; ++k) seg.dispatch_shape[k] = shape->Get(k);
        }
        if (s->push_constant_ranges()) {
          for (const fb::PushConstantRange* r : *s->push_constant_ranges()) {
            seg.push_constant_ranges.push_back(PushConstantRange{r->stage_flags(), r->offset(), r->size()});
          }
        }
        if (s->constant_bindings()) {
          for (const fb::GraphConstantBinding* c : *s->constant_bindings()) {
            seg.constant_bindings.push_back(GraphConstantBinding{c->graph_constant_id(), c->constant_table_index()});
          }
        }
        seq.segments.push_back(std::move(seg));
      }
    }
    read_slots(root->inputs(), &seq.inputs);
    read_slots(root->outputs(), &seq.outputs);
    if (root->input_names()) {
      for (const fbs::String* n : *root->input_names()) seq.input_names.push_back(n->str());
    }
    if (root->output_names()) {
      for (const fbs::String* n : *root->output_names()) seq.output_names.push_back(n->str());
    }
    return Status::Ok();
  }

  const uint8_t* data_;
  size_t size_;
  std::shared_ptr<const void> owner_;
  uint64_t offsets_[layout::kSectionCount] = {};
  uint64_t sizes_[layout::kSectionCount] = {};
  VgfFile file_;
  FilePositions pos_;
};

}  // namespace

std::vector<GraphConstantBinding> Segment::effective_constant_bindings() const {
  if (!constant_bindings.empty()) return constant_bindings;
  std::vector<GraphConstantBinding> out;
  for (uint32_t c : constants) out.push_back(GraphConstantBinding{c, c});
  return out;
}

Result<VgfFile> decode_vgf(const uint8_t* data, size_t size) {
  if (!data && size != 0) return err(StatusCode::kInvalidArgument, "vgf: null data of ", size, " bytes");
  static const uint8_t kNothing = 0;
  return Decoder(data ? data : &kNothing, size, nullptr).run();
}

Result<VgfFile> decode_vgf(const Blob& file) {
  static const uint8_t kNothing = 0;
  return Decoder(file.data() ? file.data() : &kNothing, file.size(), file.owner()).run();
}

// ---------------------------------------------------------------------------
// Encoder

Result<std::vector<uint8_t>> encode_vgf(const VgfFile& file) {
  GPUU_RETURN_IF_ERROR(validate_vgf(file));
  VgfBuilder b(file.header.vk_header_version);

  std::vector<ModuleRef> modules;
  for (const Module& m : file.modules) {
    if (!m.has_code) {
      modules.push_back(b.add_placeholder_module(m.type, m.name, m.entry_point, m.code_type));
    } else if (m.code_type == CodeType::kSpirv) {
      modules.push_back(b.add_module(m.type, m.name, m.entry_point, m.spirv));
    } else {
      modules.push_back(b.add_source_module(m.type, m.name, m.entry_point, m.code_type, m.source));
    }
  }
  for (const Resource& r : file.resources) b.add_resource(r);
  std::vector<ConstantRef> constants;
  for (const Constant& c : file.constants) {
    constants.push_back(b.add_constant(ResourceRef{c.mrt_index}, c.data, c.sparsity_dimension));
  }

  // One BindingSlot table per distinct (binding, resource), created at first
  // use, as Arm's tools share them (vgf-format.md §5.2).
  std::map<std::pair<uint32_t, uint32_t>, BindingSlotRef> slot_refs;
  auto slot = [&](const BindingSlot& s) {
    auto key = std::make_pair(s.binding, s.mrt_index);
    auto it = slot_refs.find(key);
    if (it == slot_refs.end()) it = slot_refs.emplace(key, b.add_binding_slot(s.binding, ResourceRef{s.mrt_index})).first;
    return it->second;
  };
  auto slots = [&](const std::vector<BindingSlot>& list) {
    std::vector<BindingSlotRef> refs;
    for (const BindingSlot& s : list) refs.push_back(slot(s));
    return refs;
  };

  // Per segment: its binding slots, descriptor sets, push constant ranges, then the segment.
  for (const Segment& seg : file.sequence.segments) {
    // Format 0.4.3 has no bindings: only the 0.4.x rule (id = constant index) can be written.
    std::vector<GraphConstantBinding> legacy;
    for (uint32_t c : seg.constants) legacy.push_back(GraphConstantBinding{c, c});
    if (seg.effective_constant_bindings() != legacy) {
      return err(StatusCode::kUnsupported, "vgf: segment '", seg.name,
                 "' binds graph constant ids to other constant indices, which format 0.4.3 cannot hold");
    }
    for (const DescriptorSetInfo& set : seg.descriptor_sets) slots(set.bindings);
    slots(seg.inputs);
    slots(seg.outputs);
    std::vector<DescriptorSetInfoRef> sets;
    for (const DescriptorSetInfo& set : seg.descriptor_sets) {
      sets.push_back(b.add_descriptor_set_info(slots(set.bindings), set.set_index));
    }
    std::vector<PushConstantRangeRef> ranges;
    for (const PushConstantRange& r : seg.push_constant_ranges) {
      ranges.push_back(b.add_push_const_range(r.stage_flags, r.offset, r.size));
    }
    std::vector<ConstantRef> seg_constants;
    for (uint32_t c : seg.constants) seg_constants.push_back(ConstantRef{c});
    b.add_segment_info(ModuleRef{seg.module_index}, seg.name, sets, slots(seg.inputs), slots(seg.outputs),
                       seg_constants, seg.dispatch_shape, ranges);
  }
  const ModelSequence& seq = file.sequence;
  std::vector<BindingSlotRef> inputs = slots(seq.inputs);
  std::vector<BindingSlotRef> outputs = slots(seq.outputs);
  b.add_model_sequence_inputs_outputs(inputs, seq.input_names, outputs, seq.output_names);
  return b.finish();
}

}  // namespace gpuu::vgf
