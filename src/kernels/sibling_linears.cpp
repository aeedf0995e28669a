#include "kernels/sibling_linears.h"

#include <map>
#include <tuple>
#include <utility>

namespace gpuu::kernels {
namespace {

using graph::NodeId;
using graph::ValueId;

bool is_constant(const graph::Graph& g, ValueId v) { return v >= 0 && g.value(v).constant >= 0; }

bool has_bias(const graph::Node& node) { return node.inputs.size() > 2 && node.inputs[2] >= 0; }

// A linear a group may take: a constant [N, K] weight of the input's dtype,
// a constant bias or none, nothing that follows the graph's dims on N.
bool mergeable(const graph::Graph& g, const graph::Node& node) {
  if (node.op != "linear" || node.inputs.size() < 2 || node.outputs.size() != 1 || !node.attr_exprs.empty()) {
    return false;
  }
  const ValueId x = node.inputs[0], w = node.inputs[1];
  if (x < 0 || !is_constant(g, w) || is_constant(g, x)) return false;
  const graph::Value& weight = g.value(w);
  if (weight.shape.size() != 2 || weight.dtype != g.value(x).dtype) return false;
  if (has_bias(node) && (!is_constant(g, node.inputs[2]) || g.value(node.inputs[2]).shape.size() != 1)) return false;
  const graph::Value& y = g.value(node.outputs[0]);
  for (const graph::AxisExpr& e : y.dim_exprs) {
    if (static_cast<size_t>(e.axis) + 1 == y.shape.size()) return false;
  }
  return true;
}

// What `v` reshapes (through any chain of reshapes), or `v` itself: exported
// models flatten one hidden state once per projection, so siblings read
// equal reshapes of it rather than one value.
ValueId reshaped_from(const graph::Graph& g, ValueId v) {
  while (g.value(v).producer >= 0 && g.node(g.value(v).producer).op == "reshape") {
    v = g.node(g.value(v).producer).inputs[0];
  }
  return v;
}

// The group's constants (input `input` of each member) end to end, made as
// they are uploaded (a derived Blob): no host copy, and the kernel graphs of a
// program's sizes and sessions name one content, so they share one device copy.
Blob concat_constants(const graph::Graph& g, const std::vector<NodeId>& group, size_t input) {
  std::vector<Blob> parts;
  size_t bytes = 0;
  for (NodeId n : group) {
    parts.push_back(g.constants()[static_cast<size_t>(g.value(g.node(n).inputs[input]).constant)].data);
    bytes += parts.back().size();
  }
  return Blob::derived(std::move(parts), "concat", bytes, [](const std::vector<Blob>& parts, uint8_t* out) {
    for (const Blob& part : parts) {
      part.write_to(out);
      part.drop_file_pages();  // read once: not held beside what it made
      out += part.size();
    }
  });
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

}  // namespace

graph::Graph merge_sibling_linears(const graph::Graph& g) {
  if (!g.states().empty()) return g;
  // Groups: by input (or what it reshapes, at the same shape), depth and
  // whether biased, in node order; the first member's input feeds the group.
  std::map<std::tuple<ValueId, graph::Shape, int64_t, bool>, std::vector<NodeId>> by_key;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const graph::Node& node = g.node(static_cast<NodeId>(i));
    if (!mergeable(g, node)) continue;
    const ValueId x = node.inputs[0];
    by_key[{reshaped_from(g, x), g.value(x).shape, g.value(node.inputs[1]).shape[1], has_bias(node)}].push_back(
        static_cast<NodeId>(i));
  }
  std::vector<int> group_of(g.nodes().size(), -1);
  std::vector<std::vector<NodeId>> groups;
  for (auto& [key, members] : by_key) {
    if (members.size() < 2) continue;
    for (NodeId n : members) group_of[static_cast<size_t>(n)] = static_cast<int>(groups.size());
    groups.push_back(members);
  }
  if (groups.empty()) return g;

  graph::Graph out;
  std::vector<ValueId> map(g.values().size(), graph::kNone);
  auto fresh = [&](ValueId v) {
    const graph::Value& value = g.value(v);
    graph::Value copy{value.name, value.dtype, value.shape, graph::kNone, graph::kNone};
    copy.dim_exprs = value.dim_exprs;
    return map[static_cast<size_t>(v)] = out.add_value(std::move(copy));
  };
  for (ValueId v : g.inputs()) {
    map[static_cast<size_t>(v)] = out.add_input(g.value(v).name, g.value(v).dtype, g.value(v).shape);
    out.mutable_value(map[static_cast<size_t>(v)]).dim_exprs = g.value(v).dim_exprs;
  }
  // Constants are copied where some emitted node reads them: the merged
  // groups' own weights are not.
  auto read = [&](ValueId v) -> ValueId {
    if (v < 0) return v;
    if (map[static_cast<size_t>(v)] == graph::kNone && is_constant(g, v)) {
      const graph::Constant& c = g.constants()[static_cast<size_t>(g.value(v).constant)];
      map[static_cast<size_t>(v)] = out.add_constant(c.name, g.value(v).dtype, g.value(v).shape, c.data);
    }
    return map[static_cast<size_t>(v)];
  };
  auto emit = [&](graph::Node node) {
    for (ValueId& v : node.inputs) v = read(v);
    for (ValueId& v : node.outputs) v = fresh(v);
    out.add_node(std::move(node));
  };
  std::vector<char> emitted(groups.size(), 0);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const int group = group_of[i];
    if (group < 0) {
      emit(g.node(static_cast<NodeId>(i)));
      continue;
    }
    if (emitted[static_cast<size_t>(group)]) continue;  // made with the group's first member
    emitted[static_cast<size_t>(group)] = 1;
    const std::vector<NodeId>& members = groups[static_cast<size_t>(group)];
    const graph::Node& first = g.node(members[0]);
    const graph::Value& weight = g.value(first.inputs[1]);
    int64_t width = 0;
    std::vector<std::string> node_names, weight_names, bias_names, result_names;
    for (NodeId n : members) {
      const graph::Node& member = g.node(n);
      width += g.value(member.inputs[1]).shape[0];
      node_names.push_back(member.name);
      weight_names.push_back(g.value(member.inputs[1]).name);
      if (has_bias(member)) bias_names.push_back(g.value(member.inputs[2]).name);
      result_names.push_back(g.value(member.outputs[0]).name);
    }
    const ValueId merged_weight =
        out.add_constant(joined_names(weight_names), weight.dtype, {width, weight.shape[1]}, concat_constants(g, members, 1));
    graph::Node linear{joined_names(node_names), "linear", {read(first.inputs[0]), merged_weight}, {}, first.attrs, {}};
    if (has_bias(first)) {
      linear.inputs.push_back(out.add_constant(joined_names(bias_names), g.value(first.inputs[2]).dtype, {width},
                                               concat_constants(g, members, 2)));
    }
    const graph::Value& y = g.value(first.outputs[0]);
    graph::Value merged{joined_names(result_names), y.dtype, y.shape, graph::kNone, graph::kNone};
    merged.shape.back() = width;
    merged.dim_exprs = y.dim_exprs;
    const ValueId merged_y = out.add_value(std::move(merged));
    linear.outputs = {merged_y};
    out.add_node(std::move(linear));
    // Each member's result: its columns of the merged one.
    const auto last_axis = static_cast<int64_t>(y.shape.size()) - 1;
    int64_t start = 0;
    for (NodeId n : members) {
      const graph::Node& member = g.node(n);
      const int64_t n_cols = g.value(member.inputs[1]).shape[0];
      graph::AttrMap attrs = {{"axes", std::vector<int64_t>{last_axis}},
                              {"starts", std::vector<int64_t>{start}},
                              {"ends", std::vector<int64_t>{start + n_cols}},
                              {"steps", std::vector<int64_t>{1}}};
      out.add_node(graph::Node{member.name, "slice", {merged_y}, {fresh(member.outputs[0])}, std::move(attrs), {}});
      start += n_cols;
    }
  }
  for (ValueId v : g.outputs()) out.mark_output(read(v));
  out.set_dims(g.dims());
  return out;
}

}  // namespace gpuu::kernels
