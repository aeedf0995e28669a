// Plugin loading with real dlopen of real .so files: the naming and version
// rules, each refusal by file and rule, and the MtCpu sample run through the
// adapter and the session on lavapipe against the CPU reference kernels.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <unistd.h>

#include "backends/cpu/cpu_kernels.h"
#include "backends/vulkan/vulkan_backend.h"
#include "context/shared_gpu_context_registry.h"
#include "graph/builder.h"
#include "plugins/plugin_backend.h"
#include "plugins/plugin_loader.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::plugins {
namespace {

namespace fs = std::filesystem;
using graph::DType;

const std::string kScanDir = GPUU_TEST_PLUGIN_DIR;
const std::string kSample = std::string(GPUU_SAMPLE_PLUGIN_DIR) + "/Gpuu_MtCpu_backend.so";

// The one refusal line that names `file`, or "" if none does.
std::string refusal_for(const LoadReport& report, const std::string& file) {
  for (const std::string& line : report.refused) {
    if (line.find("/" + file + ":") != std::string::npos) return line;
  }
  return "";
}

TEST(PluginNamingRule, FollowsTheArmNnTable) {
  for (const char* ok : {"Arm_GpuAcc_backend.so", "Arm_GpuAcc_backend.so.1", "Arm_GpuAcc_backend.so.1.2",
                         "Arm_GpuAcc_backend.so.10.1.27", "Arm123_GpuAcc_backend.so", "Arm_GpuAcc456_backend.so"}) {
    EXPECT_EQ(naming_rule_problem(ok), "") << ok;
  }
  for (const char* bad : {"Arm_GpuAcc_backend.so.10.1.33.", "Arm_GpuAcc_backend.so.3.4..5", "Arm_GpuAcc_backend.so.1,1.1",
                          "Arm%Co_GpuAcc_backend.so", "Arm_Gpu.Acc_backend.so", "GpuAcc_backend.so", "_GpuAcc_backend.so",
                          "Arm__backend.so", "Arm_GpuAcc.so", "__backend.so", "__.so", "Arm_GpuAcc_backend",
                          "Arm_GpuAcc_backend_v1.2.so"}) {
    std::string problem = naming_rule_problem(bad);
    EXPECT_NE(problem.find(std::string("'") + bad + "'"), std::string::npos) << problem;
    EXPECT_NE(problem.find("<vendor>_<name>_backend.so"), std::string::npos) << problem;
  }
}

TEST(PluginVersionRule, SameMajorAndNoNewerMinor) {
  EXPECT_TRUE(api_version_compatible(GPUU_BACKEND_API_VERSION_MAJOR, GPUU_BACKEND_API_VERSION_MINOR));
  EXPECT_FALSE(api_version_compatible(GPUU_BACKEND_API_VERSION_MAJOR, GPUU_BACKEND_API_VERSION_MINOR + 1));
  EXPECT_FALSE(api_version_compatible(GPUU_BACKEND_API_VERSION_MAJOR + 1, 0));
  EXPECT_FALSE(api_version_compatible(GPUU_BACKEND_API_VERSION_MAJOR - 1, GPUU_BACKEND_API_VERSION_MINOR));
}

TEST(PluginLoader, LoadsTheSamplePluginByFile) {
  backends::BackendRegistry registry;
  PluginLoader loader(registry);
  LoadReport report = loader.load(kSample);
  ASSERT_TRUE(report.refused.empty()) << report.refused[0];
  ASSERT_EQ(report.loaded, std::vector<std::string>{"MtCpu"});
  const backends::Backend* b = registry.find("MtCpu");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->version(), 1u);
  EXPECT_TRUE(b->is_available());
  EXPECT_EQ(std::string(b->plugin_path()), fs::canonical(kSample).string());
}

TEST(PluginLoader, ScanRefusesEachBadPluginByNameAndRuleAndLoadsTheRest) {
  backends::BackendRegistry registry;
  PluginLoader loader(registry);
  // The sample first, so that the DupId plugin finds its id taken.
  LoadReport report = loader.load(std::string(GPUU_SAMPLE_PLUGIN_DIR) + ":" + kScanDir);
  // Files load in name order. This registry has no built-ins, so the
  // plugin calling itself VulkanBackend is accepted here (not so in the
  // process registry: RefusesABuiltInBackendsId).
  EXPECT_EQ(report.loaded, (std::vector<std::string>{"MtCpu", "VulkanBackend", "AcmeGood"}));
  EXPECT_EQ(registry.ids(), (std::vector<std::string>{"MtCpu", "VulkanBackend", "AcmeGood"}));
  const std::string wrong_major = "plugin API version " + std::to_string(GPUU_BACKEND_API_VERSION_MAJOR + 1) + "." +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MINOR) + " is incompatible with the runtime's " +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MAJOR) + "." +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MINOR);
  const std::string newer_minor = "plugin API version " + std::to_string(GPUU_BACKEND_API_VERSION_MAJOR) + "." +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MINOR + 1) + " is incompatible";
  const std::pair<const char*, const char*> expected[] = {
      {"Acme-Bad_backend.so", "does not follow the naming rule"},
      {"Acme_NoEntry_backend.so", "no entry point 'gpuu_backend_plugin_get'"},
      {"Acme_WrongMajor_backend.so", wrong_major.c_str()},
      {"Acme_NewerMinor_backend.so", newer_minor.c_str()},
      {"Acme_NoExecute_backend.so", "missing vtable function 'execute'"},
      {"Acme_BadOption_backend.so", "option declaration 0: 'mode': the default 'fastest' is not one of its values"},
      {"Acme_EmptyId_backend.so", "empty backend id"},
      {"Acme_DupId_backend.so", "backend id 'MtCpu' is taken"},
      {"Acme_Text_backend.so", "dlopen failed"},
  };
  for (const auto& [file, why] : expected) {
    std::string line = refusal_for(report, file);
    EXPECT_NE(line.find(why), std::string::npos) << file << " -> '" << line << "'";
  }
  // The CMake files in the directory are not candidates (no ".so" in the name).
  EXPECT_EQ(report.refused.size(), std::size(expected)) << "every refusal is one of the above";
}

TEST(PluginLoader, RefusesABuiltInBackendsId) {
  LoadReport report = runtime::plugin_loader().load(kScanDir + "/Acme_Builtin_backend.so");
  ASSERT_EQ(report.refused.size(), 1u);
  EXPECT_NE(report.refused[0].find("backend id 'VulkanBackend' is taken"), std::string::npos) << report.refused[0];
  EXPECT_EQ(runtime::backend_registry().find("VulkanBackend")->plugin_path(), nullptr) << "the built-in stays";
}

TEST(PluginLoader, RefusesRelativeMissingAndDanglingPathsAndCarriesOn) {
  fs::path dir = fs::temp_directory_path() / ("gpuu_plugin_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path dangling = dir / "Acme_Gone_backend.so";
  fs::remove(dangling);
  fs::create_symlink(dir / "nothing_here.so", dangling);
  backends::BackendRegistry registry;
  PluginLoader loader(registry);
  LoadReport report = loader.load("relative/dir::/no/such/dir:" + dangling.string() + ":" + kSample);
  EXPECT_EQ(report.loaded, std::vector<std::string>{"MtCpu"});
  ASSERT_EQ(report.refused.size(), 3u);
  EXPECT_NE(report.refused[0].find("relative/dir: not an absolute path"), std::string::npos) << report.refused[0];
  EXPECT_NE(report.refused[1].find("/no/such/dir: does not exist"), std::string::npos) << report.refused[1];
  EXPECT_NE(report.refused[2].find("Acme_Gone_backend.so: does not exist"), std::string::npos) << report.refused[2];
  fs::remove_all(dir);
}

TEST(PluginLoader, LoadsOneFileOnceWhateverNameItIsReachedBy) {
  fs::path dir = fs::temp_directory_path() / ("gpuu_plugin_link_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path versioned = dir / "Gpuu_MtCpu_backend.so.1.2";
  fs::remove(versioned);
  fs::create_symlink(kSample, versioned);
  backends::BackendRegistry registry;
  PluginLoader loader(registry);
  LoadReport report = loader.load(kSample + ":" + versioned.string());
  EXPECT_EQ(report.loaded, std::vector<std::string>{"MtCpu"});
  EXPECT_TRUE(report.refused.empty()) << report.refused[0];
  EXPECT_TRUE(loader.load(versioned.string()).loaded.empty());
  fs::remove_all(dir);
}

// --- The sample through the adapter and the session -----------------------

// x[4,8] -> mul(x,x) [Vulkan] -> linear, relu, sub, mul, add, matmul [MtCpu]
// -> sin [Vulkan] -> out. The plugin region reads what a GPU delegate wrote
// and a GPU delegate reads what it wrote, all on one shared context.
struct PluginProgram {
  graph::Graph graph;
  partition::Region vulkan_in{partition::kVulkanId, {0}};
  partition::Region plugin{"MtCpu", {1, 2, 3, 4, 5, 6}};
  partition::Region vulkan_out{partition::kVulkanId, {7}};
};

PluginProgram make_graph() {
  PluginProgram p;
  graph::Graph& g = p.graph;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 8}).value();
  graph::ValueId y = graph::add_graph_input(g, "y", DType::kF32, {4, 16}).value();
  auto constant = [&](const char* name, graph::Shape shape, uint32_t seed) {
    return graph::add_graph_constant(g, name, DType::kF32, shape,
                                     vulkan_test::random_tensor(DType::kF32, shape, seed, -1, 1).to_blob())
        .value();
  };
  graph::ValueId w = constant("w", {16, 8}, 11), b = constant("b", {16}, 12), w2 = constant("w2", {16, 5}, 13);
  auto op = [&](const char* name, const char* kind, std::vector<graph::ValueId> in) {
    Result<std::vector<graph::ValueId>> out = graph::add_op(g, kind, name, std::move(in), {});
    EXPECT_TRUE(out.ok()) << name << ": " << out.status().message();
    return out.value()[0];
  };
  graph::ValueId m = op("sq", "mul", {x, x});
  graph::ValueId h = op("fc", "linear", {m, w, b});
  graph::ValueId r = op("act", "relu", {h});
  graph::ValueId s = op("diff", "sub", {r, y});
  graph::ValueId q = op("prod", "mul", {s, y});
  graph::ValueId a = op("sum", "add", {q, r});
  graph::ValueId mm = op("proj", "matmul", {a, w2});
  g.mark_output(op("wave", "sin", {mm}));
  return p;
}

// A delegate for `region` whose interface is the region graph's, by name.
Status add_delegate(program::ProgramBuilder& builder, std::map<std::string, int32_t>& tensors, const graph::Graph& g,
                    const partition::Region& region, const std::string& backend_id, std::vector<uint8_t> blob,
                    const std::vector<CompileSpecEntry>& specs) {
  GPUU_ASSIGN_OR_RETURN(graph::Graph sub, backends::region_graph(g, region));
  program::DelegateDesc d;
  d.backend_id = backend_id;
  d.compile_specs = specs;
  d.processed = Blob::take(std::move(blob));
  for (int pass = 0; pass < 2; ++pass) {
    for (graph::ValueId id : pass == 0 ? sub.inputs() : sub.outputs()) {
      const graph::Value& v = sub.value(id);
      if (!tensors.count(v.name)) tensors[v.name] = builder.add_tensor(v.name, v.dtype, v.shape);
      (pass == 0 ? d.inputs : d.outputs).push_back(tensors[v.name]);
    }
  }
  for (graph::NodeId n : region.nodes) d.nodes.push_back({g.node(n).name, g.node(n).op});
  builder.add_delegate_call(builder.add_delegate(std::move(d)));
  return Status::Ok();
}

class PluginRun : public testing::Test {
 protected:
  void SetUp() override {
    LoadReport report = runtime::plugin_loader().load(kSample);  // a second call adds nothing
    ASSERT_TRUE(report.refused.empty()) << report.refused[0];
    mtcpu_ = runtime::backend_registry().find("MtCpu");
    ASSERT_NE(mtcpu_, nullptr);
  }
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }

  // One shared context for every delegate; each step is (region, backend id, blob).
  struct Step {
    const partition::Region* region;
    std::string backend_id;
    std::vector<uint8_t> blob;
  };
  static Result<std::vector<uint8_t>> build_steps(const graph::Graph& g, std::vector<Step> steps) {
    SharedGpuCompileSpec shared;
    shared.token = "plugin-test";
    shared.present = true;
    std::vector<CompileSpecEntry> specs = make_shared_gpu_compile_specs(shared);
    program::ProgramBuilder builder;
    std::map<std::string, int32_t> tensors;
    std::vector<int32_t> inputs;
    for (graph::ValueId id : g.inputs()) {
      const graph::Value& v = g.value(id);
      inputs.push_back(tensors[v.name] = builder.add_tensor(v.name, v.dtype, v.shape));
    }
    for (Step& step : steps) {
      std::vector<CompileSpecEntry> step_specs = specs;
      if (step.backend_id == "MtCpu") step_specs.push_back(CompileSpecEntry::text("mtcpu_threads", "3"));
      GPUU_RETURN_IF_ERROR(
          add_delegate(builder, tensors, g, *step.region, step.backend_id, std::move(step.blob), step_specs));
    }
    builder.set_inputs(inputs);
    builder.set_outputs({tensors.at(g.value(g.outputs()[0]).name)});
    return builder.finish();
  }

  Result<std::vector<uint8_t>> build(const PluginProgram& p, std::vector<uint8_t> plugin_blob) {
    vulkan::VulkanBackend vk;
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> first, vk.preprocess(p.graph, p.vulkan_in, {}));
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> last, vk.preprocess(p.graph, p.vulkan_out, {}));
    return build_steps(p.graph, {{&p.vulkan_in, "VulkanBackend", first},
                                 {&p.plugin, "MtCpu", std::move(plugin_blob)},
                                 {&p.vulkan_out, "VulkanBackend", last}});
  }

  void run_device_plugin(const char* path, const std::string& id);

  const backends::Backend* mtcpu_ = nullptr;
};

TEST_F(PluginRun, CheckTakesItsOpsAndSaysWhyNotForOthers) {
  PluginProgram p = make_graph();
  for (graph::NodeId n : p.plugin.nodes) EXPECT_EQ(mtcpu_->check(p.graph, p.graph.node(n)), "") << n;
  EXPECT_EQ(mtcpu_->check(p.graph, p.graph.node(7)), "op not supported by MtCpu");
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, {4, 8}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, {8}).value();
  graph::ValueId h = graph::add_graph_input(g, "h", DType::kF16, {8}).value();
  graph::add_op(g, "add", "bcast", {a, b}, {}).value();
  graph::add_op(g, "relu", "half", {h}, {}).value();
  EXPECT_EQ(mtcpu_->check(g, g.node(0)), "MtCpu elementwise ops need equal shapes (no broadcast)");
  EXPECT_EQ(mtcpu_->check(g, g.node(1)), "MtCpu takes f32 only");
}

TEST_F(PluginRun, ProgramWithAPluginDelegateMatchesTheCpuReference) {
  PluginProgram p = make_graph();
  Result<std::vector<uint8_t>> blob = mtcpu_->preprocess(p.graph, p.plugin, {});
  ASSERT_TRUE(blob.ok()) << blob.status().message();
  Result<std::vector<uint8_t>> bytes = build(p, std::move(blob).value());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program.value()->delegates()[1].backend_id, "MtCpu");

  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 8}, 1, -2, 2);
  cpu::HostTensor y = vulkan_test::random_tensor(DType::kF32, {4, 16}, 2, -2, 2);
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(p.graph, {x, y});
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (SyncMode mode : {SyncMode::kTimeline, SyncMode::kQueueWaitIdle}) {
    runtime::SessionOptions options;
    options.overrides.sync_mode = mode;
    auto session = runtime::Session::create(program.value(), options);
    ASSERT_TRUE(session.ok()) << session.status().message();
    for (int repeat = 0; repeat < 2; ++repeat) {
      ASSERT_TRUE(session.value()->set_input(0, x.bytes.data(), x.bytes.size()).ok());
      ASSERT_TRUE(session.value()->set_input(1, y.bytes.data(), y.bytes.size()).ok());
      runtime::ExecuteStats stats;
      Status ran = session.value()->execute(&stats);
      ASSERT_TRUE(ran.ok()) << ran.message();
      EXPECT_EQ(stats.delegate_submits, 3u);
      std::vector<float> out(20);
      ASSERT_TRUE(session.value()->get_output(0, out.data(), 80).ok());
      cpu::HostTensor got = cpu::HostTensor::from_data<float>({4, 5}, out).value();
      EXPECT_TRUE(vulkan_test::all_close(got, want.value()[0], 1e-4, 1e-4)) << to_string(mode);
    }
  }
}

// MtCpu's load-time option (plugin API 1.1): declared in its descriptor,
// checked by the session against that declaration, received by its init,
// where it wins over the program's compile spec (mtcpu_threads=3 here).
TEST_F(PluginRun, TheSamplesThreadsOptionReachesItsInit) {
  ASSERT_EQ(mtcpu_->declared_options().size(), 1u);
  const backends::OptionDecl& threads = mtcpu_->declared_options()[0];
  EXPECT_EQ(threads.key, "threads");
  EXPECT_TRUE(threads.allowed.empty()) << "free-form: the plugin checks the value";
  EXPECT_EQ(threads.default_value, "auto");
  EXPECT_NE(threads.description.find("1..64"), std::string::npos) << threads.description;

  PluginProgram p = make_graph();
  Result<std::vector<uint8_t>> bytes = build(p, mtcpu_->preprocess(p.graph, p.plugin, {}).value());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 8}, 3, -2, 2);
  cpu::HostTensor y = vulkan_test::random_tensor(DType::kF32, {4, 16}, 4, -2, 2);
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(p.graph, {x, y});
  ASSERT_TRUE(want.ok()) << want.status().message();

  runtime::SessionOptions options;
  options.backend_options = {{"MtCpu", "threads", "2"}};
  auto session = runtime::Session::create(program.value(), options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_TRUE(session.value()->set_input(0, x.bytes.data(), x.bytes.size()).ok());
  ASSERT_TRUE(session.value()->set_input(1, y.bytes.data(), y.bytes.size()).ok());
  Status ran = session.value()->execute();
  ASSERT_TRUE(ran.ok()) << ran.message();
  std::vector<float> out(20);
  ASSERT_TRUE(session.value()->get_output(0, out.data(), 80).ok());
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({4, 5}, out).value(), want.value()[0], 1e-4,
                                     1e-4));

  // A free-form value the plugin refuses fails its delegate's init, naming it.
  options.backend_options = {{"MtCpu", "threads", "0"}};
  auto refused = runtime::Session::create(program.value(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("MtCpu delegate 1 init: option threads '0' is not auto or 1..64"),
            std::string::npos)
      << refused.status().message();
  // A key it does not declare is refused before any delegate initialises.
  options.backend_options = {{"MtCpu", "thread", "2"}};
  refused = runtime::Session::create(program.value(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "backend options: 'MtCpu:thread=2': MtCpu has no option 'thread' (its options: threads)");
}

TEST_F(PluginRun, ACorruptPluginBlobIsAnInitErrorNotACrash) {
  PluginProgram p = make_graph();
  std::vector<uint8_t> blob = mtcpu_->preprocess(p.graph, p.plugin, {}).value();
  // The signature stays intact; the plugin's own bytes lose their tail.
  blob.resize(blob.size() - 40);
  Result<std::vector<uint8_t>> bytes = build(p, blob);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto session = runtime::Session::create(program.value(), runtime::SessionOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("MtCpu delegate 1 init: MtCpu blob:"), std::string::npos)
      << session.status().message();
}

TEST_F(PluginRun, ABlobWithoutTheSignatureIsRefusedByTheAdapter) {
  PluginProgram p = make_graph();
  Result<std::vector<uint8_t>> bytes = build(p, {1, 2, 3});
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto session = runtime::Session::create(program.value(), runtime::SessionOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("no I/O signature"), std::string::npos) << session.status().message();
}

// x[4,8] -> mul(x,x) [Vulkan] -> reshape [the device plugin `id` from `path`:
// a copy on the device, submitted through the runtime] -> sin [Vulkan]: a
// device plugin chained on the context's timeline between two GPU delegates,
// no host wait between.
void PluginRun::run_device_plugin(const char* path, const std::string& id) {
  LoadReport report = runtime::plugin_loader().load(path);
  ASSERT_TRUE(report.refused.empty()) << report.refused[0];
  const backends::Backend* copy = runtime::backend_registry().find(id);
  ASSERT_NE(copy, nullptr);
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 8}).value();
  graph::ValueId m = graph::add_op(g, "mul", "sq", {x, x}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "reshape", "flat", {m}, {{"shape", std::vector<int64_t>{32}}}).value()[0];
  g.mark_output(graph::add_op(g, "sin", "wave", {r}, {}).value()[0]);
  partition::Region first{partition::kVulkanId, {0}}, mid{id, {1}}, last{partition::kVulkanId, {2}};
  EXPECT_EQ(copy->check(g, g.node(1)), "");
  EXPECT_EQ(copy->check(g, g.node(0)), id + " takes reshape only");
  vulkan::VulkanBackend vk;
  Result<std::vector<uint8_t>> bytes = build_steps(g, {{&first, "VulkanBackend", vk.preprocess(g, first, {}).value()},
                                                       {&mid, id, copy->preprocess(g, mid, {}).value()},
                                                       {&last, "VulkanBackend", vk.preprocess(g, last, {}).value()}});
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  cpu::HostTensor xs = vulkan_test::random_tensor(DType::kF32, {4, 8}, 5, -2, 2);
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(g, {xs});
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto session = runtime::Session::create(program.value(), runtime::SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().message();
  for (int repeat = 0; repeat < 2; ++repeat) {
    ASSERT_TRUE(session.value()->set_input(0, xs.bytes.data(), xs.bytes.size()).ok());
    runtime::ExecuteStats stats;
    Status ran = session.value()->execute(&stats);
    ASSERT_TRUE(ran.ok()) << ran.message();
    EXPECT_EQ(stats.delegate_submits, 3u);
    EXPECT_EQ(stats.host_waits, 1u) << "only at the end: the device plugin is chained, not waited for";
    std::vector<float> out(32);
    ASSERT_TRUE(session.value()->get_output(0, out.data(), 128).ok());
    EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({32}, out).value(), want.value()[0], 1e-5,
                                       1e-5));
  }
  // The plugin declares no options: one set for it is refused, saying so.
  runtime::SessionOptions with_option;
  with_option.backend_options = {{id, "queue", "1"}};
  auto refused = runtime::Session::create(program.value(), with_option);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "backend options: '" + id + ":queue=1': " + id + " has no option 'queue' (it takes none)");
}

TEST_F(PluginRun, DevicePluginSubmitsOnTheSharedContextInTheChain) { run_device_plugin(GPUU_DEVICE_PLUGIN, "AcmeCopy"); }

// The same plugin built against the frozen API 1.0 header: its descriptor
// ends before the 1.1 fields, its init reads only 1.0's arguments.
TEST_F(PluginRun, APluginBuiltAgainstApi10LoadsAndRuns) {
  run_device_plugin(GPUU_DEVICE_PLUGIN_API_1_0, "AcmeOldCopy");
  const auto* old = dynamic_cast<const PluginBackend*>(runtime::backend_registry().find("AcmeOldCopy"));
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->descriptor().api_version_minor, 0u);
  EXPECT_EQ(old->descriptor().struct_size, kFirstDescriptorSize);
  EXPECT_TRUE(old->declared_options().empty());
}

}  // namespace
}  // namespace gpuu::plugins
