// VGF codec against Arm's golden files (decode, vgf_dump view, byte-exact
// re-encode, builder call replay), round trips of every table, precise errors.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "base/json.h"
#include "vgf/schema/vgf_generated.h"
#include "vgf/vgf_builder.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_file_test_util.h"
#include "vgf/vgf_layout.h"

namespace gpuu::vgf {
namespace {

using testing::content_difference;
using testing::json_difference;
using testing::kGolden043Files;
using testing::kGoldenFiles;
using testing::make_rich_file;
using testing::read_sample;
using testing::read_sample_text;

std::string dump_name(const std::string& vgf_name) {
  return vgf_name.substr(0, vgf_name.size() - 4) + ".dump.json";
}

// The first differing byte, for readable failures.
std::string first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) return str_cat("byte ", i, ": ", int(a[i]), " vs ", int(b[i]));
  }
  return a.size() == b.size() ? "none" : str_cat("sizes ", a.size(), " vs ", b.size());
}

std::vector<uint32_t> read_words(const std::string& name) {
  std::vector<uint8_t> bytes = read_sample(name);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

uint64_t header_u64(const std::vector<uint8_t>& file, size_t offset) {
  return layout::load_le<uint64_t>(file.data() + offset);
}

// ---------------------------------------------------------------------------
// Golden files

TEST(VgfGolden, EveryGoldenFileDecodesAndDumpsAsArmsVgfDump) {
  for (const std::string& name : kGoldenFiles) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bytes = read_sample(name);
    Result<VgfFile> file = decode_vgf(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.status().message();
    const std::string dump = dump_vgf_json(*file);
    const std::string golden = read_sample_text(dump_name(name));
    Result<JsonValue> ours = parse_json(dump);
    ASSERT_TRUE(ours.ok()) << ours.status().message();
    Result<JsonValue> arms = parse_json(golden);
    ASSERT_TRUE(arms.ok()) << arms.status().message();
    EXPECT_EQ(json_difference(*ours, *arms), "");
    // Laid out as nlohmann's dump(4), the text itself matches too.
    EXPECT_EQ(dump, golden);
  }
}

TEST(VgfGolden, Format043FilesReencodeByteIdentically) {
  for (const std::string& name : kGolden043Files) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bytes = read_sample(name);
    Result<VgfFile> file = decode_vgf(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.status().message();
    Result<std::vector<uint8_t>> again = encode_vgf(*file);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(*again, bytes) << "first difference: " << first_difference(*again, bytes);
  }
}

TEST(VgfGolden, LegacyFilesDecodeLikeTheir043TwinsAndReencodeToThem) {
  const std::pair<const char*, const char*> twins[] = {
      {"single_maxpool_graph_pre_v0_4_0.vgf", "single_maxpool_graph_v0_4_3.vgf"},
      {"simple_conv2d_rescale_graph_outdated.vgf", "simple_conv2d_rescale_graph_v0_4_3.vgf"}};
  for (const auto& [old_name, new_name] : twins) {
    SCOPED_TRACE(old_name);
    std::vector<uint8_t> old_bytes = read_sample(old_name);
    std::vector<uint8_t> new_bytes = read_sample(new_name);
    Result<VgfFile> old_file = decode_vgf(old_bytes.data(), old_bytes.size());
    Result<VgfFile> new_file = decode_vgf(new_bytes.data(), new_bytes.size());
    ASSERT_TRUE(old_file.ok()) << old_file.status().message();
    ASSERT_TRUE(new_file.ok()) << new_file.status().message();
    EXPECT_EQ(old_file->header.version, (FormatVersion{0, 3, 0}));
    EXPECT_EQ(new_file->header.version, (FormatVersion{0, 4, 3}));
    EXPECT_EQ(content_difference(*old_file, *new_file, /*compare_header=*/false), "");
    // Arm's vgf_updater made the 0.4.3 twins from these; our encoder does the same.
    Result<std::vector<uint8_t>> upgraded = encode_vgf(*old_file);
    ASSERT_TRUE(upgraded.ok()) << upgraded.status().message();
    EXPECT_EQ(*upgraded, new_bytes) << "first difference: " << first_difference(*upgraded, new_bytes);
  }
}

TEST(VgfGolden, SinMulConstHoldsItsWeightsAsAViewOfTheCallersBytes) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  Result<VgfFile> file = decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->constants.size(), 1u);
  const Constant& c = file->constants[0];
  EXPECT_EQ(c.mrt_index, 0u);
  EXPECT_EQ(c.sparsity_dimension, -1);
  ASSERT_EQ(c.data.size(), 192u);
  EXPECT_EQ(c.data.data(), bytes.data() + 1568 + 16 + 24) << "no copy: the payload is viewed in place";
  for (int i = 0; i < 48; ++i) {
    float v;
    std::memcpy(&v, c.data.data() + 4 * i, 4);
    EXPECT_EQ(v, 0.5f * static_cast<float>(i));
  }
  const Resource& r = file->resources[0];
  EXPECT_EQ(r.category, ResourceCategory::kConstant);
  EXPECT_EQ(r.vk_descriptor_type, kNoDescriptorType);
  EXPECT_EQ(r.vk_format, 100u);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{1, 3, 4, 4}));
  EXPECT_EQ(file->modules[0].spirv, read_words("sin_mul_const.spv"));
  EXPECT_EQ(file->sequence.segments[0].constants, (std::vector<uint32_t>{0}));
}

TEST(VgfGolden, LegacyConstantsAreViewedInPlaceToo) {
  std::vector<uint8_t> bytes = read_sample("simple_conv2d_rescale_graph_outdated.vgf");
  Result<VgfFile> file = decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->constants.size(), 1u);
  const Blob& data = file->constants[0].data;
  EXPECT_EQ(data.size(), 1024u);
  EXPECT_GE(data.data(), bytes.data() + 844);
  EXPECT_LE(data.data() + data.size(), bytes.data() + bytes.size());
}

TEST(VgfGolden, BlobInputKeepsItsOwnerAliveForTheConstants) {
  Blob file = Blob::take(read_sample("sin_mul_const.vgf"));
  std::weak_ptr<const void> owner = file.owner();
  Result<VgfFile> decoded = decode_vgf(file);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  file = Blob();
  EXPECT_FALSE(owner.expired()) << "the constant's Blob holds the file";
  float last;
  std::memcpy(&last, decoded->constants[0].data.data() + 47 * 4, 4);
  EXPECT_EQ(last, 23.5f);
}

TEST(VgfGolden, DecodesFromAnUnalignedBuffer) {
  std::vector<uint8_t> bytes = read_sample("simple_conv2d_rescale_graph_v0_4_3.vgf");
  std::vector<uint8_t> shifted(bytes.size() + 3);
  std::memcpy(shifted.data() + 3, bytes.data(), bytes.size());
  Result<VgfFile> file = decode_vgf(shifted.data() + 3, bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->resources[2].shape, (std::vector<int64_t>{16, 2, 2, 16}));
  EXPECT_EQ(file->constants[0].data.data(), shifted.data() + 3 + 848 + 16 + 24);
  Result<std::vector<uint8_t>> again = encode_vgf(*file);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, bytes);
}

// ---------------------------------------------------------------------------
// Builder: the README's call list

std::vector<float> sin_mul_weights() {
  std::vector<float> w(48);
  for (int i = 0; i < 48; ++i) w[i] = 0.5f * static_cast<float>(i);
  return w;
}

std::vector<uint8_t> build_sin_mul(bool with_constant) {
  VgfBuilder b(0);
  ModuleRef module = b.add_module(ModuleType::kGraph, "graph_partition_0", "main",
                                  read_words(with_constant ? "sin_mul_const.spv" : "sin_mul.spv"));
  std::vector<ConstantRef> constants;
  if (with_constant) {
    ResourceRef res = b.add_constant_resource(100, {1, 3, 4, 4}, {});
    std::vector<float> w = sin_mul_weights();
    constants.push_back(b.add_constant(res, w.data(), 192));
  }
  ResourceRef in = b.add_input_resource(kVkDescriptorTypeTensorArm, 100, {1, 3, 4, 4}, {});
  ResourceRef out = b.add_output_resource(kVkDescriptorTypeTensorArm, 100, {1, 3, 4, 4}, {});
  BindingSlotRef b0 = b.add_binding_slot(0, in);
  BindingSlotRef b1 = b.add_binding_slot(1, out);
  DescriptorSetInfoRef ds = b.add_descriptor_set_info({b0, b1});
  b.add_segment_info(module, "graph_segment_0", {ds}, {b0}, {b1}, constants, {});
  b.add_model_sequence_inputs_outputs({b0}, {"input_0"}, {b1}, {"output_0"});
  Result<std::vector<uint8_t>> bytes = b.finish();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

TEST(VgfBuilder, ReplayingTheReadmeCallsReproducesSinMul) {
  std::vector<uint8_t> golden = read_sample("sin_mul.vgf");
  std::vector<uint8_t> ours = build_sin_mul(false);
  EXPECT_EQ(ours, golden) << "first difference: " << first_difference(ours, golden);
}

TEST(VgfBuilder, ReplayingTheReadmeCallsReproducesSinMulConst) {
  std::vector<uint8_t> golden = read_sample("sin_mul_const.vgf");
  std::vector<uint8_t> ours = build_sin_mul(true);
  EXPECT_EQ(ours, golden) << "first difference: " << first_difference(ours, golden);
  // The README's section map.
  EXPECT_EQ(header_u64(ours, 16), 128u);
  EXPECT_EQ(header_u64(ours, 24), 840u);
  EXPECT_EQ(header_u64(ours, 32), 968u);
  EXPECT_EQ(header_u64(ours, 48), 1280u);
  EXPECT_EQ(header_u64(ours, 64), 1568u);
  EXPECT_EQ(header_u64(ours, 72), 232u);
}

TEST(VgfBuilder, ModelMatchesWhatTheDecoderReadsBack) {
  VgfBuilder b(7);
  ModuleRef m = b.add_module(ModuleType::kCompute, "cs", "main", {1, 2, 3});
  ResourceRef in = b.add_input_resource(kVkDescriptorTypeStorageBuffer, 0, {64}, {});
  ResourceRef out = b.add_output_resource(kVkDescriptorTypeStorageBuffer, 0, {64}, {});
  BindingSlotRef s0 = b.add_binding_slot(0, in);
  BindingSlotRef s1 = b.add_binding_slot(1, out);
  DescriptorSetInfoRef ds = b.add_descriptor_set_info({s0, s1}, 2);
  PushConstantRangeRef pc = b.add_push_const_range(0x20, 0, 4);
  b.add_segment_info(m, "compute_segment_0", {ds}, {s0}, {s1}, {}, {8, 1, 1}, {pc});
  b.add_model_sequence_inputs_outputs({s0}, {}, {s1}, {});
  VgfFile model = b.model();
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<VgfFile> decoded = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(content_difference(model, *decoded, /*compare_header=*/true), "");
  EXPECT_EQ(decoded->sequence.segments[0].descriptor_sets[0].set_index, 2u);
  EXPECT_EQ(decoded->sequence.segments[0].type, ModuleType::kCompute);
  EXPECT_EQ(decoded->header.vk_header_version, 7);
}

TEST(VgfBuilder, UnknownRefsAreReportedByFinish) {
  VgfBuilder b;
  b.add_binding_slot(0, ResourceRef{4});
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bytes.status().message(), "vgf builder: add_binding_slot: resource ref 4 unknown (0 added)");
}

TEST(VgfBuilder, FinishValidatesTheWholeFile) {
  VgfBuilder b;
  ModuleRef m = b.add_module(ModuleType::kGraph, "g", "main", {0});
  ResourceRef in = b.add_input_resource(kVkDescriptorTypeTensorArm, 100, {1}, {});
  BindingSlotRef s = b.add_binding_slot(0, in);
  b.add_segment_info(m, "graph_segment_0", {}, {s}, {}, {});
  b.add_model_sequence_inputs_outputs({s}, {"a", "b"}, {}, {});
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "vgf: model sequence: the model has 2 input names for 1 input");
}

TEST(VgfBuilder, FinishTwiceIsRefused) {
  VgfBuilder b;
  ASSERT_TRUE(b.finish().ok());
  EXPECT_EQ(b.finish().status().code(), StatusCode::kFailedPrecondition);
}

TEST(VgfBuilder, ConstantOfANonConstantResourceIsRefused) {
  VgfBuilder b;
  ResourceRef in = b.add_input_resource(kVkDescriptorTypeTensorArm, 100, {1}, {});
  const float w = 1.f;
  b.add_constant(in, &w, 4);
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "vgf: constants: constant 0 refers to resource 0, which is INPUT, not CONSTANT");
}

TEST(VgfBuilder, EmptyFileIsValid) {
  VgfBuilder b;
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<VgfFile> file = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE(file->modules.empty());
  EXPECT_TRUE(file->sequence.segments.empty());
  EXPECT_EQ(header_u64(*bytes, 72), 16u) << "empty CONST00: tag and a zero count";
}

// ---------------------------------------------------------------------------
// Round trips of hand-made content

TEST(VgfRoundTrip, EveryTableAndFieldSurvivesEncodeAndDecode) {
  VgfFile rich = make_rich_file();
  Result<std::vector<uint8_t>> bytes = encode_vgf(rich);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<VgfFile> back = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(content_difference(rich, *back, /*compare_header=*/true), "");
  // Stable: encoding the decoded file gives the same bytes.
  Result<std::vector<uint8_t>> again = encode_vgf(*back);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *bytes);
}

TEST(VgfRoundTrip, SectionsStart8AlignedAndConstantsArePaddedTo8) {
  VgfFile rich = make_rich_file();
  Result<std::vector<uint8_t>> bytes = encode_vgf(rich);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  uint64_t end = 0;
  for (int i = 0; i < 4; ++i) {
    const uint64_t offset = header_u64(*bytes, 16 + 16 * i);
    const uint64_t size = header_u64(*bytes, 24 + 16 * i);
    EXPECT_EQ(offset % 8, 0u) << "section " << i;
    if (i > 0) {
      EXPECT_EQ(offset, (end + 7) / 8 * 8) << "section " << i << " follows the previous one";
    }
    end = offset + size;
  }
  EXPECT_EQ(end, bytes->size()) << "nothing after the constants section";
  // Record 3 (after 32 + 16 + 6->8 payload bytes) starts at payload offset 56.
  const uint64_t constants = header_u64(*bytes, 64);
  EXPECT_EQ(layout::load_le<uint64_t>(bytes->data() + constants + 8), 4u);
  EXPECT_EQ(layout::load_le<uint64_t>(bytes->data() + constants + 16 + 24 * 3 + 16), 56u);
  EXPECT_EQ(layout::load_le<int32_t>(bytes->data() + constants + 16 + 24 * 1 + 4), 1) << "sparsity dimension";
  Result<VgfFile> back = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(back.ok());
  for (const Constant& c : back->constants) {
    EXPECT_EQ(static_cast<size_t>(c.data.data() - bytes->data()) % 8, 0u);
  }
}

TEST(VgfRoundTrip, FileWithoutNamesOrConstantsRoundTrips) {
  VgfFile f = make_rich_file();
  f.sequence.input_names.clear();
  f.sequence.output_names.clear();
  f.constants.clear();
  for (Segment& s : f.sequence.segments) s.constants.clear();
  Result<std::vector<uint8_t>> bytes = encode_vgf(f);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<VgfFile> back = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(content_difference(f, *back, true), "");
}

TEST(VgfRoundTrip, DumpShowsDescriptorSetNumbersPushConstantsAndSamplers) {
  Result<std::vector<uint8_t>> bytes = encode_vgf(make_rich_file());
  ASSERT_TRUE(bytes.ok());
  Result<VgfFile> back = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(back.ok());
  Result<JsonValue> dump = parse_json(dump_vgf_json(*back));
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  const JsonValue& cs = dump->find("model_sequence")->find("segments")->as_array()[1];
  EXPECT_EQ(cs.find("type")->as_string(), "COMPUTE");
  EXPECT_EQ(cs.find("descriptor_set_infos")->as_array()[1].find("set_index")->as_integer(), 3);
  EXPECT_EQ(cs.find("push_constant_ranges")->as_array()[1].find("offset")->as_integer(), 16);
  EXPECT_EQ(cs.find("dispatch_shape")->as_array()[0].as_integer(), 4);
  const JsonValue& modules = *dump->find("modules");
  EXPECT_EQ(modules.as_array()[3].find("shader_code_available")->as_bool(), false);
  EXPECT_EQ(modules.as_array()[4].find("shader_type")->as_string(), "GLSL");
  const JsonValue& resources = *dump->find("resources");
  EXPECT_EQ(resources.as_array()[6].find("vk_descriptor_type")->as_string(), "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER");
  EXPECT_EQ(resources.as_array()[8].find("sampler_config")->find("border_color")->as_integer(), 4);
  EXPECT_EQ(resources.as_array()[8].find("vk_format")->as_string(), "VK_FORMAT_R8G8B8A8_UNORM");
  EXPECT_EQ(dump->find("model_sequence")->find("inputs")->as_array()[1].find("name")->as_string(),
            "scale \"quoted\" \xC3\xA9");
  EXPECT_EQ(dump->find("constants")->as_array()[1].find("sparsity_dimension")->as_integer(), 1);
}

TEST(VgfRoundTrip, DumpReplacesInvalidUtf8SoItStaysJson) {
  VgfFile f = make_rich_file();
  f.modules[0].name = std::string("bad\xFF\xC3name\x01", 10);
  Result<JsonValue> dump = parse_json(dump_vgf_json(f));
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->find("modules")->as_array()[0].find("name")->as_string(), "bad\xEF\xBF\xBD\xEF\xBF\xBDname\x01");
}

// ---------------------------------------------------------------------------
// Encoder refusals (the same rules the decoder applies)

TEST(VgfEncode, RefusesASegmentNamingAMissingModule) {
  VgfFile f = make_rich_file();
  f.modules.resize(1);
  f.sequence.segments.resize(1);
  f.sequence.segments[0].module_index = 3;
  Result<std::vector<uint8_t>> bytes = encode_vgf(f);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "vgf: model sequence: segment 0 refers to module 3 (1 module)");
}

TEST(VgfEncode, RefusesASegmentWhoseTypeIsNotItsModules) {
  VgfFile f = make_rich_file();
  f.sequence.segments[1].type = ModuleType::kGraph;
  EXPECT_EQ(encode_vgf(f).status().message(), "vgf: model sequence: segment 1 is GRAPH but its module 1 is COMPUTE");
}

TEST(VgfEncode, RefusesTwoDescriptorSetInfosForOneSetNumber) {
  VgfFile f = make_rich_file();
  f.sequence.segments[1].descriptor_sets[1].set_index = kUnsetSetIndex;  // set 1 by position
  f.sequence.segments[1].descriptor_sets[0].set_index = 1;
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: model sequence: segment 1: descriptor set infos 0 and 1 both describe descriptor set 1");
}

TEST(VgfEncode, RefusesOneBindingNumberForTwoResourcesInASet) {
  VgfFile f = make_rich_file();
  f.sequence.segments[0].descriptor_sets[0].bindings[1].binding = 0;
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: model sequence: segment 0: descriptor set info 0 binds both resource 3 and resource 4 at binding 0");
}

TEST(VgfEncode, RefusesOutOfRangeConstantsAndSparsity) {
  VgfFile f = make_rich_file();
  f.sequence.segments[2].constants = {1, 9};
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: model sequence: segment 2: constant 1 is constant index 9 (4 constants)");
  f = make_rich_file();
  f.constants[1].sparsity_dimension = 2;
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: constants: constant 1 has sparsity dimension 2 (-1 for dense, else below the rank 2 of resource 1)");
  f = make_rich_file();
  f.sequence.segments[0].constants = {2, 2};
  EXPECT_EQ(encode_vgf(f).status().message(), "vgf: model sequence: segment 0 lists constant index 2 twice");
}

TEST(VgfEncode, RefusesBadPushConstantRangesAndStrides) {
  VgfFile f = make_rich_file();
  f.sequence.segments[1].push_constant_ranges[0].size = 6;
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: model sequence: segment 1: push constant range 0 (offset 0, size 6) needs offset and size in "
            "multiples of 4 and a size above 0");
  f = make_rich_file();
  f.resources[5].strides = {4};
  EXPECT_EQ(encode_vgf(f).status().message(), "vgf: model resource: resource 5 has 1 stride for a rank-3 shape");
}

TEST(VgfEncode, RefusesContradictoryModuleCode) {
  VgfFile f = make_rich_file();
  f.modules[3].spirv = {1, 2};  // a placeholder carrying words
  EXPECT_EQ(encode_vgf(f).status().message(),
            "vgf: module table: module 3 carries SPIR-V words but its code is absent");
}

// ---------------------------------------------------------------------------
// Decoder refusals: each names the section and its file offset

// Encodes `f`, finds a field with `locate` (given the verified sequence root,
// returns the address of the field to patch) and patches it with `value`.
template <typename T, typename Locate>
std::vector<uint8_t> patched_sequence(const VgfFile& f, Locate locate, T value) {
  Result<std::vector<uint8_t>> bytes = encode_vgf(f);
  EXPECT_TRUE(bytes.ok());
  std::vector<uint8_t> out = *bytes;
  const uint64_t offset = layout::load_le<uint64_t>(out.data() + 32);
  const auto* root = flatbuffers::GetRoot<fb::ModelSequenceTable>(out.data() + offset);
  const uint8_t* field = locate(root);
  EXPECT_NE(field, nullptr);
  if (field) std::memcpy(out.data() + (field - out.data()), &value, sizeof(T));
  return out;
}

template <typename Table>
const uint8_t* field_of(const Table* t, flatbuffers::voffset_t vt) {
  return reinterpret_cast<const flatbuffers::Table*>(t)->GetAddressOf(vt);
}

Status decode_status(const std::vector<uint8_t>& bytes) { return decode_vgf(bytes.data(), bytes.size()).status(); }

TEST(VgfDecodeErrors, SegmentNamingAMissingModuleNamesSectionAndSegment) {
  std::vector<uint8_t> bytes = patched_sequence<uint32_t>(
      make_rich_file(),
      [](const fb::ModelSequenceTable* root) {
        return field_of(root->segments()->Get(1), fb::SegmentInfo::VT_MODULE_INDEX);
      },
      9u);
  Status st = decode_status(bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidFormat);
  const std::string prefix =
      str_cat("vgf: model sequence section at offset ", header_u64(bytes, 32), ": segment 1 (at byte ");
  EXPECT_EQ(st.message().substr(0, prefix.size()), prefix) << st.message();
  EXPECT_NE(st.message().find(") refers to module 9 (6 modules)"), std::string::npos) << st.message();
}

TEST(VgfDecodeErrors, BindingSlotNamingAMissingResource) {
  std::vector<uint8_t> bytes = patched_sequence<uint32_t>(
      make_rich_file(),
      [](const fb::ModelSequenceTable* root) {
        return field_of(root->segments()->Get(0)->set_infos()->Get(0)->bindings()->Get(2),
                        fb::BindingSlot::VT_MRT_INDEX);
      },
      77u);
  Status st = decode_status(bytes);
  EXPECT_NE(st.message().find(str_cat("vgf: model sequence section at offset ", header_u64(bytes, 32), ": segment 0")),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find(": descriptor set info 0: binding slot 2 (binding 3) refers to resource 77 (9 resources)"),
            std::string::npos)
      << st.message();
}

TEST(VgfDecodeErrors, DispatchShapeMustHaveThreeValues) {
  std::vector<uint8_t> bytes = patched_sequence<uint32_t>(
      make_rich_file(),
      [](const fb::ModelSequenceTable* root) {
        // The vector's length word precedes its elements.
        return reinterpret_cast<const uint8_t*>(root->segments()->Get(1)->dispatch_shape());
      },
      2u);
  Status st = decode_status(bytes);
  EXPECT_NE(st.message().find(str_cat("vgf: model sequence section at offset ", header_u64(bytes, 32), ": segment 1 (at byte ")),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("has a dispatch shape of 2 values (3 expected)"), std::string::npos) << st.message();
}

TEST(VgfDecodeErrors, SegmentConstantIndexOutOfRange) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  Result<VgfFile> f = decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(f.ok());
  // Locate the element in an aligned copy of the section, then patch the file.
  std::vector<uint64_t> section((308 + 7) / 8);
  std::memcpy(section.data(), bytes.data() + 968, 308);
  const auto* base = reinterpret_cast<const uint8_t*>(section.data());
  const auto* root = flatbuffers::GetRoot<fb::ModelSequenceTable>(base);
  const auto* element = reinterpret_cast<const uint8_t*>(root->segments()->Get(0)->constants()->data());
  const size_t at = 968 + static_cast<size_t>(element - base);
  bytes.at(at) = 5;
  Status st = decode_status(bytes);
  EXPECT_EQ(st.message(),
            "vgf: model sequence section at offset 968: segment 0 (at byte 1104): constant 0 is constant index 5 "
            "(1 constant)");
}

TEST(VgfDecodeErrors, ConstantDataOutsideThePayload) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 1568 + 16 + 8, 1000);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1568: record 0 (at byte 1584) places its data at [offset 0, size 1000], "
            "outside the 192-byte payload area");
  bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 1568 + 16 + 16, 8);  // offset 8 + size 192 > 192
  EXPECT_NE(decode_status(bytes).message().find("[offset 8, size 192]"), std::string::npos);
}

TEST(VgfDecodeErrors, TooManyConstantRecords) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 1568 + 8, 10);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1568: 10 constant records do not fit in the 232-byte section");
  layout::store_le<uint64_t>(bytes.data() + 1568 + 8, ~uint64_t{0});
  EXPECT_NE(decode_status(bytes).message().find("constant records do not fit"), std::string::npos);
}

TEST(VgfDecodeErrors, ConstantOfANonConstantResourceOrBadSparsity) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint32_t>(bytes.data() + 1584, 1);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1568: constant 0 (at byte 1584) refers to resource 1, which is INPUT, "
            "not CONSTANT");
  bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<int32_t>(bytes.data() + 1588, -2);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1568: record 0 (at byte 1584) has sparsity dimension -2 (-1 or more "
            "expected)");
  layout::store_le<int32_t>(bytes.data() + 1588, 4);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1568: constant 0 (at byte 1584) has sparsity dimension 4 (-1 for "
            "dense, else below the rank 4 of resource 0)");
}

TEST(VgfDecodeErrors, ConstantsSectionTooSmall) {
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  layout::store_le<uint64_t>(bytes.data() + 72, 12);  // CONST00 tag, but no room for the count
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: constants section at offset 1448: the CONST00 section is 12 bytes, too small for its 16-byte header");
  layout::store_le<uint64_t>(bytes.data() + 72, 4);
  EXPECT_EQ(decode_status(bytes).message(), "vgf: constants section at offset 1448: the section is 4 bytes (8 at least)");
}

TEST(VgfDecodeErrors, SectionOutsideTheFile) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 56, 600);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: header at offset 48: model resource section [offset 1280, size 600] does not fit in the 1800-byte "
            "file");
  bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 16, ~uint64_t{0});
  EXPECT_NE(decode_status(bytes).message().find("vgf: header at offset 16: module table section"), std::string::npos);
}

TEST(VgfDecodeErrors, MisalignedOrTinyFlatbufferSection) {
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 32, 970);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: model sequence section at offset 970: the section does not start 4-byte aligned");
  bytes = read_sample("sin_mul_const.vgf");
  layout::store_le<uint64_t>(bytes.data() + 24, 2);
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: module table section at offset 128: the section is 2 bytes, too small for a flatbuffer");
}

TEST(VgfDecodeErrors, FlatbufferThatFailsVerification) {
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  layout::store_le<uint32_t>(bytes.data() + 128, 4000);  // root offset past the section
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: module table section at offset 128: not a valid ModuleTable flatbuffer (the flatbuffers verifier "
            "refused it)");
  bytes = read_sample("sin_mul.vgf");
  layout::store_le<uint32_t>(bytes.data() + 1240, 3);  // unaligned root table
  EXPECT_NE(decode_status(bytes).message().find("model resource section at offset 1240: not a valid"),
            std::string::npos);
}

TEST(VgfDecodeErrors, UnknownEnumValues) {
  std::vector<uint8_t> bytes = read_sample("single_maxpool_graph_v0_4_3.vgf");
  // Module table at 128+0x24 = 164; type at +6 (annotated in the samples README).
  ASSERT_EQ(bytes[128 + 0x2A], 1);
  bytes[128 + 0x2A] = 7;
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: module table section at offset 128: module 0 (at byte 164) has type 7 (COMPUTE=0 or GRAPH=1 "
            "expected)");
  bytes = read_sample("single_maxpool_graph_v0_4_3.vgf");
  bytes[128 + 0x2B] = 9;
  EXPECT_NE(decode_status(bytes).message().find("module 0 (at byte 164) has code type 9"), std::string::npos);
}

TEST(VgfDecodeErrors, HeaderProblemsNameTheHeaderOffset) {
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  EXPECT_EQ(decode_vgf(bytes.data(), 100).status().message(),
            "vgf: header at offset 0: the file is 100 bytes, shorter than the 128-byte header");
  bytes[0] = 'X';
  EXPECT_EQ(decode_status(bytes).message(), "vgf: header at offset 0: magic 58 47 46 31 is neither \"VGF1\" nor c3 d2 e1 f0");
  bytes = read_sample("sin_mul.vgf");
  bytes[9] = 5;  // 0.5.x (VGF library 0.11) is read
  EXPECT_TRUE(decode_vgf(bytes.data(), bytes.size()).ok());
  bytes[9] = 6;
  EXPECT_EQ(decode_status(bytes).message(),
            "vgf: header at offset 8: format version 0.6.3 is not supported (0.0.x to 0.5.x are)");
  bytes[8] = 1;
  bytes[9] = 0;
  EXPECT_NE(decode_status(bytes).message().find("format version 1.0.3 is not supported"), std::string::npos);
  EXPECT_EQ(decode_vgf(nullptr, 0).status().message(),
            "vgf: header at offset 0: the file is 0 bytes, shorter than the 128-byte header");
}

TEST(VgfDecode, AcceptsTheLegacyMagicAndAnyPatchOfMinor4OrOlderMinors) {
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  const uint8_t legacy[4] = {0xC3, 0xD2, 0xE1, 0xF0};
  std::memcpy(bytes.data(), legacy, 4);
  Result<VgfFile> f = decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->header.legacy_magic);
  bytes[10] = 9;  // 0.4.9
  EXPECT_TRUE(decode_vgf(bytes.data(), bytes.size()).ok());
  bytes[9] = 2;  // 0.2.9
  EXPECT_TRUE(decode_vgf(bytes.data(), bytes.size()).ok());
  // The encoder always writes the FourCC and 0.4.3.
  Result<std::vector<uint8_t>> again = encode_vgf(*f);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, read_sample("sin_mul.vgf"));
}

// `file` encoded, then made a 0.3.0 file: its constants rewritten as a legacy
// ConstantSection flatbuffer appended at the end (no padding, as 0.3.0 writers did).
std::vector<uint8_t> as_legacy_file(const VgfFile& file, int64_t override_sparsity_of_first = 0) {
  Result<std::vector<uint8_t>> bytes = encode_vgf(file);
  EXPECT_TRUE(bytes.ok());
  std::vector<uint8_t> out = *bytes;
  out.resize(header_u64(out, 64));  // drop the CONST00 block
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::ConstantData>> data;
  for (size_t i = 0; i < file.constants.size(); ++i) {
    const Constant& c = file.constants[i];
    std::vector<uint8_t> raw(c.data.data(), c.data.data() + c.data.size());
    const int64_t sparsity = (i == 0 && override_sparsity_of_first != 0) ? override_sparsity_of_first
                                                                         : c.sparsity_dimension;
    data.push_back(fb::CreateConstantDataDirect(fbb, c.mrt_index, sparsity, &raw));
  }
  fbb.Finish(fb::CreateConstantSection(fbb, fbb.CreateVector(data)));
  layout::store_le<uint64_t>(out.data() + 64, out.size());
  layout::store_le<uint64_t>(out.data() + 72, fbb.GetSize());
  out.insert(out.end(), fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  out[9] = 3;
  out[10] = 0;
  return out;
}

TEST(VgfDecode, LegacyConstantSectionWithSparseConstantsDecodes) {
  VgfFile rich = make_rich_file();
  std::vector<uint8_t> legacy = as_legacy_file(rich);
  Result<VgfFile> f = decode_vgf(legacy.data(), legacy.size());
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->header.version, (FormatVersion{0, 3, 0}));
  EXPECT_EQ(content_difference(rich, *f, /*compare_header=*/false), "");
  EXPECT_EQ(f->constants[1].sparsity_dimension, 1);
  // Upgrading it gives what encoding the content directly gives.
  EXPECT_EQ(encode_vgf(*f).value(), encode_vgf(rich).value());
}

TEST(VgfDecodeErrors, LegacyConstantWithSparsityBelowMinusOne) {
  std::vector<uint8_t> legacy = as_legacy_file(make_rich_file(), -5);
  const uint64_t section = header_u64(legacy, 64);
  Status st = decode_status(legacy);
  const std::string prefix = str_cat("vgf: constants section at offset ", section, ": constant 0 (at byte ");
  EXPECT_EQ(st.message().substr(0, prefix.size()), prefix) << st.message();
  EXPECT_NE(st.message().find(") has sparsity dimension -5 (-1 or a dimension index expected)"), std::string::npos)
      << st.message();
  legacy = as_legacy_file(make_rich_file(), int64_t{1} << 40);
  EXPECT_NE(decode_status(legacy).message().find("has sparsity dimension 1099511627776"), std::string::npos);
}

TEST(VgfDecode, SectionsInAnyOrderAreAccepted) {
  // Move the constants block to the front of the file's sections: the decoder goes by the header.
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  std::vector<uint8_t> moved(bytes.begin(), bytes.begin() + 128);
  const uint8_t* constants = bytes.data() + 1448;
  moved.insert(moved.end(), constants, constants + 16);
  moved.insert(moved.end(), bytes.begin() + 128, bytes.begin() + 1448);
  layout::store_le<uint64_t>(moved.data() + 64, 128);
  for (int i = 0; i < 3; ++i) {
    uint64_t off = layout::load_le<uint64_t>(moved.data() + 16 + 16 * i);
    layout::store_le<uint64_t>(moved.data() + 16 + 16 * i, off + 16);
  }
  Result<VgfFile> f = decode_vgf(moved.data(), moved.size());
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(encode_vgf(*f).value(), bytes);
}

}  // namespace
}  // namespace gpuu::vgf
