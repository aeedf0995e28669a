// dump_vgf_json: the JSON view Arm's vgf_dump prints (same keys and values;
// text laid out as nlohmann::json::dump(4): sorted keys, four-space indent).
#include <algorithm>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/json_writer.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_vulkan_names.h"

namespace gpuu::vgf {
namespace {

using Object = JsonValue::Object;
using Array = JsonValue::Array;

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

JsonValue str(std::string_view s) { return JsonValue::string(utf8_or_replacement(s)); }
JsonValue num(int64_t v) { return JsonValue::integer(v); }

template <typename T>
JsonValue int_array(const T& values) {
  Array a;
  for (auto v : values) a.push_back(num(static_cast<int64_t>(v)));
  return JsonValue::array(std::move(a));
}

JsonValue slot_json(const BindingSlot& s, size_t index) {
  return JsonValue::object({{"binding", num(s.binding)}, {"index", num(static_cast<int64_t>(index))},
                            {"mrt_index", num(s.mrt_index)}});
}

JsonValue slots_json(const std::vector<BindingSlot>& slots) {
  Array a;
  for (size_t i = 0; i < slots.size(); ++i) a.push_back(slot_json(slots[i], i));
  return JsonValue::array(std::move(a));
}

// Model inputs/outputs also carry their name when the file has names.
JsonValue named_slots_json(const std::vector<BindingSlot>& slots, const std::vector<std::string>& names) {
  Array a;
  for (size_t i = 0; i < slots.size(); ++i) {
    Object o = slot_json(slots[i], i).as_object();
    if (i < names.size()) o.emplace_back("name", str(names[i]));
    a.push_back(JsonValue::object(std::move(o)));
  }
  return JsonValue::array(std::move(a));
}

std::string enum_name(const char* name, uint32_t value) {
  return name ? std::string(name) : str_cat("unknown (", value, ")");
}

JsonValue segment_json(const Segment& seg, size_t index) {
  Array sets;
  for (size_t k = 0; k < seg.descriptor_sets.size(); ++k) {
    const DescriptorSetInfo& d = seg.descriptor_sets[k];
    sets.push_back(JsonValue::object({{"bindings", slots_json(d.bindings)}, {"set_index", num(d.set_number(k))}}));
  }
  Array ranges;
  for (size_t k = 0; k < seg.push_constant_ranges.size(); ++k) {
    const PushConstantRange& r = seg.push_constant_ranges[k];
    ranges.push_back(JsonValue::object({{"index", num(static_cast<int64_t>(k))}, {"offset", num(r.offset)},
                                        {"size", num(r.size)}, {"stage_flags", num(r.stage_flags)}}));
  }
  return JsonValue::object({{"constants", int_array(seg.constants)},
                            {"descriptor_set_infos", JsonValue::array(std::move(sets))},
                            {"dispatch_shape", int_array(seg.dispatch_shape)},
                            {"index", num(static_cast<int64_t>(index))},
                            {"inputs", slots_json(seg.inputs)},
                            {"module_index", num(seg.module_index)},
                            {"name", str(seg.name)},
                            {"outputs", slots_json(seg.outputs)},
                            {"push_constant_ranges", JsonValue::array(std::move(ranges))},
                            {"type", str(to_string(seg.type))}});
}

JsonValue resource_json(const Resource& r, size_t index) {
  Object o = {{"category", str(to_string(r.category))},
              {"index", num(static_cast<int64_t>(index))},
              {"shape", int_array(r.shape)},
              {"stride", int_array(r.strides)},
              {"vk_descriptor_type", str(r.vk_descriptor_type == kNoDescriptorType
                                             ? std::string("none")
                                             : enum_name(vk_descriptor_type_name(r.vk_descriptor_type),
                                                         r.vk_descriptor_type))},
              {"vk_format", str(enum_name(vk_format_name(r.vk_format), r.vk_format))}};
  // Not in Arm's 0.10.0 samples: shown only when set, so that older files dump as Arm's do.
  if (r.alias_group_id != kNoAliasGroup) o.emplace_back("alias_group_id", num(r.alias_group_id));
  if (r.sampler) {
    const SamplerConfig& c = *r.sampler;
    o.emplace_back("sampler_config", JsonValue::object({{"address_mode_u", num(c.address_mode_u)},
                                                        {"address_mode_v", num(c.address_mode_v)},
                                                        {"border_color", num(c.border_color)},
                                                        {"mag_filter", num(c.mag_filter)},
                                                        {"min_filter", num(c.min_filter)}}));
  }
  return JsonValue::object(std::move(o));
}

void indent(std::string* out, int depth) { out->append(static_cast<size_t>(depth) * 4, ' '); }

void print(const JsonValue& v, int depth, std::string* out) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: out->append("null"); return;
    case JsonValue::Kind::kBool: out->append(v.as_bool() ? "true" : "false"); return;
    case JsonValue::Kind::kNumber: out->append(std::to_string(v.as_integer())); return;
    case JsonValue::Kind::kString: JsonWriter::append_quoted(out, v.as_string()); return;
    case JsonValue::Kind::kArray: {
      const Array& a = v.as_array();
      if (a.empty()) {
        out->append("[]");
        return;
      }
      out->append("[\n");
      for (size_t i = 0; i < a.size(); ++i) {
        indent(out, depth + 1);
        print(a[i], depth + 1, out);
        out->append(i + 1 < a.size() ? ",\n" : "\n");
      }
      indent(out, depth);
      out->push_back(']');
      return;
    }
    case JsonValue::Kind::kObject: {
      Object o = v.as_object();
      if (o.empty()) {
        out->append("{}");
        return;
      }
      std::sort(o.begin(), o.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out->append("{\n");
      for (size_t i = 0; i < o.size(); ++i) {
        indent(out, depth + 1);
        JsonWriter::append_quoted(out, o[i].first);
        out->append(": ");
        print(o[i].second, depth + 1, out);
        out->append(i + 1 < o.size() ? ",\n" : "\n");
      }
      indent(out, depth);
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

std::string dump_vgf_json(const VgfFile& file) {
  Array constants;
  for (size_t i = 0; i < file.constants.size(); ++i) {
    const Constant& c = file.constants[i];
    constants.push_back(JsonValue::object({{"index", num(static_cast<int64_t>(i))},
                                           {"mrt_index", num(c.mrt_index)},
                                           {"sparsity_dimension", num(c.sparsity_dimension)}}));
  }
  const FormatVersion& v = file.header.version;
  JsonValue header = JsonValue::object({{"major", num(v.major)}, {"minor", num(v.minor)}, {"patch", num(v.patch)}});

  const ModelSequence& seq = file.sequence;
  Array segments;
  for (size_t i = 0; i < seq.segments.size(); ++i) segments.push_back(segment_json(seq.segments[i], i));
  JsonValue sequence = JsonValue::object({{"inputs", named_slots_json(seq.inputs, seq.input_names)},
                                          {"outputs", named_slots_json(seq.outputs, seq.output_names)},
                                          {"segments", JsonValue::array(std::move(segments))}});

  Array modules;
  for (size_t i = 0; i < file.modules.size(); ++i) {
    const Module& m = file.modules[i];
    modules.push_back(JsonValue::object({{"entry_point", str(m.entry_point)},
                                         {"index", num(static_cast<int64_t>(i))},
                                         {"name", str(m.name)},
                                         {"shader_code_available", JsonValue::boolean(m.has_code)},
                                         {"shader_type", str(to_string(m.code_type))},
                                         {"type", str(to_string(m.type))}}));
  }
  Array resources;
  for (size_t i = 0; i < file.resources.size(); ++i) resources.push_back(resource_json(file.resources[i], i));

  JsonValue doc = JsonValue::object({{"constants", JsonValue::array(std::move(constants))},
                                     {"header", std::move(header)},
                                     {"model_sequence", std::move(sequence)},
                                     {"modules", JsonValue::array(std::move(modules))},
                                     {"resources", JsonValue::array(std::move(resources))}});
  std::string out;
  print(doc, 0, &out);
  return out;
}

}  // namespace gpuu::vgf
