// The explain report: why each node went where it went, as deterministic JSON
// (policy and options, auto's candidates, a summary per region, and per node
// its backend, region and, for every other backend, the reason it did not).
#pragma once

#include <string>

#include "graph/graph.h"
#include "partition/partitioner.h"

namespace gpuu::partition {

// `partitioned` must come from partition_with_trace(graph, options). Reasons
// read: "unsupported: <capability text>", "denied by user", "pinned to X by
// user", "pruned: region of 2 nodes < min_partition_size 3", "pruned on retry:
// ...", "taken first by VgfBackend (vgf_first)", "placed on X by the cost model
// (cost_labelling)", and for the CPU "delegated to X".
std::string explain_json(const graph::Graph& graph, const PartitionOptions& options, const Partitioned& partitioned);

// The reason one node is not on `backend` ("" when it is).
std::string why_not(const graph::Graph& graph, const PartitionOptions& options, const Partitioned& partitioned,
                    graph::NodeId node, const std::string& backend);

}  // namespace gpuu::partition
