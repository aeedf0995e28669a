// The rules a decoded or to-be-encoded VGF file must satisfy beyond its byte
// layout: every index in range, types that agree, Vulkan-level uniqueness.
#include "vgf/vgf_validate.h"

#include <map>
#include <set>
#include <string>

namespace gpuu::vgf::detail {
namespace {

std::string plural(size_t n, const char* noun) {
  return str_cat(n, " ", noun, n == 1 ? "" : "s");
}

class Checker {
 public:
  Checker(const VgfFile& file, const FilePositions* where) : f_(file), where_(where) {}

  Status run() {
    GPUU_RETURN_IF_ERROR(check_each(f_.modules, "module", &FilePositions::modules, &Checker::check_module));
    GPUU_RETURN_IF_ERROR(check_each(f_.resources, "resource", &FilePositions::resources, &Checker::check_resource));
    GPUU_RETURN_IF_ERROR(check_each(f_.constants, "constant", &FilePositions::constants, &Checker::check_constant));
    return check_sequence();
  }

 private:
  template <typename... Parts>
  Status fail(int section, const Parts&... parts) const {
    if (where_) {
      return err(StatusCode::kInvalidFormat, "vgf: ", layout::section_name(section), " section at offset ",
                 where_->sections[section], ": ", parts...);
    }
    return err(StatusCode::kInvalidFormat, "vgf: ", layout::section_name(section), ": ", parts...);
  }
  // " (at byte N)" for item i of a position list, "" without positions.
  std::string at(const std::vector<uint64_t> FilePositions::*list, size_t i) const {
    if (!where_ || i >= (where_->*list).size()) return "";
    return str_cat(" (at byte ", (where_->*list)[i], ")");
  }

  // Runs `check` on each item of one table with its name, "<noun> i (at
  // byte N)"; stops at the first failure.
  template <typename Item>
  Status check_each(const std::vector<Item>& items, const char* noun, const std::vector<uint64_t> FilePositions::*list,
                    Status (Checker::*check)(const Item&, const std::string&) const) const {
    for (size_t i = 0; i < items.size(); ++i) {
      GPUU_RETURN_IF_ERROR((this->*check)(items[i], str_cat(noun, " ", i, at(list, i))));
    }
    return Status::Ok();
  }

  Status check_module(const Module& m, const std::string& name) const {
    if (static_cast<uint8_t>(m.type) > 1) {
      return fail(layout::kModules, name, " has type ", int(m.type), " (COMPUTE=0 or GRAPH=1 expected)");
    }
    if (static_cast<uint8_t>(m.code_type) > 3) {
      return fail(layout::kModules, name, " has code type ", int(m.code_type), " (0..3 expected)");
    }
    if (m.has_code && m.code_type == CodeType::kNone) {
      return fail(layout::kModules, name, " has code but code type NONE");
    }
    if (!m.spirv.empty() && !(m.has_code && m.code_type == CodeType::kSpirv)) {
      return fail(layout::kModules, name, " carries SPIR-V words but its code is ",
                  m.has_code ? to_string(m.code_type) : "absent");
    }
    if (!m.source.empty() && !(m.has_code && (m.code_type == CodeType::kGlsl || m.code_type == CodeType::kHlsl))) {
      return fail(layout::kModules, name, " carries source text but its code is ",
                  m.has_code ? to_string(m.code_type) : "absent");
    }
    return Status::Ok();
  }

  Status check_resource(const Resource& r, const std::string& name) const {
    if (static_cast<uint8_t>(r.category) > 3) {
      return fail(layout::kResources, name, " has category ", int(r.category), " (0..3 expected)");
    }
    for (size_t d = 0; d < r.shape.size(); ++d) {
      if (r.shape[d] < -1) {
        return fail(layout::kResources, name, ": shape dimension ", d, " is ", r.shape[d],
                    " (-1 for dynamic, else >= 0)");
      }
    }
    if (!r.strides.empty() && r.strides.size() != r.shape.size()) {
      return fail(layout::kResources, name, " has ", plural(r.strides.size(), "stride"), " for a rank-",
                  r.shape.size(), " shape");
    }
    return Status::Ok();
  }

  Status check_constant(const Constant& c, const std::string& name) const {
    const size_t n = f_.resources.size();
    if (c.mrt_index >= n) {
      return fail(layout::kConstants, name, " refers to resource ", c.mrt_index, " (", plural(n, "resource"),
                  ")");
    }
    const Resource& r = f_.resources[c.mrt_index];
    if (r.category != ResourceCategory::kConstant) {
      return fail(layout::kConstants, name, " refers to resource ", c.mrt_index, ", which is ",
                  to_string(r.category), ", not CONSTANT");
    }
    const int64_t rank = static_cast<int64_t>(r.shape.size());
    if (c.sparsity_dimension < -1 || c.sparsity_dimension >= rank) {
      return fail(layout::kConstants, name, " has sparsity dimension ", c.sparsity_dimension,
                  " (-1 for dense, else below the rank ", rank, " of resource ", c.mrt_index, ")");
    }
    return Status::Ok();
  }

  Status check_slot(const std::string& owner, const char* what, size_t i, const BindingSlot& slot) const {
    if (slot.mrt_index >= f_.resources.size()) {
      return fail(layout::kSequence, owner, ": ", what, " ", i, " (binding ", slot.binding, ") refers to resource ",
                  slot.mrt_index, " (", plural(f_.resources.size(), "resource"), ")");
    }
    return Status::Ok();
  }

  Status check_segment(size_t s) const {
    const Segment& seg = f_.sequence.segments[s];
    const std::string name = str_cat("segment ", s, at(&FilePositions::segments, s));
    if (static_cast<uint8_t>(seg.type) > 1) {
      return fail(layout::kSequence, name, " has type ", int(seg.type), " (COMPUTE=0 or GRAPH=1 expected)");
    }
    if (seg.module_index >= f_.modules.size()) {
      return fail(layout::kSequence, name, " refers to module ", seg.module_index, " (",
                  plural(f_.modules.size(), "module"), ")");
    }
    const Module& m = f_.modules[seg.module_index];
    if (m.type != seg.type) {
      return fail(layout::kSequence, name, " is ", to_string(seg.type), " but its module ", seg.module_index, " is ",
                  to_string(m.type));
    }
    std::map<uint32_t, size_t> set_numbers;  // set number -> position
    for (size_t k = 0; k < seg.descriptor_sets.size(); ++k) {
      const DescriptorSetInfo& set = seg.descriptor_sets[k];
      const uint32_t number = set.set_number(k);
      auto [it, fresh] = set_numbers.emplace(number, k);
      if (!fresh) {
        return fail(layout::kSequence, name, ": descriptor set infos ", it->second, " and ", k,
                    " both describe descriptor set ", number);
      }
      const std::string set_name = str_cat(name, ": descriptor set info ", k);
      std::map<uint32_t, uint32_t> bindings;  // binding number -> MRT index
      for (size_t b = 0; b < set.bindings.size(); ++b) {
        const BindingSlot& slot = set.bindings[b];
        GPUU_RETURN_IF_ERROR(check_slot(set_name, "binding slot", b, slot));
        auto [bit, new_binding] = bindings.emplace(slot.binding, slot.mrt_index);
        if (!new_binding && bit->second != slot.mrt_index) {
          return fail(layout::kSequence, set_name, " binds both resource ", bit->second, " and resource ",
                      slot.mrt_index, " at binding ", slot.binding);
        }
      }
    }
    for (size_t i = 0; i < seg.inputs.size(); ++i) GPUU_RETURN_IF_ERROR(check_slot(name, "input slot", i, seg.inputs[i]));
    for (size_t i = 0; i < seg.outputs.size(); ++i) {
      GPUU_RETURN_IF_ERROR(check_slot(name, "output slot", i, seg.outputs[i]));
    }
    std::set<uint32_t> seen;
    for (size_t i = 0; i < seg.constants.size(); ++i) {
      const uint32_t c = seg.constants[i];
      if (c >= f_.constants.size()) {
        return fail(layout::kSequence, name, ": constant ", i, " is constant index ", c, " (",
                    plural(f_.constants.size(), "constant"), ")");
      }
      if (!seen.insert(c).second) return fail(layout::kSequence, name, " lists constant index ", c, " twice");
    }
    std::set<uint32_t> ids;
    for (size_t i = 0; i < seg.constant_bindings.size(); ++i) {
      const GraphConstantBinding& b = seg.constant_bindings[i];
      if (b.constant_table_index >= f_.constants.size()) {
        return fail(layout::kSequence, name, ": graph constant binding ", i, " names constant index ",
                    b.constant_table_index, " (", plural(f_.constants.size(), "constant"), ")");
      }
      if (!ids.insert(b.graph_constant_id).second) {
        return fail(layout::kSequence, name, " binds graph constant id ", b.graph_constant_id, " twice");
      }
    }
    for (size_t i = 0; i < seg.push_constant_ranges.size(); ++i) {
      const PushConstantRange& r = seg.push_constant_ranges[i];
      if (r.offset % 4 != 0 || r.size % 4 != 0 || r.size == 0) {
        return fail(layout::kSequence, name, ": push constant range ", i, " (offset ", r.offset, ", size ", r.size,
                    ") needs offset and size in multiples of 4 and a size above 0");
      }
    }
    return Status::Ok();
  }

  Status check_sequence() const {
    const ModelSequence& seq = f_.sequence;
    for (size_t s = 0; s < seq.segments.size(); ++s) GPUU_RETURN_IF_ERROR(check_segment(s));
    const std::string model = str_cat("the model", where_ ? str_cat(" (at byte ", where_->sequence_root, ")") : "");
    for (size_t i = 0; i < seq.inputs.size(); ++i) GPUU_RETURN_IF_ERROR(check_slot(model, "input slot", i, seq.inputs[i]));
    for (size_t i = 0; i < seq.outputs.size(); ++i) {
      GPUU_RETURN_IF_ERROR(check_slot(model, "output slot", i, seq.outputs[i]));
    }
    if (!seq.input_names.empty() && seq.input_names.size() != seq.inputs.size()) {
      return fail(layout::kSequence, model, " has ", plural(seq.input_names.size(), "input name"), " for ",
                  plural(seq.inputs.size(), "input"));
    }
    if (!seq.output_names.empty() && seq.output_names.size() != seq.outputs.size()) {
      return fail(layout::kSequence, model, " has ", plural(seq.output_names.size(), "output name"), " for ",
                  plural(seq.outputs.size(), "output"));
    }
    return Status::Ok();
  }

  const VgfFile& f_;
  const FilePositions* where_;
};

}  // namespace

Status check_file(const VgfFile& file, const FilePositions* where) { return Checker(file, where).run(); }

}  // namespace gpuu::vgf::detail
