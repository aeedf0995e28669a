// Discovery and loading of backend plugins (.so files exporting
// gpuu_backend_plugin_get, see include/gpuu_backend.h) into a backend
// registry, after Arm NN's dynamic backends: the same file-naming and
// API-version rules, every refusal reported by file and rule.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace gpuu::plugins {

// The environment variable the process-wide registry reads once, on first use.
constexpr const char* kBackendPathEnv = "GPUU_BACKEND_PATH";

// "" when `file_name` (no directory) follows <vendor>_<name>_backend.so[.N[.N...]]
// with alphanumeric vendor and name, else which part of the rule it breaks.
std::string naming_rule_problem(const std::string& file_name);

// Same major, plugin minor <= ours.
bool api_version_compatible(uint32_t plugin_major, uint32_t plugin_minor);

struct LoadReport {
  std::vector<std::string> loaded;   // ids registered by this call
  std::vector<std::string> refused;  // one line per refused file or path entry: "<path>: <why>"
};

// Loads each plugin file once (by canonical path) into one registry; keeps
// every loaded .so open for the life of the process. Thread-safe.
class PluginLoader {
 public:
  explicit PluginLoader(backends::BackendRegistry& registry) : registry_(registry) {}

  // `path_list`: ':'-separated absolute paths of directories (scanned in name
  // order for files that look like plugins) or plugin files. A bad entry or
  // file is refused and the rest still load; refusals are also logged.
  LoadReport load(const std::string& path_list);

 private:
  void load_file(const std::string& path, LoadReport& report);

  backends::BackendRegistry& registry_;
  std::mutex mutex_;
  std::set<std::string> loaded_paths_;  // canonical
};

}  // namespace gpuu::plugins
