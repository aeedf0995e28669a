// Helpers shared by the partition tests: terse graph building (graph::Graph
// directly, no registry), the RFC's UnifiedVgfVulkanModel, a seeded random DAG
// generator, and an independent checker of every partition invariant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "backends/vgf/vgf_capability.h"
#include "backends/vulkan/vulkan_capability.h"
#include "graph/graph.h"
#include "partition/capabilities.h"
#include "partition/partitioner.h"

namespace gpuu::partition::testing_util {

// The built-in backends' own declarations, VGF then Vulkan (the runtime's
// registration order), not narrowed: what these tests partition over.
inline Capabilities builtin_capabilities() {
  return Capabilities({&vgf::vgf_capability(), &vulkan::vulkan_capability()});
}
inline PartitionOptions builtin_options() {
  PartitionOptions o;
  o.capabilities = builtin_capabilities();
  return o;
}

using graph::DType;
using graph::NodeId;
using graph::Shape;
using graph::ValueId;

class GraphMaker {
 public:
  graph::Graph g;

  ValueId input(const std::string& name, DType dtype, Shape shape) {
    return g.add_input(name, dtype, std::move(shape));
  }

  ValueId constant(const std::string& name, DType dtype, Shape shape) {
    std::vector<uint8_t> bytes(static_cast<size_t>(graph::shape_numel(shape)) * graph::dtype_size(dtype), 0);
    return g.add_constant(name, dtype, std::move(shape), Blob::take(std::move(bytes)));
  }

  // One node with one output named "<name>:0".
  ValueId op(const std::string& op, const std::string& name, std::vector<ValueId> inputs, DType dtype, Shape shape,
             graph::AttrMap attrs = {}) {
    ValueId out = g.add_value(graph::Value{name + ":0", dtype, std::move(shape), graph::kNone, graph::kNone});
    g.add_node(graph::Node{name, op, std::move(inputs), {out}, std::move(attrs)});
    return out;
  }

  ValueId custom_shader(const std::string& name, std::vector<ValueId> inputs, DType dtype, Shape shape,
                        const std::string& domain = kVulkanCustomShaderDomain) {
    graph::AttrMap attrs;
    attrs["domain_name"] = domain;
    attrs["operator_name"] = std::string("MyComputeKernel");
    // A well-formed (if idle) GLSL shader: the Vulkan kernels' own check parses it.
    attrs["implementation_attrs"] =
        std::string(R"({"shader_language": "GLSL", "shader_code": "#version 450\nvoid main() {}"})");
    attrs["num_outputs"] = int64_t{1};
    return op("custom_shader", name, std::move(inputs), dtype, std::move(shape), std::move(attrs));
  }

  NodeId node_id(const std::string& name) const {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      if (g.nodes()[i].name == name) return static_cast<NodeId>(i);
    }
    return graph::kNone;
  }
};

// RFC UnifiedVgfVulkanModel: VGF-friendly prefix, an i64-indexed island that
// only Vulkan takes, VGF-friendly suffix.
inline GraphMaker rfc_model() {
  GraphMaker m;
  const Shape s8 = {1, 3, 8, 8}, s4 = {1, 3, 4, 4};
  ValueId x = m.input("x", DType::kF32, s8);
  ValueId channel_index = m.constant("channel_index", DType::kI64, {3});
  ValueId col_gather_index = m.constant("col_gather_index", DType::kI64, s4);
  ValueId row_index = m.constant("row_index", DType::kI64, {4});
  ValueId t0 = m.op("transpose", "transpose_0", {x}, DType::kF32, s8, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  ValueId pool = m.op("avg_pool2d", "avg_pool2d_0", {t0}, DType::kF32, s4, {{"kernel", std::vector<int64_t>{2, 2}}});
  ValueId is0 = m.op("index_select", "index_select_0", {pool, channel_index}, DType::kF32, s4, {{"axis", int64_t{1}}});
  ValueId g0 = m.op("gather", "gather_0", {is0, col_gather_index}, DType::kF32, s4, {{"axis", int64_t{3}}});
  ValueId is1 = m.op("index_select", "index_select_1", {g0, row_index}, DType::kF32, s4, {{"axis", int64_t{2}}});
  ValueId sin0 = m.op("sin", "sin_0", {is1}, DType::kF32, s4);
  ValueId cos0 = m.op("cos", "cos_0", {is1}, DType::kF32, s4);
  ValueId rec = m.op("reciprocal", "reciprocal_0", {cos0}, DType::kF32, s4);
  ValueId mul = m.op("mul", "mul_0", {sin0, rec}, DType::kF32, s4);
  ValueId t1 = m.op("transpose", "transpose_1", {mul}, DType::kF32, s4, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  m.g.mark_output(t1);
  return m;
}

// Region contents as node names, for readable expectations.
struct NamedRegion {
  std::string backend;
  std::vector<std::string> nodes;
  bool operator==(const NamedRegion& o) const { return backend == o.backend && nodes == o.nodes; }
};

inline std::vector<NamedRegion> named(const graph::Graph& g, const PartitionResult& r) {
  std::vector<NamedRegion> out;
  for (const Region& region : r.regions) {
    NamedRegion nr{region.backend, {}};
    for (NodeId n : region.nodes) nr.nodes.push_back(g.node(n).name);
    out.push_back(nr);
  }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const NamedRegion& r) {
  os << r.backend << "[";
  for (size_t i = 0; i < r.nodes.size(); ++i) os << (i ? "," : "") << r.nodes[i];
  return os << "]";
}

// SplitMix64: a tiny, seedable generator whose sequence is the same everywhere
// (std::uniform_int_distribution is not specified bit-for-bit across libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }

 private:
  uint64_t state_;
};

inline const std::vector<std::string>& all_op_names() {
  static const std::vector<std::string> ops = {
      "abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "relu", "gelu",
      "erf", "floor", "ceil", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "equal", "not_equal", "less",
      "less_equal", "greater", "greater_equal", "clamp", "where", "cast", "matmul", "linear", "conv2d", "avg_pool2d",
      "max_pool2d", "reduce_sum", "reduce_mean", "reduce_max", "softmax", "layer_norm", "transpose", "reshape",
      "slice", "concat", "pad", "gather", "index_select", "custom_shader"};
  return ops;
}

// A random DAG of `nodes` nodes: random ops (plus an op no backend knows and
// custom shaders with a good or a bad domain), random dtypes including i64
// and i8, fan-in 1..3 biased towards recent values (chains with skips), and
// some values read by many nodes. Values nobody reads are graph outputs, but
// with `dead_percent` > 0 about that share of them are not (their producers,
// and what only they read, become dead nodes); the last one always is.
inline GraphMaker random_graph(Rng& rng, size_t nodes, int dead_percent = 0) {
  GraphMaker m;
  static const DType kDtypes[] = {DType::kF32, DType::kF32, DType::kF32, DType::kF16, DType::kI32,
                                  DType::kI64, DType::kI8,  DType::kBool};
  std::vector<ValueId> values;
  size_t inputs = 1 + rng.below(3);
  for (size_t i = 0; i < inputs; ++i) {
    values.push_back(m.input("in" + std::to_string(i), kDtypes[rng.below(8)], {2, 4}));
  }
  ValueId idx32 = m.constant("idx32", DType::kI32, {2});
  ValueId idx64 = m.constant("idx64", DType::kI64, {2});
  const auto& ops = all_op_names();
  for (size_t n = 0; n < nodes; ++n) {
    std::string name = "n" + std::to_string(n);
    size_t pick = rng.below(ops.size() + 2);
    auto pick_value = [&]() {
      // Mostly the last few values (chains), sometimes anything (skips).
      if (rng.chance(70)) return values[values.size() - 1 - rng.below(std::min<size_t>(values.size(), 3))];
      return values[rng.below(values.size())];
    };
    std::vector<ValueId> in;
    size_t fan_in = 1 + rng.below(3);
    for (size_t i = 0; i < fan_in; ++i) in.push_back(pick_value());
    DType out_dtype = rng.chance(60) ? m.g.value(in[0]).dtype : kDtypes[rng.below(8)];
    ValueId out;
    if (pick == ops.size()) {
      out = m.op("mystery_op", name, in, out_dtype, {2, 4});
    } else if (pick == ops.size() + 1 || ops[pick] == "custom_shader") {
      out = m.custom_shader(name, in, out_dtype, {2, 4},
                            rng.chance(80) ? kVulkanCustomShaderDomain : "com.example.Other");
    } else if (ops[pick] == "gather" || ops[pick] == "index_select") {
      out = m.op(ops[pick], name, {in[0], rng.chance(50) ? idx32 : idx64}, m.g.value(in[0]).dtype, {2, 4},
                 {{"axis", int64_t{1}}});
    } else if (ops[pick] == "where") {
      in.resize(3, in[0]);
      out = m.op("where", name, in, m.g.value(in[1]).dtype, {2, 4});
    } else {
      out = m.op(ops[pick], name, in, out_dtype, {2, 4});
    }
    values.push_back(out);
  }
  auto consumers = m.g.consumers();
  for (size_t v = 0; v < m.g.values().size(); ++v) {
    if (m.g.values()[v].producer < 0 || !consumers[v].empty()) continue;
    const bool last = v + 1 == m.g.values().size();
    if (dead_percent == 0 || last || !rng.chance(dead_percent)) m.g.mark_output(static_cast<ValueId>(v));
  }
  return m;
}

// Node -> producers of its inputs.
inline std::vector<std::vector<NodeId>> node_preds(const graph::Graph& g) {
  std::vector<std::vector<NodeId>> preds(g.nodes().size());
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    for (ValueId v : g.nodes()[n].inputs) {
      if (v >= 0 && g.value(v).producer >= 0) preds[n].push_back(g.value(v).producer);
    }
  }
  return preds;
}

// Checks every invariant of partitioner.h on `r`; "" when all hold, else the
// first violation. `brute_force` adds an explicit path search for convexity
// (quadratic: small graphs only).
inline std::string check_invariants(const graph::Graph& g, const PartitionOptions& opt, const PartitionResult& r,
                                    bool brute_force) {
  const size_t n = g.nodes().size();
  if (r.region_of_node.size() != n) return "region_of_node has the wrong size";
  std::vector<int> seen(n, 0);
  for (size_t ri = 0; ri < r.regions.size(); ++ri) {
    const Region& region = r.regions[ri];
    if (region.nodes.empty()) return "region " + std::to_string(ri) + " is empty";
    for (size_t k = 0; k < region.nodes.size(); ++k) {
      NodeId v = region.nodes[k];
      if (v < 0 || static_cast<size_t>(v) >= n) return "region holds a bad node id";
      if (k > 0 && region.nodes[k - 1] >= v) return "nodes of region " + std::to_string(ri) + " not in graph order";
      seen[static_cast<size_t>(v)]++;
      if (r.region_of_node[static_cast<size_t>(v)] != static_cast<int32_t>(ri)) return "region_of_node disagrees";
    }
  }
  // Live nodes are in one region each, dead ones (results reaching no graph output) in none.
  const std::vector<uint8_t> live = g.live_nodes();
  for (size_t v = 0; v < n; ++v) {
    if (seen[v] != live[v]) {
      return std::string(live[v] ? "live" : "dead") + " node " + g.nodes()[v].name + " is in " +
             std::to_string(seen[v]) + " regions";
    }
    if (!live[v] && r.region_of_node[v] != -1) return "dead node " + g.nodes()[v].name + " has a region_of_node";
  }
  auto preds = node_preds(g);
  // Region order is topological: every edge stays or moves forward.
  for (size_t v = 0; v < n; ++v) {
    if (!live[v]) continue;
    for (NodeId p : preds[v]) {
      if (r.region_of_node[static_cast<size_t>(p)] > r.region_of_node[v]) {
        return "edge " + g.node(p).name + " -> " + g.nodes()[v].name + " goes backwards in region order";
      }
    }
  }
  // Pins honoured.
  for (const Pin& pin : opt.capabilities.pins()) {
    for (size_t v = 0; v < n; ++v) {
      if (g.nodes()[v].name == pin.node && live[v] &&
          r.regions[static_cast<size_t>(r.region_of_node[v])].backend != pin.backend) {
        return "pinned node " + pin.node + " is not on " + pin.backend;
      }
    }
  }
  std::vector<std::vector<NodeId>> succs(n);
  for (size_t v = 0; v < n; ++v) {
    for (NodeId p : preds[v]) succs[static_cast<size_t>(p)].push_back(static_cast<NodeId>(v));
  }
  for (size_t ri = 0; ri < r.regions.size(); ++ri) {
    const Region& region = r.regions[ri];
    if (region.backend == kCpuId) continue;
    bool has_pin = false, has_shader = false;
    for (NodeId v : region.nodes) {
      if (!opt.capabilities.verdict(region.backend, g, v).ok()) {
        return g.node(v).name + " is on " + region.backend + ", which cannot take it";
      }
      for (const Pin& pin : opt.capabilities.pins()) has_pin = has_pin || pin.node == g.node(v).name;
      has_shader = has_shader || Capabilities::is_custom_shader(g.node(v));
    }
    if (has_shader && region.nodes.size() != 1) return "a custom shader shares region " + std::to_string(ri);
    if (!has_shader && !has_pin && static_cast<int64_t>(region.nodes.size()) < opt.min_partition_size) {
      return "GPU region " + std::to_string(ri) + " has " + std::to_string(region.nodes.size()) +
             " nodes < min_partition_size";
    }
    // Connected (ignoring edge direction).
    std::vector<NodeId> stack = {region.nodes[0]};
    std::vector<char> reached(n, 0);
    reached[static_cast<size_t>(region.nodes[0])] = 1;
    size_t count = 0;
    while (!stack.empty()) {
      NodeId v = stack.back();
      stack.pop_back();
      ++count;
      for (const auto* list : {&preds[static_cast<size_t>(v)], &succs[static_cast<size_t>(v)]}) {
        for (NodeId w : *list) {
          if (!reached[static_cast<size_t>(w)] &&
              r.region_of_node[static_cast<size_t>(w)] == static_cast<int32_t>(ri)) {
            reached[static_cast<size_t>(w)] = 1;
            stack.push_back(w);
          }
        }
      }
    }
    if (count != region.nodes.size()) return "GPU region " + std::to_string(ri) + " is not connected";
  }
  if (brute_force) {
    // Convexity by definition: no path leaves a region and comes back.
    for (size_t ri = 0; ri < r.regions.size(); ++ri) {
      std::vector<char> outside_reached(n, 0);
      std::deque<NodeId> queue;
      for (NodeId v : r.regions[ri].nodes) {
        for (NodeId w : succs[static_cast<size_t>(v)]) {
          if (r.region_of_node[static_cast<size_t>(w)] != static_cast<int32_t>(ri) &&
              !outside_reached[static_cast<size_t>(w)]) {
            outside_reached[static_cast<size_t>(w)] = 1;
            queue.push_back(w);
          }
        }
      }
      while (!queue.empty()) {
        NodeId v = queue.front();
        queue.pop_front();
        for (NodeId w : succs[static_cast<size_t>(v)]) {
          if (r.region_of_node[static_cast<size_t>(w)] == static_cast<int32_t>(ri)) {
            return "region " + std::to_string(ri) + " is not convex: a path leaves it and re-enters at " +
                   g.node(w).name;
          }
          if (!outside_reached[static_cast<size_t>(w)]) {
            outside_reached[static_cast<size_t>(w)] = 1;
            queue.push_back(w);
          }
        }
      }
    }
  }
  return "";
}

}  // namespace gpuu::partition::testing_util
