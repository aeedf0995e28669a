// dump_vgf_json: the JSON view Arm's vgf_dump prints (same keys and values;
// text laid out as nlohmann::json::dump(4): sorted keys, four-space indent).
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/json_writer.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_vulkan_names.h"

namespace gpuu::vgf {
namespace {

// Valid UTF-8 passes through; each invalid byte becomes U+FFFD, so that the
// dump is always valid JSON whatever bytes a name holds.
std::string utf8_or_replacement(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? c : (len == 2 ? c & 0x1F : (len == 3 ? c & 0x0F : c & 0x07));
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (ok && len > 1 && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      i += 1;
    }
  }
  return out;
}

// Writes JSON laid out as nlohmann::json::dump(4). Callers give object keys in
// sorted order (nlohmann keeps objects in a std::map), which this does not check.
class PrettyJson {
 public:
  PrettyJson& begin_object() { return open('{'); }
  PrettyJson& end_object() { return close('}'); }
  PrettyJson& begin_array() { return open('['); }
  PrettyJson& end_array() { return close(']'); }
  PrettyJson& key(std::string_view name) {
    next_element();
    JsonWriter::append_quoted(&out_, name);
    out_.append(": ");
    key_pending_ = true;
    return *this;
  }
  PrettyJson& value(int64_t v) {
    before_value();
    out_.append(std::to_string(v));
    return *this;
  }
  PrettyJson& value(bool v) {
    before_value();
    out_.append(v ? "true" : "false");
    return *this;
  }
  PrettyJson& value(std::string_view text) {
    before_value();
    JsonWriter::append_quoted(&out_, utf8_or_replacement(text));
    return *this;
  }
  PrettyJson& value(const char* text) { return value(std::string_view(text)); }
  template <typename T>
  PrettyJson& field(std::string_view name, const T& v) {
    key(name);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return value(static_cast<int64_t>(v));
    else return value(v);
  }
  template <typename Container>
  PrettyJson& int_array(std::string_view name, const Container& values) {
    key(name).begin_array();
    for (auto v : values) value(static_cast<int64_t>(v));
    return end_array();
  }
  std::string take() { return std::move(out_); }

 private:
  PrettyJson& open(char c) {
    before_value();
    out_.push_back(c);
    empty_.push_back(true);
    return *this;
  }
  PrettyJson& close(char c) {
    const bool empty = empty_.back();
    empty_.pop_back();
    if (!empty) {
      out_.push_back('\n');
      out_.append(empty_.size() * 4, ' ');
    }
    out_.push_back(c);
    return *this;
  }
  // A new member or element: comma after the previous one, newline, indent.
  void next_element() {
    if (empty_.empty()) return;
    if (!empty_.back()) out_.push_back(',');
    empty_.back() = false;
    out_.push_back('\n');
    out_.append(empty_.size() * 4, ' ');
  }
  void before_value() {
    if (key_pending_) {
      key_pending_ = false;
      return;
    }
    next_element();  // an array element (or the top-level value)
  }

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool key_pending_ = false;
};

void slot_fields(PrettyJson& j, const BindingSlot& s, size_t index) {
  j.field("binding", s.binding).field("index", index).field("mrt_index", s.mrt_index);
}

void slots_array(PrettyJson& j, std::string_view name, const std::vector<BindingSlot>& slots) {
  j.key(name).begin_array();
  for (size_t i = 0; i < slots.size(); ++i) {
    j.begin_object();
    slot_fields(j, slots[i], i);
    j.end_object();
  }
  j.end_array();
}

// Model inputs/outputs also carry their name when the file has names.
void named_slots_array(PrettyJson& j, std::string_view name, const std::vector<BindingSlot>& slots,
                       const std::vector<std::string>& names) {
  j.key(name).begin_array();
  for (size_t i = 0; i < slots.size(); ++i) {
    j.begin_object();
    slot_fields(j, slots[i], i);
    if (i < names.size()) j.field("name", names[i]);
    j.end_object();
  }
  j.end_array();
}

std::string enum_name(const char* name, uint32_t value) {
  return name ? std::string(name) : str_cat("unknown (", value, ")");
}

void segment_object(PrettyJson& j, const Segment& seg, size_t index, DumpStyle style) {
  j.begin_object();
  if (style == DumpStyle::kVgfLibrary0_11) {
    j.key("constant_bindings").begin_array();
    for (const GraphConstantBinding& b : seg.effective_constant_bindings()) {
      j.begin_object().field("constant_table_index", b.constant_table_index);
      j.field("graph_constant_id", b.graph_constant_id).end_object();
    }
    j.end_array();
  }
  j.int_array("constants", seg.constants);
  j.key("descriptor_set_infos").begin_array();
  for (size_t k = 0; k < seg.descriptor_sets.size(); ++k) {
    const DescriptorSetInfo& d = seg.descriptor_sets[k];
    j.begin_object();
    slots_array(j, "bindings", d.bindings);
    j.field("set_index", d.set_number(k));
    j.end_object();
  }
  j.end_array();
  j.int_array("dispatch_shape", seg.dispatch_shape);
  j.field("index", index);
  slots_array(j, "inputs", seg.inputs);
  j.field("module_index", seg.module_index);
  j.field("name", seg.name);
  slots_array(j, "outputs", seg.outputs);
  j.key("push_constant_ranges").begin_array();
  for (size_t k = 0; k < seg.push_constant_ranges.size(); ++k) {
    const PushConstantRange& r = seg.push_constant_ranges[k];
    j.begin_object().field("index", k).field("offset", r.offset).field("size", r.size);
    j.field("stage_flags", r.stage_flags).end_object();
  }
  j.end_array();
  j.field("type", to_string(seg.type));
  j.end_object();
}

void resource_object(PrettyJson& j, const Resource& r, size_t index) {
  j.begin_object();
  // alias_group_id and sampler_config are not in Arm's 0.10.0 dumps: shown only
  // when set, so that every file without them dumps exactly as Arm's tool does.
  if (r.alias_group_id != kNoAliasGroup) j.field("alias_group_id", r.alias_group_id);
  j.field("category", to_string(r.category));
  j.field("index", index);
  if (r.sampler) {
    const SamplerConfig& c = *r.sampler;
    j.key("sampler_config").begin_object();
    j.field("address_mode_u", c.address_mode_u).field("address_mode_v", c.address_mode_v);
    j.field("border_color", c.border_color).field("mag_filter", c.mag_filter).field("min_filter", c.min_filter);
    j.end_object();
  }
  j.int_array("shape", r.shape);
  j.int_array("stride", r.strides);
  j.field("vk_descriptor_type", r.vk_descriptor_type == kNoDescriptorType
                                    ? std::string("none")
                                    : enum_name(vk_descriptor_type_name(r.vk_descriptor_type), r.vk_descriptor_type));
  j.field("vk_format", enum_name(vk_format_name(r.vk_format), r.vk_format));
  j.end_object();
}

}  // namespace

std::string dump_vgf_json(const VgfFile& file, DumpStyle style) {
  PrettyJson j;
  j.begin_object();
  j.key("constants").begin_array();
  for (size_t i = 0; i < file.constants.size(); ++i) {
    const Constant& c = file.constants[i];
    j.begin_object().field("index", i).field("mrt_index", c.mrt_index);
    j.field("sparsity_dimension", c.sparsity_dimension).end_object();
  }
  j.end_array();
  const FormatVersion& v = file.header.version;
  j.key("header").begin_object().field("major", v.major).field("minor", v.minor).field("patch", v.patch).end_object();

  const ModelSequence& seq = file.sequence;
  j.key("model_sequence").begin_object();
  named_slots_array(j, "inputs", seq.inputs, seq.input_names);
  named_slots_array(j, "outputs", seq.outputs, seq.output_names);
  j.key("segments").begin_array();
  for (size_t i = 0; i < seq.segments.size(); ++i) segment_object(j, seq.segments[i], i, style);
  j.end_array();
  j.end_object();

  j.key("modules").begin_array();
  for (size_t i = 0; i < file.modules.size(); ++i) {
    const Module& m = file.modules[i];
    j.begin_object().field("entry_point", m.entry_point).field("index", i).field("name", m.name);
    j.field("shader_code_available", m.has_code).field("shader_type", to_string(m.code_type));
    j.field("type", to_string(m.type)).end_object();
  }
  j.end_array();

  j.key("resources").begin_array();
  for (size_t i = 0; i < file.resources.size(); ++i) resource_object(j, file.resources[i], i);
  j.end_array();
  j.end_object();
  return j.take();
}

}  // namespace gpuu::vgf
