// Program states in a session on a real device: kept across executes, updated
// in place where the delegate computing the update can, carried by a copy
// where it cannot (a later step reads the old value, a CPU step computes it),
// one per session, readable, settable and resettable, with clear errors.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/vulkan/vulkan_backend.h"
#include "context/shared_gpu_context_registry.h"
#include "kernels/vulkan_test_util.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/session.h"

namespace gpuu::runtime {
namespace {

using graph::DType;
using graph::NodeId;
using graph::ValueId;

std::shared_ptr<const program::Program> build(const graph::Graph& g, std::vector<partition::Region> regions) {
  partition::PartitionResult part;
  part.regions = std::move(regions);
  part.region_of_node.assign(g.nodes().size(), -1);
  for (size_t r = 0; r < part.regions.size(); ++r) {
    for (NodeId n : part.regions[r].nodes) part.region_of_node[static_cast<size_t>(n)] = static_cast<int32_t>(r);
  }
  program::Preprocessors pre;
  pre[partition::kVulkanId] = [](const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
                                 const std::vector<CompileSpecEntry>&) -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, vulkan::VulkanBackend().preprocess(graph, region, {}));
    return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
  };
  Result<std::vector<uint8_t>> bytes = program::build_program(g, part, SharedGpuCompileSpec{}, pre);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (!bytes.ok()) return nullptr;
  Result<std::shared_ptr<const program::Program>> p = program::load_program_bytes(bytes->data(), bytes->size());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : nullptr;
}

Blob floats(const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return Blob::take(std::move(bytes));
}

std::vector<float> state_of(const Session& s, size_t index) {
  std::vector<float> out(s.states()[index].bytes / 4);
  Status got = s.get_state(index, out.data(), out.size() * 4);
  EXPECT_TRUE(got.ok()) << got.message();
  return out;
}

std::vector<float> execute(Session& s, const std::vector<float>& x) {
  EXPECT_TRUE(s.set_input(0, x.data(), x.size() * 4).ok());
  Status ran = s.execute();
  EXPECT_TRUE(ran.ok()) << ran.message();
  std::vector<float> y(s.outputs()[0].bytes / 4);
  EXPECT_TRUE(s.get_output(0, y.data(), y.size() * 4).ok());
  return y;
}

// ema = ema * 0.5 + x (the state's update); y = ema_new * 2. `cpu_reader`: a
// CPU step then reads the state's old value (y = ema_new * ema_old), so its
// update cannot be written over it.
struct Ema {
  graph::Graph g;
  NodeId first_cpu = -1;
};

Ema make_ema(bool cpu_reader) {
  Ema e;
  graph::Graph& g = e.g;
  ValueId x = graph::add_graph_input(g, "x", DType::kF32, {8}).value();
  ValueId ema = graph::add_graph_state(g, "ema", DType::kF32, {8}, floats(std::vector<float>(8, 1.0f))).value();
  ValueId half = graph::add_graph_constant(g, "half", DType::kF32, {1}, floats({0.5f})).value();
  ValueId two = graph::add_graph_constant(g, "two", DType::kF32, {1}, floats({2.0f})).value();
  ValueId scaled = graph::add_op(g, "mul", "scale", {ema, half}, {}).value()[0];
  ValueId next = graph::add_op(g, "add", "accumulate", {scaled, x}, {}).value()[0];
  EXPECT_TRUE(graph::set_state_update(g, ema, next).ok());
  ValueId y = graph::add_op(g, "mul", "out", {next, cpu_reader ? ema : two}, {}).value()[0];
  g.mark_output(y);
  return e;
}

std::vector<float> ema_reference(std::vector<float>& ema, const std::vector<float>& x, bool cpu_reader) {
  std::vector<float> y(ema.size());
  for (size_t i = 0; i < ema.size(); ++i) {
    float next = ema[i] * 0.5f + x[i];
    y[i] = next * (cpu_reader ? ema[i] : 2.0f);
    ema[i] = next;
  }
  return y;
}

std::vector<float> step_input(int step) {
  std::vector<float> x(8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(step) + 0.25f * static_cast<float>(i);
  return x;
}

// A session of make_ema(cpu_reader) partitioned into `regions` (null after a failure, which it reports).
std::unique_ptr<Session> ema_session(bool cpu_reader, std::vector<partition::Region> regions) {
  Ema e = make_ema(cpu_reader);
  auto program = build(e.g, std::move(regions));
  if (!program) return nullptr;
  auto session = Session::create(program, SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status().message();
  return session.ok() ? std::move(session).value() : nullptr;
}

class StateTest : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }

  // Several executes against the reference: outputs and the state after each.
  void expect_ema_runs(Session& s, bool cpu_reader) {
    std::vector<float> ema(8, 1.0f);
    EXPECT_EQ(state_of(s, 0), ema) << "a session starts from the initial value";
    for (int step = 0; step < 4; ++step) {
      std::vector<float> want = ema_reference(ema, step_input(step), cpu_reader);
      EXPECT_EQ(execute(s, step_input(step)), want) << "execute " << step;
      EXPECT_EQ(state_of(s, 0), ema) << "after execute " << step;
    }
  }
};

TEST_F(StateTest, VulkanDelegateUpdatesTheStateInPlace) {
  auto session = ema_session(false, {{partition::kVulkanId, {0, 1, 2}}});
  ASSERT_TRUE(session);
  Session& s = *session;
  ASSERT_EQ(s.states().size(), 1u);
  EXPECT_EQ(s.states()[0].name, "ema");
  EXPECT_EQ(s.inputs().size(), 1u) << "a state is no input";
  EXPECT_EQ(s.outputs().size(), 1u) << "nor an output";
  EXPECT_TRUE(s.state_updated_in_place(0));
  expect_ema_runs(s, false);
  ExecuteStats stats;
  ASSERT_TRUE(s.execute(&stats).ok());
  EXPECT_EQ(stats.host_copies, 0u) << "the state stays on the device";
}

TEST_F(StateTest, StateReadAfterItsUpdateIsCarriedByACopy) {
  auto session = ema_session(true, {{partition::kVulkanId, {0, 1}}, {partition::kCpuId, {2}}});
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->state_updated_in_place(0)) << "the CPU step reads the old value after the update";
  expect_ema_runs(*session, true);
}

TEST_F(StateTest, CpuFallbackStateLivesInHostMemory) {
  auto session = ema_session(false, {{partition::kCpuId, {0, 1, 2}}});
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->state_updated_in_place(0));
  expect_ema_runs(*session, false);
}

// The Vulkan delegate computes the update but does not read the state (the
// CPU step does, before it): its output takes the state's memory unasked.
TEST_F(StateTest, UpdateOfADelegateThatDoesNotReadTheStateTakesItsMemory) {
  auto session = ema_session(false, {{partition::kCpuId, {0}}, {partition::kVulkanId, {1, 2}}});
  ASSERT_TRUE(session);
  EXPECT_TRUE(session->state_updated_in_place(0));
  expect_ema_runs(*session, false);
}

TEST_F(StateTest, SessionsOfOneProgramKeepTheirOwnStates) {
  Ema e = make_ema(false);
  auto program = build(e.g, {{partition::kVulkanId, {0, 1, 2}}});
  ASSERT_TRUE(program);
  auto a = Session::create(program, SessionOptions{});
  auto b = Session::create(program, SessionOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<float> ema_a(8, 1.0f), ema_b(8, 1.0f);
  for (int step = 0; step < 3; ++step) {
    ema_reference(ema_a, step_input(step), false);
    execute(*a.value(), step_input(step));
  }
  EXPECT_EQ(state_of(*a.value(), 0), ema_a);
  EXPECT_EQ(state_of(*b.value(), 0), ema_b) << "b has not run";
  ema_reference(ema_b, step_input(9), false);
  execute(*b.value(), step_input(9));
  EXPECT_EQ(state_of(*b.value(), 0), ema_b);
  EXPECT_EQ(state_of(*a.value(), 0), ema_a) << "b's execute leaves a's state alone";
}

TEST_F(StateTest, SetStateSeedsAndResetStateRestores) {
  auto session = ema_session(false, {{partition::kVulkanId, {0, 1, 2}}});
  ASSERT_TRUE(session);
  Session& s = *session;
  execute(s, step_input(1));
  std::vector<float> seed = {8, 7, 6, 5, 4, 3, 2, 1};
  ASSERT_TRUE(s.set_state(0, seed.data(), 32).ok());
  EXPECT_EQ(state_of(s, 0), seed);
  std::vector<float> ema = seed;
  EXPECT_EQ(execute(s, step_input(2)), ema_reference(ema, step_input(2), false)) << "the seed is what is read";
  EXPECT_EQ(state_of(s, 0), ema);
  s.reset_state();
  EXPECT_EQ(state_of(s, 0), std::vector<float>(8, 1.0f));
  std::vector<float> fresh(8, 1.0f);
  EXPECT_EQ(execute(s, step_input(3)), ema_reference(fresh, step_input(3), false));
}

TEST_F(StateTest, BadStateCallsAreRefusedAndLeaveTheSessionUsable) {
  auto session = ema_session(false, {{partition::kVulkanId, {0, 1, 2}}});
  ASSERT_TRUE(session);
  Session& s = *session;
  std::vector<float> buf(8);
  Status wrong_size = s.set_state(0, buf.data(), 28);
  EXPECT_EQ(wrong_size.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_size.message(), "state 0 ('ema', f32[8]) takes 32 bytes, got 28");
  Status bad_index = s.get_state(1, buf.data(), 32);
  EXPECT_EQ(bad_index.message(), "state index 1 is out of range (the program has 1 states)");
  Result<size_t> unknown = s.state_index("cache");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "no state named 'cache' (the program's states: 'ema')");
  EXPECT_EQ(s.state_index("ema").value(), 0u);
  expect_ema_runs(s, false);
}

// The update is also an output, kept in the state's memory: setting the
// state afterwards leaves the last execute's output as it was.
TEST_F(StateTest, OutputThatIsAnInPlaceUpdateSurvivesSetState) {
  Ema e = make_ema(false);
  e.g.mark_output(e.g.states()[0].update);
  auto program = build(e.g, {{partition::kVulkanId, {0, 1, 2}}});
  ASSERT_TRUE(program);
  auto session = Session::create(program, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().message();
  Session& s = *session.value();
  ASSERT_TRUE(s.state_updated_in_place(0));
  std::vector<float> ema(8, 1.0f);
  execute(s, step_input(1));
  ema_reference(ema, step_input(1), false);
  std::vector<float> seed(8, 42.0f), out(8);
  ASSERT_TRUE(s.set_state(0, seed.data(), 32).ok());
  ASSERT_TRUE(s.get_output(1, out.data(), 32).ok());
  EXPECT_EQ(out, ema) << "the output is the execute's, not the seed";
  EXPECT_EQ(state_of(s, 0), seed);
  std::vector<float> from_seed = seed;
  EXPECT_EQ(execute(s, step_input(2)), ema_reference(from_seed, step_input(2), false));
}

// A state updated to a graph input: the input's value is kept (through the host).
TEST_F(StateTest, StateUpdatedToAGraphInputKeepsIt) {
  graph::Graph g;
  ValueId x = graph::add_graph_input(g, "x", DType::kF32, {8}).value();
  ValueId last = graph::add_graph_state(g, "last", DType::kF32, {8}, floats(std::vector<float>(8, 0.0f))).value();
  ASSERT_TRUE(graph::set_state_update(g, last, x).ok());
  ValueId y = graph::add_op(g, "sub", "delta", {x, last}, {}).value()[0];
  g.mark_output(y);
  auto program = build(g, {{partition::kVulkanId, {0}}});
  ASSERT_TRUE(program);
  auto session = Session::create(program, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_EQ(execute(*session.value(), step_input(1)), step_input(1));
  std::vector<float> delta = execute(*session.value(), step_input(3));
  for (float d : delta) EXPECT_EQ(d, 2.0f);
  EXPECT_EQ(state_of(*session.value(), 0), step_input(3));
}

}  // namespace
}  // namespace gpuu::runtime
