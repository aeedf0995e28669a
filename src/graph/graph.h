// The graph IR: values with dtype and static shape, nodes with an op name,
// inputs, outputs and typed attributes, and constants. Ids are dense indices,
// so passes can use vectors instead of maps and stay deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "graph/symbolic.h"

namespace gpuu::graph {

enum class DType : uint8_t { kF32 = 0, kF16 = 1, kI32 = 2, kI64 = 3, kI8 = 4, kBool = 5, kI16 = 6 };
constexpr int kDTypeCount = 7;

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "f32", "f16", "i32", "i64", "i8", "bool"
bool parse_dtype(const std::string& name, DType* out);

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& shape);
// Row-major element strides of `shape` (the last axis is 1).
std::vector<int64_t> row_major_strides(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[1,3,8,8]"

// Limits every shape in a graph keeps, so that sizes and byte counts never
// overflow int64/size_t anywhere downstream.
constexpr size_t kMaxRank = 8;
constexpr int64_t kMaxDim = 0x7FFFFFFF;
constexpr int64_t kMaxNumel = int64_t{1} << 40;
// "" when `shape` is within the limits (rank, 0 <= dim <= kMaxDim, numel), else why not.
std::string shape_problem(const Shape& shape);

using ValueId = int32_t;
using NodeId = int32_t;
constexpr int32_t kNone = -1;

// AttrValue and AttrMap (an ordered map: serialization is deterministic) come from symbolic.h.

struct Value {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  NodeId producer = kNone;   // kNone for graph inputs, constants and states
  int32_t constant = kNone;  // index into Graph::constants(), or kNone
  int32_t state = kNone;     // index into Graph::states() of the state it reads, or kNone
  std::vector<AxisExpr> dim_exprs;  // axes whose size follows the graph's dims (symbolic.h)
};

struct Constant {
  std::string name;
  ValueId value = kNone;
  Blob data;  // dtype_size * numel bytes, little-endian
};

// Program state: a tensor kept across runs, as a model's mutated buffer (a KV
// cache, running statistics, a step counter). `value` reads it in a run: a
// value without producer, neither input nor constant, named as the state.
// `update` holds what it becomes when the run ends. Each session of a program
// keeps its own, starting from `initial`.
struct State {
  ValueId value = kNone;
  ValueId update = kNone;  // kNone until set (the verifier refuses a state without one)
  Blob initial;            // dtype_size * numel bytes, little-endian
};

struct Node {
  std::string name;  // unique within the graph
  std::string op;    // registry name: "add", "conv2d", "custom_shader", ...
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  AttrMap attrs;
  std::vector<AttrExpr> attr_exprs;  // integer attributes that follow the graph's dims (symbolic.h)
};

class Graph {
 public:
  ValueId add_value(Value value);
  ValueId add_input(const std::string& name, DType dtype, Shape shape);
  ValueId add_constant(const std::string& name, DType dtype, Shape shape, Blob data);
  // A state named `name` (the value reading it has that name); its update is set later.
  ValueId add_state(const std::string& name, DType dtype, Shape shape, Blob initial);
  void set_state_update(size_t state, ValueId update) { states_[state].update = update; }
  NodeId add_node(Node node);  // sets producer of the node's outputs; no checks here
  void mark_output(ValueId value) { outputs_.push_back(value); }
  // Dims that vary between executes (symbolic.h); none for a static graph.
  void set_dims(std::vector<SymbolicDim> dims) { dims_ = std::move(dims); }
  const std::vector<SymbolicDim>& dims() const { return dims_; }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Constant>& constants() const { return constants_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<State>& states() const { return states_; }
  // What a run leaves behind: the graph outputs, then each state's update
  // (once, where it is not an output already).
  std::vector<ValueId> results() const;
  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  Value& mutable_value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  Constant& mutable_constant(size_t index) { return constants_[index]; }
  Node& mutable_node(NodeId id) { return nodes_[static_cast<size_t>(id)]; }

  // For each value, the nodes that read it, in node order.
  std::vector<std::vector<NodeId>> consumers() const;
  // For each node, 1 when one of its outputs reaches a result (a graph output
  // or a state update: is one, or is read by a node whose outputs do), else 0:
  // a dead node, which no backend needs to run. Ids out of range are ignored.
  std::vector<uint8_t> live_nodes() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<Constant> constants_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<State> states_;
  std::vector<SymbolicDim> dims_;
};

}  // namespace gpuu::graph
