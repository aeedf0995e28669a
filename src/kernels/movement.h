// Static data movement composed: a chain of transposes, reshapes, and
// index_select / gather with constant indices is one flat gather,
// out[i] = x[map[i]], whose map is computed here once, at build time. One
// dispatch instead of one per op (the RFC model's index_select -> gather ->
// index_select island); worth it on small tensors, where a dispatch costs
// more than its bytes. And where the reader takes strided views, no dispatch
// at all (plan_views).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {

struct MovementChain {
  std::vector<graph::NodeId> nodes;  // graph order; each feeds the next its data input
  std::vector<int32_t> map;          // output element -> input element of the first node
};

// Chains of two or more such ops whose inner values feed only the next op
// and are not region outputs, with outputs of at most `max_elements`.
std::vector<MovementChain> find_movement_chains(const graph::Graph& graph, int64_t max_elements = int64_t{1} << 20);

// The chain's one dispatch (index_gather over flat tensors): `map` holds the
// chain's map as i32 on the device.
Status lower_movement_chain(LoweringContext& lc, const MovementChain& chain, const BufferRange& map);

// Whether node `n`'s result holds its input's bytes in the same order, so it
// can share its input's memory: a reshape, or a transpose that moves only
// dims of size 1 past the others (a decode step's [1, 1, H, D] -> [1, H, 1, D]).
bool keeps_memory_order(const graph::Graph& graph, const graph::Node& n);

// Views instead of copies: a kernel that reads an input through strides
// (OpKernel::takes_view) reads a transposed, sliced, expanded or reshaped value in place
// from the value the movement ops start from, and those ops need not run.
struct ViewPlan {
  std::vector<StridedView> views;  // by ValueId: how a value is read (root kNone: as itself)
  std::vector<char> skipped;       // by NodeId: movement nodes no one needs any more
};

// For every input of a view-taking kernel made by reshape, transpose and
// slice nodes: the furthest root it composes to as one strided view that
// every view-taking reader of the value accepts. A movement node is skipped
// when its result is neither a region output nor a view's root, and all its
// readers are skipped or read it through a view. Nodes flagged in
// `as_themselves` (by NodeId; empty: none) read every input as itself,
// whatever their kernel takes (an elementwise op folded into a GEMM's store).
// Nodes with a function in `lowered_with` (by NodeId; empty: none) are read
// by another kernel than their op's, which takes the views it says (a concat
// that ends a fused elementwise unit).
using TakesView = bool (*)(const graph::Graph&, const graph::Node&, size_t slot, const StridedView&);
ViewPlan plan_views(const graph::Graph& graph, const std::vector<char>& as_themselves = {},
                    const std::vector<TakesView>& lowered_with = {});

}  // namespace gpuu::kernels
