// The process-wide log sink. Reads of the sink are lock-free after a change
// settles; the mutex only guards against a torn sink/user_data pair.
#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <strings.h>

namespace gpuu {
namespace {

struct SinkState {
  std::mutex mutex;
  LogSink sink = nullptr;
  void* user_data = nullptr;
  std::atomic<int32_t> threshold{-1};  // -1: not yet read from GPUU_LOG
};

SinkState& state() {
  static SinkState s;
  return s;
}

const char* const kLevelNames[] = {"error", "warn", "info", "debug", "trace"};
constexpr int kLevelCount = static_cast<int>(sizeof(kLevelNames) / sizeof(kLevelNames[0]));
static_assert(kLevelCount == static_cast<int>(LogLevel::kTrace) + 1, "a log level without a name");

LogLevel default_threshold_from_env() {
  LogLevel level = LogLevel::kWarn;
  const char* env = std::getenv("GPUU_LOG");
  if (env && *env && !parse_log_level(env, &level)) {
    std::fprintf(stderr, "gpuu [warn] log: GPUU_LOG='%s' is not one of error|warn|info|debug|trace\n", env);
  }
  return level;
}

}  // namespace

const char* log_level_name(LogLevel level) {
  const int i = static_cast<int>(level);
  return i >= 0 && i < kLevelCount ? kLevelNames[i] : nullptr;
}

bool parse_log_level(const char* text, LogLevel* out) {
  if (!text) return false;
  for (int i = 0; i < kLevelCount; ++i) {
    if (strcasecmp(text, kLevelNames[i]) == 0 || (text[0] == '0' + i && text[1] == '\0')) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

void set_log_sink(LogSink sink, void* user_data, LogLevel threshold) {
  SinkState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.sink = sink;
  s.user_data = user_data;
  s.threshold = sink ? static_cast<int32_t>(threshold) : static_cast<int32_t>(default_threshold_from_env());
}

LogLevel log_threshold() {
  SinkState& s = state();
  int32_t t = s.threshold.load(std::memory_order_relaxed);
  if (t < 0) {
    t = static_cast<int32_t>(default_threshold_from_env());
    int32_t expected = -1;
    s.threshold.compare_exchange_strong(expected, t);
    t = s.threshold.load();
  }
  return static_cast<LogLevel>(t);
}

bool log_enabled(LogLevel level) { return static_cast<int32_t>(level) <= static_cast<int32_t>(log_threshold()); }

void log_message(LogLevel level, const char* component, const std::string& message) {
  if (!log_enabled(level)) return;
  SinkState& s = state();
  LogSink sink;
  void* user_data;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    sink = s.sink;
    user_data = s.user_data;
  }
  if (sink) {
    sink(user_data, level, component ? component : "", message.c_str());
  } else {
    std::fprintf(stderr, "gpuu [%s] %s: %s\n", log_level_name(level), component ? component : "", message.c_str());
  }
}

}  // namespace gpuu
