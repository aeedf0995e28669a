// Logging: one sink for the whole process, either the application's callback or
// the default stderr logger whose threshold comes from the GPUU_LOG variable.
#pragma once

#include <string>

#include "base/status.h"

namespace gpuu {

enum class LogLevel : int32_t { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

using LogSink = void (*)(void* user_data, LogLevel level, const char* component, const char* message);

// Replaces the sink. A null sink restores the default stderr logger.
// `threshold` drops messages more verbose than it (the default logger reads GPUU_LOG instead).
void set_log_sink(LogSink sink, void* user_data, LogLevel threshold);
LogLevel log_threshold();
bool log_enabled(LogLevel level);
void log_message(LogLevel level, const char* component, const std::string& message);

// "error", "warn", "info", "debug", "trace"; nullptr for a value outside the enum.
const char* log_level_name(LogLevel level);
// Parses those names (case-insensitive) or a digit 0-4.
bool parse_log_level(const char* text, LogLevel* out);

template <typename... Parts>
void log(LogLevel level, const char* component, const Parts&... parts) {
  if (log_enabled(level)) log_message(level, component, str_cat(parts...));
}

}  // namespace gpuu
