// The program-writing C API through gpuu.h and libgpuu.so alone: a program
// written from the C-built RFC model and its partition, the options' defaults,
// and refusals of bad arguments, each naming what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpuu.h"
#include "support/rfc_model_capi.h"

namespace {

bool contains(const std::string& haystack, const char* needle) { return haystack.find(needle) != std::string::npos; }

// The RFC model partitioned vgf_first: a CPU region, a Vulkan region, a VGF region.
class ProgramCapiWrite : public testing::Test {
 protected:
  void SetUp() override {
    graph_ = gpuu_test_build_rfc_model();
    ASSERT_NE(graph_, nullptr) << gpuu_last_error();
    gpuu_partition_options options;
    gpuu_partition_options_init(&options);
    options.prefer = GPUU_PREFER_VGF_FIRST;
    ASSERT_EQ(gpuu_graph_partition(graph_, &options, &partition_), GPUU_OK) << gpuu_last_error();
    char tmpl[] = "/tmp/gpuu_program_capi_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    gpuu_partition_destroy(partition_);
    gpuu_graph_destroy(graph_);
    unlink((dir_ + "/rfc.gpuu").c_str());
    rmdir(dir_.c_str());
  }
  std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  gpuu_graph* graph_ = nullptr;
  gpuu_partition* partition_ = nullptr;
  std::string dir_;
};

TEST_F(ProgramCapiWrite, WritesBothGpuBackendsAndTheSharedSpecs) {
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.token = "vgf_vk_unified_e2e";
  options.group_id = 7;
  std::string path = dir_ + "/rfc.gpuu";
  ASSERT_EQ(gpuu_program_write(graph_, partition_, &options, path.c_str()), GPUU_OK) << gpuu_last_error();
  std::string file = read(path);
  ASSERT_GT(file.size(), 8u);
  EXPECT_EQ(file.substr(4, 4), "GPUU");
  EXPECT_TRUE(contains(file, "VgfBackend"));
  EXPECT_TRUE(contains(file, "VulkanBackend"));
  EXPECT_TRUE(contains(file, "vgf_vk_unified_e2e"));
  EXPECT_TRUE(contains(file, "gpu_shared_prefer"));
  EXPECT_TRUE(contains(file, "vgf_first"));  // the partition's policy, baked in

  // The same arguments in memory give the same bytes.
  void* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(gpuu_program_write_to_memory(graph_, partition_, &options, &data, &size), GPUU_OK) << gpuu_last_error();
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), file);
  gpuu_program_bytes_free(data);
}

gpuu_compile_spec spec_of(const char* key, const char* text) {
  gpuu_compile_spec spec;
  gpuu_compile_spec_init(&spec);
  spec.key = key;
  spec.value = text;
  spec.value_size = std::strlen(text);
  return spec;
}

// The log lines of one tag ("[VGF]", "[Vulkan]") that mention `what`.
struct LogLines {
  std::vector<std::string> lines;
  static void record(void* self, gpuu_log_level, const char* component, const char* message) {
    static_cast<LogLines*>(self)->lines.push_back(std::string("[") + component + "] " + message);
  }
  bool any(const char* tag, const char* what) const {
    for (const std::string& l : lines) {
      if (l.rfind(tag, 0) == 0 && contains(l, what)) return true;
    }
    return false;
  }
};

// Extra specs reach every delegate, per-backend specs only that backend's:
// in the file, and in the compile specs each backend's preprocess receives.
TEST_F(ProgramCapiWrite, CallerCompileSpecsReachTheFileAndEachBackendsPreprocess) {
  const gpuu_compile_spec extra[] = {spec_of("app_note", "for-every-delegate")};
  const gpuu_compile_spec vulkan_only[] = {spec_of("vulkan_tuning", "vulkan-only-value")};
  gpuu_backend_compile_specs per_backend;
  gpuu_backend_compile_specs_init(&per_backend);
  per_backend.backend = "VulkanBackend";
  per_backend.specs = vulkan_only;
  per_backend.count = 1;
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.extra_shared_compile_specs = extra;
  options.extra_shared_compile_spec_count = 1;
  options.backend_compile_specs = &per_backend;
  options.backend_compile_specs_count = 1;
  LogLines log;
  gpuu_set_log_callback(&LogLines::record, &log, GPUU_LOG_INFO);
  std::string path = dir_ + "/rfc.gpuu";
  gpuu_status status = gpuu_program_write(graph_, partition_, &options, path.c_str());
  gpuu_set_log_callback(nullptr, nullptr, GPUU_LOG_WARN);
  ASSERT_EQ(status, GPUU_OK) << gpuu_last_error();
  EXPECT_TRUE(log.any("[VGF] preprocess", "app_note=for-every-delegate"));
  EXPECT_TRUE(log.any("[Vulkan] preprocess", "app_note=for-every-delegate"));
  EXPECT_TRUE(log.any("[Vulkan] preprocess", "vulkan_tuning=vulkan-only-value"));
  EXPECT_FALSE(log.any("[VGF] preprocess", "vulkan_tuning"));
  EXPECT_TRUE(log.any("[Vulkan] preprocess", GPUU_SPEC_CONTEXT_TOKEN "=default")) << "the shared keys come first";
  std::string file = read(path);
  EXPECT_TRUE(contains(file, "for-every-delegate"));
  EXPECT_TRUE(contains(file, "vulkan-only-value"));
}

TEST_F(ProgramCapiWrite, RefusesAnUnknownBackendIdByName) {
  gpuu_backend_compile_specs per_backend;
  gpuu_backend_compile_specs_init(&per_backend);
  per_backend.backend = "NoSuchBackend";
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.backend_compile_specs = &per_backend;
  options.backend_compile_specs_count = 1;
  void* data = nullptr;
  size_t size = 0;
  EXPECT_EQ(gpuu_program_write_to_memory(graph_, partition_, &options, &data, &size), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gpuu_last_error(), "unknown backend id 'NoSuchBackend'")) << gpuu_last_error();
  EXPECT_TRUE(contains(gpuu_last_error(), "VulkanBackend")) << "the message lists the registered ids";
}

TEST_F(ProgramCapiWrite, RefusesABadOrRepeatedSharedKeyAmongTheExtraSpecs) {
  // The writer sets all six known keys, so any other gpu_shared_ key is unknown.
  const gpuu_compile_spec bad_value[] = {spec_of("gpu_shared_colour", "sideways")};
  const gpuu_compile_spec repeated[] = {spec_of(GPUU_SPEC_SYNC_MODE, "none")};
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.extra_shared_compile_spec_count = 1;
  void* data = nullptr;
  size_t size = 0;
  options.extra_shared_compile_specs = bad_value;
  EXPECT_EQ(gpuu_program_write_to_memory(graph_, partition_, &options, &data, &size), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gpuu_last_error(), "unknown shared compile spec key 'gpu_shared_colour'")) << gpuu_last_error();
  EXPECT_TRUE(contains(gpuu_last_error(), "sideways")) << gpuu_last_error();
  options.extra_shared_compile_specs = repeated;
  EXPECT_EQ(gpuu_program_write_to_memory(graph_, partition_, &options, &data, &size), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gpuu_last_error(), GPUU_SPEC_SYNC_MODE "' appears more than once")) << gpuu_last_error();
}

TEST_F(ProgramCapiWrite, RefusesAPartitionOfAnotherGraph) {
  gpuu_graph* other = nullptr;
  ASSERT_EQ(gpuu_graph_create(&other), GPUU_OK);
  const int64_t shape[1] = {4};
  int32_t x = -1;
  ASSERT_EQ(gpuu_graph_add_input(other, "x", GPUU_DTYPE_F32, shape, 1, &x), GPUU_OK) << gpuu_last_error();
  void* data = nullptr;
  size_t size = 0;
  EXPECT_EQ(gpuu_program_write_to_memory(other, partition_, nullptr, &data, &size), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gpuu_last_error(), "out of range")) << gpuu_last_error();
  EXPECT_EQ(data, nullptr);
  gpuu_graph_destroy(other);
}

TEST_F(ProgramCapiWrite, UnwritablePathIsAnIoError) {
  std::string path = dir_ + "/no/such/folder/rfc.gpuu";
  EXPECT_EQ(gpuu_program_write(graph_, partition_, nullptr, path.c_str()), GPUU_ERROR_IO);
  EXPECT_TRUE(contains(gpuu_last_error(), "no/such/folder/rfc.gpuu")) << gpuu_last_error();
}

TEST(ProgramCapi, OptionsInitFillsTheRfcDefaults) {
  gpuu_program_write_options o;
  std::memset(&o, 0xAB, sizeof(o));
  gpuu_program_write_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(gpuu_program_write_options));
  EXPECT_STREQ(o.token, "default");
  EXPECT_EQ(o.group_id, 0);
  EXPECT_EQ(o.mode, GPUU_CONTEXT_LOOKUP_OR_CREATE);
  EXPECT_EQ(o.sync_mode, GPUU_SYNC_TIMELINE);
  gpuu_program_write_options_init_sized(nullptr, sizeof(gpuu_program_write_options));  // ignored, no crash
}

TEST(ProgramCapi, RefusesNullArguments) {
  gpuu_graph* g = gpuu_test_build_rfc_model();
  ASSERT_NE(g, nullptr) << gpuu_last_error();
  EXPECT_EQ(gpuu_program_write(g, nullptr, nullptr, "/tmp/never.gpuu"), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("`partition` is NULL"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(gpuu_program_write(nullptr, nullptr, nullptr, "/tmp/never.gpuu"), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("`graph` is NULL"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(gpuu_program_write(g, nullptr, nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("`path` is NULL"), std::string::npos) << gpuu_last_error();

  void* data = reinterpret_cast<void*>(1);
  size_t size = 99;
  EXPECT_EQ(gpuu_program_write_to_memory(g, nullptr, nullptr, &data, &size), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(gpuu_program_write_to_memory(g, nullptr, nullptr, nullptr, &size), GPUU_ERROR_INVALID_ARGUMENT);
  gpuu_program_bytes_free(nullptr);  // ignored
  gpuu_graph_destroy(g);
}

TEST(ProgramCapi, RefusesBadOptionsNamingTheField) {
  gpuu_graph* g = gpuu_test_build_rfc_model();
  ASSERT_NE(g, nullptr) << gpuu_last_error();
  struct Case {
    void (*mutate)(gpuu_program_write_options*);
    const char* expected;
  };
  const Case cases[] = {
      {[](gpuu_program_write_options* o) { o->struct_size = 0; }, "options->struct_size 0 is below"},
      {[](gpuu_program_write_options* o) { o->token = ""; }, "options->token is NULL or empty"},
      {[](gpuu_program_write_options* o) { o->token = nullptr; }, "options->token is NULL or empty"},
      {[](gpuu_program_write_options* o) { o->group_id = -3; }, "options->group_id -3 is < 0"},
      {[](gpuu_program_write_options* o) { o->mode = static_cast<gpuu_context_mode>(9); },
       "options->mode 9 is not a gpuu_context_mode"},
      {[](gpuu_program_write_options* o) {
         const int32_t minus_one = -1;  // what a C caller can store; no C++ enum cast
         std::memcpy(&o->sync_mode, &minus_one, sizeof(minus_one));
       },
       "options->sync_mode -1 is not a gpuu_sync_mode"},
  };
  static const std::string long_token(GPUU_MAX_TOKEN_LENGTH + 1, 't');
  for (const Case& c : cases) {
    gpuu_program_write_options o;
    gpuu_program_write_options_init(&o);
    c.mutate(&o);
    EXPECT_EQ(gpuu_program_write(g, nullptr, &o, "/tmp/never.gpuu"), GPUU_ERROR_INVALID_ARGUMENT) << c.expected;
    EXPECT_NE(std::string(gpuu_last_error()).find(c.expected), std::string::npos) << gpuu_last_error();
  }
  gpuu_program_write_options o;
  gpuu_program_write_options_init(&o);
  o.token = long_token.c_str();
  EXPECT_EQ(gpuu_program_write(g, nullptr, &o, "/tmp/never.gpuu"), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("longer than 255 bytes"), std::string::npos) << gpuu_last_error();
  gpuu_graph_destroy(g);
}

}  // namespace
