// Checked graph building: inputs, constants and nodes enter a Graph only after
// the registry accepted them, so a graph built this way always verifies.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::graph {

// The names taken in a graph, so that adding many nodes checks uniqueness
// without rescanning the graph. catch_up() indexes whatever was appended to the
// graph since its last call, by whatever route, so it never goes stale while
// the graph only grows. (Renaming values in place is not tracked.)
class GraphNames {
 public:
  void catch_up(const Graph& graph);
  ValueId find_value(const std::string& name) const;  // kNone when absent
  NodeId find_node(const std::string& name) const;    // kNone when absent
  // True when everything in `graph` has been indexed.
  bool covers(const Graph& graph) const {
    return values_seen_ == graph.values().size() && nodes_seen_ == graph.nodes().size();
  }

 private:
  size_t values_seen_ = 0;
  size_t nodes_seen_ = 0;
  std::unordered_map<std::string, ValueId> values_;
  std::unordered_map<std::string, NodeId> nodes_;
};

// Each function below leaves `graph` unchanged when it fails (kInvalidArgument,
// the message names the value or node). `names` may be null: the graph is then
// scanned, which is fine for small graphs and tests.

// A graph input: non-empty unique name, a shape within kMaxRank/kMaxDim.
Result<ValueId> add_graph_input(Graph& graph, std::string name, DType dtype, Shape shape, GraphNames* names = nullptr);

// A constant: as an input, plus data.size() == numel * dtype_size(dtype).
Result<ValueId> add_graph_constant(Graph& graph, std::string name, DType dtype, Shape shape, Blob data,
                                   GraphNames* names = nullptr);

// A state (graph.h's State): as a constant, `initial` being its starting
// bytes; the value returned reads it. Its update is set with set_state_update.
Result<ValueId> add_graph_state(Graph& graph, std::string name, DType dtype, Shape shape, Blob initial,
                                GraphNames* names = nullptr);

// Makes `update` the new value of the state read by `state_value` when a run
// ends. Refuses a value that reads no state, a state whose update is set, and
// an update that is a constant or a state's value (a copy node stands in for
// those), or whose dtype or shape differ from the state's.
Status set_state_update(Graph& graph, ValueId state_value, ValueId update);

// Appends node `name` running `op`: infers its outputs with the registry,
// names them "<name>:0", "<name>:1", ..., stores the attributes with every
// default filled in (resolve_attrs), and returns the output ids. An optional
// input may be kNone or left off at the end.
Result<std::vector<ValueId>> add_op(Graph& graph, std::string_view op, std::string name, std::vector<ValueId> inputs,
                                    AttrMap attrs, GraphNames* names = nullptr);

// Marks `value` as a graph output; refuses an unknown id or a value that is
// already an output.
Status add_graph_output(Graph& graph, ValueId value);

}  // namespace gpuu::graph
