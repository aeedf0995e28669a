// Checking the application's backend options against the backends'
// declarations, and each backend's share of them.
#include "backends/backend_options.h"

#include "backends/backend.h"

namespace gpuu::backends {
namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

const OptionDecl* find_decl(const Backend& backend, const std::string& key) {
  for (const OptionDecl& d : backend.declared_options()) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

}  // namespace

std::string describe_option(const BackendOption& option) {
  return str_cat(option.backend, ":", option.key, "=", option.value);
}

std::vector<std::string> option_problems(const std::vector<Backend*>& registered,
                                         const std::vector<BackendOption>& options) {
  std::vector<std::string> problems;
  std::vector<std::string> ids;
  for (const Backend* b : registered) ids.emplace_back(b->id());
  for (size_t i = 0; i < options.size(); ++i) {
    const BackendOption& o = options[i];
    const std::string what = "'" + describe_option(o) + "'";
    const Backend* backend = nullptr;
    for (const Backend* b : registered) {
      if (o.backend == b->id()) backend = b;
    }
    if (!backend) {
      problems.push_back(str_cat(what, " names backend '", o.backend, "', which is not registered (registered: ",
                                 joined(ids, ", "), ")"));
      continue;
    }
    const OptionDecl* decl = find_decl(*backend, o.key);
    if (!decl) {
      std::vector<std::string> keys;
      for (const OptionDecl& d : backend->declared_options()) keys.push_back(d.key);
      problems.push_back(str_cat(what, ": ", o.backend, " has no option '", o.key, "' (",
                                 keys.empty() ? std::string("it takes none") : "its options: " + joined(keys, ", "),
                                 ")"));
      continue;
    }
    if (!decl->allowed.empty()) {
      bool allowed = false;
      for (const std::string& v : decl->allowed) allowed = allowed || v == o.value;
      if (!allowed) {
        problems.push_back(str_cat(what, ": '", o.value, "' is not one of ", joined(decl->allowed, ", ")));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (options[j].backend == o.backend && options[j].key == o.key) {
        problems.push_back(str_cat(what, " sets ", o.backend, ":", o.key, " again (first '", describe_option(options[j]),
                                   "')"));
        break;
      }
    }
  }
  return problems;
}

Status options_status(const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::Ok();
  return Status(StatusCode::kInvalidArgument, "backend options: " + joined(problems, "; "));
}

OptionValues option_values(const Backend& backend, const std::vector<BackendOption>& options) {
  OptionValues values;
  for (const OptionDecl& d : backend.declared_options()) values[d.key] = d.default_value;
  for (const BackendOption& o : options) {
    if (o.backend == backend.id() && values.count(o.key)) values[o.key] = o.value;
  }
  return values;
}

}  // namespace gpuu::backends
