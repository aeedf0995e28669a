// Element maps of static movement ops and their composition.
#include "kernels/movement.h"

#include <algorithm>
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

// The ops element_map knows (it may still refuse one: indices not constant, ...).
bool could_be_static_movement(const graph::Node& n) {
  return n.op == "reshape" || n.op == "transpose" || n.op == "index_select" || n.op == "gather";
}

// Output element -> input element (of input 0) for a node of an op
// could_be_static_movement names, or nullopt where it is no static movement.
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

// A strided tensor: element idx at offset + sum_d idx[d] * strides[d].
struct Strided {
  graph::Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Strides of `shape` viewing the same elements as (`from`, `strides`) in row-major
// order, or nullopt where no strides do (PyTorch's rule for view(): each run of
// input dims that is contiguous in memory may be split or merged freely).
std::optional<std::vector<int64_t>> reshape_strides(const graph::Shape& from, const std::vector<int64_t>& strides,
                                                    const graph::Shape& to) {
  if (graph::shape_numel(to) == 0 || from.empty()) return graph::row_major_strides(to);
  std::vector<int64_t> out(to.size(), 0);
  int64_t view_d = static_cast<int64_t>(to.size()) - 1;
  int64_t chunk_stride = strides.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(from.size()) - 1; d >= 0; --d) {
    tensor_numel *= from[static_cast<size_t>(d)];
    // A chunk ends where the next dim out is not laid out right after it.
    if (d == 0 || (from[static_cast<size_t>(d - 1)] != 1 &&
                   strides[static_cast<size_t>(d - 1)] != tensor_numel * chunk_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || to[static_cast<size_t>(view_d)] == 1)) {
        out[static_cast<size_t>(view_d)] = view_numel * chunk_stride;
        view_numel *= to[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_stride = strides[static_cast<size_t>(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool is_view_op(const graph::Node& n) {
  return (n.op == "reshape" || n.op == "transpose" || n.op == "slice" || n.op == "expand") && !n.inputs.empty() &&
         n.inputs[0] >= 0 && n.outputs.size() == 1;
}

}  // namespace

bool keeps_memory_order(const graph::Graph& g, const graph::Node& n) {
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return false;
  if (n.op == "reshape") return true;
  if (n.op != "transpose") return false;
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok() || !graph::has_attr(*attrs, "perm")) return false;
  const std::vector<int64_t> perm = graph::attr_ints(*attrs, "perm");
  const graph::Shape& in = g.value(n.inputs[0]).shape;
  int64_t last = -1;  // the input dim of the previous output dim of size > 1
  for (int64_t d : perm) {
    if (d < 0 || d >= static_cast<int64_t>(in.size())) return false;
    if (in[static_cast<size_t>(d)] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

namespace {

// The strided output of view op `n` over the strided input `in`.
std::optional<Strided> through(const graph::Graph& g, const graph::Node& n, const Strided& in) {
  const graph::Shape& out_shape = g.value(n.outputs[0]).shape;
  Strided out{out_shape, {}, in.offset};
  if (n.op == "reshape") {
    std::optional<std::vector<int64_t>> s = reshape_strides(in.shape, in.strides, out_shape);
    if (!s) return std::nullopt;
    out.strides = std::move(*s);
    return out;
  }
  if (n.op == "expand") {
    // Dims aligned at the right; an expanded dim (1 -> n) reads one element: stride 0.
    if (out_shape.size() < in.shape.size()) return std::nullopt;
    const size_t lead = out_shape.size() - in.shape.size();
    out.strides.assign(out_shape.size(), 0);
    for (size_t k = 0; k < in.shape.size(); ++k) {
      if (in.shape[k] == out_shape[lead + k]) out.strides[lead + k] = in.strides[k];
    }
    return out;
  }
  Result<graph::AttrMap> attrs = graph::resolve_attrs(n);
  if (!attrs.ok()) return std::nullopt;
  if (n.op == "transpose") {
    std::vector<int64_t> perm = graph::attr_ints(attrs.value(), "perm");
    if (perm.size() != in.shape.size()) return std::nullopt;
    for (int64_t p : perm) out.strides.push_back(in.strides[static_cast<size_t>(p)]);
    return out;
  }
  // slice: each sliced axis starts further in and steps further.
  out.strides = in.strides;
  std::vector<int64_t> axes = graph::attr_ints(attrs.value(), "axes"), starts = graph::attr_ints(attrs.value(), "starts"),
                       steps = graph::attr_ints(attrs.value(), "steps");
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = static_cast<size_t>(graph::normalize_axis(axes[i], in.shape.size()));
    const int64_t dim = in.shape[a];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    start = std::min(std::max(start, int64_t{0}), dim);
    if (out_shape[a] > 0) out.offset += start * in.strides[a];
    out.strides[a] = in.strides[a] * steps[i];
  }
  return out;
}

// The ways to read `value` as a strided view of a value further up its chain
// of view ops, the furthest root first.
std::vector<StridedView> view_candidates(const graph::Graph& g, graph::ValueId value) {
  std::vector<graph::NodeId> chain;  // value's producer first
  for (graph::ValueId v = value; g.value(v).producer != graph::kNone;) {
    const graph::Node& n = g.node(g.value(v).producer);
    if (!is_view_op(n)) break;
    chain.push_back(g.value(v).producer);
    v = n.inputs[0];
  }
  std::vector<StridedView> out;
  for (size_t depth = chain.size(); depth > 0; --depth) {
    graph::ValueId root = g.node(chain[depth - 1]).inputs[0];
    const graph::Shape& shape = g.value(root).shape;
    std::optional<Strided> s = Strided{shape, graph::row_major_strides(shape), 0};
    for (size_t k = depth; k-- > 0 && s;) s = through(g, g.node(chain[k]), *s);
    if (s) out.push_back(StridedView{root, s->offset, std::move(s->strides)});
  }
  return out;
}

}  // namespace

ViewPlan plan_views(const graph::Graph& g, const std::vector<char>& as_themselves,
                    const std::vector<TakesView>& lowered_with) {
  const size_t values = g.values().size(), nodes = g.nodes().size();
  ViewPlan plan;
  plan.views.resize(values);
  plan.skipped.assign(nodes, 0);
  // Every (reader, slot) of each value.
  std::vector<std::vector<std::pair<graph::NodeId, size_t>>> readers(values);
  for (size_t i = 0; i < nodes; ++i) {
    const std::vector<graph::ValueId>& ins = g.nodes()[i].inputs;
    for (size_t slot = 0; slot < ins.size(); ++slot) {
      if (ins[slot] >= 0) readers[static_cast<size_t>(ins[slot])].emplace_back(static_cast<graph::NodeId>(i), slot);
    }
  }
  // Whether `reader`'s kernel reads through views at all, and this one.
  auto takes_view = [&](graph::NodeId reader) -> TakesView {
    const auto r = static_cast<size_t>(reader);
    if (r < as_themselves.size() && as_themselves[r]) return nullptr;
    if (r < lowered_with.size() && lowered_with[r]) return lowered_with[r];
    const OpKernel* k = find_op_kernel(g.node(reader).op);
    return k ? k->takes_view : nullptr;
  };
  auto taker = [&](graph::NodeId reader) { return takes_view(reader) != nullptr; };
  auto takes = [&](graph::NodeId reader, size_t slot, const StridedView& view) {
    const TakesView f = takes_view(reader);
    return f && f(g, g.node(reader), slot, view);
  };
  for (size_t v = 0; v < values; ++v) {
    bool any_taker = false;
    for (const auto& [reader, slot] : readers[v]) any_taker |= taker(reader);
    if (!any_taker) continue;
    for (StridedView& view : view_candidates(g, static_cast<graph::ValueId>(v))) {
      bool all_take = true;
      for (const auto& [reader, slot] : readers[v]) {
        if (taker(reader)) all_take = all_take && takes(reader, slot, view);
      }
      if (all_take) {
        plan.views[v] = std::move(view);
        break;
      }
    }
  }
  // Region outputs and the roots views read are kept in memory.
  std::vector<char> kept(values, 0);
  for (graph::ValueId out : g.outputs()) kept[static_cast<size_t>(out)] = 1;
  for (const StridedView& view : plan.views) {
    if (view.root != graph::kNone) kept[static_cast<size_t>(view.root)] = 1;
  }
  // Graph order is topological: walking it backwards sees every reader of a
  // node's result before the node.
  for (size_t i = nodes; i-- > 0;) {
    const graph::Node& n = g.nodes()[i];
    if (!is_view_op(n)) continue;
    const auto out = static_cast<size_t>(n.outputs[0]);
    if (kept[out] || readers[out].empty()) continue;
    bool needed = false;
    for (const auto& [reader, slot] : readers[out]) {
      bool via_view = plan.views[out].root != graph::kNone && taker(reader);
      needed = needed || (!plan.skipped[static_cast<size_t>(reader)] && !via_view);
    }
    plan.skipped[i] = needed ? 0 : 1;
  }
  return plan;
}

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
  // Nodes whose map may be made: the ops element_map knows, within the size limits.
  std::vector<char> candidate(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const graph::Node& node = g.nodes()[i];
    candidate[i] = could_be_static_movement(node) && node.outputs.size() == 1 && !node.inputs.empty() &&
                   node.inputs[0] >= 0 && graph::shape_numel(g.value(node.outputs[0]).shape) <= max_elements &&
                   graph::shape_numel(g.value(node.inputs[0]).shape) < (int64_t{1} << 31);
  }
  // The node a static movement node hands its value to, if that one continues
  // the chain (`usable`: the nodes that may be in one).
  auto next_in = [&](const auto& usable, size_t i) -> int {
    graph::ValueId v = g.nodes()[i].outputs[0];
    if (readers[static_cast<size_t>(v)] != 1 || is_output[static_cast<size_t>(v)]) return -1;
    auto r = static_cast<size_t>(reader[static_cast<size_t>(v)]);
    if (!usable[r] || g.nodes()[r].inputs[0] != v) return -1;
    return static_cast<int>(r);
  };
  // Maps (one int64 per element, the whole tensor) only for the nodes of
  // runs of candidates that hold two or more dispatching ops: a chain is part
  // of one such run, and most movement nodes are in none (a lone transpose,
  // reshapes between kernels).
  std::vector<std::optional<std::vector<int64_t>>> maps(n);
  std::vector<char> in_run(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int next = candidate[i] ? next_in(candidate, i) : -1;
    if (next >= 0) in_run[static_cast<size_t>(next)] = 1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!candidate[i] || in_run[i]) continue;  // runs from their first node
    std::vector<size_t> run;
    size_t dispatches = 0;
    for (int at = static_cast<int>(i); at >= 0; at = next_in(candidate, static_cast<size_t>(at))) {
      run.push_back(static_cast<size_t>(at));
      dispatches += g.nodes()[static_cast<size_t>(at)].op != "reshape";
    }
    if (run.size() < 2 || dispatches < 2) continue;
    for (size_t r : run) maps[r] = element_map(g, g.nodes()[r]);
  }
  auto next_of = [&](size_t i) { return next_in(maps, i); };
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
