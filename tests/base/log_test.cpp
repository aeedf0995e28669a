// The log sink: levels, the GPUU_LOG variable, application callbacks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/log.h"
#include "support/test_vulkan_device.h"

namespace gpuu {
namespace {

TEST(Log, ParsesLevelNamesAndDigits) {
  LogLevel level = LogLevel::kError;
  EXPECT_TRUE(parse_log_level("debug", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  EXPECT_TRUE(parse_log_level("WARN", &level));
  EXPECT_EQ(level, LogLevel::kWarn);
  EXPECT_TRUE(parse_log_level("4", &level));
  EXPECT_EQ(level, LogLevel::kTrace);
  EXPECT_FALSE(parse_log_level("loud", &level));
  EXPECT_FALSE(parse_log_level("5", &level));
}

TEST(Log, DefaultLoggerReadsGpuuLog) {
  setenv("GPUU_LOG", "info", 1);
  set_log_sink(nullptr, nullptr, LogLevel::kWarn);  // back to the default: re-reads GPUU_LOG
  testing::internal::CaptureStderr();
  log(LogLevel::kInfo, "test", "shown ", 1);
  log(LogLevel::kDebug, "test", "hidden ", 2);
  std::string err_text = testing::internal::GetCapturedStderr();
  EXPECT_NE(err_text.find("gpuu [info] test: shown 1"), std::string::npos) << err_text;
  EXPECT_EQ(err_text.find("hidden"), std::string::npos) << err_text;

  setenv("GPUU_LOG", "nonsense", 1);
  testing::internal::CaptureStderr();
  set_log_sink(nullptr, nullptr, LogLevel::kWarn);
  EXPECT_EQ(log_threshold(), LogLevel::kWarn) << "an unknown value falls back to warn";
  EXPECT_NE(testing::internal::GetCapturedStderr().find("GPUU_LOG='nonsense'"), std::string::npos);
  unsetenv("GPUU_LOG");
  gpuu_test::install_log_hook();
}

TEST(Log, CallbackGetsLevelComponentAndMessageUpToItsThreshold) {
  std::vector<std::string> seen;
  set_log_sink(
      [](void* user, LogLevel level, const char* component, const char* message) {
        static_cast<std::vector<std::string>*>(user)->push_back(std::to_string(static_cast<int>(level)) + " " +
                                                                 component + " " + message);
      },
      &seen, LogLevel::kInfo);
  log(LogLevel::kError, "VGF", "broke");
  log(LogLevel::kInfo, "Vulkan", "init");
  log(LogLevel::kDebug, "Vulkan", "detail");
  gpuu_test::install_log_hook();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "0 VGF broke");
  EXPECT_EQ(seen[1], "2 Vulkan init");
}

}  // namespace
}  // namespace gpuu
