// Shared fixture of the CPU kernel tests: graph inputs with tensors attached,
// one-node runs through run_node, and tensor comparisons that print what differs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/host_tensor.h"
#include "graph/graph.h"

namespace gpuu::cpu {

using graph::AttrMap;
using graph::DType;
using graph::Shape;
using graph::ValueId;
using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

constexpr double kInf = INFINITY;
constexpr double kNaN = NAN;

// Dtype, shape, then values: exact when tol is 0 (the expected values rounded to
// the tensor's dtype first, as the kernels round their results), else within tol.
// NaN matches NaN.
inline testing::AssertionResult Matches(const HostTensor& t, DType dtype, const Shape& shape, const Reals& expected,
                                        double tol = 0.0) {
  if (t.dtype != dtype || t.shape != shape) {
    return testing::AssertionFailure() << "got " << t.type_string() << ", expected " << type_string(dtype, shape);
  }
  Status ok = t.check("result");
  if (!ok.ok()) return testing::AssertionFailure() << ok.message();
  if (static_cast<int64_t>(expected.size()) != t.numel()) {
    return testing::AssertionFailure() << "test bug: " << expected.size() << " expected values for " << t.numel();
  }
  Result<HostTensor> rounded = HostTensor::from_doubles(dtype, shape, expected);
  if (!rounded.ok()) return testing::AssertionFailure() << rounded.status().message();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double got = t.element(i);
    double want = tol == 0.0 ? rounded->element(i) : expected[static_cast<size_t>(i)];
    bool same = (std::isnan(got) && std::isnan(want)) || got == want || std::fabs(got - want) <= tol;
    if (!same) {
      return testing::AssertionFailure() << "element " << i << ": got " << got << ", expected " << want
                                         << " (tolerance " << tol << ")";
    }
  }
  return testing::AssertionSuccess();
}

#define EXPECT_MENTIONS(message, text) \
  EXPECT_NE((message).find(text), std::string::npos) << "message: " << (message)

class OpTest : public testing::Test {
 protected:
  // A graph input named "v<id>" holding `values` converted to `dtype`.
  ValueId in(DType dtype, const Shape& shape, const Reals& values) {
    Result<HostTensor> t = HostTensor::from_doubles(dtype, shape, values);
    EXPECT_TRUE(t.ok()) << t.status().message();
    ValueId id = graph_.add_input("v" + std::to_string(graph_.values().size()), dtype, shape);
    tensors_[id] = t.ok() ? std::move(t).value() : HostTensor::zeros(dtype, shape);
    return id;
  }
  ValueId f32(const Shape& shape, const Reals& values) { return in(DType::kF32, shape, values); }
  ValueId f16(const Shape& shape, const Reals& values) { return in(DType::kF16, shape, values); }
  ValueId i32(const Shape& shape, const Reals& values) { return in(DType::kI32, shape, values); }
  ValueId i64(const Shape& shape, const Reals& values) { return in(DType::kI64, shape, values); }
  ValueId i8(const Shape& shape, const Reals& values) { return in(DType::kI8, shape, values); }
  ValueId boolean(const Shape& shape, const Reals& values) { return in(DType::kBool, shape, values); }
  // 0, 1, 2, ... in `shape`.
  ValueId iota(DType dtype, const Shape& shape, double first = 0.0) {
    Reals v(static_cast<size_t>(graph::shape_numel(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<double>(i);
    return in(dtype, shape, v);
  }

  // Runs node "n0" with run_node; kNone inputs pass as nullptr.
  Result<std::vector<HostTensor>> run(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs = {}) {
    graph::Node node;
    node.name = "n0";
    node.op = op;
    node.inputs = inputs;
    node.attrs = std::move(attrs);
    std::vector<const HostTensor*> args;
    for (ValueId id : inputs) {
      auto it = tensors_.find(id);
      args.push_back(it == tensors_.end() ? nullptr : &it->second);
    }
    std::vector<HostTensor> outputs;
    Status s = run_node(graph_, node, args, &outputs);
    if (!s.ok()) return s;
    return outputs;
  }
  // The single output of a run that must succeed.
  HostTensor run1(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs = {}) {
    Result<std::vector<HostTensor>> r = run(op, inputs, std::move(attrs));
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok() || r->size() != 1) return HostTensor::zeros(DType::kBool, {0});
    return std::move(r->front());
  }
  // The message of a run that must fail with `code`, naming node n0 and its op.
  std::string error_of(const std::string& op, const std::vector<ValueId>& inputs, AttrMap attrs = {},
                       StatusCode code = StatusCode::kInvalidArgument) {
    Result<std::vector<HostTensor>> r = run(op, inputs, std::move(attrs));
    EXPECT_FALSE(r.ok()) << op << " was accepted";
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), code) << r.status().message();
    EXPECT_MENTIONS(r.status().message(), "node 'n0' (" + op + ")");
    return r.status().message();
  }

  graph::Graph graph_;
  std::map<ValueId, HostTensor> tensors_;
};

}  // namespace gpuu::cpu
