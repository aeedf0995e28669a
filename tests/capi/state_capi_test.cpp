// Program states through the C ABI alone: a graph with a step counter and an
// exponential moving average built with the graph builder, written to memory,
// run for several executes against a host reference; sessions of one program
// apart; get, set, reset, lookup by name and their errors; gpuu-run writing
// the states its executes leave.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gpuu.h"
#include "support/graph_capi_util.h"

namespace {

std::string last_error() { return gpuu_last_error(); }

constexpr size_t kN = 6;

// steps [1] f32 += 1; ema [6] f32 = ema * 0.5 + x * steps_new; y = ema_new + x.
// The states start at 10 and at 1 .. 6.
std::vector<uint8_t> stateful_program(gpuu_prefer prefer) {
  gpuu_graph* g = nullptr;
  EXPECT_EQ(gpuu_graph_create(&g), GPUU_OK);
  const int64_t n = kN, one = 1;
  int32_t x = -1, steps = -1, ema = -1, half = -1, unit = -1;
  EXPECT_EQ(gpuu_graph_add_input(g, "x", GPUU_DTYPE_F32, &n, 1, &x), GPUU_OK) << last_error();
  float start = 10, half_value = 0.5f, one_value = 1;
  std::vector<float> ema0 = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(gpuu_graph_add_state(g, "steps", GPUU_DTYPE_F32, &one, 1, &start, 4, &steps), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_add_state(g, "ema", GPUU_DTYPE_F32, &n, 1, ema0.data(), 24, &ema), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_add_constant(g, "half", GPUU_DTYPE_F32, &one, 1, &half_value, 4, &half), GPUU_OK);
  EXPECT_EQ(gpuu_graph_add_constant(g, "unit", GPUU_DTYPE_F32, &one, 1, &one_value, 4, &unit), GPUU_OK);
  auto node = [&](const char* op, const char* name, std::vector<int32_t> inputs) {
    return gpuu_test::add_node(g, op, name, std::move(inputs));
  };
  int32_t next_steps = node("add", "count", {steps, unit});
  int32_t weighted = node("mul", "weigh", {x, next_steps});
  int32_t decayed = node("mul", "decay", {ema, half});
  int32_t next_ema = node("add", "accumulate", {decayed, weighted});
  int32_t y = node("add", "out", {next_ema, x});
  // A constant or a state's own value is no update; a value of another shape neither.
  EXPECT_EQ(gpuu_graph_set_state_update(g, steps, unit), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("state 'steps': its update 'unit' is a constant"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_graph_set_state_update(g, steps, weighted), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("state 'steps' is f32 [1] but its update 'weigh:0' is f32 [6]"), std::string::npos)
      << last_error();
  EXPECT_EQ(gpuu_graph_verify(g), GPUU_ERROR_INVALID_ARGUMENT) << "no update yet";
  EXPECT_EQ(gpuu_graph_set_state_update(g, steps, next_steps), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_set_state_update(g, ema, next_ema), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_mark_output(g, y), GPUU_OK);
  EXPECT_EQ(gpuu_graph_verify(g), GPUU_OK) << last_error();
  int32_t ids[2] = {-1, -1}, update = -1;
  size_t count = 0;
  EXPECT_EQ(gpuu_graph_states(g, ids, 2, &count), GPUU_OK);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(ids[0], steps);
  EXPECT_EQ(gpuu_graph_state_update(g, ema, &update), GPUU_OK);
  EXPECT_EQ(update, next_ema);

  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = prefer;
  options.min_partition_size = 1;
  return gpuu_test::program_bytes(g, options);
}

gpuu_session* open_session(const std::vector<uint8_t>& bytes) {
  gpuu_program* program = nullptr;
  EXPECT_EQ(gpuu_program_load_memory(bytes.data(), bytes.size(), &program), GPUU_OK) << last_error();
  gpuu_session* session = nullptr;
  EXPECT_EQ(gpuu_session_create(program, nullptr, &session), GPUU_OK) << last_error();
  gpuu_program_release(program);
  return session;
}

std::vector<float> step_input(int step) {
  std::vector<float> x(kN);
  for (size_t i = 0; i < kN; ++i) x[i] = 0.5f * static_cast<float>(step) - 0.25f * static_cast<float>(i);
  return x;
}

// The host reference of one execute: updates `steps` and `ema`, returns y.
std::vector<float> reference(float& steps, std::vector<float>& ema, const std::vector<float>& x) {
  steps += 1;
  std::vector<float> y(kN);
  for (size_t i = 0; i < kN; ++i) {
    ema[i] = ema[i] * 0.5f + x[i] * steps;
    y[i] = ema[i] + x[i];
  }
  return y;
}

std::vector<float> get_state(const gpuu_session* s, size_t index, size_t count) {
  std::vector<float> out(count);
  EXPECT_EQ(gpuu_session_get_state(s, index, out.data(), count * 4), GPUU_OK) << last_error();
  return out;
}

std::vector<float> execute(gpuu_session* s, const std::vector<float>& x) {
  EXPECT_EQ(gpuu_session_set_input(s, 0, x.data(), x.size() * 4), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_session_execute(s), GPUU_OK) << last_error();
  std::vector<float> y(kN);
  EXPECT_EQ(gpuu_session_get_output(s, 0, y.data(), y.size() * 4), GPUU_OK) << last_error();
  return y;
}

TEST(StateCApi, StatesCarryAcrossExecutesUnderEveryPolicy) {
  for (gpuu_prefer prefer : {GPUU_PREFER_VULKAN_FIRST, GPUU_PREFER_VGF_FIRST}) {
    gpuu_session* s = open_session(stateful_program(prefer));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(gpuu_session_state_count(s), 2u);
    EXPECT_EQ(gpuu_session_input_count(s), 1u) << "states are no inputs";
    EXPECT_EQ(gpuu_session_output_count(s), 1u) << "nor outputs";
    gpuu_tensor_info info;
    info.struct_size = sizeof(info);
    ASSERT_EQ(gpuu_session_state_info(s, 1, &info), GPUU_OK);
    EXPECT_STREQ(info.name, "ema");
    EXPECT_EQ(info.dtype, GPUU_DTYPE_F32);
    ASSERT_EQ(info.rank, 1u);
    EXPECT_EQ(info.shape[0], static_cast<int64_t>(kN));
    EXPECT_EQ(info.byte_size, kN * 4);
    size_t index = 9;
    ASSERT_EQ(gpuu_session_state_index(s, "ema", &index), GPUU_OK);
    EXPECT_EQ(index, 1u);
    float steps = 10;
    std::vector<float> ema = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(get_state(s, 1, kN), ema) << "a session starts from the initial values";
    for (int step = 0; step < 4; ++step) {
      std::vector<float> want = reference(steps, ema, step_input(step));
      EXPECT_EQ(execute(s, step_input(step)), want) << "prefer " << prefer << ", execute " << step;
      EXPECT_EQ(get_state(s, 0, 1), std::vector<float>{steps}) << "prefer " << prefer << ", execute " << step;
      EXPECT_EQ(get_state(s, 1, kN), ema) << "prefer " << prefer << ", execute " << step;
    }
    gpuu_session_destroy(s);
  }
}

TEST(StateCApi, VulkanUpdatesInPlaceAndSessionsKeepTheirOwn) {
  std::vector<uint8_t> bytes = stateful_program(GPUU_PREFER_VULKAN_FIRST);
  gpuu_session* a = open_session(bytes);
  gpuu_session* b = open_session(bytes);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(gpuu_session_state_in_place(a, 0), 1);
  EXPECT_EQ(gpuu_session_state_in_place(a, 1), 1);
  EXPECT_EQ(gpuu_session_state_in_place(a, 2), 0) << "out of range";
  float steps = 10;
  std::vector<float> ema = {1, 2, 3, 4, 5, 6};
  for (int step = 0; step < 3; ++step) {
    reference(steps, ema, step_input(step));
    execute(a, step_input(step));
  }
  EXPECT_EQ(get_state(a, 1, kN), ema);
  EXPECT_EQ(get_state(b, 0, 1), std::vector<float>{10}) << "b has not run";
  execute(b, step_input(0));
  EXPECT_EQ(get_state(b, 0, 1), std::vector<float>{11});
  EXPECT_EQ(get_state(a, 0, 1), std::vector<float>{steps}) << "b's execute leaves a's states alone";
  // Each session's memory: its states (steps [1], ema [6]), x and y [6]; the
  // elementwise chain is one dispatch, so no intermediates.
  gpuu_session_memory memory;
  memory.struct_size = sizeof(memory);
  ASSERT_EQ(gpuu_session_memory_info(a, &memory), GPUU_OK) << last_error();
  EXPECT_EQ(memory.state_bytes, uint64_t{(1 + kN) * 4});
  EXPECT_EQ(memory.tensor_bytes, uint64_t{2 * kN * 4});
  EXPECT_EQ(memory.workspace_bytes, 0u);
  memory.struct_size = 8;
  EXPECT_EQ(gpuu_session_memory_info(a, &memory), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("below the smallest size gpuu accepts"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_session_memory_info(nullptr, &memory), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_session_destroy(a);
  gpuu_session_destroy(b);
}

TEST(StateCApi, SetResetAndBadCallsLeaveTheSessionUsable) {
  gpuu_session* s = open_session(stateful_program(GPUU_PREFER_VULKAN_FIRST));
  ASSERT_NE(s, nullptr);
  std::vector<float> seed = {-1, -2, -3, -4, -5, -6};
  float steps = 100;
  ASSERT_EQ(gpuu_session_set_state(s, 1, seed.data(), 24), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_set_state(s, 0, &steps, 4), GPUU_OK) << last_error();
  std::vector<float> ema = seed;
  EXPECT_EQ(execute(s, step_input(2)), reference(steps, ema, step_input(2))) << "the seeds are what is read";
  EXPECT_EQ(get_state(s, 1, kN), ema);

  std::vector<float> buf(kN);
  EXPECT_EQ(gpuu_session_set_state(s, 1, buf.data(), 20), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "state 1 ('ema', f32[6]) takes 24 bytes, got 20");
  EXPECT_EQ(gpuu_session_get_state(s, 2, buf.data(), 24), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "state index 2 is out of range (the program has 2 states)");
  EXPECT_EQ(gpuu_session_get_state(s, 1, nullptr, 24), GPUU_ERROR_INVALID_ARGUMENT);
  size_t index = 0;
  EXPECT_EQ(gpuu_session_state_index(s, "cache", &index), GPUU_ERROR_NOT_FOUND);
  EXPECT_EQ(last_error(), "no state named 'cache' (the program's states: 'steps', 'ema')");
  EXPECT_EQ(gpuu_session_state_index(s, nullptr, &index), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_tensor_info info;
  info.struct_size = sizeof(info);
  EXPECT_EQ(gpuu_session_state_info(s, 2, &info), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "gpuu_session_state_info: index 2 is out of range (2 states)");
  EXPECT_EQ(gpuu_session_reset_state(nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_session_state_count(nullptr), 0u);

  ASSERT_EQ(gpuu_session_reset_state(s), GPUU_OK);
  steps = 10;
  ema = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(get_state(s, 1, kN), ema);
  EXPECT_EQ(execute(s, step_input(5)), reference(steps, ema, step_input(5))) << "usable after every refusal";
  EXPECT_EQ(get_state(s, 0, 1), std::vector<float>{steps});
  gpuu_session_destroy(s);
}

#ifdef GPUU_RUN_PATH
std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/gpuu_state_capi_" + name;
}

// gpuu-run's executes share one session: the states it writes are the last one's.
TEST(StateCApi, GpuuRunWritesTheStatesItsExecutesLeave) {
  std::string model = temp_path("model.gpuu"), input = temp_path("x.bin"), log = temp_path("run.log"),
              prefix = temp_path("state");
  std::vector<uint8_t> bytes = stateful_program(GPUU_PREFER_VULKAN_FIRST);
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  std::vector<float> x = step_input(1);
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), kN * 4);
  std::string cmd = std::string(GPUU_RUN_PATH) + " --model_path " + model + " --input_list " + input +
                    " --num_executions 3 --state_path " + prefix + " > " + log + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream log_in(log);
  std::string text((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("state 1 'ema' (24 bytes) -> " + prefix + ".ema"), std::string::npos) << text;
  float steps = 10;
  std::vector<float> ema = {1, 2, 3, 4, 5, 6};
  for (int run = 0; run < 3; ++run) reference(steps, ema, x);
  std::vector<float> got(kN);
  std::ifstream(prefix + ".ema", std::ios::binary).read(reinterpret_cast<char*>(got.data()), kN * 4);
  EXPECT_EQ(got, ema);
  float got_steps = 0;
  std::ifstream(prefix + ".steps", std::ios::binary).read(reinterpret_cast<char*>(&got_steps), 4);
  EXPECT_EQ(got_steps, 13.0f);
  for (const std::string& f : {model, input, log, prefix + ".ema", prefix + ".steps"}) std::remove(f.c_str());
}
#endif

}  // namespace
