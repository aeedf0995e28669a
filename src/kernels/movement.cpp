// Element maps of static movement ops and their composition.
#include "kernels/movement.h"

#include <cstring>
#include <optional>

#include "graph/op_registry.h"

namespace gpuu::kernels {
namespace {

// The node's constant index tensor as int64, each in [0, dim); nullopt when
// it is not constant or holds an index the op would refuse.
std::optional<std::vector<int64_t>> constant_indices(const graph::Graph& g, const graph::Node& n, int64_t dim) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return std::nullopt;
  const graph::Value& index = g.value(n.inputs[1]);
  if (index.constant < 0 || (index.dtype != graph::DType::kI32 && index.dtype != graph::DType::kI64)) {
    return std::nullopt;
  }
  const Blob& data = g.constants()[static_cast<size_t>(index.constant)].data;
  const int64_t count = graph::shape_numel(index.shape);
  const size_t esize = graph::dtype_size(index.dtype);
  if (data.size() < static_cast<size_t>(count) * esize) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (esize == 4) {
      int32_t w;
      std::memcpy(&w, data.data() + i * 4, 4);
      v = w;
    } else {
      std::memcpy(&v, data.data() + i * 8, 8);
    }
    if (v < 0 || v >= dim) return std::nullopt;
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

// Output element -> input element (of input 0) for one node, or nullopt
// where the node is no static movement.
std::optional<std::vector<int64_t>> element_map(const graph::Graph& g, const graph::Node& n) {
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return std::nullopt;
  const graph::Value& x = g.value(n.inputs[0]);
  const graph::Value& y = g.value(n.outputs[0]);
  if (x.dtype != y.dtype) return std::nullopt;
  const int64_t count = graph::shape_numel(y.shape);
  std::vector<int64_t> map(static_cast<size_t>(count));
  if (n.op == "reshape") {
    if (graph::shape_numel(x.shape) != count) return std::nullopt;
    for (int64_t i = 0; i < count; ++i) map[static_cast<size_t>(i)] = i;
    return map;
  }
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok()) return std::nullopt;
  const std::vector<int64_t> xs = graph::row_major_strides(x.shape);
  const size_t rank = y.shape.size();
  std::vector<int64_t> per_dim(rank, 0);  // input offset per unit step of each output dim
  size_t axis = rank;                     // the indexed axis, if any
  std::vector<int64_t> index;
  bool gather = false;
  if (n.op == "transpose") {
    std::vector<int64_t> perm = graph::attr_ints(attrs.value(), "perm");
    if (perm.size() != rank || x.shape.size() != rank) return std::nullopt;
    for (size_t d = 0; d < rank; ++d) {
      if (perm[d] < 0 || static_cast<size_t>(perm[d]) >= rank) return std::nullopt;
      per_dim[d] = xs[static_cast<size_t>(perm[d])];
    }
  } else if (n.op == "index_select" || n.op == "gather") {
    if (x.shape.size() != rank) return std::nullopt;
    axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs.value(), "axis"), rank));
    if (axis >= rank) return std::nullopt;
    std::optional<std::vector<int64_t>> idx = constant_indices(g, n, x.shape[axis]);
    if (!idx) return std::nullopt;
    index = std::move(*idx);
    gather = n.op == "gather";
    if (gather ? static_cast<int64_t>(index.size()) != count : static_cast<int64_t>(index.size()) != y.shape[axis]) {
      return std::nullopt;
    }
    for (size_t d = 0; d < rank; ++d) per_dim[d] = d == axis ? 0 : xs[d];
  } else {
    return std::nullopt;
  }
  std::vector<int64_t> c(rank, 0);  // output coordinates of element i
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += c[d] * per_dim[d];
    if (axis < rank) src += index[static_cast<size_t>(gather ? i : c[axis])] * xs[axis];
    map[static_cast<size_t>(i)] = src;
    for (size_t d = rank; d-- > 0;) {
      if (++c[d] < y.shape[d]) break;
      c[d] = 0;
    }
  }
  return map;
}

}  // namespace

std::vector<MovementChain> find_movement_chains(const graph::Graph& g, int64_t max_elements) {
  const size_t n = g.nodes().size();
  std::vector<int> readers(g.values().size(), 0);
  std::vector<graph::NodeId> reader(g.values().size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (graph::ValueId in : g.nodes()[i].inputs) {
      if (in < 0) continue;
      ++readers[static_cast<size_t>(in)];
      reader[static_cast<size_t>(in)] = static_cast<graph::NodeId>(i);
    }
  }
  std::vector<char> is_output(g.values().size(), 0);
  for (graph::ValueId out : g.outputs()) is_output[static_cast<size_t>(out)] = 1;
  std::vector<std::optional<std::vector<int64_t>>> maps(n);
  for (size_t i = 0; i < n; ++i) {
    const graph::Node& node = g.nodes()[i];
    if (node.outputs.size() == 1 && graph::shape_numel(g.value(node.outputs[0]).shape) <= max_elements &&
        graph::shape_numel(g.value(node.inputs.empty() || node.inputs[0] < 0 ? node.outputs[0] : node.inputs[0]).shape) <
            (int64_t{1} << 31)) {
      maps[i] = element_map(g, node);
    }
  }
  // The node a static movement node hands its value to, if that one continues the chain.
  auto next_of = [&](size_t i) -> int {
    graph::ValueId v = g.nodes()[i].outputs[0];
    if (readers[static_cast<size_t>(v)] != 1 || is_output[static_cast<size_t>(v)]) return -1;
    auto r = static_cast<size_t>(reader[static_cast<size_t>(v)]);
    if (!maps[r] || g.nodes()[r].inputs[0] != v) return -1;
    return static_cast<int>(r);
  };
  std::vector<char> has_previous(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (maps[i] && next_of(i) >= 0) has_previous[static_cast<size_t>(next_of(i))] = 1;
  }
  std::vector<MovementChain> chains;
  for (size_t i = 0; i < n; ++i) {
    if (!maps[i] || has_previous[i] || next_of(i) < 0) continue;
    MovementChain chain;
    for (int at = static_cast<int>(i); at >= 0; at = next_of(static_cast<size_t>(at))) {
      chain.nodes.push_back(static_cast<graph::NodeId>(at));
    }
    // total[i] = m1[m2[...mK[i]]]: apply the last map first.
    std::vector<int64_t> total = *maps[static_cast<size_t>(chain.nodes.back())];
    for (size_t k = chain.nodes.size() - 1; k-- > 0;) {
      const std::vector<int64_t>& m = *maps[static_cast<size_t>(chain.nodes[k])];
      for (int64_t& t : total) t = m[static_cast<size_t>(t)];
    }
    chain.map.assign(total.begin(), total.end());
    // Reshapes alone cost nothing (they are views): compose only where two
    // or more ops would each have been a dispatch.
    size_t dispatches = 0;
    for (graph::NodeId id : chain.nodes) dispatches += g.node(id).op != "reshape";
    if (dispatches >= 2) chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace gpuu::kernels
