// Cost model defaults and the cost estimate of a finished partition.
#include "partition/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace gpuu::partition {

CostModel CostModel::defaults() {
  CostModel m;
  // Convolutions and matrix products: the data-graph path is built for them.
  for (const char* op : {"conv2d", "matmul", "linear"}) m.per_op[op] = {4.0, 8.0, 100.0};
  return m;
}

double CostModel::node_cost(const std::string& op, Backend backend) const {
  auto b = static_cast<size_t>(backend);
  if (!per_op.empty()) {
    auto it = per_op.find(op);
    if (it != per_op.end()) return it->second[b];
  }
  return op_cost[b];
}

double CostModel::crossing(Backend from, Backend to) const {
  if (from == to) return 0.0;
  if (from == Backend::kCpu || to == Backend::kCpu) return cpu_crossing;
  return gpu_crossing;
}

Status CostModel::validate() const {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0.0; };
  for (int b = 0; b < kBackendCount; ++b) {
    if (bad(op_cost[static_cast<size_t>(b)])) {
      return err(StatusCode::kInvalidArgument, "cost model: op_cost for ", backend_id(static_cast<Backend>(b)), " is ",
                 op_cost[static_cast<size_t>(b)], " (must be finite and >= 0)");
    }
  }
  for (const auto& [op, costs] : per_op) {
    if (op.empty()) return err(StatusCode::kInvalidArgument, "cost model: a per-op cost has an empty op name");
    for (int b = 0; b < kBackendCount; ++b) {
      if (bad(costs[static_cast<size_t>(b)])) {
        return err(StatusCode::kInvalidArgument, "cost model: cost of '", op, "' on ",
                   backend_id(static_cast<Backend>(b)), " is ", costs[static_cast<size_t>(b)],
                   " (must be finite and >= 0)");
      }
    }
  }
  if (bad(gpu_crossing)) return err(StatusCode::kInvalidArgument, "cost model: gpu_crossing is ", gpu_crossing);
  if (bad(cpu_crossing)) return err(StatusCode::kInvalidArgument, "cost model: cpu_crossing is ", cpu_crossing);
  if (bad(gpu_region)) return err(StatusCode::kInvalidArgument, "cost model: gpu_region is ", gpu_region);
  return Status::Ok();
}

double estimate_cost(const graph::Graph& graph, const PartitionResult& result, const CostModel& model) {
  const auto& nodes = graph.nodes();
  const auto& region_of = result.region_of_node;
  double total = 0.0;
  for (const Region& r : result.regions) {
    if (r.backend != Backend::kCpu) total += model.gpu_region;
  }
  // (value, reading region) pairs that cross a region boundary, deduplicated so
  // that a tensor read by several nodes of one region is handed over once.
  std::vector<uint64_t> handoffs;
  for (size_t n = 0; n < nodes.size() && n < region_of.size(); ++n) {
    int32_t rn = region_of[n];
    if (rn < 0 || static_cast<size_t>(rn) >= result.regions.size()) continue;
    total += model.node_cost(nodes[n].op, result.regions[static_cast<size_t>(rn)].backend);
    for (graph::ValueId v : nodes[n].inputs) {
      if (v < 0 || static_cast<size_t>(v) >= graph.values().size()) continue;
      graph::NodeId p = graph.value(v).producer;
      if (p < 0 || static_cast<size_t>(p) >= region_of.size()) continue;
      int32_t rp = region_of[static_cast<size_t>(p)];
      if (rp == rn || rp < 0) continue;
      handoffs.push_back((static_cast<uint64_t>(static_cast<uint32_t>(v)) << 32) | static_cast<uint32_t>(rn));
    }
  }
  std::sort(handoffs.begin(), handoffs.end());
  handoffs.erase(std::unique(handoffs.begin(), handoffs.end()), handoffs.end());
  for (uint64_t h : handoffs) {
    auto v = static_cast<graph::ValueId>(h >> 32);
    auto rn = static_cast<size_t>(h & 0xFFFFFFFFu);
    auto rp = static_cast<size_t>(region_of[static_cast<size_t>(graph.value(v).producer)]);
    total += model.crossing(result.regions[rp].backend, result.regions[rn].backend);
  }
  return total;
}

}  // namespace gpuu::partition
