// Profiles of an execute (runtime/execute_profile.h) on the test device: a
// program of two Vulkan delegates around a CPU-fallback step, with a matmul,
// a conv2d and a fused elementwise chain; every dispatch timed and described
// (FLOPs, bytes, the lowering's choice), the per-op sums, the JSON and Chrome
// trace renderings, the devices' measured peaks (once per context), the
// errors, the work a split-K GEMM records, and gpuu-run --profile.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "backends/vulkan/vulkan_backend.h"
#include "base/json.h"
#include "context/shared_gpu_context_registry.h"
#include "kernels/device_peaks.h"
#include "kernels/vulkan_test_util.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/session.h"

namespace gpuu::runtime {
namespace {

using graph::DType;

// Delegate 0 (Vulkan): conv2d(x[1,4,8,8], w[8,4,3,3], padding 1) -> conv_out;
// matmul(a[16,32], b[32,24]) -> mul(s[2,1,24]) -> relu -> tanh (one fused
// dispatch: the chain broadcasts to [2,16,24], so it is no epilogue of the
// matmul, which writes only its own shape). CPU: floor. Delegate 1 (Vulkan):
// sin -> sin_out.
constexpr int64_t kM = 16, kK = 32, kN = 24;

struct ProfiledProgram {
  graph::Graph graph;
  std::vector<uint8_t> bytes;
};

ProfiledProgram make_program() {
  ProfiledProgram p;
  graph::Graph& g = p.graph;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 4, 8, 8}).value();
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, {kM, kK}).value();
  auto constant = [&](const char* name, const graph::Shape& shape, uint32_t seed) {
    cpu::HostTensor t = vulkan_test::random_tensor(DType::kF32, shape, seed, -1, 1);
    return graph::add_graph_constant(g, name, DType::kF32, shape, t.to_blob()).value();
  };
  graph::ValueId w = constant("w", {8, 4, 3, 3}, 1), b = constant("b", {kK, kN}, 2), s = constant("s", {2, 1, kN}, 3);
  graph::AttrMap conv_attrs = {{"padding", std::vector<int64_t>{1, 1}}};
  graph::ValueId c = graph::add_op(g, "conv2d", "conv_0", {x, w}, conv_attrs).value()[0];
  graph::ValueId m = graph::add_op(g, "matmul", "matmul_0", {a, b}, {}).value()[0];
  graph::ValueId scaled = graph::add_op(g, "mul", "mul_0", {m, s}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "relu", "relu_0", {scaled}, {}).value()[0];
  graph::ValueId t = graph::add_op(g, "tanh", "tanh_0", {r}, {}).value()[0];
  graph::ValueId f = graph::add_op(g, "floor", "floor_0", {t}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "sin", "sin_0", {f}, {}).value()[0];
  g.mark_output(c);
  g.mark_output(y);
  partition::PartitionResult partition;
  partition.regions = {{partition::kVulkanId, {0, 1, 2, 3, 4}}, {partition::kCpuId, {5}}, {partition::kVulkanId, {6}}};
  partition.region_of_node = {0, 0, 0, 0, 0, 1, 2};
  SharedGpuCompileSpec spec;
  spec.token = "profile";
  spec.group_id = 7;
  spec.present = true;
  program::Preprocessors pre;
  pre[partition::kVulkanId] = [](const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
                                 const std::vector<CompileSpecEntry>&) -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, vulkan::VulkanBackend().preprocess(graph, region, {}));
    return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
  };
  Result<std::vector<uint8_t>> bytes = program::build_program(g, partition, spec, pre);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (bytes.ok()) p.bytes = std::move(bytes).value();
  return p;
}

std::shared_ptr<const program::Program> load(const ProfiledProgram& p) {
  Result<std::shared_ptr<const program::Program>> program = program::load_program_bytes(p.bytes.data(), p.bytes.size());
  EXPECT_TRUE(program.ok()) << program.status().message();
  return program.ok() ? program.value() : nullptr;
}

std::unique_ptr<Session> profiled_session(const std::shared_ptr<const program::Program>& program) {
  SessionOptions options;
  options.profile_steps = true;
  Result<std::unique_ptr<Session>> session = Session::create(program, options);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(session).value() : nullptr;
}

void set_inputs(Session& s) {
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {1, 4, 8, 8}, 4, -1, 1);
  cpu::HostTensor a = vulkan_test::random_tensor(DType::kF32, {kM, kK}, 5, -1, 1);
  ASSERT_TRUE(s.set_input(0, x.bytes.data(), x.bytes.size()).ok());
  ASSERT_TRUE(s.set_input(1, a.bytes.data(), a.bytes.size()).ok());
}

const gpu::TimedStep* find_dispatch(const ExecuteProfile& p, const std::string& ops) {
  for (const PlanStepProfile& s : p.plan) {
    for (const gpu::TimedStep& d : s.delegate.dispatches) {
      if (d.work.ops == ops) return &d;
    }
  }
  return nullptr;
}

// The tests share one context (one device, one measurement of its peaks)
// and one profiled session, executed once (sessions are what costs time on
// lavapipe: their pipelines).
class ProfileTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = load(make_program());
    if (!program_) return;
    session_ = profiled_session(program_);
    if (!session_) return;
    set_inputs(*session_);
    Status ran = session_->execute();
    EXPECT_TRUE(ran.ok()) << ran.message();
  }
  static void TearDownTestSuite() {
    session_.reset();
    program_.reset();
    SharedGpuContextRegistry::get().clear_for_testing();
  }
  // The shared session's profile, or a test failure.
  void SetUp() override {
    ASSERT_NE(session_, nullptr);
    Result<const ExecuteProfile*> got = session_->last_profile();
    ASSERT_TRUE(got.ok()) << got.status().message();
    profile_ = got.value();
  }

  static std::shared_ptr<const program::Program> program_;
  static std::unique_ptr<Session> session_;
  const ExecuteProfile* profile_ = nullptr;
};
std::shared_ptr<const program::Program> ProfileTest::program_;
std::unique_ptr<Session> ProfileTest::session_;

TEST_F(ProfileTest, ListsEveryStepInPlanOrderWithItsTimeAndWork) {
  const ExecuteProfile& p = *profile_;

  ASSERT_EQ(p.plan.size(), 3u);
  EXPECT_FALSE(p.plan[0].cpu);
  EXPECT_TRUE(p.plan[1].cpu);
  EXPECT_FALSE(p.plan[2].cpu);
  EXPECT_EQ(p.plan[0].delegate.index, 0);
  EXPECT_EQ(p.plan[0].delegate.backend, "VulkanBackend");
  EXPECT_EQ(p.plan[2].delegate.index, 1);
  EXPECT_EQ(p.plan[1].cpu_step.node, "floor_0");
  EXPECT_EQ(p.plan[1].cpu_step.op, "floor");
  EXPECT_GT(p.plan[1].cpu_step.host_us, 0);
  ASSERT_EQ(p.devices.size(), 1u);

  // conv2d, matmul and the fused chain; then sin.
  ASSERT_EQ(p.plan[0].delegate.dispatches.size(), 3u);
  ASSERT_EQ(p.plan[2].delegate.dispatches.size(), 1u);
  for (size_t i : {size_t{0}, size_t{2}}) {
    double sum = 0;
    for (const gpu::TimedStep& d : p.plan[i].delegate.dispatches) {
      EXPECT_GT(d.us, 0) << d.label;
      EXPECT_GT(d.work.bytes, 0u) << d.label;
      EXPECT_FALSE(d.kernel.empty()) << d.label;
      sum += d.us;
    }
    EXPECT_DOUBLE_EQ(p.plan[i].delegate.gpu_us, sum);
  }

  const gpu::TimedStep* matmul = find_dispatch(p, "matmul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->label, "matmul_0");
  EXPECT_EQ(matmul->work.flops, uint64_t{2 * kM * kN * kK});
  EXPECT_EQ(matmul->work.bytes, uint64_t{(kM * kK + kK * kN + kM * kN) * 4});
  EXPECT_FALSE(matmul->work.choice.empty());
  EXPECT_FALSE(matmul->work.why.empty());

  const gpu::TimedStep* conv = find_dispatch(p, "conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->work.flops, uint64_t{2 * (8 * 8 * 8) * (4 * 3 * 3)}) << "2 x outputs x (C/groups x kH x kW)";
  EXPECT_FALSE(conv->work.choice.empty());

  // One dispatch for the chain: its nodes and ops listed, memory-bound, its
  // bytes the chain's outside inputs (the matmul's result, s) and its output.
  const gpu::TimedStep* chain = find_dispatch(p, "mul+relu+tanh");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->label, "mul_0+relu_0+tanh_0");
  EXPECT_EQ(chain->kernel, "fused_elementwise_f32");
  EXPECT_EQ(chain->work.flops, 0u);
  EXPECT_EQ(chain->work.bytes, uint64_t{(kM * kN + 2 * kN + 2 * kM * kN) * 4});
}

TEST_F(ProfileTest, OpTotalsSumToTheDelegatesTimeAndSortByTime) {
  const ExecuteProfile& p = *profile_;
  std::vector<OpTotal> ops = ops_by_time(p);
  ASSERT_EQ(ops.size(), 4u);
  double sum = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].count, 1u) << ops[i].ops;
    if (i > 0) {
      EXPECT_GE(ops[i - 1].us, ops[i].us);
    }
    sum += ops[i].us;
  }
  EXPECT_NEAR(sum, p.gpu_us(), 1e-9 * p.gpu_us());

  // The JSON document says the same, in numbers that survive the text.
  Result<JsonValue> json = parse_json(profile_json(p));
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_TRUE(json.value().find("peaks_measured")->as_bool());
  double json_sum = 0, share = 0, delegates = 0;
  for (const JsonValue& op : json.value().find("by_op")->as_array()) {
    json_sum += op.find("gpu_us")->as_number();
    share += op.find("share")->as_number();
  }
  for (const JsonValue& step : json.value().find("plan")->as_array()) {
    if (step.find("kind")->as_string() == "delegate") delegates += step.find("gpu_us")->as_number();
  }
  EXPECT_NEAR(json_sum, delegates, 1e-6 * delegates);
  EXPECT_NEAR(share, 1.0, 1e-9);
  const JsonValue& first = json.value().find("plan")->as_array()[0];
  ASSERT_EQ(first.find("dispatches")->as_array().size(), 3u);
  for (const JsonValue& d : first.find("dispatches")->as_array()) {
    EXPECT_GT(d.find("gbps")->as_number(), 0) << d.find("label")->as_string();
    EXPECT_GT(d.find("bytes_of_peak")->as_number(), 0) << d.find("label")->as_string();
    if (d.find("ops")->as_string() == "matmul") {
      EXPECT_EQ(d.find("flops")->as_integer(), 2 * kM * kN * kK);
      EXPECT_GT(d.find("tflops")->as_number(), 0);
      EXPECT_GT(d.find("flops_of_peak")->as_number(), 0);
    } else if (d.find("ops")->as_string() != "conv2d") {
      EXPECT_TRUE(d.find("tflops")->is_null()) << "no FLOPs, no rate";
      EXPECT_TRUE(d.find("flops_of_peak")->is_null());
    }
  }

  std::string text = profile_text(p, 2);
  for (const char* part : {"measured by gpuu", "by op:", "mul+relu+tanh", "matmul", "top 2 dispatches:",
                           "cpu step", "floor_0 (floor)", "delegate 1"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " in\n" << text;
  }
}

TEST_F(ProfileTest, TheChromeTraceHasAnEventPerDispatchOnItsDelegatesTrack) {
  const ExecuteProfile& p = *profile_;
  Result<JsonValue> trace = parse_json(profile_trace_json(p));
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  std::map<int64_t, std::string> tracks;
  std::vector<const JsonValue*> events;
  for (const JsonValue& e : trace.value().find("traceEvents")->as_array()) {
    const std::string& ph = e.find("ph")->as_string();
    if (ph == "M" && e.find("name")->as_string() == "thread_name") {
      tracks[e.find("tid")->as_integer()] = e.find("args")->find("name")->as_string();
    } else if (ph == "X") {
      events.push_back(&e);
    }
  }
  EXPECT_EQ(tracks[0], "host (CPU fallback)");
  EXPECT_EQ(tracks[1], "delegate 0 (VulkanBackend)");
  EXPECT_EQ(tracks[2], "delegate 1 (VulkanBackend)");
  ASSERT_EQ(events.size(), 5u) << "four dispatches and the CPU step";
  // In plan order, end to end: conv, matmul, chain on track 1; floor on the
  // host; sin on track 2.
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"conv_0", 1}, {"matmul_0", 1}, {"mul_0+relu_0+tanh_0", 1}, {"floor_0", 0}, {"sin_0", 2}};
  double end = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const JsonValue& e = *events[i];
    EXPECT_EQ(e.find("name")->as_string(), want[i].first);
    EXPECT_EQ(e.find("tid")->as_integer(), want[i].second) << want[i].first;
    EXPECT_NEAR(e.find("ts")->as_number(), end, 1e-6 * (end + 1)) << want[i].first;
    EXPECT_GT(e.find("dur")->as_number(), 0) << want[i].first;
    end = e.find("ts")->as_number() + e.find("dur")->as_number();
  }
  EXPECT_EQ(events[1]->find("args")->find("kernel")->as_string().rfind("gemm", 0), 0u);
}

TEST_F(ProfileTest, PeaksAreMeasuredOncePerContextAndAProfileWaitsForAnExecute) {
  std::unique_ptr<Session> second = profiled_session(program_);
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(session_->primary_context(), second->primary_context());
  Result<const ExecuteProfile*> early = second->last_profile();
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(early.status().message().find("no successful execute"), std::string::npos) << early.status().message();
  set_inputs(*second);
  ASSERT_TRUE(second->execute().ok());
  const DevicePeaks& a = profile_->devices[0].peaks;
  const DevicePeaks& b = second->last_profile().value()->devices[0].peaks;
  EXPECT_GT(a.bytes_per_s, 0);
  EXPECT_GT(a.f32_flops_per_s, 0);
  EXPECT_TRUE(a.f16_matrix_flops_per_s > 0 || !a.f16_matrix_unknown_why.empty());
  EXPECT_GT(a.measure_ms, 0);
  // The second session found them on the context: the same measurement.
  EXPECT_EQ(a.measure_ms, b.measure_ms);
  EXPECT_EQ(a.bytes_per_s, b.bytes_per_s);
  Result<DevicePeaks> again = kernels::device_peaks(second->primary_context());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().measure_ms, a.measure_ms);
}

TEST_F(ProfileTest, NoProfileWithoutTheOption) {
  std::unique_ptr<Session> plain = Session::create(program_, SessionOptions{}).value();
  set_inputs(*plain);
  ASSERT_TRUE(plain->execute().ok());
  Result<const ExecuteProfile*> none = plain->last_profile();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("does not profile"), std::string::npos) << none.status().message();
  EXPECT_FALSE(plain->profiling());
}

TEST_F(ProfileTest, ASplitKGemmRecordsItsFlopsOnTheGemmAndItsReductionsBytes) {
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, {8, 512}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, {512, 8}).value();
  g.mark_output(graph::add_op(g, "matmul", "mm", {a, b}, {}).value()[0]);
  kernels::KernelGraphOptions options;
  options.profile_steps = true;
  options.gemm_splits = 4;
  vulkan_test::RunStats stats;
  ASSERT_TRUE(vulkan_test::run_on_vulkan(g,
                                         {vulkan_test::random_tensor(DType::kF32, {8, 512}, 1, -1, 1),
                                          vulkan_test::random_tensor(DType::kF32, {512, 8}, 2, -1, 1)},
                                         &stats, options)
                  .ok());
  ASSERT_EQ(stats.steps.size(), 2u);
  const gpu::TimedStep& gemm = stats.steps[0];
  const gpu::TimedStep& reduce = stats.steps[1];
  EXPECT_EQ(gemm.work.flops, uint64_t{2 * 8 * 8 * 512});
  EXPECT_NE(gemm.work.choice.find("split-K 4 x 128"), std::string::npos) << gemm.work.choice;
  EXPECT_FALSE(gemm.work.why.empty());
  const uint64_t partials = 4 * 8 * 8 * 4, y = 8 * 8 * 4;
  EXPECT_EQ(gemm.work.bytes, (8 * 512 + 512 * 8) * 4 + partials) << "A, B, and the partials written";
  EXPECT_EQ(reduce.kernel, "gemm_split_reduce_f32");
  EXPECT_EQ(reduce.work.ops, "matmul");
  EXPECT_EQ(reduce.work.flops, 0u);
  EXPECT_EQ(reduce.work.bytes, partials + y) << "the partials read, the output written (no bias)";
}

#ifdef GPUU_RUN_PATH
TEST_F(ProfileTest, GpuuRunWritesATraceAndPrintsTheTables) {
  ProfiledProgram p = make_program();
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuu_profile_test_";
  const std::string model = dir + "model.gpuu", x = dir + "x.bin", a = dir + "a.bin", trace = dir + "trace.json",
                    log = dir + "run.log";
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(p.bytes.data()),
                                               static_cast<std::streamsize>(p.bytes.size()));
  std::ofstream(x, std::ios::binary).write(std::string(1 * 4 * 8 * 8 * 4, '\0').data(), 1 * 4 * 8 * 8 * 4);
  std::ofstream(a, std::ios::binary).write(std::string(kM * kK * 4, '\0').data(), kM * kK * 4);
  const std::string cmd = std::string(GPUU_RUN_PATH) + " --model_path " + model + " --input_list " + x + "," + a +
                          " --num_executions 2 --quiet --profile " + trace + " > " + log + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream log_in(log);
  const std::string text((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  for (const char* part : {"peaks, measured by gpuu", "by op:", "top 4 dispatches:", "matmul_0", "Chrome trace"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " in\n" << text;
  }
  std::ifstream trace_in(trace);
  const std::string json((std::istreambuf_iterator<char>(trace_in)), std::istreambuf_iterator<char>());
  Result<JsonValue> parsed = parse_json(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  size_t complete = 0;
  for (const JsonValue& e : parsed.value().find("traceEvents")->as_array()) complete += e.find("ph")->as_string() == "X";
  EXPECT_EQ(complete, 5u);
  std::printf("%s", text.c_str());  // the table, for whoever reads the test log
  for (const std::string& f : {model, x, a, trace, log}) std::remove(f.c_str());
}
#endif

}  // namespace
}  // namespace gpuu::runtime
