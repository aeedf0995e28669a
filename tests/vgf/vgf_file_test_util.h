// Helpers of the VGF codec tests: the golden files of shared/reference/vgf-samples,
// deep comparison of decoded files and of JSON values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf::testing {

// The six golden VGF files, by file name ("sin_mul.vgf", ...).
extern const std::vector<std::string> kGoldenFiles;
// Those written by Arm's 0.4.3 encoder (they re-encode byte for byte).
extern const std::vector<std::string> kGolden043Files;

std::string sample_path(const std::string& name);
// The whole file; an empty vector (and a gtest failure) when it cannot be read.
std::vector<uint8_t> read_sample(const std::string& name);
std::string read_sample_text(const std::string& name);

// "" when equal, else the JSON path of the first difference ("$.modules[0].name").
std::string json_difference(const JsonValue& a, const JsonValue& b, const std::string& path = "$");

// "" when both files hold the same content (constants compared by bytes; the
// header's version and magic are compared only when `compare_header` is set).
std::string content_difference(const VgfFile& a, const VgfFile& b, bool compare_header);

// A file using every table and field: several modules of both types and every
// code kind, resources of every category (strides, dynamic dims, a sampler, an
// alias group), graph and compute segments with several descriptor sets and
// push constants, constants dense and sparse, named model inputs/outputs.
VgfFile make_rich_file();

}  // namespace gpuu::vgf::testing
