// Renders the explain report. Reasons are rebuilt from the capabilities, the
// pins and the engine's per-node trace, so the engine itself keeps no text.
#include "partition/explain.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json_writer.h"

namespace gpuu::partition {
namespace {

// Every backend the engine knew, the CPU fallback last.
std::vector<std::string> all_backends(const Partitioned& p) {
  std::vector<std::string> all = p.trace.backends;
  all.push_back(kCpuId);
  return all;
}

// Pinned backend per node name (the engine already refused conflicting pins).
std::unordered_map<std::string, std::string> pin_map(const PartitionOptions& options) {
  std::unordered_map<std::string, std::string> pins;
  for (const Pin& p : options.capabilities.pins()) pins[p.node] = p.backend;
  return pins;
}

// String building without a stream: the report holds two reasons per node, so
// this runs hundreds of thousands of times on large graphs.
void append(std::string* out, const char* text) { out->append(text); }
void append(std::string* out, const std::string& text) { out->append(text); }
void append(std::string* out, int64_t number) { out->append(std::to_string(number)); }
void append(std::string* out, int32_t number) { out->append(std::to_string(number)); }

template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (append(&out, parts), ...);
  return out;
}

// A node in no region is dead (the engine leaves out nodes whose results reach no graph output).
bool is_dead(const Partitioned& p, graph::NodeId node) {
  return p.result.region_of_node[static_cast<size_t>(node)] < 0;
}
constexpr const char* kDeadReason = "dead: its results reach no graph output, so no backend runs it";

const std::string& backend_of(const Partitioned& p, graph::NodeId node) {
  static const std::string kNoBackend;
  int32_t r = p.result.region_of_node[static_cast<size_t>(node)];
  return r < 0 ? kNoBackend : p.result.regions[static_cast<size_t>(r)].backend;
}

// Index of `id` in the trace's backends (its NodeTrace slot), or -1.
int32_t slot_of(const Partitioned& p, const std::string& id) {
  for (size_t i = 0; i < p.trace.backends.size(); ++i) {
    if (p.trace.backends[i] == id) return static_cast<int32_t>(i);
  }
  return -1;
}

// Position of `id` in the order backends took regions (the end if absent).
size_t rank_of(const Partitioned& p, const std::string& id) {
  auto it = std::find(p.trace.order.begin(), p.trace.order.end(), id);
  return static_cast<size_t>(it - p.trace.order.begin());
}

std::string reason(const graph::Graph& graph, const PartitionOptions& options, const Partitioned& p,
                   const std::unordered_map<std::string, std::string>& pins, graph::NodeId node,
                   const std::string& b) {
  if (is_dead(p, node)) return kDeadReason;
  const std::string& taken = backend_of(p, node);
  if (b == taken) return "";
  if (b == kCpuId) return cat("delegated to ", taken);
  const graph::Node& n = graph.node(node);
  if (!pins.empty()) {
    auto pin = pins.find(n.name);
    if (pin != pins.end() && pin->second != b) return cat("pinned to ", pin->second, " by user");
  }
  Verdict v = options.capabilities.verdict(b, graph, node);
  if (v.kind == Verdict::Kind::kDenied) return "denied by user";
  if (!v.ok()) return "unsupported: " + options.capabilities.support(b, graph, node).reason;
  const NodeTrace& t = p.trace.nodes[static_cast<size_t>(node)];
  int32_t bi = slot_of(p, b);
  if (bi < 0) return cat("not among the partitioner's backends (", b, ")");
  auto bs = static_cast<size_t>(bi);
  if (t.retry_pruned_size[bs] > 0) {
    return cat("pruned on retry: region of ", t.retry_pruned_size[bs], " nodes < min_partition_size ",
               options.min_partition_size);
  }
  if (t.pruned_size[bs] > 0) {
    return cat("pruned: region of ", t.pruned_size[bs], " nodes < min_partition_size ", options.min_partition_size);
  }
  const char* by_auto = p.trace.policy == Prefer::kAuto && options.backends.empty()
                            ? ", chosen by the auto cost model" : "";
  const bool labelling = p.trace.strategy == "cost_labelling";
  // Another GPU backend held the node when `b` made its regions, and pruned
  // it afterwards; without retry `b` never saw it.
  for (size_t o = 0; o < p.trace.backends.size(); ++o) {
    if (o == bs || t.pruned_size[o] == 0 || t.offered_on_retry[bs]) continue;
    const char* how = labelling ? "labelled for " : "taken first by ";
    return cat(how, p.trace.backends[o], " (", p.trace.strategy, by_auto,
               "), whose region was then pruned; retry_pruned is off");
  }
  if (labelling) return cat("placed on ", taken, " by the cost model (cost_labelling", by_auto, ")");
  if (taken != kCpuId && rank_of(p, taken) < rank_of(p, b)) {
    return cat("taken first by ", taken, " (", p.trace.strategy, by_auto, ")");
  }
  if (rank_of(p, b) == p.trace.order.size()) return cat("not in the preference list (", p.trace.strategy, ")");
  // Not reached for results of the engine: a free, supported node is always
  // taken by an ordered pass unless pruned or pinned.
  return cat("left to ", taken);
}

}  // namespace

std::string why_not(const graph::Graph& graph, const PartitionOptions& options, const Partitioned& partitioned,
                    graph::NodeId node, const std::string& backend) {
  if (node < 0 || static_cast<size_t>(node) >= partitioned.result.region_of_node.size()) return "";
  return reason(graph, options, partitioned, pin_map(options), node, backend);
}

std::string explain_json(const graph::Graph& graph, const PartitionOptions& options, const Partitioned& p) {
  const auto& nodes = graph.nodes();
  const PartitionResult& result = p.result;
  auto pins = pin_map(options);
  JsonWriter w;
  w.begin_object();
  w.field("format", "gpuu.partition.explain/1");
  w.field("policy", to_string(options.prefer));
  w.field("strategy", p.trace.strategy);

  w.key("options").begin_object();
  w.field("prefer", to_string(options.prefer));
  w.field("min_partition_size", options.min_partition_size);
  w.field("retry_pruned", options.retry_pruned);
  w.key("backends").begin_array();
  for (const std::string& id : options.backends) w.value(id);
  w.end_array();
  w.key("deny").begin_array();
  for (const Denial& d : options.capabilities.denials()) {
    w.begin_object().field("backend", d.backend).field("op", d.op).end_object();
  }
  w.end_array();
  w.key("pins").begin_array();
  for (const Pin& pin : options.capabilities.pins()) {
    w.begin_object().field("node", pin.node).field("backend", pin.backend).end_object();
  }
  w.end_array();
  const CostModel cm = options.cost.resolved(options.capabilities.backends());
  const std::vector<std::string> all = all_backends(p);
  w.key("cost_model").begin_object();
  w.key("op_cost").begin_object();
  for (const std::string& b : all) w.field(b, cm.node_cost("", b));
  w.end_object();
  w.key("per_op").begin_object();
  for (const auto& [op, costs] : cm.per_op) {  // std::map: sorted, deterministic
    w.key(op).begin_object();
    for (const auto& [b, cost] : costs) w.field(b, cost);
    w.end_object();
  }
  w.end_object();
  w.field("gpu_crossing", cm.gpu_crossing);
  w.field("cpu_crossing", cm.cpu_crossing);
  w.field("gpu_region", cm.gpu_region);
  w.end_object();
  w.end_object();  // options

  if (!p.trace.candidates.empty()) {
    w.key("auto").begin_object();
    w.key("candidates").begin_array();
    for (const auto& [strategy, cost] : p.trace.candidates) {
      w.begin_object().field("strategy", strategy).field("estimated_cost", cost).end_object();
    }
    w.end_array();
    w.field("chosen", p.trace.strategy);
    w.end_object();
  }
  w.field("estimated_cost", estimate_cost(graph, result, cm));

  // Values entering and leaving each region: (region, value) pairs, deduplicated.
  std::vector<std::pair<int32_t, graph::ValueId>> ins, outs;
  for (size_t n = 0; n < nodes.size(); ++n) {
    int32_t r = result.region_of_node[n];
    if (r < 0) continue;  // dead: reads nothing any region hands over
    for (graph::ValueId v : nodes[n].inputs) {
      if (v < 0) continue;  // an optional input left out
      const graph::Value& value = graph.value(v);
      if (value.constant >= 0) continue;  // constants live with the region that reads them
      int32_t rp = value.producer >= 0 ? result.region_of_node[static_cast<size_t>(value.producer)] : -1;
      if (rp == r) continue;
      ins.emplace_back(r, v);
      if (rp >= 0) outs.emplace_back(rp, v);
    }
  }
  for (graph::ValueId v : graph.results()) {
    if (v < 0 || static_cast<size_t>(v) >= graph.values().size()) continue;
    graph::NodeId producer = graph.value(v).producer;
    if (producer >= 0 && static_cast<size_t>(producer) < nodes.size()) {
      outs.emplace_back(result.region_of_node[static_cast<size_t>(producer)], v);
    }
  }
  auto count_per_region = [&](std::vector<std::pair<int32_t, graph::ValueId>>& pairs) {
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::vector<int64_t> counts(result.regions.size(), 0);
    for (const auto& pr : pairs) counts[static_cast<size_t>(pr.first)]++;
    return counts;
  };
  std::vector<int64_t> in_counts = count_per_region(ins);
  std::vector<int64_t> out_counts = count_per_region(outs);

  w.key("summary").begin_object();
  w.field("nodes", static_cast<int64_t>(nodes.size()));
  w.field("regions", static_cast<int64_t>(result.regions.size()));
  w.field("dead_nodes", static_cast<int64_t>(std::count(result.region_of_node.begin(), result.region_of_node.end(), -1)));
  w.key("backends").begin_object();
  for (const std::string& b : all) {
    int64_t regions = 0, count = 0;
    for (const Region& r : result.regions) {
      if (r.backend != b) continue;
      ++regions;
      count += static_cast<int64_t>(r.nodes.size());
    }
    w.key(b).begin_object().field("regions", regions).field("nodes", count).end_object();
  }
  w.end_object();
  w.end_object();

  w.key("regions").begin_array();
  for (size_t r = 0; r < result.regions.size(); ++r) {
    const Region& region = result.regions[r];
    w.begin_object();
    w.field("index", static_cast<int64_t>(r));
    w.field("backend", region.backend);
    w.field("node_count", static_cast<int64_t>(region.nodes.size()));
    if (!region.nodes.empty()) {
      w.field("first_node", nodes[static_cast<size_t>(region.nodes.front())].name);
      w.field("last_node", nodes[static_cast<size_t>(region.nodes.back())].name);
    }
    w.field("custom_shader", region.nodes.size() == 1 &&
                                 Capabilities::is_custom_shader(nodes[static_cast<size_t>(region.nodes.front())]));
    w.field("inputs", in_counts[r]);
    w.field("outputs", out_counts[r]);
    w.end_object();
  }
  w.end_array();

  // Program states: which regions read each one and which computes its update.
  w.key("states").begin_array();
  for (const graph::State& state : graph.states()) {
    const graph::Value& v = graph.value(state.value);
    w.begin_object();
    w.field("name", v.name);
    w.field("dtype", graph::dtype_name(v.dtype));
    w.key("shape").begin_array();
    for (int64_t d : v.shape) w.value(d);
    w.end_array();
    w.field("update", state.update >= 0 ? graph.value(state.update).name : std::string());
    std::vector<int32_t> read_by;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (std::count(nodes[n].inputs.begin(), nodes[n].inputs.end(), state.value)) {
        read_by.push_back(result.region_of_node[n]);
      }
    }
    std::sort(read_by.begin(), read_by.end());
    read_by.erase(std::unique(read_by.begin(), read_by.end()), read_by.end());
    w.key("read_by_regions").begin_array();
    for (int32_t r : read_by) w.value(r);
    w.end_array();
    // -1: the update is a graph input, computed by no region.
    graph::NodeId producer = state.update >= 0 ? graph.value(state.update).producer : graph::kNone;
    w.field("updated_by_region", producer >= 0 ? result.region_of_node[static_cast<size_t>(producer)] : -1);
    w.end_object();
  }
  w.end_array();

  w.key("nodes").begin_array();
  for (size_t n = 0; n < nodes.size(); ++n) {
    auto id = static_cast<graph::NodeId>(n);
    const std::string& taken = backend_of(p, id);
    w.begin_object();
    w.field("index", static_cast<int64_t>(n));
    w.field("name", nodes[n].name);
    w.field("op", nodes[n].op);
    if (is_dead(p, id)) {
      w.key("backend").null();
    } else {
      w.field("backend", taken);
    }
    w.field("region", result.region_of_node[n]);
    w.key("why_not").begin_object();
    for (const std::string& b : all) {
      if (b != taken) w.field(b, reason(graph, options, p, pins, id, b));
    }
    w.end_object();
    const NodeTrace& t = p.trace.nodes[n];
    // The last backend the node was offered to on retry, in preference order.
    std::string offered;
    for (const std::string& b : p.trace.order) {
      int32_t bi = slot_of(p, b);
      if (bi >= 0 && t.offered_on_retry[static_cast<size_t>(bi)]) offered = b;
    }
    if (!offered.empty()) {
      std::string outcome = offered == taken ? "taken" : reason(graph, options, p, pins, id, offered);
      w.field("retry", str_cat("offered to ", offered, " after pruning: ", outcome));
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace gpuu::partition
