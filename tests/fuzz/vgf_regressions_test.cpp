// Inputs the VGF decoder fuzzer found crashing (kept under regressions/vgf):
// each must now be refused with kInvalidFormat naming the operator at fault.
// Raising read past a shape for a GATHER whose tensors had the wrong rank,
// and composed a TRANSPOSE with a perm that was no permutation of its rank.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "vgf/tosa_graph.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {
namespace {

// The fuzzer's pipeline, returning the status of the first step that fails.
Status raise_file(const std::vector<uint8_t>& bytes) {
  GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_vgf(bytes.data(), bytes.size()));
  GPUU_RETURN_IF_ERROR(validate_vgf(file));
  for (const Segment& segment : file.sequence.segments) {
    if (segment.type != ModuleType::kGraph) continue;
    const Module& module = file.modules.at(segment.module_index);
    GPUU_ASSIGN_OR_RETURN(TosaGraph graph, parse_tosa_module(module.spirv.data(), module.spirv.size()));
    for (const GraphConstantBinding& b : segment.effective_constant_bindings()) {
      GPUU_RETURN_IF_ERROR(set_graph_constant_data(graph, b.graph_constant_id,
                                                   file.constants.at(b.constant_table_index).data));
    }
    GPUU_RETURN_IF_ERROR(tosa_to_gpuu(graph).status());
  }
  return Status::Ok();
}

TEST(VgfFuzzRegressions, EachFoundInputIsRefusedByName) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GPUU_VGF_REGRESSIONS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Status s = raise_file(bytes);
    ++files;
    EXPECT_EQ(s.code(), StatusCode::kInvalidFormat) << entry.path() << ": " << s.message();
    EXPECT_NE(s.message().find("operator "), std::string::npos) << entry.path() << ": " << s.message();
  }
  EXPECT_EQ(files, 5u);
}

}  // namespace
}  // namespace gpuu::vgf
