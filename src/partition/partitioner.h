// The unified partition-policy engine: splits a graph into convex regions for
// VGF, Vulkan and the CPU fallback under an ordered policy (RFC phase 1:
// vgf_first, vulkan_first) or the cost-driven `auto` policy.
//
// Rules every result keeps:
//  - every node is in exactly one region; regions come in an execution order
//    that is a topological order of the region DAG (every edge goes from a
//    region to itself or to a later one, which also makes each region convex);
//  - VGF/Vulkan regions are connected, hold only nodes their backend's
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

#include <array>
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
  Prefer prefer = Prefer::kAuto;
  // GPU regions with fewer nodes are pruned to the CPU (RFC default 3; >= 1).
  int64_t min_partition_size = 3;
  // Offer pruned nodes to the other GPU backend (still subject to the minimum)
  // before they fall to the CPU. Off by default, as in the RFC.
  bool retry_pruned = false;
  Capabilities capabilities;  // deny(backend, op), pin(node, backend)
  CostModel cost = CostModel::defaults();  // used by `auto`
};

// How a result was produced. `auto` evaluates all three and keeps the cheapest.
enum class Strategy : uint8_t {
  kVgfFirst = 0,       // VGF takes maximal regions, then Vulkan
  kVulkanFirst = 1,    // Vulkan first, then VGF
  kCostLabelling = 2,  // per-node labels from the cost model, then regions
};
const char* to_string(Strategy strategy);  // "vgf_first", "vulkan_first", "cost_labelling"

// What happened to one node on its way to its region, for the explain report.
struct NodeTrace {
  // Size of the region a GPU backend (index: kVgf, kVulkan) built with this
  // node and then pruned; 0 when it did not.
  std::array<int32_t, 2> pruned_size{0, 0};
  // The same for regions built when retry_pruned offered the node to a backend.
  std::array<int32_t, 2> retry_pruned_size{0, 0};
  // The backend the node was offered to on retry (index as above).
  std::array<bool, 2> offered_on_retry{false, false};
};

struct PartitionTrace {
  Prefer policy = Prefer::kAuto;          // as requested
  Strategy strategy = Strategy::kVgfFirst;  // what produced the result
  std::vector<NodeTrace> nodes;           // by node id
  // `auto` only: every candidate's estimated cost, in evaluation order.
  std::vector<std::pair<Strategy, double>> candidates;
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
