// Standalone VGF export: each VGF delegate of a program written as its own
// .vgf file with a scenario JSON beside it, for deployments without gpuu
// (RFC: VGF must remain available as a standalone export flow).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "program/program.h"

namespace gpuu::vgf {

// Writes `dir/<delegate index>.vgf` and `dir/<delegate index>.json` for every
// VgfBackend delegate (creating `dir` if needed); `written` (optional) gets
// the paths. kIo naming the path when a file cannot be written.
Status extract_vgf_delegates(const program::Program& program, const std::string& dir,
                             std::vector<std::string>* written = nullptr);

}  // namespace gpuu::vgf
