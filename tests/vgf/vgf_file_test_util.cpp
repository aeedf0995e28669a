// Golden samples, deep comparisons and a hand-made rich file for the VGF codec tests.
#include "vgf/vgf_file_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace gpuu::vgf::testing {

const std::vector<std::string> kGoldenFiles = {
    "sin_mul.vgf",
    "sin_mul_const.vgf",
    "single_maxpool_graph_v0_4_3.vgf",
    "single_maxpool_graph_pre_v0_4_0.vgf",
    "simple_conv2d_rescale_graph_v0_4_3.vgf",
    "simple_conv2d_rescale_graph_outdated.vgf",
};

const std::vector<std::string> kGolden043Files = {
    "sin_mul.vgf",
    "sin_mul_const.vgf",
    "single_maxpool_graph_v0_4_3.vgf",
    "simple_conv2d_rescale_graph_v0_4_3.vgf",
};

std::string sample_path(const std::string& name) { return std::string(GPUU_VGF_SAMPLES_DIR) + "/" + name; }

std::vector<uint8_t> read_sample(const std::string& name) {
  std::ifstream in(sample_path(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << sample_path(name);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_sample_text(const std::string& name) {
  std::ifstream in(sample_path(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << sample_path(name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string json_difference(const JsonValue& a, const JsonValue& b, const std::string& path) {
  if (a.kind() != b.kind()) {
    return path + ": " + json_kind_name(a.kind()) + " vs " + json_kind_name(b.kind());
  }
  switch (a.kind()) {
    case JsonValue::Kind::kNull: return "";
    case JsonValue::Kind::kBool: return a.as_bool() == b.as_bool() ? "" : path + ": bools differ";
    case JsonValue::Kind::kNumber:
      return a.as_number() == b.as_number() && a.as_integer() == b.as_integer() ? "" : path + ": numbers differ";
    case JsonValue::Kind::kString:
      return a.as_string() == b.as_string() ? "" : path + ": \"" + a.as_string() + "\" vs \"" + b.as_string() + "\"";
    case JsonValue::Kind::kArray: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (x.size() != y.size()) {
        return path + ": " + std::to_string(x.size()) + " vs " + std::to_string(y.size()) + " elements";
      }
      for (size_t i = 0; i < x.size(); ++i) {
        std::string d = json_difference(x[i], y[i], path + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
      }
      return "";
    }
    case JsonValue::Kind::kObject: {
      const auto& x = a.as_object();
      const auto& y = b.as_object();
      for (const auto& [key, value] : x) {
        const JsonValue* other = b.find(key);
        if (!other) return path + "." + key + ": missing on the right";
        std::string d = json_difference(value, *other, path + "." + key);
        if (!d.empty()) return d;
      }
      for (const auto& [key, value] : y) {
        if (!a.find(key)) return path + "." + key + ": missing on the left";
      }
      return "";
    }
  }
  return "";
}

namespace {

std::string slots_difference(const std::vector<BindingSlot>& a, const std::vector<BindingSlot>& b,
                             const std::string& what) {
  if (a.size() != b.size()) return what + ": sizes differ";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return what + "[" + std::to_string(i) + "] differs";
  }
  return "";
}

}  // namespace

std::string content_difference(const VgfFile& a, const VgfFile& b, bool compare_header) {
  std::ostringstream d;
  if (compare_header) {
    if (!(a.header.version == b.header.version)) return "header.version";
    if (a.header.legacy_magic != b.header.legacy_magic) return "header.legacy_magic";
  }
  if (a.header.vk_header_version != b.header.vk_header_version) return "header.vk_header_version";
  if (a.modules.size() != b.modules.size()) return "modules.size";
  for (size_t i = 0; i < a.modules.size(); ++i) {
    const Module& x = a.modules[i];
    const Module& y = b.modules[i];
    if (x.type != y.type || x.name != y.name || x.entry_point != y.entry_point || x.code_type != y.code_type ||
        x.has_code != y.has_code || x.spirv != y.spirv || x.source != y.source) {
      return "modules[" + std::to_string(i) + "]";
    }
  }
  if (a.resources.size() != b.resources.size()) return "resources.size";
  for (size_t i = 0; i < a.resources.size(); ++i) {
    const Resource& x = a.resources[i];
    const Resource& y = b.resources[i];
    if (x.category != y.category || x.vk_descriptor_type != y.vk_descriptor_type || x.vk_format != y.vk_format ||
        x.shape != y.shape || x.strides != y.strides || x.sampler != y.sampler ||
        x.alias_group_id != y.alias_group_id) {
      return "resources[" + std::to_string(i) + "]";
    }
  }
  if (a.constants.size() != b.constants.size()) return "constants.size";
  for (size_t i = 0; i < a.constants.size(); ++i) {
    const Constant& x = a.constants[i];
    const Constant& y = b.constants[i];
    if (x.mrt_index != y.mrt_index || x.sparsity_dimension != y.sparsity_dimension || !x.data.same_bytes(y.data)) {
      return "constants[" + std::to_string(i) + "]";
    }
  }
  const ModelSequence& p = a.sequence;
  const ModelSequence& q = b.sequence;
  if (p.segments.size() != q.segments.size()) return "segments.size";
  for (size_t i = 0; i < p.segments.size(); ++i) {
    const Segment& x = p.segments[i];
    const Segment& y = q.segments[i];
    const std::string at = "segments[" + std::to_string(i) + "]";
    if (x.type != y.type || x.name != y.name || x.module_index != y.module_index || x.constants != y.constants ||
        x.dispatch_shape != y.dispatch_shape) {
      return at;
    }
    if (x.descriptor_sets.size() != y.descriptor_sets.size()) return at + ".descriptor_sets.size";
    for (size_t k = 0; k < x.descriptor_sets.size(); ++k) {
      if (x.descriptor_sets[k].set_index != y.descriptor_sets[k].set_index) return at + ".set_index";
      std::string s = slots_difference(x.descriptor_sets[k].bindings, y.descriptor_sets[k].bindings,
                                       at + ".descriptor_sets[" + std::to_string(k) + "]");
      if (!s.empty()) return s;
    }
    std::string s = slots_difference(x.inputs, y.inputs, at + ".inputs");
    if (s.empty()) s = slots_difference(x.outputs, y.outputs, at + ".outputs");
    if (!s.empty()) return s;
    if (x.push_constant_ranges.size() != y.push_constant_ranges.size()) return at + ".push_constant_ranges";
    for (size_t k = 0; k < x.push_constant_ranges.size(); ++k) {
      const auto& r = x.push_constant_ranges[k];
      const auto& t = y.push_constant_ranges[k];
      if (r.stage_flags != t.stage_flags || r.offset != t.offset || r.size != t.size) return at + ".push_constant_ranges";
    }
  }
  std::string s = slots_difference(p.inputs, q.inputs, "sequence.inputs");
  if (s.empty()) s = slots_difference(p.outputs, q.outputs, "sequence.outputs");
  if (!s.empty()) return s;
  if (p.input_names != q.input_names) return "sequence.input_names";
  if (p.output_names != q.output_names) return "sequence.output_names";
  return "";
}

VgfFile make_rich_file() {
  VgfFile f;
  f.header.vk_header_version = 999;
  // Modules: two graphs, a SPIR-V compute shader, a placeholder, GLSL and HLSL sources.
  f.modules.push_back(Module::with_spirv(ModuleType::kGraph, "graph_partition_0", "main", {0x07230203, 0x00010600, 1, 2}));
  f.modules.push_back(Module::with_spirv(ModuleType::kCompute, "custom_softmax", "main", {0x07230203, 7, 7, 7, 9}));
  f.modules.push_back(Module::with_spirv(ModuleType::kGraph, "graph_partition_1", "graph_main", {0x07230203}));
  Module placeholder;
  placeholder.type = ModuleType::kCompute;
  placeholder.name = "supplied_at_load";
  placeholder.entry_point = "cs_main";
  placeholder.code_type = CodeType::kSpirv;
  placeholder.has_code = false;
  f.modules.push_back(placeholder);
  Module glsl;
  glsl.type = ModuleType::kCompute;
  glsl.name = "glsl_shader";
  glsl.entry_point = "main";
  glsl.code_type = CodeType::kGlsl;
  glsl.has_code = true;
  glsl.source = "#version 450\nvoid main() {}\n";
  f.modules.push_back(glsl);
  Module hlsl = glsl;
  hlsl.name = "hlsl_shader";
  hlsl.code_type = CodeType::kHlsl;
  hlsl.source = "[numthreads(1,1,1)] void main() {}";
  f.modules.push_back(hlsl);

  // Resources: constants first (as model-converter does), then IO and intermediates.
  auto add = [&](ResourceCategory c, uint32_t desc, uint32_t format, std::vector<int64_t> shape,
                 std::vector<int64_t> strides = {}) {
    Resource r;
    r.category = c;
    r.vk_descriptor_type = desc;
    r.vk_format = format;
    r.shape = std::move(shape);
    r.strides = std::move(strides);
    f.resources.push_back(r);
    return static_cast<uint32_t>(f.resources.size() - 1);
  };
  const uint32_t c0 = add(ResourceCategory::kConstant, kNoDescriptorType, 100, {2, 4});
  const uint32_t c1 = add(ResourceCategory::kConstant, kNoDescriptorType, 14, {4, 8});
  const uint32_t c2 = add(ResourceCategory::kConstant, kNoDescriptorType, 76, {3});
  const uint32_t in0 = add(ResourceCategory::kInput, kVkDescriptorTypeTensorArm, 100, {-1, 2, 4});
  const uint32_t in1 = add(ResourceCategory::kInput, kVkDescriptorTypeTensorArm, 99, {1});
  const uint32_t mid = add(ResourceCategory::kIntermediate, kVkDescriptorTypeTensorArm, 100, {1, 2, 4}, {32, 16, 4});
  const uint32_t mid2 = add(ResourceCategory::kIntermediate, kVkDescriptorTypeStorageBuffer, 0, {32});
  const uint32_t out0 = add(ResourceCategory::kOutput, kVkDescriptorTypeTensorArm, 100, {1, 2, 4});
  const uint32_t img = add(ResourceCategory::kInput, 1, 37, {1, 8, 8, 4});
  f.resources[img].sampler = SamplerConfig{1, 0, 2, 3, 4};
  f.resources[mid2].alias_group_id = 5;
  f.resources[mid].alias_group_id = 5;

  // Constants: dense, 2:4 sparse along dimension 1, a 6-byte one (padding) and an empty one.
  std::vector<float> w0 = {0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f};
  f.constants.push_back(Constant{c0, -1, Blob::copy_of(w0.data(), w0.size() * sizeof(float))});
  std::vector<int8_t> w1 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  f.constants.push_back(Constant{c1, 1, Blob::copy_of(w1.data(), w1.size())});
  const uint8_t w2[6] = {0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF};
  f.constants.push_back(Constant{c2, -1, Blob::copy_of(w2, sizeof(w2))});
  f.constants.push_back(Constant{c2, 0, Blob()});

  // Segments: graph, compute (two descriptor sets, explicit set numbers, push constants), graph.
  Segment g0;
  g0.type = ModuleType::kGraph;
  g0.name = "graph_segment_0";
  g0.module_index = 0;
  g0.inputs = {{0, in0}, {1, in1}};
  g0.outputs = {{3, mid}};
  g0.descriptor_sets = {DescriptorSetInfo{{{0, in0}, {1, in1}, {3, mid}}, kUnsetSetIndex}};
  g0.constants = {0, 2};
  Segment cs;
  cs.type = ModuleType::kCompute;
  cs.name = "compute_segment_0";
  cs.module_index = 1;
  cs.inputs = {{0, mid}};
  cs.outputs = {{0, mid2}};
  cs.descriptor_sets = {DescriptorSetInfo{{{0, mid}, {2, img}}, 0}, DescriptorSetInfo{{{0, mid2}}, 3}};
  cs.dispatch_shape = {4, 2, 1};
  cs.push_constant_ranges = {PushConstantRange{0x20, 0, 16}, PushConstantRange{0x20, 16, 8}};
  Segment g1;
  g1.type = ModuleType::kGraph;
  g1.name = "graph_segment_1";
  g1.module_index = 2;
  g1.inputs = {{4, mid2}};
  g1.outputs = {{5, out0}};
  g1.descriptor_sets = {DescriptorSetInfo{{{4, mid2}, {5, out0}}, kUnsetSetIndex}};
  g1.constants = {3, 1};
  Segment cs2;  // runs the placeholder module with no bindings at all
  cs2.type = ModuleType::kCompute;
  cs2.name = "compute_segment_1";
  cs2.module_index = 3;
  cs2.dispatch_shape = {1, 1, 1};
  f.sequence.segments = {g0, cs, g1, cs2};
  f.sequence.inputs = {{0, in0}, {1, in1}};
  f.sequence.outputs = {{5, out0}};
  f.sequence.input_names = {"x", "scale \"quoted\" \xC3\xA9"};
  f.sequence.output_names = {"y"};
  return f;
}

}  // namespace gpuu::vgf::testing
