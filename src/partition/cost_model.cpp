// Cost model defaults and the cost estimate of a finished partition.
#include "partition/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace gpuu::partition {

CostModel CostModel::defaults() {
  CostModel m;
  // The CPU fallback has no capability object: its declaration is here. Its
  // reference kernels for convolutions and matrix products lag furthest.
  for (const char* op : {"conv2d", "matmul", "linear"}) m.per_op[op] = {{kCpuId, 100.0}};
  return m;
}

CostModel CostModel::resolved(const std::vector<const BackendCapability*>& backends) const {
  CostModel m = *this;
  for (const BackendCapability* b : backends) {
    m.op_cost.emplace(b->id(), b->default_cost());
    // emplace: a per-op cost the caller set wins over the declaration.
    for (const auto& [op, cost] : b->op_costs()) m.per_op[op].emplace(b->id(), cost);
  }
  return m;
}

double CostModel::node_cost(const std::string& op, const std::string& backend) const {
  if (!per_op.empty()) {
    auto it = per_op.find(op);
    if (it != per_op.end()) {
      auto c = it->second.find(backend);
      if (c != it->second.end()) return c->second;
    }
  }
  auto it = op_cost.find(backend);
  return it == op_cost.end() ? 0.0 : it->second;
}

double CostModel::crossing(const std::string& from, const std::string& to) const {
  if (from == to) return 0.0;
  if (from == kCpuId || to == kCpuId) return cpu_crossing;
  return gpu_crossing;
}

Status CostModel::validate() const {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0.0; };
  std::vector<std::string> problems;
  for (const auto& [backend, cost] : op_cost) {
    if (bad(cost)) problems.push_back(str_cat("op_cost for ", backend, " is ", cost, " (must be finite and >= 0)"));
  }
  for (const auto& [op, costs] : per_op) {
    if (op.empty()) problems.push_back("a per-op cost has an empty op name");
    for (const auto& [backend, cost] : costs) {
      if (bad(cost)) {
        problems.push_back(str_cat("cost of '", op, "' on ", backend, " is ", cost, " (must be finite and >= 0)"));
      }
    }
  }
  if (bad(gpu_crossing)) problems.push_back(str_cat("gpu_crossing is ", gpu_crossing));
  if (bad(cpu_crossing)) problems.push_back(str_cat("cpu_crossing is ", cpu_crossing));
  if (bad(gpu_region)) problems.push_back(str_cat("gpu_region is ", gpu_region));
  if (problems.empty()) return Status::Ok();
  std::string text = "cost model: " + problems[0];
  for (size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
  return Status(StatusCode::kInvalidArgument, text);
}

std::vector<std::string> CostModel::backend_ids() const {
  std::vector<std::string> ids;
  for (const auto& [backend, cost] : op_cost) ids.push_back(backend);
  for (const auto& [op, costs] : per_op) {
    for (const auto& [backend, cost] : costs) ids.push_back(backend);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

double estimate_cost(const graph::Graph& graph, const PartitionResult& result, const CostModel& model) {
  const auto& nodes = graph.nodes();
  const auto& region_of = result.region_of_node;
  double total = 0.0;
  for (const Region& r : result.regions) {
    if (r.backend != kCpuId) total += model.gpu_region;
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
