// Graph storage and the small helpers every pass needs.
#include "graph/graph.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace gpuu::graph {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kI8: return 1;
    case DType::kBool: return 1;
    case DType::kI16: return 2;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kI8: return "i8";
    case DType::kBool: return "bool";
    case DType::kI16: return "i16";
  }
  return "?";
}

bool parse_dtype(const std::string& name, DType* out) {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (name == dtype_name(static_cast<DType>(i))) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

std::string shape_problem(const Shape& shape) {
  if (shape.size() > kMaxRank) return "rank " + std::to_string(shape.size()) + " exceeds " + std::to_string(kMaxRank);
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d < 0) return "dim " + std::to_string(i) + " is negative (" + std::to_string(d) + ")";
    if (d > kMaxDim) return "dim " + std::to_string(i) + " (" + std::to_string(d) + ") exceeds " + std::to_string(kMaxDim);
    // Divide before multiplying: the product itself could overflow int64.
    if (d != 0 && numel > kMaxNumel / d) return "more than " + std::to_string(kMaxNumel) + " elements";
    numel *= d;
  }
  return "";
}

std::string shape_to_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "," : "") << shape[i];
  out << ']';
  return out.str();
}

ValueId Graph::add_value(Value value) {
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::add_input(const std::string& name, DType dtype, Shape shape) {
  ValueId id = add_value(Value{name, dtype, std::move(shape), kNone, kNone});
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(const std::string& name, DType dtype, Shape shape, Blob data) {
  ValueId id = add_value(Value{name, dtype, std::move(shape), kNone, static_cast<int32_t>(constants_.size())});
  constants_.push_back(Constant{name, id, std::move(data)});
  return id;
}

ValueId Graph::add_state(const std::string& name, DType dtype, Shape shape, Blob initial) {
  Value v{name, dtype, std::move(shape), kNone, kNone};
  v.state = static_cast<int32_t>(states_.size());
  ValueId id = add_value(std::move(v));
  states_.push_back(State{id, kNone, std::move(initial)});
  return id;
}

std::vector<ValueId> Graph::results() const {
  std::vector<ValueId> out = outputs_;
  for (const State& s : states_) {
    if (s.update != kNone && std::find(out.begin(), out.end(), s.update) == out.end()) out.push_back(s.update);
  }
  return out;
}

NodeId Graph::add_node(Node node) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  for (ValueId out : node.outputs) {
    if (out >= 0 && static_cast<size_t>(out) < values_.size()) values_[static_cast<size_t>(out)].producer = id;
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> result(values_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (ValueId in : nodes_[n].inputs) {
      if (in >= 0 && static_cast<size_t>(in) < values_.size()) {
        auto& list = result[static_cast<size_t>(in)];
        if (list.empty() || list.back() != static_cast<NodeId>(n)) list.push_back(static_cast<NodeId>(n));
      }
    }
  }
  return result;
}

std::vector<uint8_t> Graph::live_nodes() const {
  // Backwards from the producers of the results (graph outputs and state
  // updates), whatever order the nodes are stored in.
  std::vector<uint8_t> live(nodes_.size(), 0);
  std::vector<NodeId> stack;
  auto reach = [&](ValueId v) {
    if (v < 0 || static_cast<size_t>(v) >= values_.size()) return;
    NodeId p = values_[static_cast<size_t>(v)].producer;
    if (p < 0 || static_cast<size_t>(p) >= nodes_.size() || live[static_cast<size_t>(p)]) return;
    live[static_cast<size_t>(p)] = 1;
    stack.push_back(p);
  };
  for (ValueId v : results()) reach(v);
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    for (ValueId v : nodes_[static_cast<size_t>(n)].inputs) reach(v);
  }
  return live;
}

}  // namespace gpuu::graph
