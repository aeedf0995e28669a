// From gpuu regions to VGF files: a region lowers to one GRAPH segment (TOSA
// in SPIR-V) with its constants, or a custom shader to a COMPUTE segment. The
// way back, which the built-in TOSA executor runs, is vgf/vgf_graph.h.
#pragma once

#include "base/status.h"
#include "graph/graph.h"
#include "vgf/tosa_graph.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_graph.h"

namespace gpuu::vgf {

// The VGF file for a verified region graph: module "graph_partition_0",
// inputs and outputs as tensor resources named after the region's values,
// constants as CONSTANT resources with their data.
Result<VgfFile> vgf_from_region(const graph::Graph& region);

// The VGF file of one TOSA graph (what vgf_from_region does after lowering):
// one GRAPH segment, graph constants as CONSTANT resources with their data.
// `record_sources` (optional) gets each constant record's TOSA constant (in
// `tosa`): its name (the gpuu value it came from; may be empty) and how its
// bytes were rearranged from that value's.
Result<VgfFile> vgf_from_tosa(const TosaGraph& tosa, std::vector<const TosaConstant*>* record_sources = nullptr);

}  // namespace gpuu::vgf
