// The graph verifier: structure first (ids, names, single producers, order),
// then each node's inference against what the graph stores.
#include "graph/verifier.h"

#include <unordered_map>
#include <vector>

#include "graph/op_registry.h"

namespace gpuu::graph {
namespace {

template <typename... Parts>
Status invalid(const Parts&... parts) {
  return err(StatusCode::kInvalidArgument, parts...);
}

std::string value_label(const Graph& g, ValueId id) {
  return "value " + std::to_string(id) + " ('" + g.value(id).name + "')";
}

bool valid_id(const Graph& g, ValueId id) { return id >= 0 && static_cast<size_t>(id) < g.values().size(); }

Status verify_values(const Graph& g) {
  std::unordered_map<std::string, ValueId> seen;
  for (size_t i = 0; i < g.values().size(); ++i) {
    ValueId id = static_cast<ValueId>(i);
    const Value& v = g.value(id);
    if (v.name.empty()) return invalid("value ", id, " has an empty name");
    auto [it, fresh] = seen.emplace(v.name, id);
    if (!fresh) return invalid("value name '", v.name, "' is used by values ", it->second, " and ", id);
    if (static_cast<int>(v.dtype) >= kDTypeCount) {
      return invalid(value_label(g, id), " has unknown dtype ", static_cast<int>(v.dtype));
    }
    std::string why = shape_problem(v.shape);
    if (!why.empty()) return invalid(value_label(g, id), " has a bad shape ", shape_to_string(v.shape), ": ", why);
    if (v.constant != kNone && (v.constant < 0 || static_cast<size_t>(v.constant) >= g.constants().size() ||
                                g.constants()[static_cast<size_t>(v.constant)].value != id)) {
      return invalid(value_label(g, id), " claims constant ", v.constant, ", which does not point back at it");
    }
    if (v.state != kNone && (v.state < 0 || static_cast<size_t>(v.state) >= g.states().size() ||
                             g.states()[static_cast<size_t>(v.state)].value != id)) {
      return invalid(value_label(g, id), " claims state ", v.state, ", which does not point back at it");
    }
  }
  return Status::Ok();
}

Status verify_constants(const Graph& g) {
  for (size_t c = 0; c < g.constants().size(); ++c) {
    const Constant& k = g.constants()[c];
    if (!valid_id(g, k.value)) return invalid("constant ", c, " ('", k.name, "') has bad value id ", k.value);
    const Value& v = g.value(k.value);
    if (v.constant != static_cast<int32_t>(c)) {
      return invalid("constant ", c, " ('", k.name, "'): ", value_label(g, k.value), " does not point back at it");
    }
    if (k.name != v.name) return invalid("constant ", c, " is named '", k.name, "' but its value is '", v.name, "'");
    uint64_t expected = static_cast<uint64_t>(shape_numel(v.shape)) * dtype_size(v.dtype);
    if (k.data.size() != expected) {
      return invalid("constant '", k.name, "' holds ", k.data.size(), " bytes, but ", dtype_name(v.dtype), " ",
                     shape_to_string(v.shape), " needs ", expected);
    }
    if (v.producer != kNone) return invalid("constant '", k.name, "' claims producer node ", v.producer);
  }
  return Status::Ok();
}

Status verify_states(const Graph& g) {
  for (size_t s = 0; s < g.states().size(); ++s) {
    const State& state = g.states()[s];
    if (!valid_id(g, state.value)) return invalid("state ", s, " has bad value id ", state.value);
    const Value& v = g.value(state.value);
    const std::string label = "state '" + v.name + "'";
    if (v.state != static_cast<int32_t>(s)) {
      return invalid(label, ": ", value_label(g, state.value), " does not point back at it");
    }
    if (v.constant != kNone || v.producer != kNone) {
      return invalid(label, ": its value is ", v.constant != kNone ? "a constant" : "produced by a node");
    }
    uint64_t expected = static_cast<uint64_t>(shape_numel(v.shape)) * dtype_size(v.dtype);
    if (state.initial.size() != expected) {
      return invalid(label, " starts from ", state.initial.size(), " bytes, but ", dtype_name(v.dtype), " ",
                     shape_to_string(v.shape), " needs ", expected);
    }
    if (state.update == kNone) return invalid(label, " has no update (the value it holds when a run ends)");
    if (!valid_id(g, state.update)) return invalid(label, " has bad update value id ", state.update);
    const Value& u = g.value(state.update);
    if (u.constant != kNone || u.state != kNone) {
      return invalid(label, ": its update ", value_label(g, state.update), " is ",
                     u.constant != kNone ? "a constant" : "a state's value");
    }
    if (u.dtype != v.dtype || u.shape != v.shape) {
      return invalid(label, " is ", dtype_name(v.dtype), " ", shape_to_string(v.shape), " but its update ",
                     value_label(g, state.update), " is ", dtype_name(u.dtype), " ", shape_to_string(u.shape));
    }
  }
  return Status::Ok();
}

}  // namespace

Status verify(const Graph& g) {
  GPUU_RETURN_IF_ERROR(verify_values(g));
  GPUU_RETURN_IF_ERROR(verify_constants(g));
  GPUU_RETURN_IF_ERROR(verify_states(g));

  // Where each value comes from: -2 graph input, -3 constant, -4 state, >= 0 the node; kNone: nowhere yet.
  constexpr int32_t kFromInput = -2, kFromConstant = -3, kFromState = -4;
  std::vector<int32_t> source(g.values().size(), kNone);
  for (size_t c = 0; c < g.constants().size(); ++c) source[static_cast<size_t>(g.constants()[c].value)] = kFromConstant;
  for (const State& state : g.states()) source[static_cast<size_t>(state.value)] = kFromState;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    ValueId id = g.inputs()[i];
    if (!valid_id(g, id)) return invalid("graph input ", i, " has bad value id ", id);
    if (source[static_cast<size_t>(id)] == kFromConstant) {
      return invalid("graph input ", i, " is ", value_label(g, id), ", which is a constant");
    }
    if (source[static_cast<size_t>(id)] == kFromState) {
      return invalid("graph input ", i, " is ", value_label(g, id), ", which reads a state");
    }
    if (source[static_cast<size_t>(id)] == kFromInput) {
      return invalid("graph input ", i, " repeats ", value_label(g, id));
    }
    if (g.value(id).producer != kNone) {
      return invalid("graph input ", i, " (", value_label(g, id), ") claims producer node ", g.value(id).producer);
    }
    source[static_cast<size_t>(id)] = kFromInput;
  }

  // First pass: who produces what (so order faults can say "produced later by").
  std::vector<int32_t> final_producer(g.values().size(), kNone);
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    for (ValueId out : g.nodes()[n].outputs) {
      if (valid_id(g, out) && final_producer[static_cast<size_t>(out)] == kNone) {
        final_producer[static_cast<size_t>(out)] = static_cast<int32_t>(n);
      }
    }
  }

  std::unordered_map<std::string, NodeId> node_names;
  std::vector<Value> inferred;
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    NodeId nid = static_cast<NodeId>(n);
    const Node& node = g.node(nid);
    if (node.name.empty()) return invalid("node ", n, " (", node.op, ") has an empty name");
    auto [it, fresh] = node_names.emplace(node.name, nid);
    if (!fresh) return invalid("node name '", node.name, "' is used by nodes ", it->second, " and ", n);
    std::string where = "node '" + node.name + "' (" + node.op + "): ";

    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId id = node.inputs[i];
      if (id == kNone) continue;  // infer() decides whether input i may be absent
      if (!valid_id(g, id)) {
        return invalid(where, "input ", i, " is value id ", id, ", but the graph has ", g.values().size(), " values");
      }
      if (source[static_cast<size_t>(id)] != kNone) continue;
      int32_t later = final_producer[static_cast<size_t>(id)];
      if (later == kNone) {
        return invalid(where, "input ", i, " reads ", value_label(g, id),
                       ", which is neither a graph input, a constant nor produced by any node");
      }
      return invalid(where, "input ", i, " reads ", value_label(g, id), " before node '", g.node(later).name,
                     "' (node ", later, ") produces it; nodes must be in topological order");
    }

    for (size_t o = 0; o < node.outputs.size(); ++o) {
      ValueId id = node.outputs[o];
      if (!valid_id(g, id)) return invalid(where, "output ", o, " has bad value id ", id);
      int32_t src = source[static_cast<size_t>(id)];
      if (src == kFromInput) return invalid(where, "output ", o, " is graph input ", value_label(g, id));
      if (src == kFromConstant) return invalid(where, "output ", o, " is constant ", value_label(g, id));
      if (src == kFromState) return invalid(where, "output ", o, " is ", value_label(g, id), ", which reads a state");
      if (src >= 0) {
        return invalid(where, "output ", o, " is ", value_label(g, id), ", already produced by node '",
                       g.node(src).name, "'");
      }
      if (g.value(id).producer != nid) {
        return invalid(where, "output ", o, " (", value_label(g, id), ") records producer ", g.value(id).producer,
                       " instead of node ", n);
      }
      source[static_cast<size_t>(id)] = nid;
    }

    GPUU_RETURN_IF_ERROR(infer(g, node, &inferred));
    if (inferred.size() != node.outputs.size()) {
      return invalid(where, "has ", node.outputs.size(), " outputs, but ", node.op, " gives ", inferred.size());
    }
    for (size_t o = 0; o < inferred.size(); ++o) {
      const Value& stored = g.value(node.outputs[o]);
      if (stored.dtype != inferred[o].dtype || stored.shape != inferred[o].shape) {
        return invalid(where, "output ", o, " ('", stored.name, "') is stored as ", dtype_name(stored.dtype), " ",
                       shape_to_string(stored.shape), ", but inference gives ", dtype_name(inferred[o].dtype), " ",
                       shape_to_string(inferred[o].shape));
      }
    }
  }

  for (size_t i = 0; i < g.values().size(); ++i) {
    ValueId id = static_cast<ValueId>(i);
    if (source[i] == kNone) {
      return invalid(value_label(g, id), " is never produced: it is no graph input, constant or node output");
    }
    if (source[i] < 0 && g.value(id).producer != kNone) {
      return invalid(value_label(g, id), " claims producer node ", g.value(id).producer, ", which does not output it");
    }
  }

  // A stateful graph may only update its states; any other must return something.
  if (g.outputs().empty() && g.states().empty()) return invalid("the graph has no outputs");
  std::vector<bool> is_output(g.values().size(), false);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    ValueId id = g.outputs()[i];
    if (!valid_id(g, id)) return invalid("graph output ", i, " has bad value id ", id);
    if (is_output[static_cast<size_t>(id)]) return invalid("graph output ", i, " repeats ", value_label(g, id));
    // What it returns would be the state's value before the run or after it,
    // depending on where the state lives: a copy node says which.
    if (g.value(id).state != kNone) {
      return invalid("graph output ", i, " is ", value_label(g, id), ", which reads a state");
    }
    is_output[static_cast<size_t>(id)] = true;
  }
  return Status::Ok();
}

}  // namespace gpuu::graph
