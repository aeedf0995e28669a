// What a KernelGraph lowers, decided from the region alone, before any buffer
// exists: which values share memory (reshape views), which movement nodes
// need no dispatch, the lowering units in order; and whether a region input
// may be overwritten by a region output (a program state updated in place).
#pragma once

#include <vector>

#include "graph/graph.h"
#include "kernels/fusion.h"
#include "kernels/movement.h"

namespace gpuu::kernels {

struct KernelGraphOptions;

struct RegionPlan {
  ViewPlan views;
  std::vector<MovementChain> chains;
  std::vector<int> chain_of;           // by node: its movement chain, or -1
  std::vector<graph::ValueId> alias;   // by value: the value whose memory it uses (itself when none)
  std::vector<char> placed;            // by value: a region input or output, or made in an output's memory
  std::vector<LoweringUnit> units;     // what to lower, in order
  std::vector<graph::ValueId> written_over;  // by value: LoweringContext::written_over

  graph::ValueId root_of(graph::ValueId v) const;
};

// The plan of `region` under `options`. `written_over` (by value, or empty)
// names the region inputs whose memory some outputs are written over, as
// buffers given to KernelGraph::create say; the slices of such an input that
// a concat writing over it would put back where they were are then not
// lowered (slice_scatter's untouched parts: concat_part_in_place).
RegionPlan plan_region(const graph::Graph& region, const KernelGraphOptions& options,
                       std::vector<graph::ValueId> written_over = {});

// Whether input `k` of `concat` is a slice of `over` that the concat would
// write where it already lies, the concat's output being in `over`'s memory.
bool concat_part_in_place(const graph::Graph& graph, const graph::Node& concat, size_t k, graph::ValueId over);

// Whether region output `output` may be written over region input `input`'s
// memory (same dtype and shape) with the plan unchanged otherwise: no unit
// after the one writing `output` reads `input` (as itself, a reshape of it
// or a view of it), and that unit reads it only where its kernel allows
// (OpKernel::writes_over; every member of a fused group). `output` must be
// written by its own unit, not made as a reshape's view.
bool can_write_over(const graph::Graph& region, const RegionPlan& plan, graph::ValueId input, graph::ValueId output);

}  // namespace gpuu::kernels
