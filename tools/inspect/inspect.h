// gpuu-inspect's renderings of a loaded program: a human-readable report,
// JSON for scripts, and a Graphviz graph coloured by backend.
#pragma once

#include <string>

#include "program/program.h"

namespace gpuu::inspect {

std::string render_text(const program::Program& program, const std::string& path);
std::string render_json(const program::Program& program, const std::string& path);
std::string render_dot(const program::Program& program, const std::string& path);

}  // namespace gpuu::inspect
