// The registry as gpuu-inspect shows it: each backend's load-time options
// (from its declaration) and a plugin's declarations from its descriptor,
// the one place it states them.
#include "inspect/backends_list.h"

#include <sstream>

#include "plugins/plugin_backend.h"
#include "runtime/builtin_backends.h"

namespace gpuu::inspect {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> declared_dtypes(uint32_t mask) {
  std::vector<std::string> out;
  for (int d = 0; d < graph::kDTypeCount; ++d) {
    if (mask & (1u << d)) out.emplace_back(graph::dtype_name(static_cast<graph::DType>(d)));
  }
  return out;
}

// `items` as a JSON array of strings.
std::string json_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + json_string(items[k]);
  return out + "]";
}

// The backend's load-time options: one line each, or a JSON array.
std::string render_options(const backends::Backend& b, bool json) {
  std::ostringstream out;
  const std::vector<backends::OptionDecl>& options = b.declared_options();
  if (json) {
    out << ", \"options\": [";
    for (size_t k = 0; k < options.size(); ++k) {
      const backends::OptionDecl& o = options[k];
      out << (k ? ", " : "") << "{\"key\": " << json_string(o.key) << ", \"values\": " << json_strings(o.allowed)
          << ", \"default\": " << json_string(o.default_value) << ", \"description\": " << json_string(o.description)
          << "}";
    }
    out << "]";
    return out.str();
  }
  for (const backends::OptionDecl& o : options) {
    std::string values;
    for (const std::string& v : o.allowed) values += (values.empty() ? "" : " | ") + v;
    out << "\n    option " << o.key << ": " << (values.empty() ? "free-form" : values) << " (default "
        << o.default_value << ")" << (o.description.empty() ? "" : ": " + o.description);
  }
  return out.str();
}

}  // namespace

std::string render_backends(bool json) {
  std::ostringstream out;
  std::vector<backends::Backend*> all = runtime::backend_registry().backends();
  if (json) out << "[";
  for (size_t i = 0; i < all.size(); ++i) {
    const backends::Backend* b = all[i];
    const auto* plugin = dynamic_cast<const plugins::PluginBackend*>(b);
    if (json) {
      out << (i ? ",\n " : "\n ") << "{\"id\": " << json_string(b->id()) << ", \"version\": " << b->version()
          << ", \"plugin_path\": " << (plugin ? json_string(b->plugin_path()) : "null");
    } else {
      out << b->id() << "  version " << b->version() << "  " << (plugin ? b->plugin_path() : "built-in");
    }
    if (plugin) {
      const gpuu_backend_plugin& d = plugin->descriptor();
      std::vector<std::string> ops(d.ops, d.ops + d.op_count);
      std::vector<std::string> dtypes = declared_dtypes(d.dtype_mask);
      std::string runs = plugin->runs_on_host() ? "host" : "device";
      if (json) {
        out << ", \"runs_on\": \"" << runs << "\", \"node_cost\": " << d.default_node_cost
            << ", \"ops\": " << json_strings(ops) << ", \"dtypes\": " << json_strings(dtypes);
      } else {
        out << "\n    runs on " << runs << ", node cost " << d.default_node_cost << ", ops:";
        for (const std::string& op : ops) out << ' ' << op;
        out << ", dtypes:";
        for (const std::string& dt : dtypes) out << ' ' << dt;
      }
    }
    out << render_options(*b, json) << (json ? "}" : "\n");
  }
  if (json) out << "\n]\n";
  return out.str();
}

}  // namespace gpuu::inspect
