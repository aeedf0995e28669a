// The runtime session on a real device: programs of several Vulkan delegates
// and CPU-fallback steps, the three sync modes, an application's device
// (lookup_only), teardown in every order, and bad inputs.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/vulkan/vulkan_backend.h"
#include "context/shared_gpu_context_registry.h"
#include "context/vulkan_bootstrap.h"
#include "kernels/vulkan_test_util.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/session.h"
#include "support/test_vulkan_device.h"

namespace gpuu::runtime {
namespace {

using graph::DType;

// x[2,3,8] -> sin -> mul(w) | floor (CPU) | add(x) -> tanh -> out0 ; also out1 = sin output
struct MixedProgram {
  graph::Graph graph;
  partition::PartitionResult partition;
  std::vector<uint8_t> bytes;
};

MixedProgram make_mixed_program(const SharedGpuCompileSpec& spec) {
  MixedProgram p;
  graph::Graph& g = p.graph;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {2, 3, 8}).value();
  cpu::HostTensor w = vulkan_test::random_tensor(DType::kF32, {8}, 7, 0.5, 3.0);
  graph::ValueId wc = graph::add_graph_constant(g, "w", DType::kF32, {8}, w.to_blob()).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, wc}, {}).value()[0];
  graph::ValueId f = graph::add_op(g, "floor", "floor_0", {m}, {}).value()[0];
  graph::ValueId a = graph::add_op(g, "add", "add_0", {f, x}, {}).value()[0];
  graph::ValueId t = graph::add_op(g, "tanh", "tanh_0", {a}, {}).value()[0];
  g.mark_output(t);
  g.mark_output(s);
  p.partition.regions = {{partition::kVulkanId, {0, 1}}, {partition::kCpuId, {2}}, {partition::kVulkanId, {3, 4}}};
  p.partition.region_of_node = {0, 0, 1, 2, 2};
  program::Preprocessors pre;
  pre[partition::kVulkanId] = [](const graph::Graph& graph, const partition::Region& region,
                  const program::RegionIo&,
                  const std::vector<CompileSpecEntry>&) -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, vulkan::VulkanBackend().preprocess(graph, region, {}));
    return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
  };
  Result<std::vector<uint8_t>> bytes = program::build_program(g, p.partition, spec, pre);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (bytes.ok()) p.bytes = std::move(bytes).value();
  return p;
}

SharedGpuCompileSpec spec_with(const std::string& token, ContextMode mode, SyncMode sync) {
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.group_id = 7;
  spec.context_mode = mode;
  spec.sync_mode = sync;
  spec.present = true;
  return spec;
}

std::vector<float> run(Session& session, const cpu::HostTensor& x, size_t output) {
  EXPECT_TRUE(session.set_input(0, x.bytes.data(), x.bytes.size()).ok());
  Status s = session.execute();
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<float> out(session.outputs()[output].bytes / 4);
  EXPECT_TRUE(session.get_output(output, out.data(), out.size() * 4).ok());
  return out;
}

class SessionTest : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
};

TEST_F(SessionTest, MixedProgramMatchesTheReferenceUnderEverySyncMode) {
  MixedProgram p = make_mixed_program(spec_with("mixed", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  Result<std::shared_ptr<const program::Program>> program = program::load_program_bytes(p.bytes.data(), p.bytes.size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  ASSERT_EQ(program.value()->delegates().size(), 2u);
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 1, -3, 3);
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(p.graph, {x});
  ASSERT_TRUE(want.ok()) << want.status().message();

  std::vector<std::vector<float>> results;
  for (SyncMode mode : {SyncMode::kTimeline, SyncMode::kQueueWaitIdle, SyncMode::kNone}) {
    SessionOptions options;
    options.overrides.sync_mode = mode;
    Result<std::unique_ptr<Session>> session = Session::create(program.value(), options);
    ASSERT_TRUE(session.ok()) << to_string(mode) << ": " << session.status().message();
    EXPECT_EQ(session.value()->sync_mode(), mode);
    for (int repeat = 0; repeat < 3; ++repeat) {  // replays give the same answer
      ExecuteStats stats;
      ASSERT_TRUE(session.value()->set_input(0, x.bytes.data(), x.bytes.size()).ok());
      Status ran = session.value()->execute(&stats);
      ASSERT_TRUE(ran.ok()) << to_string(mode) << ": " << ran.message();
      EXPECT_EQ(stats.delegate_submits, 2u);
      std::vector<float> out0(48), out1(48);
      ASSERT_TRUE(session.value()->get_output(0, out0.data(), 192).ok());
      ASSERT_TRUE(session.value()->get_output(1, out1.data(), 192).ok());
      cpu::HostTensor got0 = cpu::HostTensor::from_data<float>({2, 3, 8}, out0).value();
      cpu::HostTensor got1 = cpu::HostTensor::from_data<float>({2, 3, 8}, out1).value();
      EXPECT_TRUE(vulkan_test::all_close(got0, want.value()[0], 1e-5, 1e-5)) << to_string(mode);
      EXPECT_TRUE(vulkan_test::all_close(got1, want.value()[1], 2e-5, 2e-5)) << to_string(mode);
      if (repeat == 0) results.push_back(out0);
    }
  }
  EXPECT_EQ(results[0], results[1]) << "timeline and queue_wait_idle agree bit for bit";
  EXPECT_EQ(results[0], results[2]) << "timeline and none agree bit for bit";
}

TEST_F(SessionTest, TimelineWaitsOnlyWhereTheCpuNeedsData) {
  MixedProgram p = make_mixed_program(spec_with("waits", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 2, -3, 3);
  ASSERT_TRUE(session->set_input(0, x.bytes.data(), x.bytes.size()).ok());
  ExecuteStats stats;
  ASSERT_TRUE(session->execute(&stats).ok());
  EXPECT_EQ(stats.host_waits, 2u) << "once before the CPU floor step, once at the end";
  EXPECT_EQ(stats.host_copies, 0u);
}

// Waits longer than the polling (here 1 us: every wait) sleep until shortly
// before the last two waits' length, then poll: each execute, with a new
// input, still reads only its own finished results.
TEST_F(SessionTest, LongWaitsSleepThenPollAndReadFinishedResults) {
  MixedProgram p = make_mixed_program(spec_with("sleeps", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  SessionOptions options;
  options.wait_spin_us = 1;
  auto session = Session::create(program, options).value();
  for (uint32_t seed = 10; seed < 16; ++seed) {
    cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, seed, -3, 3);
    std::vector<float> got = run(*session, x, 0);
    cpu::HostTensor want = cpu::run_graph(p.graph, {x}).value()[0];
    EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3, 8}, got).value(), want, 1e-5, 1e-5))
        << "execute " << seed - 10;
  }
}

TEST_F(SessionTest, BothDelegatesShareOneContextWithTheirOwnPools) {
  MixedProgram p = make_mixed_program(spec_with("one-device", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  std::vector<const backends::DelegateHandle*> handles = session->delegate_handles();
  ASSERT_EQ(handles.size(), 2u);
  EXPECT_EQ(handles[0]->context(), handles[1]->context());
  EXPECT_EQ(handles[0]->context()->device(), handles[1]->context()->device());
  EXPECT_NE(handles[0]->command_pool(), handles[1]->command_pool());
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup({"one-device", 7}), handles[0]->context());
}

TEST_F(SessionTest, LookupOnlyRunsOnTheApplicationsDeviceAndLeavesItAlive) {
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  ASSERT_TRUE(vulkan_test::register_app_device(app, "app", 7).ok());
  MixedProgram p = make_mixed_program(spec_with("app", ContextMode::kLookupOnly, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  {
    auto session = Session::create(program, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().message();
    EXPECT_EQ(session.value()->primary_context()->device(), app.device);
    cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 3, -3, 3);
    std::vector<float> out = run(*session.value(), x, 0);
    auto want = cpu::run_graph(p.graph, {x}).value();
    EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3, 8}, out).value(), want[0], 1e-5,
                                       1e-5));
  }
  ASSERT_TRUE(SharedGpuContextRegistry::get().unregister({"app", 7}).ok());
  EXPECT_TRUE(app.still_usable(&why)) << why;
}

TEST_F(SessionTest, LookupOnlyWithoutAContextFailsNamingTheKey) {
  MixedProgram p = make_mixed_program(spec_with("nobody", ContextMode::kLookupOnly, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  auto session = Session::create(program, SessionOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kNotFound);
  EXPECT_NE(session.status().message().find("'nobody' group 7"), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("Vulkan delegate 0"), std::string::npos) << session.status().message();
}

TEST_F(SessionTest, OverridesRedirectTheContextKey) {
  MixedProgram p = make_mixed_program(spec_with("from-file", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  SessionOptions options;
  options.overrides.token = "from-app";
  options.overrides.group_id = 3;
  auto session = Session::create(program, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_NE(SharedGpuContextRegistry::get().lookup({"from-app", 3}), nullptr);
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup({"from-file", 7}), nullptr);
}

TEST_F(SessionTest, TeardownInEveryOrderLeavesOthersWorking) {
  MixedProgram p = make_mixed_program(spec_with("teardown", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 4, -3, 3);
  auto want = cpu::run_graph(p.graph, {x}).value();
  // Three owners of the context: session A, session B, the registry entry.
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& order : orders) {
    std::unique_ptr<Session> a = Session::create(program, SessionOptions{}).value();
    std::unique_ptr<Session> b = Session::create(program, SessionOptions{}).value();
    ASSERT_EQ(a->primary_context(), b->primary_context());
    for (int step : order) {
      if (step == 0) a.reset();
      if (step == 1) b.reset();
      if (step == 2) ASSERT_TRUE(SharedGpuContextRegistry::get().unregister({"teardown", 7}).ok());
      for (Session* alive : {a.get(), b.get()}) {  // whoever is left still runs
        if (!alive) continue;
        std::vector<float> out = run(*alive, x, 0);
        EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3, 8}, out).value(), want[0],
                                           1e-5, 1e-5));
      }
    }
  }
}

TEST_F(SessionTest, BadInputsAreRefusedAndTheSessionStillWorks) {
  MixedProgram p = make_mixed_program(spec_with("bad", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  Status missing = session->execute();
  EXPECT_EQ(missing.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("('x') was never set"), std::string::npos) << missing.message();
  std::vector<uint8_t> small(100);
  Status wrong_size = session->set_input(0, small.data(), small.size());
  EXPECT_EQ(wrong_size.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_size.message().find("f32[2,3,8]) takes 192 bytes, got 100"), std::string::npos)
      << wrong_size.message();
  EXPECT_EQ(session->set_input(5, small.data(), 192).code(), StatusCode::kInvalidArgument);
  std::vector<float> out(48);
  EXPECT_EQ(session->get_output(0, out.data(), 192).code(), StatusCode::kFailedPrecondition) << "nothing ran yet";
  EXPECT_EQ(session->get_output(0, out.data(), 100).code(), StatusCode::kInvalidArgument);
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 5, -3, 3);
  std::vector<float> got = run(*session, x, 0);
  auto want = cpu::run_graph(p.graph, {x}).value();
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3, 8}, got).value(), want[0], 1e-5, 1e-5));
}

TEST_F(SessionTest, ApplicationBuffersFeedAndReceiveTensorsOnTheDevice) {
  MixedProgram p = make_mixed_program(spec_with("buffers", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  auto program = program::load_program_bytes(p.bytes.data(), p.bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  const SharedGpuContext& ctx = *session->primary_context();
  auto in = gpu::DeviceBuffer::create(ctx, 192 + 64, gpu::MemoryKind::kUpload, "app input").value();
  auto out = gpu::DeviceBuffer::create(ctx, 192 + 32, gpu::MemoryKind::kReadback, "app output").value();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {2, 3, 8}, 6, -3, 3);
  std::memcpy(static_cast<uint8_t*>(in.mapped()) + 64, x.bytes.data(), 192);
  ASSERT_TRUE(session->bind_input_buffer(0, in.buffer(), 64, 192).ok());
  ASSERT_TRUE(session->bind_output_buffer(0, out.buffer(), 32, 192).ok());
  EXPECT_EQ(session->bind_output_buffer(0, out.buffer(), 32, 100).code(), StatusCode::kInvalidArgument);
  Status ran = session->execute();
  ASSERT_TRUE(ran.ok()) << ran.message();
  auto want = cpu::run_graph(p.graph, {x}).value();
  std::vector<float> got(48);
  std::memcpy(got.data(), static_cast<uint8_t*>(out.mapped()) + 32, 192);
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3, 8}, got).value(), want[0], 1e-5, 1e-5));
  ASSERT_TRUE(session->bind_input_buffer(0, VK_NULL_HANDLE, 0, 0).ok());  // back to host memory
  EXPECT_EQ(session->execute().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
// x[4,64] -> sin | mul(w) | tanh: three Vulkan delegates on one context.
std::vector<uint8_t> make_three_delegate_program(graph::Graph* out_graph, SyncMode sync) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 64}).value();
  cpu::HostTensor w = vulkan_test::random_tensor(DType::kF32, {64}, 9, 0.5, 2.0);
  graph::ValueId wc = graph::add_graph_constant(g, "w", DType::kF32, {64}, w.to_blob()).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, wc}, {}).value()[0];
  graph::ValueId t = graph::add_op(g, "tanh", "tanh_0", {m}, {}).value()[0];
  g.mark_output(t);
  partition::PartitionResult part;
  part.regions = {{partition::kVulkanId, {0}}, {partition::kVulkanId, {1}}, {partition::kVulkanId, {2}}};
  part.region_of_node = {0, 1, 2};
  program::Preprocessors pre;
  pre[partition::kVulkanId] = [](const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
                                 const std::vector<CompileSpecEntry>&) -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, vulkan::VulkanBackend().preprocess(graph, region, {}));
    return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
  };
  Result<std::vector<uint8_t>> bytes =
      program::build_program(g, part, spec_with("three", ContextMode::kLookupOrCreate, sync), pre);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  *out_graph = std::move(g);
  return bytes.ok() ? std::move(bytes).value() : std::vector<uint8_t>{};
}

std::vector<float> floats_at(const gpu::DeviceBuffer& b, VkDeviceSize offset, size_t count) {
  std::vector<float> v(count);
  std::memcpy(v.data(), static_cast<const uint8_t*>(b.mapped()) + offset, count * 4);
  return v;
}

bool matches(const std::vector<float>& got, const cpu::HostTensor& want) {
  return vulkan_test::all_close(cpu::HostTensor::from_data<float>(want.shape, got).value(), want, 1e-5, 1e-5);
}

TEST_F(SessionTest, BoundBuffersAreReadAndWrittenInPlaceInOneSubmit) {
  graph::Graph g;
  std::vector<uint8_t> bytes = make_three_delegate_program(&g, SyncMode::kTimeline);
  auto program = program::load_program_bytes(bytes.data(), bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  const SharedGpuContext& ctx = *session->primary_context();
  const VkDeviceSize align = std::max<VkDeviceSize>(ctx.properties().limits.minStorageBufferOffsetAlignment, 4);
  // Two sets of application buffers, the tensor at an aligned offset in each.
  std::vector<gpu::DeviceBuffer> ins, outs;
  for (int i = 0; i < 2; ++i) {
    ins.push_back(gpu::DeviceBuffer::create(ctx, 1024 + align, gpu::MemoryKind::kShared, "app input").value());
    outs.push_back(gpu::DeviceBuffer::create(ctx, 1024 + align, gpu::MemoryKind::kReadback, "app output").value());
  }
  for (int round = 0; round < 4; ++round) {
    int set = round % 2;
    cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 64}, 20 + round, -3, 3);
    std::memcpy(static_cast<uint8_t*>(ins[set].mapped()) + align, x.bytes.data(), 1024);
    ASSERT_TRUE(session->bind_input_buffer(0, ins[set].buffer(), align, 1024).ok());
    ASSERT_TRUE(session->bind_output_buffer(0, outs[set].buffer(), align, 1024).ok());
    EXPECT_TRUE(session->input_bound_zero_copy(0));
    EXPECT_TRUE(session->output_bound_zero_copy(0));
    ExecuteStats stats;
    Status ran = session->execute(&stats);
    ASSERT_TRUE(ran.ok()) << ran.message();
    EXPECT_EQ(stats.delegate_submits, 3u);
    EXPECT_EQ(stats.queue_submits, 1u) << "three delegates on one queue go in one submit";
    EXPECT_EQ(stats.host_waits, 1u);
    EXPECT_EQ(stats.host_copies, 0u);
    EXPECT_GT(stats.host_submit_us, 0.0) << "the submit's wall time is counted";
    auto want = cpu::run_graph(g, {x}).value();
    EXPECT_TRUE(matches(floats_at(outs[set], align, 256), want[0])) << "round " << round;
    // The host may still read a bound output (one staging copy, on demand).
    std::vector<float> got(256);
    ASSERT_TRUE(session->get_output(0, got.data(), 1024).ok());
    EXPECT_TRUE(matches(got, want[0])) << "round " << round;
  }
  // Unbound, the session takes host memory again.
  ASSERT_TRUE(session->bind_input_buffer(0, VK_NULL_HANDLE, 0, 0).ok());
  ASSERT_TRUE(session->bind_output_buffer(0, VK_NULL_HANDLE, 0, 0).ok());
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 64}, 40, -3, 3);
  std::vector<float> host_out = run(*session, x, 0);
  EXPECT_TRUE(matches(host_out, cpu::run_graph(g, {x}).value()[0]));
}

TEST_F(SessionTest, UnalignedBindingsAreCopiedAndOverlapsRefused) {
  graph::Graph g;
  std::vector<uint8_t> bytes = make_three_delegate_program(&g, SyncMode::kTimeline);
  auto program = program::load_program_bytes(bytes.data(), bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  const SharedGpuContext& ctx = *session->primary_context();
  const VkDeviceSize align = ctx.properties().limits.minStorageBufferOffsetAlignment;
  auto buf = gpu::DeviceBuffer::create(ctx, 4096, gpu::MemoryKind::kShared, "app buffer").value();
  // An output overlapping the bound input is refused, naming both.
  ASSERT_TRUE(session->bind_input_buffer(0, buf.buffer(), 0, 1024).ok());
  Status overlap = session->bind_output_buffer(0, buf.buffer(), 512, 1024);
  EXPECT_EQ(overlap.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(overlap.message().find("overlaps the one bound to input 0"), std::string::npos) << overlap.message();
  // An offset storage buffers cannot start at still works, through a copy.
  const VkDeviceSize odd = align > 4 ? 2048 + 4 : 2048;
  ASSERT_TRUE(session->bind_output_buffer(0, buf.buffer(), odd, 1024).ok());
  EXPECT_EQ(session->output_bound_zero_copy(0), align <= 4);
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 64}, 50, -3, 3);
  std::memcpy(buf.mapped(), x.bytes.data(), 1024);
  ExecuteStats stats;
  ASSERT_TRUE(session->execute(&stats).ok());
  EXPECT_EQ(stats.queue_submits, 1u) << "the output copy rides in the same submit";
  std::vector<float> got(256);
  std::memcpy(got.data(), static_cast<uint8_t*>(buf.mapped()) + odd, 1024);
  EXPECT_TRUE(matches(got, cpu::run_graph(g, {x}).value()[0]));
}

TEST_F(SessionTest, QueueWaitIdleSubmitsAndWaitsPerDelegate) {
  graph::Graph g;
  std::vector<uint8_t> bytes = make_three_delegate_program(&g, SyncMode::kQueueWaitIdle);
  auto program = program::load_program_bytes(bytes.data(), bytes.size()).value();
  auto session = Session::create(program, SessionOptions{}).value();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {4, 64}, 60, -3, 3);
  ASSERT_TRUE(session->set_input(0, x.bytes.data(), 1024).ok());
  ExecuteStats stats;
  ASSERT_TRUE(session->execute(&stats).ok());
  // One submit and wait per delegate, and one more for the output's staging
  // copy where the device keeps it where the host cannot read fast.
  EXPECT_GE(stats.queue_submits, 3u);
  EXPECT_LE(stats.queue_submits, 4u);
  EXPECT_EQ(stats.host_waits, stats.queue_submits);
  std::vector<float> got(256);
  ASSERT_TRUE(session->get_output(0, got.data(), 1024).ok());
  EXPECT_TRUE(matches(got, cpu::run_graph(g, {x}).value()[0]));
}

TEST_F(SessionTest, ADelegateOfAnUnregisteredBackendIsRefusedByName) {
  // The writer keys preprocessing by id; a region of a backend this build
  // lacks is written (serialized) under its id, and loading names it.
  MixedProgram p = make_mixed_program(spec_with("npu", ContextMode::kLookupOrCreate, SyncMode::kTimeline));
  p.partition.regions[0].backend = "NpuBackend";
  Result<std::vector<uint8_t>> bytes = program::build_program(p.graph, p.partition, spec_with("npu", ContextMode::kLookupOrCreate, SyncMode::kTimeline), {});
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto session = Session::create(program.value(), SessionOptions{});
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("needs backend 'NpuBackend'"), std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("VulkanBackend, VgfBackend"), std::string::npos)
      << session.status().message();
}

}  // namespace gpuu::runtime
