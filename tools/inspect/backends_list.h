// gpuu-inspect --backends: the registered backends, built-in and plugin.
#pragma once

#include <string>

namespace gpuu::inspect {

// One line per backend (id, version, built-in or the plugin's path, and what a
// plugin declares: where it runs, its ops, dtypes and node cost), or JSON.
std::string render_backends(bool json);

}  // namespace gpuu::inspect
