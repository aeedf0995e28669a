// run_node's checks of its inputs, run_graph over whole graphs (the RFC model
// against PyTorch golden values), and the ops the CPU fallback does not run.
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "cpu_test_util.h"
#include "graph/builder.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {
namespace {

// Unwraps a builder result, failing the test (not crashing) when it failed.
template <typename T>
T ok_or(Result<T> r, T fallback) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : fallback;
}

ValueId op1(graph::Graph& g, const char* op, const char* name, std::vector<ValueId> inputs, AttrMap attrs = {}) {
  auto ids = ok_or(graph::add_op(g, op, name, std::move(inputs), std::move(attrs)), std::vector<ValueId>{graph::kNone});
  return ids.front();
}

template <typename T>
ValueId constant(graph::Graph& g, const char* name, DType dtype, Shape shape, const std::vector<T>& data) {
  return ok_or(graph::add_graph_constant(g, name, dtype, std::move(shape), Blob::copy_of(data.data(), data.size() * sizeof(T))),
               ValueId{graph::kNone});
}

// The model of seed rfc-unified-vulkan-vgf-executorch.txt, node for node.
graph::Graph rfc_model() {
  graph::Graph g;
  ValueId x = ok_or(graph::add_graph_input(g, "x", DType::kF32, {1, 3, 8, 8}), ValueId{graph::kNone});
  ValueId channel_index = constant<int64_t>(g, "channel_index", DType::kI64, {3}, {2, 0, 1});
  ValueId row_index = constant<int64_t>(g, "row_index", DType::kI64, {4}, {3, 1, 2, 0});
  std::vector<int64_t> cols;
  for (int i = 0; i < 3 * 4; ++i) cols.insert(cols.end(), {3, 1, 2, 0});  // [3,1,2,0] along the last axis
  ValueId col_gather_index = constant<int64_t>(g, "col_gather_index", DType::kI64, {1, 3, 4, 4}, cols);

  ValueId t = op1(g, "transpose", "transpose_in", {x}, {{"perm", Ints{0, 1, 3, 2}}});
  ValueId p = op1(g, "avg_pool2d", "avg_pool2d", {t}, {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}});
  ValueId c = op1(g, "index_select", "index_select_c", {p, channel_index}, {{"axis", int64_t{1}}});
  ValueId gt = op1(g, "gather", "gather", {c, col_gather_index}, {{"axis", int64_t{3}}});
  ValueId r = op1(g, "index_select", "index_select_r", {gt, row_index}, {{"axis", int64_t{2}}});
  ValueId s = op1(g, "sin", "sin", {r});
  ValueId co = op1(g, "cos", "cos", {r});
  ValueId rc = op1(g, "reciprocal", "reciprocal", {co});
  ValueId m = op1(g, "mul", "mul", {s, rc});
  ValueId y = op1(g, "transpose", "transpose_out", {m}, {{"perm", Ints{0, 1, 3, 2}}});
  EXPECT_TRUE(graph::add_graph_output(g, y).ok());
  return g;
}

// Produced once by tests/cpu/make_rfc_golden.py (/usr/bin/python3, torch 1.13) from
// torch.linspace(-0.8, 0.8, 192); the test's input, float(-0.8 + i * 1.6 / 191), is
// within 6e-8 of it, which moves the outputs by < 2e-7.
const float kRfcGolden[48] = {
    0.954845726f,   0.892751336f,   0.923318267f,   0.863085449f,   0.538847923f,   0.496362001f,
    0.517420828f,   0.475650638f,   0.726471841f,   0.676477969f,   0.701181293f,   0.65232861f,
    0.376642019f,   0.338843584f,   0.357629538f,   0.320269763f,   -0.320269763f,  -0.357629567f,
    -0.338843614f,  -0.376641989f,  -0.65232867f,   -0.701181293f,  -0.676478148f,  -0.726471841f,
    -0.475650579f,  -0.517420828f,  -0.496362031f,  -0.538847923f,  -0.86308527f,   -0.923318326f,
    -0.892751336f,  -0.954845846f,  0.230115414f,   0.19509019f,    0.212540418f,   0.177753627f,
    -0.0419093259f, -0.0755358413f, -0.0587060563f, -0.0924082994f, 0.0924082994f,  0.0587060526f,
    0.0755358487f,  0.0419093296f,  -0.177753642f,  -0.212540418f,  -0.19509019f,   -0.230115414f,
};

TEST(RunGraph, RfcModelMatchesPyTorch) {
  graph::Graph g = rfc_model();
  Reals x(192);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -0.8 + static_cast<double>(i) * 1.6 / 191;  // linspace(-0.8, 0.8, 192)
  Result<HostTensor> input = HostTensor::from_doubles(DType::kF32, {1, 3, 8, 8}, x);
  ASSERT_TRUE(input.ok());
  Result<std::vector<HostTensor>> out = run_graph(g, {*input});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  Reals golden(std::begin(kRfcGolden), std::end(kRfcGolden));
  EXPECT_TRUE(Matches(out->front(), DType::kF32, {1, 3, 4, 4}, golden, 1e-6));
}

TEST(RunGraph, RejectsInputsThatDoNotMatchTheGraph) {
  graph::Graph g = rfc_model();
  Result<std::vector<HostTensor>> r = run_graph(g, {});
  ASSERT_FALSE(r.ok());
  EXPECT_MENTIONS(r.status().message(), "takes 1 inputs, got 0");
  r = run_graph(g, {HostTensor::zeros(DType::kF32, {1, 3, 8, 7})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_MENTIONS(r.status().message(), "graph input 0 'x' must be f32[1,3,8,8], got f32[1,3,8,7]");
  r = run_graph(g, {HostTensor::zeros(DType::kF16, {1, 3, 8, 8})});
  ASSERT_FALSE(r.ok());
  EXPECT_MENTIONS(r.status().message(), "got f16[1,3,8,8]");
  HostTensor truncated = HostTensor::zeros(DType::kF32, {1, 3, 8, 8});
  truncated.bytes.resize(10);
  r = run_graph(g, {truncated});
  ASSERT_FALSE(r.ok());
  EXPECT_MENTIONS(r.status().message(), "graph input 0 'x' (f32[1,3,8,8]) holds 10 bytes");
}

TEST(RunGraph, RejectsGraphsThatDoNotVerify) {
  graph::Graph g;
  g.add_input("x", DType::kF32, {2});
  Result<std::vector<HostTensor>> r = run_graph(g, {HostTensor::zeros(DType::kF32, {2})});
  EXPECT_FALSE(r.ok());  // no outputs
}

TEST(RunGraph, ReusedValuesAndPassThroughOutputs) {
  // a = exp(x) feeds two nodes; x and a constant are outputs themselves.
  graph::Graph g;
  ValueId x = ok_or(graph::add_graph_input(g, "x", DType::kF32, {2}), ValueId{graph::kNone});
  ValueId k = constant<float>(g, "k", DType::kF32, {2}, {10, 20});
  ValueId a = op1(g, "exp", "a", {x});
  ValueId b = op1(g, "add", "b", {a, a});
  ValueId c = op1(g, "mul", "c", {a, k});
  ValueId d = op1(g, "sub", "d", {c, b});  // exp(x) * k - 2 exp(x)
  for (ValueId out : {d, x, k, b}) ASSERT_TRUE(graph::add_graph_output(g, out).ok());
  Result<std::vector<HostTensor>> r = run_graph(g, {*HostTensor::from_data<float>({2}, {0.0f, 1.0f})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  const double e = 2.718281828459045;
  // exp(0) = 1 -> 10 - 2 = 8; exp(1) = e -> 20e - 2e = 18e (each step rounded to float).
  EXPECT_TRUE(Matches((*r)[0], DType::kF32, {2}, {8, 18 * e}, 1e-5));
  EXPECT_TRUE(Matches((*r)[1], DType::kF32, {2}, {0, 1}));
  EXPECT_TRUE(Matches((*r)[2], DType::kF32, {2}, {10, 20}));
  EXPECT_TRUE(Matches((*r)[3], DType::kF32, {2}, {2, 2 * e}));
}

TEST(RunGraph, NodeErrorsNameTheNode) {
  graph::Graph g;
  ValueId x = ok_or(graph::add_graph_input(g, "x", DType::kF32, {3}), ValueId{graph::kNone});
  ValueId idx = constant<int32_t>(g, "idx", DType::kI32, {2}, {0, 5});
  ValueId y = op1(g, "index_select", "pick", {x, idx}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(graph::add_graph_output(g, y).ok());
  Result<std::vector<HostTensor>> r = run_graph(g, {HostTensor::zeros(DType::kF32, {3})});
  ASSERT_FALSE(r.ok());
  EXPECT_MENTIONS(r.status().message(), "node 'pick' (index_select): input 1 (index 'idx') holds 5 at [1]");
}

TEST(RunGraph, CustomShadersAreUnsupported) {
  graph::Graph g;
  ValueId x = ok_or(graph::add_graph_input(g, "x", DType::kF32, {4}), ValueId{graph::kNone});
  AttrMap attrs = {{"domain_name", std::string(graph::kCustomShaderDomain)},
                   {"operator_name", std::string("MyKernel")},
                   {"implementation_attrs", std::string(R"({"entry_point": "main", "workgroup_sizes": [64]})")},
                   {"num_outputs", int64_t{1}},
                   {"output_0_shape", Ints{4}},
                   {"output_0_dtype", std::string("f32")}};
  ValueId y = op1(g, "custom_shader", "my_shader", {x}, attrs);
  ASSERT_TRUE(graph::add_graph_output(g, y).ok());
  Result<std::vector<HostTensor>> r = run_graph(g, {HostTensor::zeros(DType::kF32, {4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_MENTIONS(r.status().message(), "node 'my_shader' (custom_shader)");
}

TEST(RunGraph, MillionElementTensorsStayQuick) {
  // [1000,1000]: transpose, add, then sums per row of x + x^T: sum_j (1000 i + j) + (1000 j + i)
  // over j is 1000*1000 i + 499500 + 1000*499500 + 1000 i = 1001000 i + 499999500.
  graph::Graph g;
  ValueId x = ok_or(graph::add_graph_input(g, "x", DType::kF32, {1000, 1000}), ValueId{graph::kNone});
  ValueId t = op1(g, "transpose", "t", {x}, {{"perm", Ints{1, 0}}});
  ValueId s = op1(g, "add", "s", {x, t});
  ValueId r = op1(g, "reduce_sum", "r", {s}, {{"axes", Ints{1}}});
  ASSERT_TRUE(graph::add_graph_output(g, r).ok());
  std::vector<float> data(1000000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  Result<std::vector<HostTensor>> out = run_graph(g, {*HostTensor::from_data<float>({1000, 1000}, data)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  Reals expected(1000);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = 1001000.0 * static_cast<double>(i) + 499999500.0;
  EXPECT_TRUE(Matches(out->front(), DType::kF32, {1000}, expected));
}

using RunNode = OpTest;

TEST_F(RunNode, EveryRegisteredOpButCustomShaderHasAKernel) {
  for (const graph::OpSchema& op : graph::all_ops()) {
    EXPECT_EQ(cpu_supports_op(op.name), op.name != "custom_shader") << op.name;
  }
  EXPECT_FALSE(cpu_supports_op("no_such_op"));
}

TEST_F(RunNode, TheFamiliesRegisterEachOpOnceAndOnlyRegisteredOps) {
  std::map<std::string, int> times;
  for (const CpuOpKernel& k : cpu_op_kernels()) {
    ++times[k.op];
    EXPECT_NE(graph::find_op(k.op), nullptr) << k.op << " has a CPU kernel but no registry schema";
    EXPECT_NE(k.run, nullptr) << k.op;
  }
  for (const auto& [op, n] : times) EXPECT_EQ(n, 1) << op << " is registered " << n << " times";
}

TEST_F(RunNode, CustomShaderIsUnsupported) {
  std::string m = error_of("custom_shader", {f32({1}, {0})}, {}, StatusCode::kUnsupported);
  EXPECT_MENTIONS(m, "GPU");
}

TEST_F(RunNode, ChecksTheInputTensors) {
  ValueId a = f32({2}, {1, 2});
  ValueId b = f32({2}, {3, 4});
  graph::Node node{"n0", "add", {a, b}, {}, {}};
  std::vector<HostTensor> out;
  // Wrong count.
  Status s = run_node(graph_, node, {&tensors_[a]}, &out);
  EXPECT_MENTIONS(s.message(), "got 1 input tensors for the node's 2 inputs");
  // A missing tensor.
  s = run_node(graph_, node, {&tensors_[a], nullptr}, &out);
  EXPECT_MENTIONS(s.message(), "input 1 (b 'v1') has no tensor");
  // A tensor that is not what the graph declares.
  HostTensor wrong = HostTensor::zeros(DType::kF32, {3});
  s = run_node(graph_, node, {&tensors_[a], &wrong}, &out);
  EXPECT_MENTIONS(s.message(), "node 'n0' (add): input 1 (b 'v1') is f32[3], but the graph declares f32[2]");
  // Malformed bytes.
  HostTensor short_bytes = tensors_[b];
  short_bytes.bytes.pop_back();
  s = run_node(graph_, node, {&tensors_[a], &short_bytes}, &out);
  EXPECT_MENTIONS(s.message(), "holds 7 bytes, but needs 8");
  // A bad value id.
  graph::Node bad{"n0", "neg", {42}, {}, {}};
  s = run_node(graph_, bad, {&tensors_[a]}, &out);
  EXPECT_MENTIONS(s.message(), "value id 42");
  // An unknown op.
  graph::Node unknown{"n0", "frobnicate", {a}, {}, {}};
  s = run_node(graph_, unknown, {&tensors_[a]}, &out);
  EXPECT_MENTIONS(s.message(), "unknown op 'frobnicate'");
  EXPECT_TRUE(out.empty());  // nothing was produced by the failed calls
}

TEST_F(RunNode, AbsentOptionalInputsTakeNoTensor) {
  ValueId x = f32({1, 2}, {1, 2});
  ValueId w = f32({1, 2}, {3, 4});
  graph::Node node{"n0", "linear", {x, w, graph::kNone}, {}, {}};
  std::vector<HostTensor> out;
  HostTensor bias = HostTensor::zeros(DType::kF32, {1});
  Status s = run_node(graph_, node, {&tensors_[x], &tensors_[w], &bias}, &out);
  EXPECT_MENTIONS(s.message(), "input 2 (bias, absent) is left out of the node");
  ASSERT_TRUE(run_node(graph_, node, {&tensors_[x], &tensors_[w], nullptr}, &out).ok());
  EXPECT_TRUE(Matches(out.at(0), DType::kF32, {1, 1}, {11}));  // 1*3 + 2*4
}

}  // namespace
}  // namespace gpuu::cpu
