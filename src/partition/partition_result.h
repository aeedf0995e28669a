// What the partition engine hands to the program writer: regions, each owned
// by one backend, in an order that respects every data dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace gpuu::partition {

enum class Backend : uint8_t { kVgf = 0, kVulkan = 1, kCpu = 2 };
constexpr int kBackendCount = 3;

// The ids written into program files and logs: "VgfBackend", "VulkanBackend", "CpuFallback".
inline const char* backend_id(Backend b) {
  switch (b) {
    case Backend::kVgf: return "VgfBackend";
    case Backend::kVulkan: return "VulkanBackend";
    case Backend::kCpu: return "CpuFallback";
  }
  return "?";
}

struct Region {
  Backend backend = Backend::kCpu;
  std::vector<graph::NodeId> nodes;  // in a topological order of the graph
};

struct PartitionResult {
  std::vector<Region> regions;          // execution order: a topological order of the region DAG
  std::vector<int32_t> region_of_node;  // node id -> index into regions
};

}  // namespace gpuu::partition
