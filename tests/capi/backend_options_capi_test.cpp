// Load-time backend options through the C ABI alone (0.6): VgfBackend's
// data_graph_path chosen by a keyed option, every kind of bad option named in
// one message before any delegate initialises, the 0.x vgf_path field as the
// same option (and its conflict with it), the array's struct_size rule, and
// gpuu-run's --backend_option. The device is plain lavapipe: no
// VK_ARM_data_graph, so "native" is refused, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpuu.h"
#include "support/rfc_model_capi.h"
#include "support/test_vulkan_device.h"

namespace {

std::string last_error() { return gpuu_last_error(); }

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/gpuu_backend_options_capi_" + name;
}

std::vector<float> rfc_input() {
  std::vector<float> x(192);
  for (int i = 0; i < 192; ++i) x[static_cast<size_t>(i)] = static_cast<float>(-0.8 + 1.6 * i / 191.0);
  return x;
}

// The RFC model partitioned as `prefer` says, written to `path`: vgf_first
// gives two VGF delegates around a Vulkan one, vulkan_first none.
void write_rfc_program(const std::string& path, gpuu_prefer prefer) {
  gpuu_graph* graph = gpuu_test_build_rfc_model();
  ASSERT_NE(graph, nullptr) << last_error();
  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = prefer;
  options.min_partition_size = 1;
  gpuu_partition* partition = nullptr;
  ASSERT_EQ(gpuu_graph_partition(graph, &options, &partition), GPUU_OK) << last_error();
  gpuu_program_write_options write;
  gpuu_program_write_options_init(&write);
  write.token = "capi_backend_options";
  ASSERT_EQ(gpuu_program_write(graph, partition, &write, path.c_str()), GPUU_OK) << last_error();
  gpuu_partition_destroy(partition);
  gpuu_graph_destroy(graph);
}

gpuu_backend_option option(const char* backend, const char* key, const char* value) {
  gpuu_backend_option o;
  gpuu_backend_option_init(&o);
  o.backend = backend;
  o.key = key;
  o.value = value;
  return o;
}

// The VGF delegates' init lines while it lives ("init: ... path=..."); the
// log still reaches the tests' hook, so validation messages fail a test.
class VgfInitLines {
 public:
  VgfInitLines() { gpuu_set_log_callback(&record, this, GPUU_LOG_INFO); }
  ~VgfInitLines() { gpuu_test::install_log_hook(); }
  VgfInitLines(const VgfInitLines&) = delete;
  VgfInitLines& operator=(const VgfInitLines&) = delete;
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  static void record(void* self, gpuu_log_level level, const char* component, const char* message) {
    gpuu_test::on_log(static_cast<int>(level), component, message);
    if (std::strcmp(component, "VGF") == 0 && std::strncmp(message, "init:", 5) == 0) {
      static_cast<VgfInitLines*>(self)->lines_.emplace_back(message);
    }
  }
  std::vector<std::string> lines_;
};

class BackendOptionsCapi : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    write_rfc_program(vgf_first_path(), GPUU_PREFER_VGF_FIRST);
    write_rfc_program(vulkan_first_path(), GPUU_PREFER_VULKAN_FIRST);
  }
  static void TearDownTestSuite() {
    std::remove(vgf_first_path().c_str());
    std::remove(vulkan_first_path().c_str());
    gpuu_context_unregister("capi_backend_options", 0);
  }
  static std::string vgf_first_path() { return temp_path("vgf_first.gpuu"); }
  static std::string vulkan_first_path() { return temp_path("vulkan_first.gpuu"); }

  // Creates a session of the program at `path` with `options` (and, when
  // `run`, executes it once and checks the output against the reference).
  gpuu_status create(const std::string& path, const std::vector<gpuu_backend_option>& options,
                     gpuu_vgf_path vgf_path = GPUU_VGF_PATH_AUTO, bool run = false) {
    gpuu_program* program = nullptr;
    gpuu_status s = gpuu_program_load_file(path.c_str(), &program);
    if (s != GPUU_OK) return s;
    gpuu_session_options o;
    gpuu_session_options_init(&o);
    o.vgf_path = vgf_path;
    o.backend_options = options.empty() ? nullptr : options.data();
    o.backend_option_count = options.size();
    gpuu_session* session = nullptr;
    s = gpuu_session_create(program, &o, &session);
    gpuu_program_release(program);
    if (s != GPUU_OK) return s;
    if (run) {
      std::vector<float> x = rfc_input(), y(48), want(48);
      EXPECT_EQ(gpuu_session_set_input(session, 0, x.data(), x.size() * 4), GPUU_OK) << last_error();
      EXPECT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
      EXPECT_EQ(gpuu_session_get_output(session, 0, y.data(), y.size() * 4), GPUU_OK) << last_error();
      gpuu_test_rfc_model_reference(x.data(), want.data());
      for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 2e-5 * (1 + std::fabs(want[i]))) << i;
    }
    gpuu_session_destroy(session);
    return GPUU_OK;
  }
};

void expect_executor_by_request(const std::vector<std::string>& lines) {
  ASSERT_EQ(lines.size(), 2u) << "one line per VGF delegate";
  for (const std::string& line : lines) {
    EXPECT_TRUE(contains(line, "path=executor (the session asked for the executor)")) << line;
  }
}

TEST_F(BackendOptionsCapi, DataGraphPathExecutorRunsEveryVgfDelegateOnTheExecutor) {
  VgfInitLines log;
  ASSERT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}, GPUU_VGF_PATH_AUTO, true),
            GPUU_OK)
      << last_error();
  expect_executor_by_request(log.lines());
}

TEST_F(BackendOptionsCapi, DataGraphPathNativeIsHonouredAndSaysWhyNotHere) {
  EXPECT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "native")}), GPUU_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(last_error(), "VGF delegate 0: the session asked for the native VK_ARM_data_graph path"))
      << last_error();
  // The default (auto) runs here, on the executor, saying why.
  VgfInitLines log;
  ASSERT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "auto")}), GPUU_OK) << last_error();
  ASSERT_EQ(log.lines().size(), 2u);
  for (const std::string& line : log.lines()) EXPECT_TRUE(contains(line, "has no VK_ARM_data_graph")) << line;
}

TEST_F(BackendOptionsCapi, AnOptionForABackendWithoutDelegatesIsAccepted) {
  // Forcing native would fail a VGF delegate here: the program has none.
  EXPECT_EQ(create(vulkan_first_path(), {option("VgfBackend", "data_graph_path", "native")}, GPUU_VGF_PATH_AUTO, true),
            GPUU_OK)
      << last_error();
}

TEST_F(BackendOptionsCapi, EveryBadOptionIsNamedInOneMessageBeforeAnyDelegateInitialises) {
  VgfInitLines log;
  std::vector<gpuu_backend_option> options = {
      option("NpuBackend", "cores", "4"),
      option("VgfBackend", "path", "native"),
      option("VgfBackend", "data_graph_path", "fastest"),
      option("VulkanBackend", "tiles", "8"),
      option("VgfBackend", "data_graph_path", nullptr),
      option("VgfBackend", "data_graph_path", "executor"),
  };
  ASSERT_EQ(create(vgf_first_path(), options), GPUU_ERROR_INVALID_ARGUMENT);
  const std::string message = last_error();
  for (const char* expected : {
           "gpuu_session_create: backend options: ",
           "backend_options[4].value is NULL",
           "'NpuBackend:cores=4' names backend 'NpuBackend', which is not registered (registered: VulkanBackend, "
           "VgfBackend)",
           "'VgfBackend:path=native': VgfBackend has no option 'path' (its options: data_graph_path)",
           "'VgfBackend:data_graph_path=fastest': 'fastest' is not one of auto, native, executor",
           "'VulkanBackend:tiles=8': VulkanBackend has no option 'tiles' (it takes none)",
           "'VgfBackend:data_graph_path=executor' sets VgfBackend:data_graph_path again (first "
           "'VgfBackend:data_graph_path=fastest')",
       }) {
    EXPECT_TRUE(contains(message, expected)) << "missing: " << expected << "\nin: " << message;
  }
  EXPECT_TRUE(log.lines().empty()) << "a delegate initialised before the options were checked";
}

TEST_F(BackendOptionsCapi, TheVgfPathFieldIsTheSameOptionAndAConflictIsRefused) {
  {
    VgfInitLines log;
    ASSERT_EQ(create(vgf_first_path(), {}, GPUU_VGF_PATH_EXECUTOR, true), GPUU_OK) << last_error();
    expect_executor_by_request(log.lines());
  }
  EXPECT_EQ(create(vgf_first_path(), {}, GPUU_VGF_PATH_NATIVE), GPUU_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(last_error(), "asked for the native VK_ARM_data_graph path")) << last_error();
  // Both, alike: fine.
  {
    VgfInitLines log;
    ASSERT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}, GPUU_VGF_PATH_EXECUTOR),
              GPUU_OK)
        << last_error();
    expect_executor_by_request(log.lines());
  }
  // Both, different: refused, naming both.
  EXPECT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}, GPUU_VGF_PATH_NATIVE),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "vgf_path native conflicts with 'VgfBackend:data_graph_path=executor'"))
      << last_error();
  // The field at its default leaves the option alone.
  EXPECT_EQ(create(vgf_first_path(), {option("VgfBackend", "data_graph_path", "native")}, GPUU_VGF_PATH_AUTO),
            GPUU_ERROR_UNSUPPORTED);
}

TEST_F(BackendOptionsCapi, TheOptionArrayFollowsTheStructSizeRule) {
  gpuu_backend_option tiny = option("VgfBackend", "data_graph_path", "executor");
  tiny.struct_size = 4;
  EXPECT_EQ(create(vgf_first_path(), {tiny}), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "options->backend_options: element 0 has struct_size 4")) << last_error();

  // A newer client's larger elements: read at its stride, the tails ignored.
  struct NewerOption {
    gpuu_backend_option known;
    unsigned char unknown[24];
  };
  NewerOption newer[2];
  for (NewerOption& n : newer) {
    gpuu_backend_option_init_sized(&n.known, sizeof(NewerOption));
    std::memset(n.unknown, 0xA5, sizeof(n.unknown));
  }
  newer[0].known.backend = "VgfBackend";
  newer[0].known.key = "data_graph_path";
  newer[0].known.value = "executor";
  newer[1].known.backend = "VgfBackend";
  newer[1].known.key = "no_such_key";
  newer[1].known.value = "x";
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_load_file(vgf_first_path().c_str(), &program), GPUU_OK) << last_error();
  gpuu_session_options o;
  gpuu_session_options_init(&o);
  o.backend_options = &newer[0].known;
  o.backend_option_count = 2;
  gpuu_session* session = nullptr;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "'VgfBackend:no_such_key=x'")) << "element 1 read at the caller's stride: "
                                                                      << last_error();
  EXPECT_FALSE(contains(last_error(), "data_graph_path=executor")) << last_error();
  o.backend_option_count = 1;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_OK) << last_error();
  gpuu_session_destroy(session);
  o.backend_options = nullptr;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "NULL array with a nonzero count")) << last_error();
  gpuu_program_release(program);
}

#ifdef GPUU_RUN_PATH
std::string run_gpuu_run(const std::string& args) {
  std::string log = temp_path("run.log");
  std::string cmd = std::string(GPUU_RUN_PATH) + " " + args + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(log.c_str());
  return (rc == 0 ? "exit 0\n" : "exit nonzero\n") + text;
}

TEST_F(BackendOptionsCapi, GpuuRunTakesRepeatableBackendOptions) {
  std::string input = temp_path("input0.bin");
  std::vector<float> x = rfc_input();
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), 768);
  const std::string base = "--model_path " + vgf_first_path() + " --input_list " + input + " ";
  std::string text = run_gpuu_run(base + "--backend_option VgfBackend:data_graph_path=executor");
  EXPECT_TRUE(contains(text, "exit 0\n")) << text;
  EXPECT_TRUE(contains(text, "path=executor (the session asked for the executor)")) << text;

  text = run_gpuu_run(base + "--backend_option VgfBackend:data_graph_path=fast --backend_option Npu:x=1");
  EXPECT_TRUE(contains(text, "exit nonzero\n")) << text;
  EXPECT_TRUE(contains(text, "'fast' is not one of auto, native, executor")) << text;
  EXPECT_TRUE(contains(text, "'Npu:x=1' names backend 'Npu'")) << text;

  text = run_gpuu_run(base + "--vgf_path native --backend_option VgfBackend:data_graph_path=executor");
  EXPECT_TRUE(contains(text, "vgf_path native conflicts with 'VgfBackend:data_graph_path=executor'")) << text;

  for (const char* malformed : {"VgfBackend", "VgfBackend:data_graph_path", ":k=v", "VgfBackend:=v"}) {
    text = run_gpuu_run(base + "--backend_option " + malformed);
    EXPECT_TRUE(contains(text, "exit nonzero\n")) << malformed;
    EXPECT_TRUE(contains(text, std::string("--backend_option takes ID:KEY=VALUE, got '") + malformed + "'")) << text;
  }
  std::remove(input.c_str());
}
#endif

}  // namespace
