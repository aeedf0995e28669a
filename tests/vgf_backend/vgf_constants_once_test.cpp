// Constants stored once in a program file: a VGF delegate's blob names the
// program constants that hold its weights (vgf_constant_refs) instead of
// holding a second copy; init fills them back, and a missing or mis-sized one
// fails init with its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "backends/vgf/vgf_backend.h"
#include "context/shared_gpu_context_registry.h"
#include "graph/symbolic.h"
#include "kernels/vulkan_test_util.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "program/specialize.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"
#include "support/test_vulkan_device.h"
#include "vgf/vgf_constant_refs.h"
#include "vgf/vgf_file.h"

namespace gpuu {
namespace {

using graph::DType;

constexpr int64_t kRows = 4, kCols = 1024;  // c: 16 KiB, larger than a VGF blob without it

// x -> add(c) on VGF -> mul(c) on Vulkan: one constant both delegates read.
struct SharedConstantGraph {
  graph::Graph graph;
  partition::PartitionResult partition;
  cpu::HostTensor c;
};

SharedConstantGraph shared_constant_graph() {
  SharedConstantGraph s;
  graph::Graph& g = s.graph;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {kRows, kCols}).value();
  s.c = vulkan_test::random_tensor(DType::kF32, {kRows, kCols}, 3, 0.5, 2.0);
  graph::ValueId c = graph::add_graph_constant(g, "c", DType::kF32, {kRows, kCols}, s.c.to_blob()).value();
  graph::ValueId a = graph::add_op(g, "add", "add_0", {x, c}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {a, c}, {}).value()[0];
  g.mark_output(m);
  s.partition.regions = {{partition::kVgfId, {0}}, {partition::kVulkanId, {1}}};
  s.partition.region_of_node = {0, 1};
  return s;
}

SharedGpuCompileSpec spec_for(const std::string& token) {
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.present = true;
  return spec;
}

const std::vector<uint8_t>* find_spec(const program::DelegateInfo& d, const std::string& key) {
  for (const CompileSpecEntry& e : d.compile_specs) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

class VgfConstantsOnceTest : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
};

TEST_F(VgfConstantsOnceTest, ConstantSharedByVgfAndVulkanDelegatesIsStoredOnceAndBothReadIt) {
  SharedConstantGraph s = shared_constant_graph();
  auto bytes = program::build_program(s.graph, s.partition, spec_for("once_shared"),
                                      runtime::builtin_program_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();

  // One constant tensor, one segment of its size, a VGF blob smaller than it.
  size_t constants = 0;
  for (const program::TensorInfo& t : program->tensors()) constants += t.is_constant() ? 1 : 0;
  EXPECT_EQ(constants, 1u);
  const uint64_t c_bytes = s.c.bytes.size();
  EXPECT_EQ(std::count_if(program->segments().begin(), program->segments().end(),
                          [&](const program::SegmentInfo& seg) { return seg.size == c_bytes; }),
            1);
  ASSERT_EQ(program->delegates().size(), 2u);
  const program::DelegateInfo& vgf = program->delegates()[0];
  ASSERT_EQ(vgf.backend_id, partition::kVgfId);
  EXPECT_LT(program->processed_blob(0).size(), c_bytes);
  const std::vector<uint8_t>* refs = find_spec(vgf, vgf::kConstantRefsKey);
  ASSERT_NE(refs, nullptr);
  EXPECT_EQ(vgf::decode_constant_refs(*refs), std::vector<std::string>{"c"});
  const int32_t c = program->find_tensor("c");
  EXPECT_TRUE(std::count(vgf.inputs.begin(), vgf.inputs.end(), c)) << "the VGF delegate reads c from the program";
  EXPECT_LT(bytes->size(), c_bytes + 8192) << "c once plus the program's description";

  auto session = runtime::Session::create(program, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {kRows, kCols}, 9, -2, 2);
  ASSERT_TRUE(session.value()->set_input(0, x.bytes.data(), x.bytes.size()).ok());
  Status ran = session.value()->execute();
  ASSERT_TRUE(ran.ok()) << ran.message();
  auto want = cpu::run_graph(s.graph, {x}).value();
  std::vector<float> y(static_cast<size_t>(want[0].numel()));
  ASSERT_TRUE(session.value()->get_output(0, y.data(), y.size() * 4).ok());
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>(want[0].shape, y).value(), want[0], 1e-6, 1e-6));
}

TEST_F(VgfConstantsOnceTest, WeightOnlyAVgfDelegateReadsIsStoredOnceInItsTosaLayout) {
  // conv2d: TOSA wants OHWI, so the program keeps the rearranged copy alone.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 8, 6, 6}).value();
  cpu::HostTensor w = vulkan_test::random_tensor(DType::kF32, {16, 8, 3, 3}, 5, -1, 1);
  graph::ValueId wc = graph::add_graph_constant(g, "w", DType::kF32, {16, 8, 3, 3}, w.to_blob()).value();
  graph::ValueId y = graph::add_op(g, "conv2d", "conv_0", {x, wc}, {{"padding", std::vector<int64_t>{1, 1}}}).value()[0];
  g.mark_output(y);
  partition::PartitionResult parts;
  parts.regions = {{partition::kVgfId, {0}}};
  parts.region_of_node = {0};
  auto bytes = program::build_program(g, parts, spec_for("once_conv"), runtime::builtin_program_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();
  EXPECT_LT(program->find_tensor("w"), 0) << "only the VGF blob reads w, as OHWI";
  std::vector<std::string> constants;
  for (const program::TensorInfo& t : program->tensors()) {
    if (t.is_constant()) constants.push_back(t.name);
  }
  ASSERT_EQ(constants.size(), 1u);
  EXPECT_EQ(constants[0].rfind("w.vgf.", 0), 0u) << constants[0];
  EXPECT_EQ(program->tensors()[static_cast<size_t>(program->find_tensor(constants[0]))].shape,
            (graph::Shape{16, 3, 3, 8}));
  EXPECT_LT(bytes->size(), w.bytes.size() + 8192);

  auto session = runtime::Session::create(program, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {1, 8, 6, 6}, 9, -2, 2);
  ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
  ASSERT_TRUE(session.value()->execute().ok());
  auto want = cpu::run_graph(g, {in}).value();
  std::vector<float> out(static_cast<size_t>(want[0].numel()));
  ASSERT_TRUE(session.value()->get_output(0, out.data(), out.size() * 4).ok());
  EXPECT_TRUE(
      vulkan_test::all_close(cpu::HostTensor::from_data<float>(want[0].shape, out).value(), want[0], 1e-5, 1e-5));
}

// x [batch, 8, 6, 6] -> conv(w) -> conv(v) on VGF -> conv(v) on Vulkan:
// w only the VGF delegate reads (as OHWI), v both (OHWI there, OIHW here).
constexpr int64_t kMaxBatch = 4;
graph::Graph three_convs(int64_t batch) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, 8, 6, 6}).value();
  auto weight = [&](const char* name, uint64_t seed) {
    cpu::HostTensor t = vulkan_test::random_tensor(DType::kF32, {8, 8, 3, 3}, seed, -0.5, 0.5);
    return graph::add_graph_constant(g, name, DType::kF32, {8, 8, 3, 3}, t.to_blob()).value();
  };
  graph::ValueId w = weight("w", 5), v = weight("v", 6);
  const graph::AttrMap pad = {{"padding", std::vector<int64_t>{1, 1}}};
  graph::ValueId y = graph::add_op(g, "conv2d", "conv_0", {x, w}, pad).value()[0];
  y = graph::add_op(g, "conv2d", "conv_1", {y, v}, pad).value()[0];
  y = graph::add_op(g, "conv2d", "conv_2", {y, v}, pad).value()[0];
  g.mark_output(y);
  return g;
}

TEST_F(VgfConstantsOnceTest, ProgramWithDimsStoresEachWeightOnceAndEverySizeReadsItFromTheProgram) {
  graph::Graph g = three_convs(2);
  g.set_dims({{"batch", 1, kMaxBatch, 2}});
  graph::Graph at3 = three_convs(3), at5 = three_convs(5);
  ASSERT_TRUE(graph::fit_dims(g, {{{3}, &at3}, {{5}, &at5}}).ok());
  partition::PartitionResult parts;
  parts.regions = {{partition::kVgfId, {0, 1}}, {partition::kVulkanId, {2}}};
  parts.region_of_node = {0, 0, 1};
  auto bytes = program::build_program(g, parts, spec_for("once_dims"), runtime::builtin_program_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();
  ASSERT_EQ(program->dims().size(), 1u);

  // w only as OHWI (the VGF region's source names it so), v as the Vulkan
  // region reads it and as OHWI: three weights' bytes, not five.
  constexpr uint64_t kWeightBytes = 8 * 8 * 3 * 3 * 4;
  EXPECT_LT(program->find_tensor("w"), 0) << "only the VGF region reads w, as OHWI";
  EXPECT_GE(program->find_tensor("v"), 0) << "the Vulkan region reads v as it is";
  std::vector<std::string> copies;
  uint64_t stored = 0;
  for (const program::TensorInfo& t : program->tensors()) {
    if (!t.is_constant()) continue;
    stored += program->constant_data(program->find_tensor(t.name)).size();
    if (t.name.find(".vgf.") != std::string::npos) copies.push_back(t.name);
  }
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(stored, 3 * kWeightBytes);
  EXPECT_LT(bytes->size(), 3 * kWeightBytes + 16384) << "the weights once plus the program's description and sources";

  // At every size the VGF blob holds no weights: it names the file's copies,
  // which a specialized program reads from the file (no copy of its own).
  for (int64_t batch : std::vector<int64_t>{1, 3, kMaxBatch}) {
    auto at = program::specialize(program, {batch}, runtime::builtin_program_preprocessors());
    ASSERT_TRUE(at.ok()) << at.status().message();
    const program::DelegateInfo& vgf = (*at)->delegates()[0];
    ASSERT_EQ(vgf.backend_id, partition::kVgfId);
    EXPECT_LT((*at)->processed_blob(0).size(), kWeightBytes) << "batch " << batch;
    const std::vector<uint8_t>* refs = find_spec(vgf, vgf::kConstantRefsKey);
    ASSERT_NE(refs, nullptr);
    std::vector<std::string> named = vgf::decode_constant_refs(*refs);
    std::sort(named.begin(), named.end());
    std::vector<std::string> want = copies;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(named, want) << "batch " << batch;
    for (const std::string& name : named) {
      EXPECT_EQ((*at)->constant_data((*at)->find_tensor(name)).data(),
                program->constant_data(program->find_tensor(name)).data())
          << name << " at batch " << batch << " is the file's bytes";
    }
    EXPECT_EQ((*at)->tensors().size(), program->tensors().size()) << "no constant made at batch " << batch;
  }

  runtime::SessionOptions options;
  options.max_shape_variants = 4;
  auto session = runtime::Session::create(program, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  for (int64_t batch : std::vector<int64_t>{2, kMaxBatch, 1, 3}) {
    ASSERT_TRUE(session.value()->set_input_shape(0, {batch, 8, 6, 6}).ok());
    cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {batch, 8, 6, 6}, 9 + batch, -2, 2);
    ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
    Status ran = session.value()->execute();
    ASSERT_TRUE(ran.ok()) << ran.message();
    auto want = cpu::run_graph(three_convs(batch), {in}).value();
    std::vector<float> out(static_cast<size_t>(want[0].numel()));
    ASSERT_TRUE(session.value()->get_output(0, out.data(), out.size() * 4).ok());
    EXPECT_TRUE(
        vulkan_test::all_close(cpu::HostTensor::from_data<float>(want[0].shape, out).value(), want[0], 1e-4, 1e-4))
        << "batch " << batch;
  }
}

// The shared-constant program with the VGF delegate's references rewritten.
std::shared_ptr<const program::Program> program_with_refs(const std::string& refs,
                                                          std::vector<program::AddedConstant> extra = {}) {
  SharedConstantGraph s = shared_constant_graph();
  program::Preprocessors pre = runtime::builtin_program_preprocessors();
  program::PreprocessFn vgf = pre[partition::kVgfId];
  pre[partition::kVgfId] = [vgf, refs, extra](const graph::Graph& g, const partition::Region& r,
                                              const program::RegionIo& io,
                                              const std::vector<CompileSpecEntry>& specs)
      -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(program::PreprocessedRegion out, vgf(g, r, io, specs));
    for (CompileSpecEntry& e : out.extra_compile_specs) {
      if (e.key == vgf::kConstantRefsKey) e.value.assign(refs.begin(), refs.end());
    }
    out.added_constants.insert(out.added_constants.end(), extra.begin(), extra.end());
    return out;
  };
  auto bytes = program::build_program(s.graph, s.partition, spec_for("once_bad"), pre);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (!bytes.ok()) return nullptr;
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  EXPECT_TRUE(program.ok()) << program.status().message();
  return program.ok() ? program.value() : nullptr;
}

TEST_F(VgfConstantsOnceTest, MissingReferencedConstantFailsInitNamingIt) {
  auto program = program_with_refs("no_such_weight");
  ASSERT_NE(program, nullptr);
  auto session = runtime::Session::create(program, {});
  ASSERT_FALSE(session.ok());
  const std::string& m = session.status().message();
  EXPECT_NE(m.find("VGF delegate 0"), std::string::npos) << m;
  EXPECT_NE(m.find("constant record 0"), std::string::npos) << m;
  EXPECT_NE(m.find("'no_such_weight'"), std::string::npos) << m;
}

TEST_F(VgfConstantsOnceTest, ReferencedConstantOfTheWrongSizeFailsInitNamingIt) {
  cpu::HostTensor small = vulkan_test::random_tensor(DType::kF32, {kRows, kCols / 2}, 4, 0, 1);
  auto program = program_with_refs("half_c", {program::AddedConstant{"half_c", DType::kF32, {kRows, kCols / 2},
                                                                     small.to_blob()}});
  ASSERT_NE(program, nullptr);
  auto session = runtime::Session::create(program, {});
  ASSERT_FALSE(session.ok());
  const std::string& m = session.status().message();
  EXPECT_NE(m.find("constant record 0"), std::string::npos) << m;
  EXPECT_NE(m.find("'half_c'"), std::string::npos) << m;
  EXPECT_NE(m.find("[4,512]"), std::string::npos) << m;
}

TEST(VgfConstantRefs, FillChecksTheSizeTheSourceGives) {
  vgf::VgfFile file;
  vgf::Resource r;
  r.category = vgf::ResourceCategory::kConstant;
  r.vk_descriptor_type = vgf::kNoDescriptorType;
  r.vk_format = 100;  // VK_FORMAT_R32_SFLOAT
  r.shape = {2, 3};
  file.resources.push_back(r);
  file.constants.push_back(vgf::Constant{0, -1, Blob()});
  std::vector<uint8_t> five(20, 1);
  auto wrong = [&](const std::string&, DType, const graph::Shape&) -> Result<Blob> { return Blob::take(five); };
  Status s = vgf::fill_constant_refs(&file, {"w"}, wrong);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'w' of 20 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("needs 24"), std::string::npos) << s.message();

  Status unnamed = vgf::fill_constant_refs(&file, {""}, wrong);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.message().find("names no program constant"), std::string::npos) << unnamed.message();
  Status count = vgf::fill_constant_refs(&file, {"a", "b"}, wrong);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.message().find("names 2 constants"), std::string::npos) << count.message();

  vgf::VgfFile complete = file;
  complete.constants[0].data = Blob::take(std::vector<uint8_t>(24, 3));
  EXPECT_TRUE(vgf::fill_constant_refs(&complete, {"a", "b"}, wrong).ok()) << "a complete file needs no names";

  std::vector<uint8_t> six(24, 2);
  auto right = [&](const std::string& name, DType dtype, const graph::Shape& shape) -> Result<Blob> {
    EXPECT_EQ(name, "w");
    EXPECT_EQ(dtype, DType::kF32);
    EXPECT_EQ(shape, (graph::Shape{2, 3}));
    return Blob::take(six);
  };
  ASSERT_TRUE(vgf::fill_constant_refs(&file, {"w"}, right).ok());
  EXPECT_EQ(file.constants[0].data.size(), 24u);
}

TEST(VgfConstantRefs, NamesRoundTripThroughTheCompileSpec) {
  std::vector<std::string> names{"conv.weight.vgf.0123456789abcdef", "", "fc.bias"};
  EXPECT_EQ(vgf::decode_constant_refs(vgf::encode_constant_refs(names)), names);
}

}  // namespace
}  // namespace gpuu
