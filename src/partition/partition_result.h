// What the partition engine hands to the program writer: regions, each owned
// by one backend, in an order that respects every data dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "partition/backend_capability.h"

namespace gpuu::partition {

struct Region {
  std::string backend = kCpuId;  // a BackendCapability id, or kCpuId
  std::vector<graph::NodeId> nodes;  // in a topological order of the graph
};

struct PartitionResult {
  std::vector<Region> regions;          // execution order: a topological order of the region DAG
  std::vector<int32_t> region_of_node;  // node id -> index into regions
};

}  // namespace gpuu::partition
