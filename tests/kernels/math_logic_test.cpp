// Vulkan kernels of the math, logic and integer ops against the CPU reference,
// on the test device. Integer and bool results must match byte for byte;
// float tolerances as in elementwise_test.cpp (2e-5 for transcendental
// functions, 1e-3 relative for f16, whose results round once from f32 math).
#include <gtest/gtest.h>

#include <cmath>

#include "context/shared_gpu_context_registry.h"
#include "gpu/device_buffer.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"
#include "support/test_vulkan_device.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using Ints = std::vector<int64_t>;

testing::AssertionResult same_bytes(const cpu::HostTensor& got, const cpu::HostTensor& want) {
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  }
  if (got.bytes == want.bytes) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "bytes differ; " << all_close(got, want, 0, 0).message();
}

// One node of `op` over graph inputs, compared byte for byte with the CPU.
testing::AssertionResult node_exact(const std::string& op, const std::vector<cpu::HostTensor>& inputs,
                                    const graph::AttrMap& attrs = {}) {
  graph::Graph g;
  std::vector<graph::ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(graph::add_graph_input(g, "in" + std::to_string(i), inputs[i].dtype, inputs[i].shape).value());
  }
  Result<std::vector<graph::ValueId>> outs = graph::add_op(g, op, op + "_0", ids, attrs);
  if (!outs.ok()) return testing::AssertionFailure() << outs.status().message();
  for (graph::ValueId o : outs.value()) g.mark_output(o);
  return graph_matches_cpu(g, inputs, same_bytes);
}

cpu::HostTensor values(DType dtype, const graph::Shape& shape, const std::vector<double>& v) {
  return cpu::HostTensor::from_doubles(dtype, shape, v).value();
}

// Whole numbers far beyond 32 bits (|v| < 2^45, exact in double), both signs.
cpu::HostTensor wide_i64(const graph::Shape& shape, uint32_t seed) {
  cpu::HostTensor t = random_tensor(DType::kF32, shape, seed, -1, 1);
  std::vector<double> v = t.to_doubles();
  for (double& e : v) e = std::floor(e * 35184372088832.0);
  return values(DType::kI64, shape, v);
}

struct UnaryCase {
  const char* op;
  double lo, hi;
};

const UnaryCase kFloatUnary[] = {{"tan", -1.2, 1.2},  {"asin", -0.95, 0.95}, {"acos", -0.95, 0.95},
                                 {"atan", -5, 5},     {"sinh", -4, 4},       {"cosh", -4, 4},
                                 {"asinh", -5, 5},    {"acosh", 1.001, 10},  {"atanh", -0.95, 0.95},
                                 {"expm1", -3, 3},    {"log1p", -0.9, 5},    {"round", -9, 9},
                                 {"trunc", -9, 9},    {"sign", -2, 2}};

TEST(VulkanMath, FloatUnaryOpsMatchTheReference) {
  uint32_t seed = 1;
  for (const UnaryCase& c : kFloatUnary) {
    for (const graph::Shape& shape : {graph::Shape{7}, graph::Shape{3, 5, 67}}) {
      EXPECT_TRUE(node_matches_cpu(c.op, {random_tensor(DType::kF32, shape, seed++, c.lo, c.hi)}, {}, 2e-5, 2e-5))
          << c.op << " " << graph::shape_to_string(shape);
    }
  }
}

TEST(VulkanMath, SmallArgumentsKeepTheirRelativeAccuracy) {
  // Near 0 expm1, log1p, sinh, asinh and atanh are ~x: a naive formula loses all digits.
  auto x = values(DType::kF32, {6}, {1e-7, -3e-6, 1e-4, -0.01, 0.2, 0});
  for (const char* op : {"expm1", "log1p", "sinh", "asinh", "atanh", "tan", "atan"}) {
    EXPECT_TRUE(node_matches_cpu(op, {x}, {}, 0, 1e-5)) << op;
  }
}

TEST(VulkanMath, RoundHalvesToEvenAndSignKeepsNan) {
  auto ties = values(DType::kF32, {10}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, -3.51, 1e7 + 1, 0});
  EXPECT_TRUE(node_matches_cpu("round", {ties}, {}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("trunc", {ties}, {}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("sign", {values(DType::kF32, {5}, {NAN, -0.0, 0, -INFINITY, 3})}, {}, 0, 0));
}

TEST(VulkanMath, HalfPrecisionUnaryAndBinary) {
  if (!f16_kernels_or_refused()) return;
  uint32_t seed = 50;
  for (const UnaryCase& c : kFloatUnary) {
    EXPECT_TRUE(node_matches_cpu(c.op, {random_tensor(DType::kF16, {129}, seed++, c.lo, c.hi)}, {}, 2e-3, 2e-3))
        << c.op;
  }
  auto a = random_tensor(DType::kF16, {4, 9}, seed++, -8, 8);
  auto b = random_tensor(DType::kF16, {9}, seed++, 0.5, 3);
  for (const char* op : {"atan2", "remainder", "fmod", "floor_divide"}) {
    EXPECT_TRUE(node_matches_cpu(op, {a, b}, {}, 4e-3, 2e-3)) << op;
  }
}

// Divisors of both signs, away from 0.
cpu::HostTensor divisors(const graph::Shape& shape, uint32_t seed) {
  auto t = random_tensor(DType::kF32, shape, seed, 0.5, 3);
  std::vector<double> v = t.to_doubles();
  for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
  return values(DType::kF32, shape, v);
}

TEST(VulkanMath, FloatBinaryOpsBroadcast) {
  const std::pair<graph::Shape, graph::Shape> shapes[] = {{{4, 1, 5}, {3, 1}}, {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{}, {9}}};
  uint32_t seed = 100;
  for (const auto& s : shapes) {
    auto a = random_tensor(DType::kF32, s.first, seed++, -20, 20);
    auto b = divisors(s.second, seed++);
    EXPECT_TRUE(node_matches_cpu("atan2", {a, b}, {}, 2e-5, 2e-5));
    EXPECT_TRUE(node_matches_cpu("remainder", {a, b}, {}, 1e-5, 0));
    EXPECT_TRUE(node_matches_cpu("fmod", {a, b}, {}, 1e-5, 0));
    EXPECT_TRUE(node_matches_cpu("floor_divide", {a, b}, {}, 0, 0));
  }
}

TEST(VulkanMath, FloatDivisionOpsOnExactMultiples) {
  // Quotients that are whole numbers: a / b rounding must not move the floor.
  auto a = values(DType::kF32, {8}, {6, -6, 6, -6, 0.3, -0.3, 7.5, 1e-3});
  auto b = values(DType::kF32, {8}, {3, 3, -3, -3, 0.1, 0.1, 2.5, 1e-4});
  EXPECT_TRUE(node_matches_cpu("floor_divide", {a, b}, {}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("remainder", {a, b}, {}, 1e-6, 0));
  EXPECT_TRUE(node_matches_cpu("fmod", {a, b}, {}, 1e-6, 0));
}

const char* const kIntBinary[] = {"add",          "sub",         "mul",        "maximum",     "minimum",
                                  "remainder",    "fmod",        "floor_divide", "bitwise_and", "bitwise_or",
                                  "bitwise_xor",  "equal",       "not_equal",  "less",        "less_equal",
                                  "greater",      "greater_equal"};

TEST(VulkanInteger, BinaryOpsOnI32AndI64Broadcast) {
  uint32_t seed = 200;
  for (DType dtype : {DType::kI32, DType::kI64}) {
    for (const char* op : kIntBinary) {
      // exact_values spans [-100, 100): zero divisors and negative operands occur.
      auto a = exact_values(dtype, {3, 1, 7}, seed++);
      auto b = exact_values(dtype, {5, 1}, seed++);
      EXPECT_TRUE(node_exact(op, {a, b})) << op << " " << graph::dtype_name(dtype);
    }
  }
}

TEST(VulkanInteger, I64UsesAllSixtyFourBits) {
  uint32_t seed = 300;
  for (const char* op : kIntBinary) {
    EXPECT_TRUE(node_exact(op, {wide_i64({37}, seed), wide_i64({37}, seed + 1)})) << op;
    seed += 2;
  }
  for (const char* op : {"neg", "abs", "sign", "bitwise_not"}) EXPECT_TRUE(node_exact(op, {wide_i64({33}, 9)})) << op;
  EXPECT_TRUE(node_exact("clamp", {wide_i64({33}, 10)}, {{"min", -1e12}, {"max", 3.5e12}}));
}

TEST(VulkanInteger, OverflowWrapsAndDivisionEdgesAreDefined) {
  auto a32 = values(DType::kI32, {6}, {2147483647, -2147483648.0, -2147483648.0, 7, -7, 5});
  auto b32 = values(DType::kI32, {6}, {1, -1, -1, 0, 0, -1});
  for (const char* op : {"add", "sub", "mul", "remainder", "fmod", "floor_divide"}) {
    EXPECT_TRUE(node_exact(op, {a32, b32})) << op;
  }
  auto a64 = values(DType::kI64, {3}, {-9223372036854775808.0, 7, 4e18});
  auto b64 = values(DType::kI64, {3}, {-1, 0, 4e18});
  for (const char* op : {"add", "mul", "remainder", "fmod", "floor_divide"}) {
    EXPECT_TRUE(node_exact(op, {a64, b64})) << op;
  }
  EXPECT_TRUE(node_exact("neg", {a32}));
  EXPECT_TRUE(node_exact("abs", {a64}));
}

TEST(VulkanInteger, UnaryOpsAndClamp) {
  uint32_t seed = 400;
  for (DType dtype : {DType::kI32, DType::kI64}) {
    auto x = exact_values(dtype, {5, 13}, seed++);
    for (const char* op : {"neg", "abs", "sign", "bitwise_not"}) EXPECT_TRUE(node_exact(op, {x})) << op;
    EXPECT_TRUE(node_exact("clamp", {x}, {{"min", -20.5}, {"max", 30.5}}));
    EXPECT_TRUE(node_exact("clamp", {x}, {{"min", 0.0}}));
    EXPECT_TRUE(node_exact("clamp", {x}, {{"max", 1e30}}));  // saturates to the dtype's range
  }
  // 16-bit (a16w8's activations): a bound beyond the type clamps to its end
  // on both the GPU and the CPU reference (which wrapped it: 40000 -> -25536).
  auto x16 = exact_values(DType::kI16, {5, 13}, seed++);
  EXPECT_TRUE(node_exact("clamp", {x16}, {{"min", 40000.0}}));
  EXPECT_TRUE(node_exact("clamp", {x16}, {{"min", -5.5}, {"max", 7.5}}));
}

TEST(VulkanLogic, PredicatesOnSpecialFloats) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !device_has_f16()) continue;
    auto x = values(dtype, {9}, {NAN, -NAN, INFINITY, -INFINITY, 0, -0.0, 1, -65504, 1e-7});
    for (const char* op : {"isnan", "isinf", "logical_not"}) {
      EXPECT_TRUE(node_exact(op, {x})) << op << " " << graph::dtype_name(dtype);
    }
  }
}

TEST(VulkanLogic, LogicalOpsOnEveryDtypeBroadcast) {
  uint32_t seed = 500;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
    // Few distinct values, so zeros are common.
    auto a = random_tensor(dtype, {3, 1, 5}, seed++, -1, 2);
    auto b = random_tensor(dtype, {4, 1}, seed++, -1, 2);
    for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
      EXPECT_TRUE(node_exact(op, {a, b})) << op << " " << graph::dtype_name(dtype);
    }
    EXPECT_TRUE(node_exact("logical_not", {a})) << graph::dtype_name(dtype);
  }
}

TEST(VulkanLogic, BitwiseOpsOnBool) {
  auto a = exact_values(DType::kBool, {7, 3}, 600);
  auto b = exact_values(DType::kBool, {3}, 601);
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) EXPECT_TRUE(node_exact(op, {a, b})) << op;
  EXPECT_TRUE(node_exact("bitwise_not", {a}));
}

TEST(VulkanReduce, MinAndProdOnFloatsEveryPath) {
  uint32_t seed = 700;
  // Short rows (per invocation), long rows (a workgroup each), few very long rows (chunks).
  for (const graph::Shape& shape : {graph::Shape{6, 7, 5}, graph::Shape{3, 1000}, graph::Shape{2, 10000}}) {
    auto x = random_tensor(DType::kF32, shape, seed++, 0.99, 1.01);
    Ints axes = {static_cast<int64_t>(shape.size()) - 1};
    EXPECT_TRUE(node_matches_cpu("reduce_min", {x}, {{"axes", axes}}, 0, 0));
    EXPECT_TRUE(node_matches_cpu("reduce_prod", {x}, {{"axes", axes}}, 0, 2e-5));
  }
  auto x = random_tensor(DType::kF32, {4, 5, 6}, seed++, -3, 3);
  EXPECT_TRUE(node_matches_cpu("reduce_min", {x}, {{"axes", Ints{0, 2}}, {"keepdim", int64_t{1}}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("reduce_prod", {x}, {{"axes", Ints{0}}}, 0, 2e-5));
}

TEST(VulkanReduce, MinAndProdInHalfPrecision) {
  if (!f16_kernels_or_refused()) return;
  uint32_t seed = 750;
  for (const graph::Shape& shape : {graph::Shape{6, 7}, graph::Shape{2, 9000}}) {
    auto x = random_tensor(DType::kF16, shape, seed++, 0.999, 1.001);
    EXPECT_TRUE(node_matches_cpu("reduce_min", {x}, {{"axes", Ints{1}}}, 0, 0));
    EXPECT_TRUE(node_matches_cpu("reduce_prod", {x}, {{"axes", Ints{1}}}, 0, 2e-3));
  }
}

TEST(VulkanReduce, IntegerReductions) {
  uint32_t seed = 800;
  for (DType dtype : {DType::kI32, DType::kI64}) {
    auto x = exact_values(dtype, {4, 6, 5}, seed++);
    for (const char* op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}) {
      EXPECT_TRUE(node_exact(op, {x}, {{"axes", Ints{1}}})) << op << " " << graph::dtype_name(dtype);
      EXPECT_TRUE(node_exact(op, {x}, {{"axes", Ints{0, 2}}, {"keepdim", int64_t{1}}})) << op;
    }
    EXPECT_TRUE(node_exact("reduce_sum", {exact_values(dtype, {3, 3000}, seed++)}, {{"axes", Ints{1}}}));
  }
  // Wrapping products and 64-bit sums.
  EXPECT_TRUE(node_exact("reduce_prod", {exact_values(DType::kI32, {2, 40}, seed++)}, {{"axes", Ints{1}}}));
  EXPECT_TRUE(node_exact("reduce_sum", {wide_i64({5, 9}, seed++)}, {{"axes", Ints{0}}}));
}

TEST(VulkanReduce, LongIntegerAndBoolReductionsGoThroughPartials) {
  // Rows of >= 4096 elements over few outputs split into chunks and a second pass.
  uint32_t seed = 850;
  for (DType dtype : {DType::kI32, DType::kI64}) {
    auto x = exact_values(dtype, {2, 10007}, seed++);
    for (const char* op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}) {
      EXPECT_TRUE(node_exact(op, {x}, {{"axes", Ints{1}}})) << op << " " << graph::dtype_name(dtype);
    }
    EXPECT_TRUE(node_exact("reduce_sum", {x}, {{"axes", Ints{0, 1}}})) << graph::dtype_name(dtype);
  }
  auto b = exact_values(DType::kBool, {3, 9001}, seed++);
  std::vector<double> ones(3 * 9001, 1.0);
  ones[5000] = 0;  // row 0 is all true but one element
  auto mostly = values(DType::kBool, {3, 9001}, ones);
  for (const char* op : {"reduce_any", "reduce_all"}) {
    EXPECT_TRUE(node_exact(op, {b}, {{"axes", Ints{1}}})) << op;
    EXPECT_TRUE(node_exact(op, {mostly}, {{"axes", Ints{1}}})) << op;
  }
}

TEST(VulkanReduce, AnyAndAll) {
  uint32_t seed = 900;
  for (const graph::Shape& shape : {graph::Shape{5, 7}, graph::Shape{3, 2, 9}}) {
    auto x = exact_values(DType::kBool, shape, seed++);
    for (const char* op : {"reduce_any", "reduce_all"}) {
      EXPECT_TRUE(node_exact(op, {x}, {{"axes", Ints{0}}})) << op;
      EXPECT_TRUE(node_exact(op, {x}, {{"axes", Ints{-1}}, {"keepdim", int64_t{1}}})) << op;
    }
  }
  // Mostly-true rows so that all is sometimes true.
  auto mostly = random_tensor(DType::kF32, {13, 3}, seed++, 0, 1);
  std::vector<double> v = mostly.to_doubles();
  for (double& e : v) e = e < 0.9 ? 1 : 0;
  EXPECT_TRUE(node_exact("reduce_all", {values(DType::kBool, {13, 3}, v)}, {{"axes", Ints{1}}}));
}

TEST(VulkanReduce, ArgmaxAndArgminTakeTheFirstOfTies) {
  uint32_t seed = 1000;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
    if (dtype == DType::kF16 && !device_has_f16()) continue;
    // Values in a small range: ties everywhere.
    auto x = random_tensor(dtype, {4, 9, 5}, seed++, -3, 3);
    if (dtype == DType::kF32 || dtype == DType::kF16) {
      std::vector<double> v = x.to_doubles();
      for (double& e : v) e = std::round(e);
      x = values(dtype, x.shape, v);
    }
    for (const char* op : {"argmax", "argmin"}) {
      for (int64_t axis : {0, 1, 2}) {
        EXPECT_TRUE(node_exact(op, {x}, {{"axis", axis}})) << op << " axis " << axis << " " << graph::dtype_name(dtype);
      }
      EXPECT_TRUE(node_exact(op, {x}, {{"axis", int64_t{-2}}, {"keepdim", int64_t{1}}})) << op;
    }
  }
  auto nan = values(DType::kF32, {2, 4}, {1, NAN, 5, NAN, -1, -7, -7, 3});
  EXPECT_TRUE(node_exact("argmax", {nan}, {{"axis", int64_t{1}}}));
  EXPECT_TRUE(node_exact("argmin", {nan}, {{"axis", int64_t{1}}}));
  EXPECT_TRUE(node_exact("argmax", {wide_i64({3, 11}, seed++)}, {{"axis", int64_t{1}}}));
}

// topk (and sort, k = the axis): the values bit for bit and i64 indices,
// ties in index order, NaN the largest (first when largest, last otherwise).
TEST(VulkanReduce, TopkMatchesTheCpuWithTiesInIndexOrder) {
  uint32_t seed = 1050;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
    if (dtype == DType::kF16 && !device_has_f16()) continue;
    auto x = random_tensor(dtype, {4, 9, 5}, seed++, -3, 3);
    if (dtype == DType::kF32 || dtype == DType::kF16) {  // halves rounded to whole numbers: ties everywhere
      std::vector<double> v = x.to_doubles();
      for (double& e : v) e = std::round(e * 2) / 2;
      x = values(dtype, x.shape, v);
    }
    for (int64_t axis : {0, 1, 2}) {
      for (int64_t largest : {0, 1}) {
        for (int64_t k : {int64_t{1}, int64_t{3}, x.shape[static_cast<size_t>(axis)]}) {
          EXPECT_TRUE(node_exact("topk", {x}, {{"k", k}, {"axis", axis}, {"largest", largest}}))
              << graph::dtype_name(dtype) << " axis " << axis << " k " << k << " largest " << largest;
        }
      }
    }
  }
  auto nan = values(DType::kF32, {2, 5}, {1, NAN, 3, -2, 0.5, 2, 1, NAN, NAN, 5});
  for (int64_t largest : {0, 1}) {
    EXPECT_TRUE(node_exact("topk", {nan}, {{"k", int64_t{5}}, {"axis", int64_t{1}}, {"largest", largest}}));
  }
  EXPECT_TRUE(node_exact("topk", {wide_i64({3, 11}, seed++)}, {{"k", int64_t{4}}, {"axis", int64_t{1}}}));
}

TEST(VulkanReduce, Cumsum) {
  uint32_t seed = 1100;
  for (DType dtype : {DType::kI32, DType::kI64}) {
    auto x = exact_values(dtype, {3, 50, 4}, seed++);
    for (int64_t axis : {0, 1, -1}) EXPECT_TRUE(node_exact("cumsum", {x}, {{"axis", axis}})) << axis;
  }
  EXPECT_TRUE(node_exact("cumsum", {wide_i64({40}, seed++)}, {{"axis", int64_t{0}}}));
  auto f = random_tensor(DType::kF32, {3, 100, 4}, seed++, -1, 1);
  for (int64_t axis : {0, 1, 2}) EXPECT_TRUE(node_matches_cpu("cumsum", {f}, {{"axis", axis}}, 1e-5, 1e-5)) << axis;
  if (device_has_f16()) {
    auto h = random_tensor(DType::kF16, {5, 30}, seed++, -1, 1);
    EXPECT_TRUE(node_matches_cpu("cumsum", {h}, {{"axis", int64_t{1}}}, 4e-3, 2e-3));
  }
}

TEST(VulkanInteger, I64WhereAndCastRoundTrip) {
  graph::Graph g;
  graph::ValueId c = graph::add_graph_input(g, "c", DType::kBool, {4, 1}).value();
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kI64, {4, 6}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kI64, {6}).value();
  graph::ValueId w = graph::add_op(g, "where", "where_0", {c, a, b}, {}).value()[0];
  graph::ValueId f = graph::add_op(g, "cast", "to_f32", {w}, {{"dtype", std::string("f32")}}).value()[0];
  graph::ValueId i = graph::add_op(g, "cast", "to_i64", {f}, {{"dtype", std::string("i64")}}).value()[0];
  g.mark_output(w);
  g.mark_output(i);
  EXPECT_TRUE(graph_matches_cpu(g, {exact_values(DType::kBool, {4, 1}, 1200), wide_i64({4, 6}, 1201),
                                    wide_i64({6}, 1202)},
                                same_bytes));
}

TEST(VulkanInteger, IntegerChainsAreNotFused) {
  // Fusion is float-only: an i32 chain keeps one dispatch per node and stays exact.
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kI32, {4, 9}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kI32, {9}).value();
  graph::ValueId v = graph::add_op(g, "add", "add_0", {a, b}, {}).value()[0];
  v = graph::add_op(g, "mul", "mul_0", {v, a}, {}).value()[0];
  v = graph::add_op(g, "neg", "neg_0", {v}, {}).value()[0];
  g.mark_output(v);
  RunStats stats;
  EXPECT_TRUE(graph_matches_cpu(g, {exact_values(DType::kI32, {4, 9}, 1300), exact_values(DType::kI32, {9}, 1301)},
                                same_bytes, &stats));
  EXPECT_EQ(stats.dispatches, 3u);
}

// Builds a delegate for a one-node `op` over two inputs of `dtype` on `ctx`.
Status delegate_status(const SharedGpuContextPtr& ctx, const std::string& op, DType dtype) {
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", dtype, {4}).value();
  g.mark_output(graph::add_op(g, op, op + "_0", {a, a}, {}).value()[0]);
  GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer in, gpu::DeviceBuffer::create(*ctx, 32, gpu::MemoryKind::kUpload, "in"));
  GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer out, gpu::DeviceBuffer::create(*ctx, 32, gpu::MemoryKind::kReadback, "out"));
  auto delegate = kernels::KernelGraph::create(ctx, g, {gpu::BufferRange{in.buffer(), 0, in.size()}},
                                               {gpu::BufferRange{out.buffer(), 0, out.size()}});
  return delegate.status();
}

TEST(VulkanInteger, I64KernelsNeedShaderInt64AndSaySo) {
  // An application's device wrapped as a context enables no optional
  // features, shaderInt64 included: i64 arithmetic is refused, i32 is not.
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  {
    auto ctx = register_app_device(app, "no_int64", 11);
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    ASSERT_FALSE(ctx.value()->has_feature(kFeatureShaderInt64));
    Status s = delegate_status(ctx.value(), "add", DType::kI64);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported);
    EXPECT_NE(s.message().find("node 'add_0' (add) is i64 but device"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("lacks shaderInt64"), std::string::npos) << s.message();
    EXPECT_TRUE(delegate_status(ctx.value(), "add", DType::kI32).ok());
    // Kernels that move i64 as words need no 64-bit shader integers.
    EXPECT_TRUE(delegate_status(ctx.value(), "logical_and", DType::kI64).ok());
    SharedGpuContextRegistry::get().clear_for_testing();
  }
  EXPECT_TRUE(app.still_usable(&why)) << why;
}

TEST(VulkanInteger, RefusesWhatItHasNoKernelFor) {
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kI64, {4}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kBool, {4}).value();
  graph::add_op(g, "relu", "relu_0", {graph::add_graph_input(g, "c", DType::kI32, {4}).value()}, {}).value();
  graph::add_op(g, "not_equal", "ne_0", {b, b}, {}).value();
  graph::add_op(g, "add", "add_0", {a, a}, {}).value();
  EXPECT_NE(kernels::vulkan_supports(g, g.node(0)).find("i32"), std::string::npos) << kernels::vulkan_supports(g, g.node(0));
  EXPECT_NE(kernels::vulkan_supports(g, g.node(1)).find("bool"), std::string::npos) << kernels::vulkan_supports(g, g.node(1));
  EXPECT_EQ(kernels::vulkan_supports(g, g.node(2)), "");
}

}  // namespace
}  // namespace gpuu::vulkan_test
