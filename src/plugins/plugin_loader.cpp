// The plugin loader: path-list parsing, the naming rule, dlopen and the
// checks of the descriptor before a plugin enters the registry.
#include "plugins/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "base/log.h"
#include "gpuu_backend.h"
#include "plugins/plugin_backend.h"

namespace gpuu::plugins {
namespace fs = std::filesystem;
namespace {

const char* const kNamingRule = "<vendor>_<name>_backend.so[.N[.N...]], vendor and name alphanumeric";

// The descriptor's own defects, or "".
std::string descriptor_problem(const gpuu_backend_plugin* p) {
  if (!p) return std::string(GPUU_BACKEND_PLUGIN_ENTRY) + " returned null";
  if (!api_version_compatible(p->api_version_major, p->api_version_minor)) {
    std::ostringstream out;
    out << "plugin API version " << p->api_version_major << '.' << p->api_version_minor
        << " is incompatible with the runtime's " << GPUU_BACKEND_API_VERSION_MAJOR << '.'
        << GPUU_BACKEND_API_VERSION_MINOR << " (rule: same major, plugin minor <= runtime minor)";
    return out.str();
  }
  if (p->struct_size < kFirstDescriptorSize) {
    return "descriptor struct_size " + std::to_string(p->struct_size) + " is smaller than API 1.0's " +
           std::to_string(kFirstDescriptorSize);
  }
  if (!p->id || !*p->id) return "empty backend id";
  const std::pair<const char*, bool> functions[] = {
      {"is_available", p->is_available != nullptr}, {"check", p->check != nullptr},
      {"preprocess", p->preprocess != nullptr},     {"free_bytes", p->free_bytes != nullptr},
      {"init", p->init != nullptr},                 {"execute", p->execute != nullptr},
      {"destroy", p->destroy != nullptr}};
  for (const auto& [name, present] : functions) {
    if (!present) return std::string("missing vtable function '") + name + "'";
  }
  return "";
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string entry;
  while (std::getline(in, entry, ':')) {
    if (!entry.empty()) out.push_back(entry);
  }
  return out;
}

}  // namespace

std::string naming_rule_problem(const std::string& file_name) {
  static const std::regex rule("[A-Za-z0-9]+_[A-Za-z0-9]+_backend\\.so(\\.[0-9]+)*");
  if (std::regex_match(file_name, rule)) return "";
  return "file name '" + file_name + "' does not follow the naming rule " + kNamingRule;
}

bool api_version_compatible(uint32_t plugin_major, uint32_t plugin_minor) {
  return plugin_major == GPUU_BACKEND_API_VERSION_MAJOR && plugin_minor <= GPUU_BACKEND_API_VERSION_MINOR;
}

LoadReport PluginLoader::load(const std::string& path_list) {
  std::lock_guard<std::mutex> lock(mutex_);
  LoadReport report;
  for (const std::string& entry : split_path_list(path_list)) {
    std::error_code ec;
    fs::path path(entry);
    if (!path.is_absolute()) {
      report.refused.push_back(entry + ": not an absolute path (plugin paths must be absolute)");
    } else if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        std::string name = f.filename().string();
        // Only what looks like a shared object is a candidate; other files
        // may live in the same directory.
        if (name.find(".so") == std::string::npos) continue;
        load_file(f.string(), report);
      }
    } else if (fs::exists(path, ec)) {
      load_file(entry, report);
    } else {
      report.refused.push_back(entry + ": does not exist (or is a dangling symlink)");
    }
  }
  for (const std::string& line : report.refused) log(LogLevel::kWarn, "plugins", "refused ", line);
  for (const std::string& id : report.loaded) log(LogLevel::kInfo, "plugins", "loaded backend ", id);
  return report;
}

void PluginLoader::load_file(const std::string& path, LoadReport& report) {
  auto refuse = [&](const std::string& why) { report.refused.push_back(path + ": " + why); };
  std::string problem = naming_rule_problem(fs::path(path).filename().string());
  if (!problem.empty()) return refuse(problem);
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) return refuse("does not exist (or is a dangling symlink)");
  if (!fs::is_regular_file(canonical, ec)) return refuse("is not a regular file");
  // The same file by another name (a versioned symlink) loads once.
  if (loaded_paths_.count(canonical.string())) return;
  void* so = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    const char* why = dlerror();
    return refuse(std::string("dlopen failed: ") + (why ? why : "unknown error"));
  }
  auto get = reinterpret_cast<gpuu_backend_plugin_get_fn>(dlsym(so, GPUU_BACKEND_PLUGIN_ENTRY));
  if (!get) {
    dlclose(so);
    return refuse(std::string("no entry point '") + GPUU_BACKEND_PLUGIN_ENTRY + "' (extern \"C\", default visibility)");
  }
  const gpuu_backend_plugin* plugin = get();
  problem = descriptor_problem(plugin);
  if (!problem.empty()) {
    dlclose(so);
    return refuse(problem);
  }
  Result<std::vector<backends::OptionDecl>> options = plugin_option_decls(*plugin);
  if (!options.ok()) {
    dlclose(so);
    return refuse(options.status().message());
  }
  std::string id = plugin->id;  // the descriptor goes with the .so if refused
  Status registered = registry_.register_backend(
      std::make_unique<PluginBackend>(plugin, canonical.string(), std::move(options).value()));
  if (!registered.ok()) {
    dlclose(so);
    return refuse("backend id '" + id + "' is taken (built-in or loaded before)");
  }
  loaded_paths_.insert(canonical.string());  // `so` stays open: the registry holds its functions
  report.loaded.push_back(id);
}

}  // namespace gpuu::plugins
