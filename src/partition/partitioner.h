// The unified partition-policy engine: splits a graph into convex regions for
// any number of GPU backends (each known by its BackendCapability) and the
// CPU fallback under an ordered preference list (RFC phase 1: vgf_first,
// vulkan_first; or an explicit list) or the cost-driven `auto` policy.
//
// Rules every result keeps:
//  - every node is in exactly one region; regions come in an execution order
//    that is a topological order of the region DAG (every edge goes from a
//    region to itself or to a later one, which also makes each region convex);
//  - GPU regions are connected, hold only nodes their backend's
//    capabilities accept, and have at least min_partition_size nodes, except
//    a custom-shader region (always one node, seed vgf-custom-shader-
//    conversion.txt) and a region holding a pinned node (a pin is never pruned);
//  - the same graph and options give the same result, bit for bit;
//  - time and memory near-linear in nodes + edges.
//
// CPU regions: after the GPU regions are fixed, the undelegated nodes are laid
// out by the same phase schedule as GPU regions (partitioner.cpp); each maximal run of
// CPU nodes between delegate regions is one CPU region. It may hold several
// independent pieces: the host runs them back to back at one sync point.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"
#include "partition/capabilities.h"
#include "partition/cost_model.h"
#include "partition/partition_result.h"

namespace gpuu::partition {

struct PartitionOptions {
  // vgf_first: VgfBackend, VulkanBackend, then every other registered GPU
  // backend in registration order; vulkan_first: the first two swapped; auto:
  // the cost mode over all of them.
  Prefer prefer = kDefaultPrefer;
  // An explicit preference list of GPU backend ids: exactly these, in this
  // order (prefer is then not read). CPU is always the fallback.
  std::vector<std::string> backends;
  // GPU regions with fewer nodes are pruned to the CPU (>= 1).
  int64_t min_partition_size = kDefaultMinPartitionSize;
  // Offer pruned nodes to the next backends in the preference order (still
  // subject to the minimum) before they fall to the CPU. Off by default, as
  // in the RFC.
  bool retry_pruned = false;
  Capabilities capabilities;  // the registered GPU backends, deny(backend, op), pin(node, backend)
  CostModel cost = CostModel::defaults();  // used by `auto`
};

// What happened to one node on its way to its region, for the explain report.
// Every vector is indexed like PartitionTrace::backends.
struct NodeTrace {
  // Size of the region a GPU backend built with this node and then pruned; 0
  // when it did not.
  std::vector<int32_t> pruned_size;
  // The same for regions built when retry_pruned offered the node to a backend.
  std::vector<int32_t> retry_pruned_size;
  // Whether the node was offered to the backend on retry.
  std::vector<uint8_t> offered_on_retry;
};

struct PartitionTrace {
  Prefer policy = Prefer::kAuto;  // as requested
  // What produced the result: "vgf_first", "vulkan_first", "<id>_first" (auto's
  // candidate led by another backend), "backends" (an explicit list) or
  // "cost_labelling" (per-node labels from the cost model, then regions).
  std::string strategy;
  std::vector<std::string> backends;  // the GPU backend ids the engine knew
  std::vector<std::string> order;     // the order they took regions in
  std::vector<NodeTrace> nodes;       // by node id
  // `auto` only: every candidate's estimated cost, in evaluation order.
  std::vector<std::pair<std::string, double>> candidates;
};

struct Partitioned {
  PartitionResult result;
  PartitionTrace trace;
};

// Partitions `graph`. Fails with kInvalidArgument, naming what is wrong, for a
// malformed graph (a value id out of range, nodes out of topological order, a
// value produced twice), bad options (min_partition_size < 1, an unknown
// prefer value, a negative cost), a pin naming no node or a backend that
// cannot take that node, a node pinned to two backends, or a denied op that is
// neither known nor used by the graph.
Result<PartitionResult> partition(const graph::Graph& graph, const PartitionOptions& options);

// partition() plus the trace the explain report is made from.
Result<Partitioned> partition_with_trace(const graph::Graph& graph, const PartitionOptions& options);

}  // namespace gpuu::partition
