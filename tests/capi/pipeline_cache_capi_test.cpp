// The persistent pipeline cache through the C ABI alone
// (gpuu_session_options.pipeline_cache_path, 0.9), on the test device: the
// file's header and driver data, a later session seeded from it, files that do
// not fit (damaged, truncated, another device's) ignored with one warning and
// replaced, and a path that cannot be written never failing a session. Each
// session runs on a context of its own (its own token, unregistered after),
// as a new process would.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
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

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

uint32_t u32_at(const std::vector<uint8_t>& b, size_t at) {
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 | static_cast<uint32_t>(b[at + 2]) << 16 |
         static_cast<uint32_t>(b[at + 3]) << 24;
}

// The file's layout (context/pipeline_cache.h): magic, format version,
// vendorID, deviceID, driverVersion, pipelineCacheUUID, data size, data hash.
constexpr size_t kVendorAt = 12, kDeviceAt = 16, kUuidAt = 24, kSizeAt = 40, kHeaderBytes = 56;

// The warnings gpuu logs while it lives; everything still reaches the tests'
// hook, so validation messages fail a test.
class Warnings {
 public:
  Warnings() { gpuu_set_log_callback(&record, this, GPUU_LOG_WARN); }
  ~Warnings() { gpuu_test::install_log_hook(); }
  Warnings(const Warnings&) = delete;
  Warnings& operator=(const Warnings&) = delete;
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  static void record(void* self, gpuu_log_level level, const char* component, const char* message) {
    gpuu_test::on_log(static_cast<int>(level), component, message);
    if (level == GPUU_LOG_WARN) static_cast<Warnings*>(self)->lines_.emplace_back(message);
  }
  std::vector<std::string> lines_;
};

class PipelineCacheCapi : public testing::Test {
 protected:
  static std::string dir() {
    static std::string made = [] {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuu_pipeline_cache_XXXXXX";
      return std::string(mkdtemp(pattern.data()) ? pattern.c_str() : "");
    }();
    return made;
  }
  static std::string program_path() { return dir() + "/rfc.gpuu"; }

  static void SetUpTestSuite() {
    ASSERT_FALSE(dir().empty());
    gpuu_graph* graph = gpuu_test_build_rfc_model();
    ASSERT_NE(graph, nullptr) << last_error();
    gpuu_partition_options options;
    gpuu_partition_options_init(&options);
    options.prefer = GPUU_PREFER_VULKAN_FIRST;
    options.min_partition_size = 1;
    gpuu_partition* partition = nullptr;
    ASSERT_EQ(gpuu_graph_partition(graph, &options, &partition), GPUU_OK) << last_error();
    gpuu_program_write_options write;
    gpuu_program_write_options_init(&write);
    write.token = "pipeline_cache";
    write.group_id = 0;  // each session overrides the token only
    ASSERT_EQ(gpuu_program_write(graph, partition, &write, program_path().c_str()), GPUU_OK) << last_error();
    gpuu_partition_destroy(partition);
    gpuu_graph_destroy(graph);
  }
  static void TearDownTestSuite() { std::system(("rm -rf '" + dir() + "'").c_str()); }

  void SetUp() override {
    cache_ = dir() + "/" + testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin";
  }
  void TearDown() override { std::remove(cache_.c_str()); }

  // One session with `cache` on a fresh context: create, one execute, the
  // output, destroy. Fails the test on any error.
  std::vector<float> run_session(const std::string& cache) {
    static int sessions = 0;
    const std::string token = "pipeline_cache_" + std::to_string(++sessions);
    gpuu_context_overrides overrides;
    gpuu_context_overrides_init(&overrides);
    overrides.token = token.c_str();
    gpuu_session_options options;
    gpuu_session_options_init(&options);
    options.overrides = &overrides;
    options.pipeline_cache_path = cache.c_str();
    std::vector<float> y(48, NAN);
    gpuu_program* program = nullptr;
    EXPECT_EQ(gpuu_program_load_file(program_path().c_str(), &program), GPUU_OK) << last_error();
    gpuu_session* session = nullptr;
    EXPECT_EQ(gpuu_session_create(program, &options, &session), GPUU_OK) << last_error();
    gpuu_program_release(program);
    if (!session) return y;
    std::vector<float> x(192);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(-0.8 + 1.6 * static_cast<double>(i) / 191.0);
    EXPECT_EQ(gpuu_session_set_input(session, 0, x.data(), x.size() * sizeof(float)), GPUU_OK) << last_error();
    EXPECT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
    EXPECT_EQ(gpuu_session_get_output(session, 0, y.data(), y.size() * sizeof(float)), GPUU_OK) << last_error();
    gpuu_session_destroy(session);
    gpuu_context_unregister(token.c_str(), 0);
    std::vector<float> want(48);
    gpuu_test_rfc_model_reference(x.data(), want.data());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 2e-5) << "output " << i;
    return y;
  }

  // The file at cache_ is a valid one: gpuu's header, then the driver's data,
  // whose own header (VkPipelineCacheHeaderVersionOne) names the same device.
  void expect_valid_file() {
    std::vector<uint8_t> file = read_bytes(cache_);
    ASSERT_GE(file.size(), kHeaderBytes + 32) << cache_;
    EXPECT_EQ(std::memcmp(file.data(), "GPUUPCF\0", 8), 0);
    EXPECT_EQ(u32_at(file, 8), 1u) << "format version";
    EXPECT_EQ(u32_at(file, kSizeAt), file.size() - kHeaderBytes) << "data size";
    const size_t vk = kHeaderBytes;
    EXPECT_EQ(u32_at(file, vk), 32u) << "the driver's header size";
    EXPECT_EQ(u32_at(file, vk + 4), 1u) << "VK_PIPELINE_CACHE_HEADER_VERSION_ONE";
    EXPECT_EQ(u32_at(file, vk + 8), u32_at(file, kVendorAt)) << "vendorID";
    EXPECT_EQ(u32_at(file, vk + 12), u32_at(file, kDeviceAt)) << "deviceID";
    EXPECT_EQ(std::memcmp(file.data() + vk + 16, file.data() + kUuidAt, 16), 0) << "pipelineCacheUUID";
  }

  // The one warning logged, which names the path and `why`.
  void expect_one_warning(const Warnings& warnings, const std::string& why) {
    ASSERT_EQ(warnings.lines().size(), 1u);
    EXPECT_NE(warnings.lines()[0].find(cache_), std::string::npos) << warnings.lines()[0];
    EXPECT_NE(warnings.lines()[0].find(why), std::string::npos) << warnings.lines()[0];
  }

  std::string cache_;
};

TEST_F(PipelineCacheCapi, WritesTheFileWithItsHeaderAndTheDriversData) {
  Warnings warnings;
  run_session(cache_);
  EXPECT_TRUE(warnings.lines().empty()) << "a missing file is a first run: " << warnings.lines()[0];
  expect_valid_file();
}

TEST_F(PipelineCacheCapi, ASessionSeededFromTheFileGivesTheSameOutputs) {
  std::vector<float> first = run_session(cache_);
  std::vector<uint8_t> written = read_bytes(cache_);
  Warnings warnings;
  std::vector<float> second = run_session(cache_);
  EXPECT_TRUE(warnings.lines().empty()) << warnings.lines()[0];
  EXPECT_EQ(first, second);
  EXPECT_EQ(read_bytes(cache_), written) << "nothing new to write back";
}

TEST_F(PipelineCacheCapi, IgnoresADamagedFileWithAWarningAndReplacesIt) {
  write_bytes(cache_, std::vector<uint8_t>(200, 0x5a));
  Warnings warnings;
  run_session(cache_);
  expect_one_warning(warnings, "not a gpuu pipeline cache file");
  expect_valid_file();
}

TEST_F(PipelineCacheCapi, IgnoresAFileWhoseDataFailsItsChecksum) {
  run_session(cache_);
  std::vector<uint8_t> file = read_bytes(cache_);
  file.back() ^= 0xff;
  write_bytes(cache_, file);
  Warnings warnings;
  run_session(cache_);
  expect_one_warning(warnings, "checksum");
  expect_valid_file();
}

TEST_F(PipelineCacheCapi, IgnoresATruncatedFile) {
  run_session(cache_);
  std::vector<uint8_t> file = read_bytes(cache_);
  file.resize(file.size() - 8);
  write_bytes(cache_, file);
  Warnings warnings;
  run_session(cache_);
  expect_one_warning(warnings, "truncated");
  expect_valid_file();
}

TEST_F(PipelineCacheCapi, IgnoresAnotherDevicesFileAndReplacesIt) {
  run_session(cache_);
  std::vector<uint8_t> file = read_bytes(cache_);
  const uint32_t device_id = u32_at(file, kDeviceAt);
  file[kDeviceAt] ^= 0x01;
  write_bytes(cache_, file);
  Warnings warnings;
  run_session(cache_);
  expect_one_warning(warnings, "another device or driver");
  expect_valid_file();
  EXPECT_EQ(u32_at(read_bytes(cache_), kDeviceAt), device_id) << "rewritten for this device";
}

TEST_F(PipelineCacheCapi, APathThatCannotBeWrittenDoesNotFailTheSession) {
  cache_ = dir() + "/no_such_folder/cache.bin";
  Warnings warnings;
  run_session(cache_);  // fails the test if the session does
  expect_one_warning(warnings, "not written");
}

}  // namespace
