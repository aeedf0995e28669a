// The cost model behind the `auto` policy: an estimated cost per node on each
// backend, per delegate region and per tensor handed between backends. Units
// are abstract (think microseconds on a small mobile GPU); only ratios matter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "partition/backend_capability.h"
#include "partition/partition_result.h"

namespace gpuu::partition {

struct CostModel {
  // Cost of one node by backend id. A GPU backend not listed costs its
  // declaration's default_cost() (VGF 1: its TOSA graphs' elementwise chains
  // fuse; Vulkan 2: one dispatch per op); the CPU reference kernels are an
  // order of magnitude slower (10).
  std::map<std::string, double> op_cost = {{kCpuId, 10.0}};
  // Per-op overrides: op -> backend id -> cost. A GPU backend's own per-op
  // costs come from its declaration (BackendCapability::op_costs()) when the
  // model is resolved(); defaults() holds the CPU fallback's (conv2d/matmul/
  // linear, where its reference kernels fall furthest behind). A backend an
  // op does not list costs op_cost's value.
  std::map<std::string, std::map<std::string, double>> per_op;
  // One tensor produced on one GPU backend and read on another: a hand-off
  // on the shared device (barrier, semaphore wait, a copy in the RFC's first
  // version).
  double gpu_crossing = 3.0;
  // One tensor between a GPU backend and the CPU: a host round trip.
  double cpu_crossing = 15.0;
  // Each delegate region costs a submit and its own command buffer.
  double gpu_region = 1.0;

  // The documented defaults: the crossings, and the CPU fallback's costs
  // (no GPU backend is named: each declares its own).
  static CostModel defaults();

  // This model with each backend of `backends` not in op_cost given its
  // default_cost(), and each of its op_costs() that per_op does not set.
  CostModel resolved(const std::vector<const BackendCapability*>& backends) const;
  // 0 for a backend op_cost does not list (call on a resolved() model).
  double node_cost(const std::string& op, const std::string& backend) const;
  double crossing(const std::string& from, const std::string& to) const;
  // Every cost finite and >= 0, every op named; names all fields at fault.
  Status validate() const;
  // Every backend id a cost names, each once, sorted.
  std::vector<std::string> backend_ids() const;
};

// The estimated cost of running `graph` as `result` says: node costs on their
// backends, gpu_region per GPU region, and one crossing per (tensor,
// reading region) pair whose backends differ. Graph inputs and outputs are
// not charged: every assignment pays for them alike. `model` is resolved().
double estimate_cost(const graph::Graph& graph, const PartitionResult& result, const CostModel& model);

}  // namespace gpuu::partition
