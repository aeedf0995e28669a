// The cost model behind the `auto` policy: an estimated cost per node on each
// backend, per delegate region and per tensor handed between backends. Units
// are abstract (think microseconds on a small mobile GPU); only ratios matter.
#pragma once

#include <array>
#include <map>
#include <string>

#include "base/status.h"
#include "graph/graph.h"
#include "partition/partition_result.h"

namespace gpuu::partition {

struct CostModel {
  // Default cost of one node, indexed by Backend: VGF runs TOSA graphs whose
  // elementwise chains fuse (1), Vulkan spends one dispatch per op (2), the CPU
  // reference kernels are an order of magnitude slower (10).
  std::array<double, kBackendCount> op_cost = {1.0, 2.0, 10.0};
  // Per-op overrides of op_cost (defaults(): conv2d/matmul/linear, where the
  // gap between the tensor path, shader kernels and the CPU is widest).
  std::map<std::string, std::array<double, kBackendCount>> per_op;
  // One tensor produced on VGF and read on Vulkan or back: a hand-off on the
  // shared device (barrier, semaphore wait, a copy in the RFC's first version).
  double gpu_crossing = 3.0;
  // One tensor between a GPU backend and the CPU: a host round trip.
  double cpu_crossing = 15.0;
  // Each delegate region costs a submit and its own command buffer.
  double gpu_region = 1.0;

  // The documented defaults, including the per-op table.
  static CostModel defaults();

  double node_cost(const std::string& op, Backend backend) const;
  double crossing(Backend from, Backend to) const;
  // Every cost finite and >= 0; names the field at fault.
  Status validate() const;
};

// The estimated cost of running `graph` as `result` says: node costs on their
// backends, gpu_region per VGF/Vulkan region, and one crossing per (tensor,
// reading region) pair whose backends differ. Graph inputs and outputs are
// not charged: every assignment pays for them alike.
double estimate_cost(const graph::Graph& graph, const PartitionResult& result, const CostModel& model);

}  // namespace gpuu::partition
