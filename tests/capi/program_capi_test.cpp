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
  gpuu_program_write_options_init(nullptr);  // ignored, no crash
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
