// gtest main for every gpuu test binary. Validation-layer messages (from gpuu's
// own instances through the log, and from instances the tests create as an
// application would) are collected per test; a test that leaves any behind is
// reported and the binary exits non-zero, so ctest fails it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "support/test_vulkan_device.h"

namespace {

std::mutex g_mutex;
std::vector<std::string> g_gpuu_validation_messages;

}  // namespace

namespace gpuu_test {
void on_log(int level, const char* component, const char* message) {
  if (std::strcmp(component, "vulkan.validation") == 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_gpuu_validation_messages.emplace_back(message);
  } else if (level <= 1) {
    std::fprintf(stderr, "gpuu [%s] %s: %s\n", level == 0 ? "error" : "warn", component, message);
  }
}

std::vector<std::string> take_gpuu_validation_messages() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> out;
  out.swap(g_gpuu_validation_messages);
  return out;
}
}  // namespace gpuu_test

namespace {

std::vector<std::string> take_all_validation_messages() {
  std::vector<std::string> out = gpuu_test::take_gpuu_validation_messages();
  for (auto& m : gpuu_test::take_app_validation_messages()) out.push_back(std::move(m));
  return out;
}

class ValidationListener : public testing::EmptyTestEventListener {
 public:
  int failed_tests = 0;

 private:
  void OnTestStart(const testing::TestInfo&) override { take_all_validation_messages(); }
  void OnTestEnd(const testing::TestInfo& info) override {
    std::vector<std::string> messages = take_all_validation_messages();
    if (messages.empty()) return;
    ++failed_tests;
    std::fprintf(stderr, "[  FAILED  ] %s.%s left %zu validation message(s):\n", info.test_suite_name(), info.name(),
                 messages.size());
    for (const auto& m : messages) std::fprintf(stderr, "    %s\n", m.c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gpuu_test::install_log_hook();
  auto* listener = new ValidationListener;
  testing::UnitTest::GetInstance()->listeners().Append(listener);  // gtest owns it
  int rc = RUN_ALL_TESTS();
  if (listener->failed_tests > 0) {
    std::fprintf(stderr, "%d test(s) failed on validation messages\n", listener->failed_tests);
    rc = 1;
  }
  return rc;
}
