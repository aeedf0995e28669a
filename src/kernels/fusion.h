// Elementwise fusion: chains of unary and arithmetic ops over one output shape
// become one dispatch of shaders/fused_elementwise.comp, their intermediates
// never touching memory. The plan lists what to lower, in order: single nodes
// and fused groups.
#pragma once

#include <vector>

#include "kernels/op_table.h"

namespace gpuu::kernels {

struct LoweringUnit {
  std::vector<graph::NodeId> nodes;  // one node, or a fused group in graph order (the last one's output escapes)
  int movement_chain = -1;           // or a movement chain's nodes (movement.h): its index
  bool fused() const { return movement_chain < 0 && nodes.size() > 1; }
};

// The lowering order of `graph`'s nodes; with `fuse`, maximal fusable groups
// (<= 4 outside inputs, <= 40 ops, every inner value used only inside) are merged.
std::vector<LoweringUnit> plan_lowering(const graph::Graph& graph, bool fuse);

// Appends the one dispatch of a fused group.
Status lower_fused_group(LoweringContext& lc, const LoweringUnit& unit);

}  // namespace gpuu::kernels
