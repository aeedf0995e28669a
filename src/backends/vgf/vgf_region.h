// Between gpuu regions and VGF files: a region lowers to one GRAPH segment
// (TOSA in SPIR-V) with its constants; a VGF file of one GRAPH segment turns
// back into a gpuu graph that gpuu's kernels run (the built-in TOSA executor).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "vgf/tosa_graph.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// The VGF file for a verified region graph: module "graph_partition_0",
// inputs and outputs as tensor resources named after the region's values,
// constants as CONSTANT resources with their data.
Result<VgfFile> vgf_from_region(const graph::Graph& region);

// The VGF file of one TOSA graph (what vgf_from_region does after lowering):
// one GRAPH segment, graph constants as CONSTANT resources with their data.
Result<VgfFile> vgf_from_tosa(const TosaGraph& tosa);

// The gpuu graph computing the file's GRAPH segment, with inputs and outputs
// in the sequence's order and named by its input/output names (when present).
// Files of several segments or COMPUTE segments are refused with kUnsupported.
Result<graph::Graph> graph_from_vgf(const VgfFile& file);

// VkFormat of a tensor element type, and back.
uint32_t vk_format_of(graph::DType dtype);
Result<graph::DType> dtype_of_vk_format(uint32_t vk_format);

}  // namespace gpuu::vgf
