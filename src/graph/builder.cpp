// Checked graph building on top of Graph's unchecked appends: validate first,
// then mutate, so a refused input, constant or node leaves no trace.
#include "graph/builder.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace gpuu::graph {

void GraphNames::catch_up(const Graph& graph) {
  // A graph only grows through Graph's API; if it shrank (replaced wholesale), start over.
  if (graph.values().size() < values_seen_ || graph.nodes().size() < nodes_seen_) *this = GraphNames();
  for (; values_seen_ < graph.values().size(); ++values_seen_) {
    values_.emplace(graph.values()[values_seen_].name, static_cast<ValueId>(values_seen_));
  }
  for (; nodes_seen_ < graph.nodes().size(); ++nodes_seen_) {
    nodes_.emplace(graph.nodes()[nodes_seen_].name, static_cast<NodeId>(nodes_seen_));
  }
}

ValueId GraphNames::find_value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

NodeId GraphNames::find_node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? kNone : it->second;
}

namespace {

Status check_new_value(const Graph& graph, const char* what, const std::string& name, DType dtype, const Shape& shape,
                       GraphNames* names) {
  if (name.empty()) return err(StatusCode::kInvalidArgument, what, " name is empty");
  if (static_cast<int>(dtype) >= kDTypeCount) {
    return err(StatusCode::kInvalidArgument, what, " '", name, "': unknown dtype ", static_cast<int>(dtype));
  }
  std::string why = shape_problem(shape);
  if (!why.empty()) {
    return err(StatusCode::kInvalidArgument, what, " '", name, "': bad shape ", shape_to_string(shape), ": ", why);
  }
  names->catch_up(graph);
  if (names->find_value(name) != kNone) {
    return err(StatusCode::kInvalidArgument, what, " '", name, "': the name is already taken by value ",
               names->find_value(name));
  }
  return Status::Ok();
}

// add_graph_constant and add_graph_state: a value `what` with its bytes,
// checked, then added by `add`.
Result<ValueId> add_with_data(Graph& graph, const char* what,
                              ValueId (Graph::*add)(const std::string&, DType, Shape, Blob), std::string name,
                              DType dtype, Shape shape, Blob data, GraphNames* names) {
  GraphNames local;
  if (!names) names = &local;
  GPUU_RETURN_IF_ERROR(check_new_value(graph, what, name, dtype, shape, names));
  uint64_t expected = static_cast<uint64_t>(shape_numel(shape)) * dtype_size(dtype);
  if (data.size() != expected) {
    return err(StatusCode::kInvalidArgument, what, " '", name, "': ", data.size(), " bytes of data, but ",
               dtype_name(dtype), " ", shape_to_string(shape), " needs ", expected);
  }
  ValueId id = (graph.*add)(name, dtype, std::move(shape), std::move(data));
  names->catch_up(graph);
  return id;
}

}  // namespace

Result<ValueId> add_graph_input(Graph& graph, std::string name, DType dtype, Shape shape, GraphNames* names) {
  GraphNames local;
  if (!names) names = &local;
  GPUU_RETURN_IF_ERROR(check_new_value(graph, "graph input", name, dtype, shape, names));
  ValueId id = graph.add_input(name, dtype, std::move(shape));
  names->catch_up(graph);
  return id;
}

Result<ValueId> add_graph_constant(Graph& graph, std::string name, DType dtype, Shape shape, Blob data,
                                   GraphNames* names) {
  return add_with_data(graph, "constant", &Graph::add_constant, std::move(name), dtype, std::move(shape),
                       std::move(data), names);
}

Result<ValueId> add_graph_state(Graph& graph, std::string name, DType dtype, Shape shape, Blob initial,
                                GraphNames* names) {
  return add_with_data(graph, "state", &Graph::add_state, std::move(name), dtype, std::move(shape),
                       std::move(initial), names);
}

Status set_state_update(Graph& graph, ValueId state_value, ValueId update) {
  const auto nv = static_cast<ValueId>(graph.values().size());
  if (state_value < 0 || state_value >= nv) {
    return err(StatusCode::kInvalidArgument, "state update: value id ", state_value, " is not in the graph (", nv,
               " values)");
  }
  const Value& v = graph.value(state_value);
  if (v.state == kNone) {
    return err(StatusCode::kInvalidArgument, "state update: value '", v.name, "' reads no state");
  }
  const State& state = graph.states()[static_cast<size_t>(v.state)];
  if (state.update != kNone) {
    return err(StatusCode::kInvalidArgument, "state '", v.name, "': its update is already set (value '",
               graph.value(state.update).name, "')");
  }
  if (update < 0 || update >= nv) {
    return err(StatusCode::kInvalidArgument, "state '", v.name, "': update value id ", update,
               " is not in the graph (", nv, " values)");
  }
  const Value& u = graph.value(update);
  if (u.constant != kNone || u.state != kNone) {
    return err(StatusCode::kInvalidArgument, "state '", v.name, "': its update '", u.name, "' is ",
               u.constant != kNone ? "a constant" : "a state's value", "; a node must compute it (a copy will do)");
  }
  if (u.dtype != v.dtype || u.shape != v.shape) {
    return err(StatusCode::kInvalidArgument, "state '", v.name, "' is ", dtype_name(v.dtype), " ",
               shape_to_string(v.shape), " but its update '", u.name, "' is ", dtype_name(u.dtype), " ",
               shape_to_string(u.shape));
  }
  graph.set_state_update(static_cast<size_t>(v.state), update);
  return Status::Ok();
}

Result<std::vector<ValueId>> add_op(Graph& graph, std::string_view op, std::string name, std::vector<ValueId> inputs,
                                    AttrMap attrs, GraphNames* names) {
  GraphNames local;
  if (!names) names = &local;
  names->catch_up(graph);
  if (name.empty()) return err(StatusCode::kInvalidArgument, "a '", op, "' node has an empty name");
  if (names->find_node(name) != kNone) {
    return err(StatusCode::kInvalidArgument, "node '", name, "' (", op, "): the name is already taken by node ",
               names->find_node(name));
  }
  Node node;
  node.name = std::move(name);
  node.op = std::string(op);
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  std::vector<Value> outputs;
  GPUU_RETURN_IF_ERROR(infer(graph, node, &outputs));
  for (const Value& v : outputs) {
    if (names->find_value(v.name) != kNone) {
      return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): its output name '", v.name,
                 "' is already taken by value ", names->find_value(v.name));
    }
  }
  GPUU_ASSIGN_OR_RETURN(node.attrs, resolve_attrs(node));
  // Everything is checked: from here on the graph changes.
  std::vector<ValueId> ids;
  ids.reserve(outputs.size());
  for (Value& v : outputs) ids.push_back(graph.add_value(std::move(v)));
  node.outputs = ids;
  graph.add_node(std::move(node));
  names->catch_up(graph);
  return ids;
}

Status add_graph_output(Graph& graph, ValueId value) {
  if (value < 0 || static_cast<size_t>(value) >= graph.values().size()) {
    return err(StatusCode::kInvalidArgument, "graph output: value id ", value, " is not in the graph (",
               graph.values().size(), " values)");
  }
  const auto& outs = graph.outputs();
  if (std::find(outs.begin(), outs.end(), value) != outs.end()) {
    return err(StatusCode::kInvalidArgument, "graph output: value '", graph.value(value).name,
               "' is already an output");
  }
  graph.mark_output(value);
  return Status::Ok();
}

}  // namespace gpuu::graph
