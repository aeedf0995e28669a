// Writer + loader: what build_program writes comes back identical, stored
// once per distinct byte string, 64-byte aligned, and byte-for-byte stable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "graph/builder.h"
#include "program/program_generated.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "program/sample_program.h"
#include "program/subgraph.h"

namespace gpuu::program {
namespace {

using gpuu_test::make_sample_model;

std::vector<uint8_t> build_sample() {
  auto m = make_sample_model();
  Result<std::vector<uint8_t>> bytes = build_program(m.graph, m.partition, m.spec);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

std::shared_ptr<const Program> load(const std::vector<uint8_t>& bytes) {
  Result<std::shared_ptr<const Program>> p = load_program_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : nullptr;
}

std::vector<std::string> names_of(const Program& p, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t t : ids) out.push_back(p.tensors()[static_cast<size_t>(t)].name);
  return out;
}

std::string text(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpuu_program_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST(ProgramRoundTrip, BuildProgramKeepsTensorsDelegatesAndPlan) {
  auto p = load(build_sample());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->format_major(), kFormatMajor);
  EXPECT_EQ(p->format_minor(), kFormatMinor);
  // Region-internal values (h0, h1, h4, h5) stay inside the delegates' blobs.
  std::vector<std::string> tensor_names;
  for (const TensorInfo& t : p->tensors()) tensor_names.push_back(t.name);
  EXPECT_EQ(tensor_names, (std::vector<std::string>{"x", "w1", "b1", "scale", "h2", "h3", "y"}));
  EXPECT_EQ(names_of(*p, p->inputs()), std::vector<std::string>{"x"});
  EXPECT_EQ(names_of(*p, p->outputs()), std::vector<std::string>{"y"});
  const TensorInfo& w1 = p->tensors()[static_cast<size_t>(p->find_tensor("w1"))];
  EXPECT_EQ(w1.dtype, graph::DType::kF32);
  EXPECT_EQ(w1.shape, (graph::Shape{8, 8}));
  EXPECT_TRUE(w1.is_constant());
  EXPECT_FALSE(p->tensors()[static_cast<size_t>(p->find_tensor("x"))].is_constant());

  ASSERT_EQ(p->delegates().size(), 2u);
  const DelegateInfo& vgf = p->delegates()[0];
  EXPECT_EQ(vgf.backend_id, "VgfBackend");
  EXPECT_EQ(names_of(*p, vgf.inputs), (std::vector<std::string>{"x", "w1", "b1"}));
  EXPECT_EQ(names_of(*p, vgf.outputs), std::vector<std::string>{"h2"});
  EXPECT_EQ(vgf.nodes, (std::vector<NodeRef>{{"matmul0", "matmul"}, {"add0", "add"}, {"relu0", "clamp"}}));
  const DelegateInfo& vk = p->delegates()[1];
  EXPECT_EQ(vk.backend_id, "VulkanBackend");
  EXPECT_EQ(names_of(*p, vk.inputs), (std::vector<std::string>{"h3", "w1", "scale", "h2"}));
  EXPECT_EQ(names_of(*p, vk.outputs), std::vector<std::string>{"y"});
  EXPECT_EQ(vk.nodes.size(), 3u);

  // The six shared keys, with the spec's values, in the RFC's order.
  ASSERT_EQ(vgf.compile_specs.size(), 6u);
  EXPECT_EQ(vgf.compile_specs[0].key, kSpecContextToken);
  EXPECT_EQ(text(vgf.compile_specs[0].value), "scene0");
  EXPECT_EQ(text(vgf.compile_specs[3].value), "7");
  Result<SharedGpuCompileSpec> spec = parse_shared_gpu_compile_spec(vk.compile_specs);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->token, "scene0");
  EXPECT_EQ(spec->group_id, 7);
  EXPECT_EQ(spec->context_mode, ContextMode::kLookupOrCreate);

  ASSERT_EQ(p->plan().size(), 3u);
  EXPECT_EQ(p->plan()[0].kind, PlanStep::Kind::kDelegate);
  EXPECT_EQ(p->plan()[0].delegate, 0);
  ASSERT_EQ(p->plan()[1].kind, PlanStep::Kind::kCpuNode);
  const CpuNodeInfo& softmax = p->plan()[1].cpu_node;
  EXPECT_EQ(softmax.name, "softmax0");
  EXPECT_EQ(softmax.op, "softmax");
  EXPECT_EQ(softmax.attrs, (graph::AttrMap{{"axis", int64_t{-1}}, {"beta", 1.5}}));
  EXPECT_EQ(names_of(*p, softmax.inputs), std::vector<std::string>{"h2"});
  EXPECT_EQ(names_of(*p, softmax.outputs), std::vector<std::string>{"h3"});
  EXPECT_EQ(p->plan()[2].delegate, 1);
}

// Optional inputs left out (a convolution's bias, a norm's weight) travel as
// "absent" through the program file, for CPU nodes and delegate blobs alike.
TEST(ProgramRoundTrip, AbsentOptionalInputsSurviveTheFile) {
  using graph::DType;
  using graph::Node;
  graph::Graph g;
  auto x = g.add_input("x", DType::kF32, {2, 4});
  auto bias = g.add_constant("bias", DType::kF32, {4}, gpuu_test::f32_blob({0.5f, 0.5f, 0.5f, 0.5f}));
  auto h = g.add_value(graph::Value{"h", DType::kF32, {2, 4}});
  auto y = g.add_value(graph::Value{"y", DType::kF32, {2, 4}});
  // weight left out in the middle, bias given: kNone cannot just be dropped.
  g.add_node(Node{"ln_cpu", "layer_norm", {x, graph::kNone, bias}, {h}, {{"normalized_ndim", int64_t{1}}}});
  g.add_node(Node{"ln_gpu", "layer_norm", {h, graph::kNone, bias}, {y}, {{"normalized_ndim", int64_t{1}}}});
  g.mark_output(y);
  partition::PartitionResult part;
  part.regions = {{partition::kCpuId, {0}}, {partition::kVulkanId, {1}}};
  part.region_of_node = {0, 1};
  SharedGpuCompileSpec spec;
  Result<std::vector<uint8_t>> bytes = build_program(g, part, spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto p = load(bytes.value());
  ASSERT_TRUE(p);
  const PlanStep* cpu = nullptr;
  for (const PlanStep& step : p->plan()) {
    if (step.kind == PlanStep::Kind::kCpuNode) cpu = &step;
  }
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->cpu_node.inputs.size(), 3u);
  EXPECT_EQ(cpu->cpu_node.inputs[1], -1);
  EXPECT_EQ(names_of(*p, {cpu->cpu_node.inputs[0], cpu->cpu_node.inputs[2]}),
            (std::vector<std::string>{"x", "bias"}));
  ASSERT_EQ(p->delegates().size(), 1u);
  Blob blob = p->processed_blob(0);
  Result<graph::Graph> region = parse_subgraph(blob.data(), blob.size());
  ASSERT_TRUE(region.ok()) << region.status().message();
  ASSERT_EQ(region->nodes().size(), 1u);
  ASSERT_EQ(region->node(0).inputs.size(), 3u);
  EXPECT_EQ(region->node(0).inputs[1], graph::kNone);
  EXPECT_EQ(region->value(region->node(0).inputs[2]).name, "bias");
}

// A graph state becomes a program state: its read tensor is a delegate input,
// its update a delegate output although nothing outside the region reads it,
// its initial bytes a segment; the file is format 2.0.
TEST(ProgramRoundTrip, StatesBecomeFormat2StatesWithTheirInitialBytes) {
  using graph::DType;
  using graph::Node;
  graph::Graph g;
  auto x = g.add_input("x", DType::kF32, {4});
  auto ema = g.add_state("ema", DType::kF32, {4}, gpuu_test::f32_blob({1, 2, 3, 4}));
  auto next = g.add_value(graph::Value{"next", DType::kF32, {4}});
  auto y = g.add_value(graph::Value{"y", DType::kF32, {4}});
  g.add_node(Node{"add0", "add", {ema, x}, {next}, {}});
  g.add_node(Node{"mul0", "mul", {next, x}, {y}, {}});
  g.set_state_update(0, next);
  g.mark_output(y);
  partition::PartitionResult part;
  part.regions = {{partition::kVulkanId, {0, 1}}};
  part.region_of_node = {0, 0};
  Result<std::vector<uint8_t>> bytes = build_program(g, part, SharedGpuCompileSpec{});
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto p = load(bytes.value());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->format_major(), kStatefulFormatMajor);
  ASSERT_EQ(p->states().size(), 1u);
  const StateInfo& state = p->states()[0];
  EXPECT_EQ(names_of(*p, {state.tensor, state.update}), (std::vector<std::string>{"ema", "next"}));
  EXPECT_EQ(names_of(*p, p->inputs()), std::vector<std::string>{"x"});
  EXPECT_EQ(names_of(*p, p->outputs()), std::vector<std::string>{"y"});
  ASSERT_EQ(p->delegates().size(), 1u);
  EXPECT_EQ(names_of(*p, p->delegates()[0].inputs), (std::vector<std::string>{"ema", "x"}));
  EXPECT_EQ(names_of(*p, p->delegates()[0].outputs), (std::vector<std::string>{"next", "y"}));
  Blob initial = p->state_initial_data(0);
  std::vector<float> values(4);
  ASSERT_EQ(initial.size(), sizeof(float) * 4);
  std::memcpy(values.data(), initial.data(), initial.size());
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 4}));
}

// Without states the file stays format 1.0 with no state table at all, so
// readers from before states read it as they always did.
TEST(ProgramRoundTrip, ProgramsWithoutStatesStayFormat1) {
  std::vector<uint8_t> bytes = build_sample();
  EXPECT_EQ(fb::GetProgram(bytes.data())->version()->major(), kFormatMajor);
  EXPECT_EQ(fb::GetProgram(bytes.data())->states(), nullptr);
}

TEST(ProgramRoundTrip, ConstantsComeBackByteForByte) {
  auto m = make_sample_model();
  auto p = load(build_sample());
  ASSERT_TRUE(p);
  for (const graph::Constant& c : m.graph.constants()) {
    SCOPED_TRACE(c.name);
    int32_t t = p->find_tensor(c.name);
    ASSERT_GE(t, 0);
    EXPECT_TRUE(p->constant_data(t).same_bytes(c.data));
  }
  EXPECT_TRUE(p->constant_data(p->find_tensor("x")).empty());
}

TEST(ProgramRoundTrip, BuilderProgramRoundTripsEveryField) {
  ProgramBuilder b;
  int32_t in = b.add_tensor("in", graph::DType::kI8, {2, 3});
  int32_t k = b.add_constant("k", graph::DType::kI64, {2}, Blob::copy_of("\1\0\0\0\0\0\0\0\2\0\0\0\0\0\0\0", 16));
  int32_t mid = b.add_tensor("mid", graph::DType::kF16, {2, 3});
  int32_t out = b.add_tensor("out", graph::DType::kBool, {});
  DelegateDesc d;
  d.backend_id = "VulkanBackend";
  d.compile_specs = {CompileSpecEntry{"vk_binary_key", {0, 1, 2, 255}},
                     CompileSpecEntry::text(kSpecPrefer, "vgf_first")};
  d.processed = Blob::copy_of("opaque", 6);
  d.inputs = {in, k};
  d.outputs = {mid};
  d.nodes = {{"gather", "gather"}};
  b.add_delegate_call(b.add_delegate(d));
  graph::AttrMap attrs{{"i", int64_t{-5}},
                       {"f", 0.125},
                       {"s", std::string("text")},
                       {"is", std::vector<int64_t>{}},
                       {"fs", std::vector<double>{-1.0, 3.0}}};
  b.add_cpu_node(CpuNodeInfo{"reduce", "reduce_any", attrs, {mid}, {out}});
  b.set_inputs({in});
  b.set_outputs({out, mid});
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto p = load(bytes.value());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->tensors().size(), 4u);
  EXPECT_EQ(p->tensors()[0].dtype, graph::DType::kI8);
  EXPECT_EQ(p->tensors()[2].dtype, graph::DType::kF16);
  EXPECT_EQ(p->tensors()[3].dtype, graph::DType::kBool);
  EXPECT_EQ(p->tensors()[3].shape, graph::Shape{});
  EXPECT_EQ(p->constant_data(k).size(), 16u);
  ASSERT_EQ(p->delegates().size(), 1u);
  EXPECT_EQ(p->delegates()[0].compile_specs[0].key, "vk_binary_key");
  EXPECT_EQ(p->delegates()[0].compile_specs[0].value, (std::vector<uint8_t>{0, 1, 2, 255}));
  EXPECT_TRUE(p->processed_blob(0).same_bytes(Blob::copy_of("opaque", 6)));
  EXPECT_EQ(p->plan()[1].cpu_node.attrs, attrs);
  EXPECT_EQ(p->outputs(), (std::vector<int32_t>{out, mid}));
}

TEST(ProgramRoundTrip, IdenticalConstantsAreStoredOnce) {
  auto p = load(build_sample());
  ASSERT_TRUE(p);
  int32_t b1 = p->find_tensor("b1");
  int32_t scale = p->find_tensor("scale");
  const auto& seg = p->tensors()[static_cast<size_t>(b1)].segment;
  EXPECT_EQ(seg, p->tensors()[static_cast<size_t>(scale)].segment);
  EXPECT_EQ(p->segments()[static_cast<size_t>(seg)].names, (std::vector<std::string>{"b1", "scale"}));
  // Same memory, not just the same bytes.
  EXPECT_EQ(p->constant_data(b1).data(), p->constant_data(scale).data());
  EXPECT_EQ(p->dedup_saved_bytes(), 32u);
  // w1, b1/scale, and one blob per delegate.
  EXPECT_EQ(p->segments().size(), 4u);
}

TEST(ProgramRoundTrip, IdenticalBlobsAndConstantsShareOneSegment) {
  ProgramBuilder b;
  std::vector<uint8_t> bytes(256, 7);
  int32_t c = b.add_constant("c", graph::DType::kI8, {256}, Blob::take(bytes));
  int32_t y = b.add_tensor("y", graph::DType::kI8, {256});
  b.add_delegate_call(b.add_delegate(DelegateDesc{"VgfBackend", {}, Blob::take(bytes), {c}, {y}, {{"n", "copy"}}}));
  b.set_outputs({y});
  Result<std::vector<uint8_t>> file = b.finish();
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto p = load(file.value());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->segments().size(), 1u);
  EXPECT_EQ(p->segments()[0].names, (std::vector<std::string>{"c", "delegate 0 (VgfBackend)"}));
  EXPECT_EQ(p->dedup_saved_bytes(), 256u);
}

TEST(ProgramRoundTrip, SegmentsAre64ByteAlignedAfterTheFlatbuffer) {
  std::vector<uint8_t> bytes = build_sample();
  auto p = load(bytes);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->data_start() % 64, 0u);
  EXPECT_GT(p->data_start(), 0u);
  for (size_t i = 0; i < p->segments().size(); ++i) {
    const SegmentInfo& s = p->segments()[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(s.offset % 64, 0u);
    EXPECT_GE(s.offset, p->data_start());
    EXPECT_LE(s.offset + s.size, bytes.size());
    // Loaded copies keep the file's alignment in memory too.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p->segment_data(static_cast<int32_t>(i)).data()) % 64, 0u);
  }
}

TEST(ProgramRoundTrip, SameInputGivesSameBytes) {
  std::vector<uint8_t> a = build_sample();
  std::vector<uint8_t> b = build_sample();
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST(ProgramRoundTrip, FileIsMappedAndOutlivesTheProgram) {
  TempDir dir;
  std::string path = dir.file("sample.gpuu");
  std::vector<uint8_t> bytes = build_sample();
  ASSERT_TRUE(write_file_atomically(path, bytes).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> read_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_back, bytes);

  Blob w1;
  {
    Result<std::shared_ptr<const Program>> p = load_program_file(path);
    ASSERT_TRUE(p.ok()) << p.status().message();
    w1 = p.value()->constant_data(p.value()->find_tensor("w1"));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w1.data()) % 64, 0u);
  }
  // The Program is gone; the Blob still holds the mapping.
  auto m = make_sample_model();
  EXPECT_TRUE(w1.same_bytes(m.graph.constants()[0].data));
}

TEST(ProgramRoundTrip, BuilderWritesFilesAtomically) {
  TempDir dir;
  std::string path = dir.file("b.gpuu");
  ProgramBuilder b;
  int32_t x = b.add_tensor("x", graph::DType::kF32, {1});
  int32_t y = b.add_tensor("y", graph::DType::kF32, {1});
  b.add_cpu_node(CpuNodeInfo{"neg", "neg", {}, {x}, {y}});
  b.set_inputs({x});
  b.set_outputs({y});
  ASSERT_TRUE(b.write_file(path).ok());
  EXPECT_TRUE(load_program_file(path).ok());
  // A refused program leaves the old file alone.
  b.set_outputs({y, 42});
  Status s = b.write_file(path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("outputs[1] = 42"), std::string::npos) << s.message();
  EXPECT_TRUE(load_program_file(path).ok());
  // A folder that does not exist is an I/O error naming the path.
  b.set_outputs({y});
  Status io = b.write_file(dir.file("missing/x.gpuu"));
  EXPECT_EQ(io.code(), StatusCode::kIo);
  EXPECT_NE(io.message().find("missing/x.gpuu"), std::string::npos) << io.message();
}

TEST(ProgramRoundTrip, LoadFileReportsMissingAndEmptyFiles) {
  TempDir dir;
  Result<std::shared_ptr<const Program>> missing = load_program_file(dir.file("nope.gpuu"));
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  EXPECT_NE(missing.status().message().find("nope.gpuu"), std::string::npos);
  std::string empty = dir.file("empty.gpuu");
  std::ofstream(empty).close();
  EXPECT_EQ(load_program_file(empty).status().code(), StatusCode::kInvalidFormat);
  Result<std::shared_ptr<const Program>> folder = load_program_file(dir.file(""));
  EXPECT_EQ(folder.status().code(), StatusCode::kIo);
}

TEST(ProgramRoundTrip, DefaultBlobIsTheRegionAsSubGraph) {
  auto m = make_sample_model();
  auto p = load(build_sample());
  ASSERT_TRUE(p);
  Blob blob = p->processed_blob(1);
  Result<graph::Graph> sub = parse_subgraph(blob.data(), blob.size(), program_constant_lookup(p));
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  const graph::Graph& g = sub.value();
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0].name, "matmul1");
  EXPECT_EQ(g.nodes()[1].attrs, m.graph.nodes()[5].attrs);
  // Constants resolve to the program's bytes in place; the rest are inputs, in delegate order.
  ASSERT_EQ(g.constants().size(), 2u);
  EXPECT_EQ(g.constants()[0].name, "w1");
  EXPECT_EQ(g.constants()[0].data.data(), p->constant_data(p->find_tensor("w1")).data());
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "h3");
  EXPECT_EQ(g.value(g.inputs()[1]).name, "h2");
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(ProgramRoundTrip, SubGraphNamesAConstantTheProgramStoresRearranged) {
  // w [3, 4] stored as its transpose "w.t" [4, 3]: the reader permutes it back.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", graph::DType::kF32, {2, 3}).value();
  std::vector<float> w(12), wt(12);
  for (int i = 0; i < 12; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) wt[static_cast<size_t>(c * 3 + r)] = w[static_cast<size_t>(r * 4 + c)];
  }
  auto bytes_of = [](const std::vector<float>& v) {
    return Blob::take(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                           reinterpret_cast<const uint8_t*>(v.data() + v.size())));
  };
  graph::ValueId wc = graph::add_graph_constant(g, "w", graph::DType::kF32, {3, 4}, bytes_of(w)).value();
  g.mark_output(graph::add_op(g, "matmul", "mm", {x, wc}, {}).value()[0]);
  partition::Region region{"VulkanBackend", {0}};
  Result<std::vector<uint8_t>> sub = serialize_region(g, region, {{"w", StoredRearranged{"w.t", {3, 4}, {1, 0}}}});
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  std::vector<std::string> asked;
  ConstantLookup lookup = [&](const std::string& name, graph::DType, const graph::Shape& shape) -> Result<Blob> {
    asked.push_back(name + graph::shape_to_string(shape));
    return bytes_of(wt);
  };
  Result<graph::Graph> parsed = parse_subgraph(sub->data(), sub->size(), lookup);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(asked, std::vector<std::string>{"w.t[4,3]"});
  ASSERT_EQ(parsed->constants().size(), 1u);
  EXPECT_EQ(parsed->constants()[0].name, "w");
  EXPECT_TRUE(parsed->constants()[0].data.same_bytes(bytes_of(w))) << "w as the graph has it";
  // Without a lookup it is an input named as the graph's constant, as any constant.
  Result<graph::Graph> plain = parse_subgraph(sub->data(), sub->size());
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->value(plain->inputs()[1]).name, "w");

  Result<std::vector<uint8_t>> repeated = serialize_region(g, region, {{"w", StoredRearranged{"w.t", {3, 4}, {0, 0}}}});
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("stored_as.perm"), std::string::npos) << repeated.status().message();
  EXPECT_NE(repeated.status().message().find("not a permutation of the 2 view dims"), std::string::npos)
      << repeated.status().message();
  Result<std::vector<uint8_t>> other = serialize_region(g, region, {{"w", StoredRearranged{"w.t", {3, 5}, {1, 0}}}});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("another element count than the tensor's shape [3,4]"), std::string::npos)
      << other.status().message();
}

TEST(ProgramRoundTrip, PreprocessCallbackSuppliesBlobAndExtraSpecs) {
  auto m = make_sample_model();
  Preprocessors pre;
  int calls = 0;
  pre[partition::kVgfId] = [&](const graph::Graph&, const partition::Region& region, const RegionIo& io,
                const std::vector<CompileSpecEntry>& specs) -> Result<PreprocessedRegion> {
    ++calls;
    EXPECT_EQ(specs.size(), 6u) << "the delegate's six shared keys reach preprocess";
    EXPECT_EQ(region.nodes.size(), 3u);
    EXPECT_EQ(io.inputs.size(), 3u);
    return PreprocessedRegion{Blob::copy_of("VGF-file", 8), {CompileSpecEntry::text("vgf_compiler_flags", "-O2")}};
  };
  Result<std::vector<uint8_t>> bytes = build_program(m.graph, m.partition, m.spec, pre);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(calls, 1);
  auto p = load(bytes.value());
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->processed_blob(0).same_bytes(Blob::copy_of("VGF-file", 8)));
  ASSERT_EQ(p->delegates()[0].compile_specs.size(), 7u);
  EXPECT_EQ(p->delegates()[0].compile_specs[6].key, "vgf_compiler_flags");
  EXPECT_EQ(p->delegates()[1].compile_specs.size(), 6u);

  pre[partition::kVgfId] = [](const graph::Graph&, const partition::Region&, const RegionIo&,
               const std::vector<CompileSpecEntry>&) -> Result<PreprocessedRegion> {
    return err(StatusCode::kUnsupported, "no TOSA lowering for 'clamp'");
  };
  Result<std::vector<uint8_t>> failed = build_program(m.graph, m.partition, m.spec, pre);
  EXPECT_EQ(failed.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(failed.status().message().find("region 0 (VgfBackend)"), std::string::npos);
}

// The sample model plus node 7, 'dead_exp', reading h4 (inside the Vulkan
// region): its result reaches no graph output, so it is in no region.
void add_dead_node(gpuu_test::SampleModel* m) {
  graph::Graph& g = m->graph;
  graph::ValueId h4 = 8;
  ASSERT_EQ(g.value(h4).name, "h4");
  graph::ValueId dead = g.add_value(graph::Value{"dead", graph::DType::kF32, {1, 8}});
  g.add_node(graph::Node{"dead_exp", "exp", {h4}, {dead}, {}});
  m->partition.region_of_node.push_back(-1);
}

TEST(ProgramRoundTrip, DeadNodesInNoRegionAreLeftOutOfTheProgram) {
  auto m = make_sample_model();
  add_dead_node(&m);
  Result<std::vector<uint8_t>> bytes = build_program(m.graph, m.partition, m.spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto p = load(bytes.value());
  ASSERT_TRUE(p);
  EXPECT_LT(p->find_tensor("dead"), 0) << "no tensor for the dead node's result";
  // The Vulkan region hands over only y: h4's dead reader runs nowhere.
  EXPECT_EQ(names_of(*p, p->delegates()[1].outputs), std::vector<std::string>{"y"});
  EXPECT_EQ(p->delegates()[1].nodes.size(), 3u);
}

TEST(ProgramRoundTrip, ARegionOfDeadNodesIsRefusedNamingThem) {
  auto m = make_sample_model();
  add_dead_node(&m);
  Result<RegionIo> io = region_io(m.graph, partition::Region{partition::kVgfId, {7}});
  ASSERT_FALSE(io.ok());
  EXPECT_EQ(io.status().message(),
            "region: no result of its nodes ('dead_exp') is a graph output or read by a live node outside it: they "
            "are dead (their results reach no graph output), so the region would have no outputs; a partition "
            "leaves dead nodes out of every region");
}

TEST(ProgramRoundTrip, BuildProgramRefusesBadPartitions) {
  using gpuu_test::SampleModel;
  auto expect_refused = [](const SampleModel& m, const char* needle) {
    Result<std::vector<uint8_t>> r = build_program(m.graph, m.partition, m.spec);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  {
    auto m = make_sample_model();
    m.partition.regions[2].nodes.pop_back();
    m.partition.region_of_node.clear();
    expect_refused(m, "node 'add1' is in no region");
  }
  {
    auto m = make_sample_model();
    m.partition.regions[1].nodes.push_back(0);
    expect_refused(m, "node 'matmul0' is in region 0 and region 1");
  }
  {
    auto m = make_sample_model();
    m.partition.regions[0].nodes.push_back(99);
    expect_refused(m, "node id 99, out of range");
  }
  {
    auto m = make_sample_model();
    std::swap(m.partition.regions[0], m.partition.regions[2]);  // Vulkan before what it reads
    m.partition.region_of_node = {2, 2, 2, 1, 0, 0, 0};
    expect_refused(m, "reads tensor");
  }
  {
    auto m = make_sample_model();
    m.partition.regions[2].nodes = {4, 6, 5};  // add1 before mul0 inside a region
    expect_refused(m, "node 'add1' reads 'h5' before node 'mul0'");
  }
  {
    auto m = make_sample_model();
    add_dead_node(&m);
    m.partition.regions[2].nodes.push_back(7);
    m.partition.region_of_node.back() = 2;
    expect_refused(m, "node 'dead_exp' is dead (its results reach no graph output), but region 2 (VulkanBackend) "
                      "holds it; dead nodes belong to no region");
  }
  {
    auto m = make_sample_model();
    m.spec.token = "";
    expect_refused(m, "the token is empty");
  }
  {
    auto m = make_sample_model();
    m.graph.mutable_value(3).name = "w1";  // 'scale' renamed onto 'w1'
    expect_refused(m, "are both named 'w1'");
  }
}

}  // namespace
}  // namespace gpuu::program
