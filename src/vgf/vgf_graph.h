// What a VGF file computes, as a gpuu graph: the way from a file (gpuu's own
// or Arm's) to gpuu's kernels, and to a program that runs it. Knows no
// backend: the VGF backend's executor and the standalone-VGF programs both
// start here.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "graph/graph.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// The gpuu graph computing the file's one segment, with inputs and outputs
// in the sequence's order and named by its input/output names (when present):
// a GRAPH segment's TOSA raised onto gpuu ops, a COMPUTE segment as one
// custom_shader node running its module. Files of several segments or
// placeholder modules are refused with kUnsupported.
Result<graph::Graph> graph_from_vgf(const VgfFile& file);

// VkFormat of a tensor element type, and back.
uint32_t vk_format_of(graph::DType dtype);
Result<graph::DType> dtype_of_vk_format(uint32_t vk_format);

}  // namespace gpuu::vgf
