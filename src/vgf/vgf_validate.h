// Cross-reference and value rules of a VGF file, shared by the decoder (which
// knows where each item lies in the file) and the encoder (which does not).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_layout.h"

namespace gpuu::vgf::detail {

// Absolute file offsets of decoded items, so that messages can name them.
struct FilePositions {
  uint64_t sections[layout::kSectionCount] = {};
  std::vector<uint64_t> modules;    // Module tables
  std::vector<uint64_t> resources;  // ModelResourceTableEntry tables
  std::vector<uint64_t> constants;  // CONST00 records or legacy ConstantData tables
  std::vector<uint64_t> segments;   // SegmentInfo tables
  uint64_t sequence_root = 0;       // ModelSequenceTable
};

// validate_vgf with messages "vgf: <section> section at offset N: <item> (at byte M) ..."
// when `where` is given, "vgf: <section>: <item> ..." otherwise.
Status check_file(const VgfFile& file, const FilePositions* where);

}  // namespace gpuu::vgf::detail
