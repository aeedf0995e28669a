// gpuu-inspect --ops: the op coverage table, generated from the op registry
// and the backends' declarations (never written by hand).
#pragma once

#include <string>

namespace gpuu::inspect {

// Every registered op with its inputs, attributes, dtype rule and which
// backends run it: Markdown (docs/ops.md embeds it) or JSON.
std::string render_ops_markdown();
std::string render_ops_json();

}  // namespace gpuu::inspect
