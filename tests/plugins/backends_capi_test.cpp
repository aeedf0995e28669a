// The backend list and plugin loading through libgpuu.so alone.
#include <gtest/gtest.h>

#include <string>

#include "gpuu.h"
#include "gpuu_backend.h"

namespace {

TEST(BackendsCapi, BuiltInBackendsComeFirstWithoutAPluginPath) {
  ASSERT_GE(gpuu_backends_count(), 2u);
  EXPECT_STREQ(gpuu_backends_id(0), "VulkanBackend");
  EXPECT_STREQ(gpuu_backends_id(1), "VgfBackend");
  EXPECT_EQ(gpuu_backends_plugin_path(0), nullptr);
  EXPECT_EQ(gpuu_backends_id(gpuu_backends_count()), nullptr);
  EXPECT_EQ(gpuu_backends_version(gpuu_backends_count()), 0u);
  EXPECT_EQ(gpuu_backends_plugin_path(gpuu_backends_count()), nullptr);
}

TEST(BackendsCapi, LoadsTheSamplePluginOnce) {
  size_t before = gpuu_backends_count();
  size_t loaded = 99;
  ASSERT_EQ(gpuu_backends_load(GPUU_SAMPLE_PLUGIN_DIR, &loaded), GPUU_OK) << gpuu_last_error();
  EXPECT_EQ(loaded, 1u);
  ASSERT_EQ(gpuu_backends_count(), before + 1);
  EXPECT_STREQ(gpuu_backends_id(before), "MtCpu");
  EXPECT_EQ(gpuu_backends_version(before), 1u);
  ASSERT_NE(gpuu_backends_plugin_path(before), nullptr);
  EXPECT_NE(std::string(gpuu_backends_plugin_path(before)).find("/Gpuu_MtCpu_backend.so"), std::string::npos);
  ASSERT_EQ(gpuu_backends_load(GPUU_SAMPLE_PLUGIN_DIR, &loaded), GPUU_OK) << gpuu_last_error();
  EXPECT_EQ(loaded, 0u) << "a file already loaded is skipped";
}

TEST(BackendsCapi, RefusalsAreListedTogetherAndTheRestLoads) {
  size_t loaded = 0;
  std::string list = std::string("/no/such/place:") + GPUU_TEST_PLUGIN_DIR + "/Acme_WrongMajor_backend.so:" +
                     GPUU_TEST_PLUGIN_DIR + "/Acme_Good_backend.so";
  ASSERT_EQ(gpuu_backends_load(list.c_str(), &loaded), GPUU_ERROR_INVALID_ARGUMENT);
  std::string message = gpuu_last_error();
  EXPECT_NE(message.find("refused 2 of the paths"), std::string::npos) << message;
  EXPECT_NE(message.find("/no/such/place: does not exist"), std::string::npos) << message;
  const std::string wrong_major = "Acme_WrongMajor_backend.so: plugin API version " +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MAJOR + 1) + "." +
                                  std::to_string(GPUU_BACKEND_API_VERSION_MINOR) + " is incompatible";
  EXPECT_NE(message.find(wrong_major), std::string::npos) << message;
  EXPECT_EQ(loaded, 1u);
  EXPECT_STREQ(gpuu_backends_id(gpuu_backends_count() - 1), "AcmeGood");
}

TEST(BackendsCapi, NullPathListIsAnInvalidArgument) {
  EXPECT_EQ(gpuu_backends_load(nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("path_list is NULL"), std::string::npos);
}

}  // namespace
