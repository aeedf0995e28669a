// A session's device memory through the C ABI alone: the figures of
// gpuu_session_memory_info on a graph whose sizes are known, the budget
// (gpuu_session_options.device_memory_limit) refusing a session that does not
// fit and leaving the context usable, and gpuu-inspect --memory's plan of the
// same program agreeing with what a session allocates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpuu.h"
#include "support/graph_capi_util.h"

namespace {

using gpuu_test::add_node;
using gpuu_test::int_attr;
using gpuu_test::program_bytes;

std::string last_error() { return gpuu_last_error(); }

// x [1, N] * w [1, N] -> softmax -> + b [1] = y. w is 64 KiB, a weight kept
// once per device; b is a small constant, packed with the delegate's others.
constexpr int64_t kN = 16384;
constexpr uint64_t kRow = kN * 4;

float weight(int64_t i) { return 0.001f * static_cast<float>(i % 97); }
constexpr float kBias = 0.25f;

std::vector<uint8_t> softmax_program(gpuu_prefer prefer) {
  gpuu_graph* g = nullptr;
  EXPECT_EQ(gpuu_graph_create(&g), GPUU_OK);
  const int64_t row[2] = {1, kN}, one = 1;
  std::vector<float> w(kN);
  for (int64_t i = 0; i < kN; ++i) w[static_cast<size_t>(i)] = weight(i);
  int32_t x = -1, wv = -1, bv = -1;
  EXPECT_EQ(gpuu_graph_add_input(g, "x", GPUU_DTYPE_F32, row, 2, &x), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_add_constant(g, "w", GPUU_DTYPE_F32, row, 2, w.data(), kRow, &wv), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_add_constant(g, "b", GPUU_DTYPE_F32, &one, 1, &kBias, 4, &bv), GPUU_OK) << last_error();
  int32_t scaled = add_node(g, "mul", "scale", {x, wv});
  int32_t soft = add_node(g, "softmax", "soft", {scaled}, {int_attr("axis", 1)});
  int32_t y = add_node(g, "add", "shift", {soft, bv});
  EXPECT_EQ(gpuu_graph_mark_output(g, y), GPUU_OK);
  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = prefer;
  options.min_partition_size = 1;
  return program_bytes(g, options);
}

gpuu_program* load(const std::vector<uint8_t>& bytes) {
  gpuu_program* program = nullptr;
  EXPECT_EQ(gpuu_program_load_memory(bytes.data(), bytes.size(), &program), GPUU_OK) << last_error();
  return program;
}

// A session with `limit` (0: none), or null with the status in *status.
gpuu_session* open_session(gpuu_program* program, uint64_t limit, gpuu_status* status = nullptr) {
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  options.device_memory_limit = limit;
  gpuu_session* session = nullptr;
  gpuu_status s = gpuu_session_create(program, &options, &session);
  if (status) *status = s;
  return session;
}

gpuu_session_memory memory_of(const gpuu_session* s) {
  gpuu_session_memory m;
  m.struct_size = sizeof(m);
  EXPECT_EQ(gpuu_session_memory_info(s, &m), GPUU_OK) << last_error();
  return m;
}

uint64_t total(const gpuu_session_memory& m) {
  return m.tensor_bytes + m.state_bytes + m.workspace_bytes + m.weight_bytes + m.staging_bytes +
         m.backend_private_bytes;
}

// Runs `s` on a ramp and checks y against the host's softmax.
void expect_runs(gpuu_session* s) {
  std::vector<float> x(kN), y(kN), want(kN);
  for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 31);
  ASSERT_EQ(gpuu_session_set_input(s, 0, x.data(), kRow), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_execute(s), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_get_output(s, 0, y.data(), kRow), GPUU_OK) << last_error();
  double sum = 0;
  for (int64_t i = 0; i < kN; ++i) sum += std::exp(double{x[static_cast<size_t>(i)]} * weight(i));
  for (int64_t i = 0; i < kN; ++i) {
    const double p = std::exp(double{x[static_cast<size_t>(i)]} * weight(i)) / sum;
    EXPECT_NEAR(y[static_cast<size_t>(i)], p + kBias, 1e-6) << "element " << i;
  }
}

// The Vulkan delegate's memory, by hand: x and y are the session's homes;
// the weight w is kept once per device; b is packed alone in the delegate's
// constants (16 bytes: the storage offset alignment, 16 on lavapipe); the
// product and the softmax are both live while the softmax runs, so the arena
// holds two rows. Nothing is split (no GEMM), nothing staged (lavapipe's
// memory is the host's).
constexpr uint64_t kWeights = kRow + 16;
constexpr uint64_t kTensors = 2 * kRow;
constexpr uint64_t kWorkspace = 2 * kRow;

TEST(MemoryCApi, ReportsWeightsTensorsIntermediatesAndStaging) {
  gpuu_program* program = load(softmax_program(GPUU_PREFER_VULKAN_FIRST));
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  gpuu_session_memory m = memory_of(s);
  EXPECT_EQ(m.tensor_bytes, kTensors);
  EXPECT_EQ(m.state_bytes, 0u);
  EXPECT_EQ(m.workspace_bytes, kWorkspace);
  EXPECT_EQ(m.weight_bytes, kWeights);
  EXPECT_EQ(m.staging_bytes, 0u);
  EXPECT_EQ(m.backend_private_bytes, 0u);
  expect_runs(s);
  // A second session reads the same weight on the device: it counts in each.
  gpuu_session* t = open_session(program, 0);
  ASSERT_NE(t, nullptr) << last_error();
  EXPECT_EQ(memory_of(t).weight_bytes, kWeights);
  // A caller built against 0.8 has the struct up to workspace_bytes: nothing past it is written.
  struct {
    gpuu_session_memory m;
    uint64_t canary;
  } old{};
  old.m.struct_size = offsetof(gpuu_session_memory, weight_bytes);
  old.m.weight_bytes = 7;
  ASSERT_EQ(gpuu_session_memory_info(t, &old.m), GPUU_OK) << last_error();
  EXPECT_EQ(old.m.workspace_bytes, kWorkspace);
  EXPECT_EQ(old.m.weight_bytes, 7u);
  gpuu_session_destroy(t);
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}

TEST(MemoryCApi, LimitBelowThePlanFailsNamingTheNeedAndTheLimit) {
  gpuu_program* program = load(softmax_program(GPUU_PREFER_VULKAN_FIRST));
  gpuu_status status = GPUU_OK;
  EXPECT_EQ(open_session(program, 100000, &status), nullptr);
  EXPECT_EQ(status, GPUU_ERROR_OUT_OF_MEMORY);
  const uint64_t need = kWeights + kTensors + kWorkspace;  // 320.0 KiB
  const std::string want = "the session needs 320.0 KiB of device memory (" + std::to_string(need) +
                           " bytes: weights 64.0, tensors 128.0, states 0.0, workspaces 128.0, backends' own 0.0 KiB)"
                           " but device_memory_limit is 97.7 KiB (100000 bytes)";
  EXPECT_EQ(last_error(), want);
  // Nothing was left half made: the context and the program serve a session without a limit.
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  expect_runs(s);
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}

TEST(MemoryCApi, LimitCountsOnlyWeightsNotYetOnTheDevice) {
  gpuu_program* program = load(softmax_program(GPUU_PREFER_VULKAN_FIRST));
  const uint64_t need = kWeights + kTensors + kWorkspace;
  gpuu_session* exact = open_session(program, need);
  ASSERT_NE(exact, nullptr) << "the plan's need fits a limit of itself: " << last_error();
  EXPECT_EQ(total(memory_of(exact)), need);
  // While `exact` holds w on the device, another session uploads only b.
  const uint64_t without_w = need - kRow;
  gpuu_status status = GPUU_OK;
  gpuu_session* second = open_session(program, without_w, &status);
  ASSERT_NE(second, nullptr) << last_error();
  expect_runs(second);
  EXPECT_EQ(open_session(program, without_w - 1, &status), nullptr);
  EXPECT_EQ(status, GPUU_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(last_error().find("(" + std::to_string(without_w) + " bytes: weights 0.0,"), std::string::npos)
      << last_error();
  gpuu_session_destroy(second);
  gpuu_session_destroy(exact);
  gpuu_program_release(program);
}

#ifdef GPUU_INSPECT_PATH
std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/gpuu_memory_capi_" + name;
}

std::string inspect(const std::vector<uint8_t>& bytes, const std::string& args) {
  const std::string model = temp_path("model.gpuu"), out = temp_path("inspect.txt");
  std::ofstream(model, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string cmd = std::string(GPUU_INSPECT_PATH) + " --memory " + args + " " + model + " > " + out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(model.c_str());
  std::remove(out.c_str());
  return text;
}

TEST(MemoryCApi, InspectMemoryPrintsThePlanPerDelegateAndInTotal) {
  const std::string text = inspect(softmax_program(GPUU_PREFER_VULKAN_FIRST), "");
  EXPECT_NE(text.find("from the program file, no device"), std::string::npos) << text;
  EXPECT_NE(text.find("  0          VulkanBackend        64.0 KiB      128.0 KiB    128.0 KiB          0 B\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("session need: 320.0 KiB (" + std::to_string(kWeights + kTensors + kWorkspace) + " bytes"),
            std::string::npos)
      << text;
  const std::string json = inspect(softmax_program(GPUU_PREFER_VULKAN_FIRST), "--json");
  EXPECT_NE(json.find("\"delegates\":[{\"index\":0,\"backend\":\"VulkanBackend\",\"weight_bytes\":" +
                      std::to_string(kWeights) + ",\"intermediate_bytes\":" + std::to_string(kWorkspace) +
                      ",\"io_bytes\":" + std::to_string(kTensors) + ",\"state_bytes\":0}]"),
            std::string::npos)
      << json;
}

// Under vgf_first the VGF backend runs the TOSA form (softmax decomposed) on
// its executor: the plan gpuu-inspect prints is what the session allocates,
// but for the reductions' unit scratch, which the kernels size on the device
// (the plan says it leaves it out).
TEST(MemoryCApi, InspectPlanIsWhatAVgfSessionAllocatesButScratch) {
  const std::vector<uint8_t> bytes = softmax_program(GPUU_PREFER_VGF_FIRST);
  const std::string json = inspect(bytes, "--json");
  EXPECT_NE(json.find("unit scratch"), std::string::npos) << json;
  gpuu_program* program = load(bytes);
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  const gpuu_session_memory m = memory_of(s);
  EXPECT_NE(json.find("\"backend\":\"VgfBackend\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"need_bytes\":" + std::to_string(total(m) - m.backend_private_bytes)), std::string::npos)
      << json << "\nsession: tensors " << m.tensor_bytes << " workspaces " << m.workspace_bytes << " weights "
      << m.weight_bytes << " private " << m.backend_private_bytes;
  EXPECT_GT(m.workspace_bytes, 0u) << "the executor's intermediates are the runtime's workspace";
  expect_runs(s);
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}

// A limit the plan fits but the scratch known once the delegates are made
// does not: the session is refused then, everything it made released.
TEST(MemoryCApi, LimitIsCheckedAgainOnceTheDelegatesAreMade) {
  const std::vector<uint8_t> bytes = softmax_program(GPUU_PREFER_VGF_FIRST);
  const std::string json = inspect(bytes, "--json");
  const size_t at = json.find("\"need_bytes\":");
  ASSERT_NE(at, std::string::npos) << json;
  const uint64_t planned = std::strtoull(json.c_str() + at + 13, nullptr, 10);
  gpuu_program* program = load(bytes);
  gpuu_status status = GPUU_OK;
  EXPECT_EQ(open_session(program, planned, &status), nullptr);
  EXPECT_EQ(status, GPUU_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().rfind("the session holds, once its delegates were made, ", 0), 0u) << last_error();
  EXPECT_NE(last_error().find("but device_memory_limit is 320.0 KiB (" + std::to_string(planned) + " bytes)"),
            std::string::npos)
      << last_error();
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  expect_runs(s);
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}
#endif

}  // namespace

namespace {

// A graph with the input x [1, N] and the constant w [1, N] (weight(i)).
gpuu_graph* row_graph(int32_t* x, int32_t* wv) {
  gpuu_graph* g = nullptr;
  EXPECT_EQ(gpuu_graph_create(&g), GPUU_OK);
  const int64_t row[2] = {1, kN};
  std::vector<float> w(kN);
  for (int64_t i = 0; i < kN; ++i) w[static_cast<size_t>(i)] = weight(i);
  EXPECT_EQ(gpuu_graph_add_input(g, "x", GPUU_DTYPE_F32, row, 2, x), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_graph_add_constant(g, "w", GPUU_DTYPE_F32, row, 2, w.data(), kRow, wv), GPUU_OK) << last_error();
  return g;
}

// Two Vulkan delegates with a CPU step between them: s = softmax(x * w) on
// the first; r = relu(s) pinned to the CPU; y = softmax(concat(r, r) * w)
// ([2, N]) on the second, whose intermediates (two [2, N] values) are twice
// the first's.
std::vector<uint8_t> two_delegate_program() {
  int32_t x = -1, wv = -1;
  gpuu_graph* g = row_graph(&x, &wv);
  int32_t s = add_node(g, "softmax", "first", {add_node(g, "mul", "scale", {x, wv})}, {int_attr("axis", 1)});
  int32_t r = add_node(g, "relu", "on_cpu", {s});
  int32_t c = add_node(g, "concat", "twice", {r, r}, {int_attr("axis", 0)});
  int32_t y = add_node(g, "softmax", "second", {add_node(g, "mul", "rescale", {c, wv})}, {int_attr("axis", 1)});
  EXPECT_EQ(gpuu_graph_mark_output(g, y), GPUU_OK);
  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = GPUU_PREFER_VULKAN_FIRST;
  options.min_partition_size = 1;
  gpuu_partition_pin pin;
  gpuu_partition_pin_init(&pin);
  pin.node = "on_cpu";
  pin.backend = "CpuFallback";
  options.pins = &pin;
  options.pin_count = 1;
  return program_bytes(g, options);
}

// The "intermediate_bytes" of each delegate in gpuu-inspect --memory --json.
std::vector<uint64_t> planned_intermediates(const std::string& json) {
  std::vector<uint64_t> out;
  const std::string key = "\"intermediate_bytes\":";
  for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    out.push_back(std::stoull(json.substr(at + key.size())));
  }
  return out;
}

}  // namespace

// The delegates of a session on one device run one after another, so they
// share one workspace: the largest of their intermediates, not the sum. The
// first delegate, made before the second grew the workspace, is made again on
// it; both compute right (and the validation layer sees no hazard).
TEST(MemoryCApi, DelegatesShareOneWorkspace) {
  const std::vector<uint8_t> bytes = two_delegate_program();
  const std::string json = inspect(bytes, "--json");
  const std::vector<uint64_t> planned = planned_intermediates(json);
  ASSERT_EQ(planned.size(), 2u) << json;
  EXPECT_LT(planned[0], planned[1]) << json;
  EXPECT_NE(json.find("\"workspace_bytes\":" + std::to_string(planned[1])), std::string::npos) << json;
  gpuu_program* program = load(bytes);
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  EXPECT_EQ(memory_of(s).workspace_bytes, planned[1]);
  // x, s and r (which the CPU step reads and writes) and y [2, N] each keep a home of their own.
  EXPECT_EQ(memory_of(s).tensor_bytes, 5 * kRow);
  std::vector<float> x(kN), y(2 * kN);
  for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 31);
  std::vector<double> first(kN), second(kN);
  double sum = 0, sum2 = 0;
  for (int64_t i = 0; i < kN; ++i) sum += first[static_cast<size_t>(i)] = std::exp(double{x[static_cast<size_t>(i)]} * weight(i));
  for (int64_t i = 0; i < kN; ++i) {
    sum2 += second[static_cast<size_t>(i)] = std::exp(first[static_cast<size_t>(i)] / sum * weight(i));
  }
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(gpuu_session_set_input(s, 0, x.data(), kRow), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_execute(s), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_get_output(s, 0, y.data(), 2 * kRow), GPUU_OK) << last_error();
    for (int64_t i = 0; i < 2 * kN; ++i) {
      ASSERT_NEAR(y[static_cast<size_t>(i)], second[static_cast<size_t>(i % kN)] / sum2, 1e-9) << "element " << i;
    }
  }
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}

namespace {

// x -> mul w (Vulkan) -> a1 -> sigmoid (VGF) -> a2 -> mul w (Vulkan) -> a3 ->
// sigmoid (VGF) -> y: four delegates on one device, pinned by turns.
std::vector<uint8_t> four_delegate_program() {
  int32_t x = -1, wv = -1;
  gpuu_graph* g = row_graph(&x, &wv);
  int32_t a1 = add_node(g, "mul", "n1", {x, wv});
  int32_t a2 = add_node(g, "sigmoid", "n2", {a1});
  int32_t a3 = add_node(g, "mul", "n3", {a2, wv});
  EXPECT_EQ(gpuu_graph_mark_output(g, add_node(g, "sigmoid", "n4", {a3})), GPUU_OK);
  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = GPUU_PREFER_VULKAN_FIRST;
  options.min_partition_size = 1;
  std::vector<gpuu_partition_pin> pins(4);
  const char* names[4] = {"n1", "n2", "n3", "n4"};
  for (size_t i = 0; i < pins.size(); ++i) {
    gpuu_partition_pin_init(&pins[i]);
    pins[i].node = names[i];
    pins[i].backend = i % 2 ? "VgfBackend" : "VulkanBackend";
  }
  options.pins = pins.data();
  options.pin_count = pins.size();
  return program_bytes(g, options);
}

}  // namespace

// Tensors only GPU delegates touch take homes by turns: a1 (written by the
// first delegate, last read by the second) and a3 (written by the third) share
// one; a2 overlaps both and has its own, as x and y do. The plan and the
// session agree, and the chain computes right on every execute.
TEST(MemoryCApi, TensorsBetweenDelegatesShareHomesByLiveness) {
  const std::vector<uint8_t> bytes = four_delegate_program();
  const std::string json = inspect(bytes, "--json");
  EXPECT_EQ(planned_intermediates(json).size(), 4u) << json;
  EXPECT_NE(json.find("\"tensor_bytes\":" + std::to_string(4 * kRow)), std::string::npos) << json;
  gpuu_program* program = load(bytes);
  gpuu_session* s = open_session(program, 0);
  ASSERT_NE(s, nullptr) << last_error();
  EXPECT_EQ(memory_of(s).tensor_bytes, 4 * kRow);
  std::vector<float> x(kN), y(kN);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int run = 0; run < 2; ++run) {
    for (int64_t i = 0; i < kN; ++i) x[static_cast<size_t>(i)] = 0.01f * static_cast<float>((i + run) % 31);
    ASSERT_EQ(gpuu_session_set_input(s, 0, x.data(), kRow), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_execute(s), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_get_output(s, 0, y.data(), kRow), GPUU_OK) << last_error();
    for (int64_t i = 0; i < kN; ++i) {
      const double want = sigmoid(sigmoid(double{x[static_cast<size_t>(i)]} * weight(i)) * weight(i));
      ASSERT_NEAR(y[static_cast<size_t>(i)], want, 1e-6) << "run " << run << " element " << i;
    }
  }
  gpuu_session_destroy(s);
  gpuu_program_release(program);
}
