// Vulkan reduction and normalization kernels against the CPU reference (which
// accumulates in double), on the test device. Tolerances, f32 (accumulation in
// f32 of values in [-2, 2]): sums and means 1e-5 abs + 1e-5 rel over up to 270
// elements, 1e-4 / 2e-4 abs over 1000-3000, 2e-3 abs over 1M; max exact; softmax
// 1e-6 abs + 1e-5 rel (exp and division in f32); layer_norm 2e-5 abs + 1e-5
// rel. f16: one rounding of f32 math to half, 2e-3 abs + 2e-3 rel (layer_norm,
// whose outputs reach ~8, 4e-3 abs + 2e-3 rel).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;

// Runs `g` on the CPU reference and on Vulkan (one delegate) and compares
// every output.
testing::AssertionResult graph_matches_cpu(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs,
                                           double atol, double rtol) {
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(g, inputs);
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, inputs);
  if (!got.ok()) return testing::AssertionFailure() << "Vulkan: " << got.status().message();
  for (size_t i = 0; i < want.value().size(); ++i) {
    testing::AssertionResult r = all_close(got.value()[i], want.value()[i], atol, rtol);
    if (!r) return testing::AssertionFailure() << "output '" << g.value(g.outputs()[i]).name << "': " << r.message();
  }
  return testing::AssertionSuccess();
}

// Every non-empty set of axes of `shape` (as positive axes, or as negative ones
// when `negative`), with and without keepdim, for each of `ops`: one node
// each, all in one graph over one input.
graph::Graph reduce_sweep(DType dtype, const graph::Shape& shape, const std::vector<std::string>& ops, bool negative) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
  const int64_t rank = static_cast<int64_t>(shape.size());
  int node = 0;
  for (uint32_t mask = 1; mask < (1u << rank); ++mask) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (mask & (1u << d)) axes.push_back(negative ? d - rank : d);
    }
    for (int64_t keepdim : {0, 1}) {
      for (const std::string& op : ops) {
        auto y = graph::add_op(g, op, op + "_" + std::to_string(node++), {x}, {{"axes", axes}, {"keepdim", keepdim}});
        EXPECT_TRUE(y.ok()) << y.status().message();
        g.mark_output(y.value()[0]);
      }
    }
  }
  return g;
}

TEST(VulkanReduce, EverySetOfAxesWithAndWithoutKeepdim) {
  // Odd sizes; rows of 3 to 105 elements (one invocation per output).
  graph::Shape shape{3, 5, 7};
  graph::Graph g = reduce_sweep(DType::kF32, shape, {"reduce_sum", "reduce_mean", "reduce_max"}, false);
  EXPECT_TRUE(graph_matches_cpu(g, {random_tensor(DType::kF32, shape, 1, -2, 2)}, 1e-5, 1e-5));
}

TEST(VulkanReduce, NegativeAxesOnRankFour) {
  graph::Shape shape{2, 3, 5, 9};
  graph::Graph g = reduce_sweep(DType::kF32, shape, {"reduce_sum", "reduce_max"}, true);
  EXPECT_TRUE(graph_matches_cpu(g, {random_tensor(DType::kF32, shape, 2, -2, 2)}, 1e-5, 1e-5));
}

TEST(VulkanReduce, LongRowsUseWorkgroupTrees) {
  // 1000 and 3000 reduced elements per output: a workgroup each, inner and outer axes.
  graph::Shape shape{3, 1000, 3};
  graph::Graph g = reduce_sweep(DType::kF32, shape, {"reduce_sum", "reduce_mean", "reduce_max"}, false);
  EXPECT_TRUE(graph_matches_cpu(g, {random_tensor(DType::kF32, shape, 3, -1, 1)}, 1e-4, 1e-5));
}

TEST(VulkanReduce, MillionElementsToOneValueInTwoPasses) {
  graph::Shape shape{(1 << 20) + 7};
  auto x = random_tensor(DType::kF32, shape, 4, -1, 1);
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    EXPECT_TRUE(node_matches_cpu(op, {x}, {{"axes", std::vector<int64_t>{0}}}, 2e-3, 1e-5)) << op;
  }
}

TEST(VulkanReduce, MillionElementsAlongEitherAxis) {
  graph::Shape shape{1024, 1023};
  auto x = random_tensor(DType::kF32, shape, 5, -1, 1);
  graph::Graph g;
  graph::ValueId in = graph::add_graph_input(g, "x", DType::kF32, shape).value();
  for (int64_t axis : {0, 1}) {
    for (const char* op : {"reduce_sum", "reduce_max"}) {
      g.mark_output(graph::add_op(g, op, std::string(op) + "_" + std::to_string(axis), {in},
                                  {{"axes", std::vector<int64_t>{axis}}})
                        .value()[0]);
    }
  }
  g.mark_output(graph::add_op(g, "reduce_mean", "mean_all", {in}, {{"axes", std::vector<int64_t>{0, 1}}, {"keepdim", int64_t{1}}})
                    .value()[0]);
  EXPECT_TRUE(graph_matches_cpu(g, {x}, 2e-4, 1e-5));
}

TEST(VulkanReduce, MaxPropagatesNaNAsTheReference) {
  std::vector<double> v(3 * 300, 0.5);
  v[7] = std::numeric_limits<double>::quiet_NaN();          // row 0, short and long reductions
  v[300 + 299] = std::numeric_limits<double>::quiet_NaN();  // row 1, last element
  auto x = cpu::HostTensor::from_doubles(DType::kF32, {3, 300}, v).value();
  EXPECT_TRUE(node_matches_cpu("reduce_max", {x}, {{"axes", std::vector<int64_t>{1}}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("reduce_max", {x}, {{"axes", std::vector<int64_t>{0, 1}}}, 0, 0));
  auto narrow = cpu::HostTensor::from_doubles(DType::kF32, {300, 3}, v).value();
  EXPECT_TRUE(node_matches_cpu("reduce_max", {narrow}, {{"axes", std::vector<int64_t>{1}}}, 0, 0));
}

TEST(VulkanReduce, EmptyReductionsSumToZeroAndAverageToNaN) {
  auto x = cpu::HostTensor::zeros(DType::kF32, {3, 0, 2});
  EXPECT_TRUE(node_matches_cpu("reduce_sum", {x}, {{"axes", std::vector<int64_t>{1}}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("reduce_mean", {x}, {{"axes", std::vector<int64_t>{1}}}, 0, 0));
}

TEST(VulkanReduce, I8InputsAreNotTakenAndSaySo) {
  // i32/i64 reductions run (math_logic_test.cpp); i8 has no Vulkan storage.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "counts", DType::kI8, {4, 4}).value();
  graph::add_op(g, "reduce_max", "max_0", {x}, {{"axes", std::vector<int64_t>{0}}}).value();
  std::string why = kernels::vulkan_supports(g, g.node(0));
  EXPECT_NE(why.find("f32/f16/i32/i64"), std::string::npos) << why;
  EXPECT_NE(why.find("'counts' is i8"), std::string::npos) << why;
}

TEST(VulkanReduce, HalfPrecision) {
  if (!f16_kernels_or_refused()) return;
  graph::Shape shape{3, 5, 7};
  graph::Graph g = reduce_sweep(DType::kF16, shape, {"reduce_sum", "reduce_mean", "reduce_max"}, true);
  EXPECT_TRUE(graph_matches_cpu(g, {random_tensor(DType::kF16, shape, 6, -2, 2)}, 2e-3, 2e-3));
  // Two passes: f16 in, f32 partials, f16 out. Mean of 2^18 values stays small.
  auto big = random_tensor(DType::kF16, {1 << 18}, 7, -1, 1);
  EXPECT_TRUE(node_matches_cpu("reduce_mean", {big}, {{"axes", std::vector<int64_t>{0}}}, 2e-3, 2e-3));
  EXPECT_TRUE(node_matches_cpu("reduce_max", {big}, {{"axes", std::vector<int64_t>{-1}}}, 0, 0));
}

TEST(VulkanSoftmax, RowsOfEveryLengthAndAxis) {
  struct Case {
    graph::Shape shape;
    int64_t axis;
  };
  // Short rows (an invocation each), 4096 columns (a workgroup each), a
  // strided axis with few and with many rows.
  const Case cases[] = {{{3, 33, 5}, 1}, {{7, 4096}, -1}, {{300, 17}, 0}, {{5, 200, 1000}, 1}, {{2, 3, 5}, -3}};
  uint32_t seed = 10;
  for (const Case& c : cases) {
    EXPECT_TRUE(node_matches_cpu("softmax", {random_tensor(DType::kF32, c.shape, seed++, -8, 8)}, {{"axis", c.axis}},
                                 1e-6, 1e-5))
        << graph::shape_to_string(c.shape) << " axis " << c.axis;
  }
}

TEST(VulkanSoftmax, LargeLogitsStayFinite) {
  // exp(100) overflows f32 without the max subtraction.
  EXPECT_TRUE(node_matches_cpu("softmax", {random_tensor(DType::kF32, {4, 513}, 20, 80, 120)}, {{"axis", int64_t{1}}},
                               1e-6, 1e-5));
  EXPECT_TRUE(node_matches_cpu("softmax", {random_tensor(DType::kF32, {4, 9}, 21, -120, -80)}, {{"axis", int64_t{1}}},
                               1e-6, 1e-5));
}

TEST(VulkanSoftmax, HalfPrecision) {
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(node_matches_cpu("softmax", {random_tensor(DType::kF16, {5, 1031}, 22, -4, 4)}, {{"axis", int64_t{-1}}},
                               2e-3, 2e-3));
  EXPECT_TRUE(node_matches_cpu("softmax", {random_tensor(DType::kF16, {6, 7, 3}, 23, -4, 4)}, {{"axis", int64_t{1}}},
                               2e-3, 2e-3));
}

// layer_norm of x with optional weight and bias (constants when `constant`).
testing::AssertionResult layer_norm_matches(DType dtype, const graph::Shape& shape, int64_t nd, bool weight, bool bias,
                                            double eps, uint32_t seed, double tol, bool constant = false) {
  graph::Shape normalized(shape.end() - nd, shape.end());
  std::vector<cpu::HostTensor> inputs{random_tensor(dtype, shape, seed, -3, 5)};
  if (weight) inputs.push_back(random_tensor(dtype, normalized, seed + 1, 0.5, 2));
  if (bias) inputs.push_back(random_tensor(dtype, normalized, seed + 2, -1, 1));
  if (!bias) {
    return node_matches_cpu("layer_norm", inputs, {{"normalized_ndim", nd}, {"eps", eps}}, tol, tol / 2,
                            {false, constant});
  }
  if (!weight) {
    // Bias without weight: the weight input is absent (kNone) in the middle.
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
    graph::ValueId b = graph::add_graph_input(g, "b", dtype, normalized).value();
    auto y = graph::add_op(g, "layer_norm", "ln", {x, graph::kNone, b}, {{"normalized_ndim", nd}, {"eps", eps}});
    if (!y.ok()) return testing::AssertionFailure() << y.status().message();
    g.mark_output(y.value()[0]);
    return graph_matches_cpu(g, inputs, tol, tol / 2);
  }
  return node_matches_cpu("layer_norm", inputs, {{"normalized_ndim", nd}, {"eps", eps}}, tol, tol / 2,
                          {false, constant, constant});
}

TEST(VulkanLayerNorm, TrailingDimsWithAndWithoutAffine) {
  uint32_t seed = 30;
  for (bool weight : {false, true}) {
    for (bool bias : {false, true}) {
      EXPECT_TRUE(layer_norm_matches(DType::kF32, {5, 7}, 1, weight, bias, 1e-5, seed += 3, 2e-5))
          << weight << bias;
      EXPECT_TRUE(layer_norm_matches(DType::kF32, {3, 4, 300}, 2, weight, bias, 1e-3, seed += 3, 2e-5))
          << weight << bias;
    }
  }
  EXPECT_TRUE(layer_norm_matches(DType::kF32, {2, 3, 4099}, 1, true, true, 1e-5, 50, 2e-5, /*constant=*/true));
  EXPECT_TRUE(layer_norm_matches(DType::kF32, {2, 3, 5}, 3, true, true, 1e-5, 53, 2e-5));
}

// Each way a row is walked: by one invocation (rows of 7), a line of 32
// (convnext's 96 channels over many pixels, rows of 33 and 100: a partial
// line and rows past the last workgroup's end), the workgroup (768 over few rows).
TEST(VulkanLayerNorm, RowsByInvocationLineAndWorkgroup) {
  uint32_t seed = 70;
  for (const graph::Shape& shape : std::vector<graph::Shape>{{2, 9, 7}, {1, 56, 56, 96}, {45, 33}, {4, 100}, {3, 768}}) {
    EXPECT_TRUE(layer_norm_matches(DType::kF32, shape, 1, true, true, 1e-6, seed += 3, 2e-5)) << shape.back();
  }
}

TEST(VulkanLayerNorm, HalfPrecision) {
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(layer_norm_matches(DType::kF16, {4, 9}, 1, true, true, 1e-5, 60, 4e-3));
  EXPECT_TRUE(layer_norm_matches(DType::kF16, {3, 777}, 1, true, false, 1e-5, 63, 4e-3));
}

// Float rows four elements at a time, where they split evenly over the
// invocations of a row: GPT-2's 2048 x 768 (a line of 32 a row), 2048 x 256
// without bias, rows of 1024 and 2048 (a workgroup a row); rows of 100 and of
// 770 (not quads of a line) the element at a time. The profile says which.
TEST(VulkanLayerNorm, RowsFourAtATime) {
  uint32_t seed = 90;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) return;
    const double tol = dtype == DType::kF16 ? 4e-3 : 2e-5;
    for (const auto& [shape, bias, quads] : std::vector<std::tuple<graph::Shape, bool, bool>>{
             {{2048, 768}, true, true}, {{2048, 256}, false, true}, {{3, 1024}, true, true}, {{2, 3, 2048}, true, true},
             {{2048, 100}, true, false}, {{5, 770}, true, false}}) {
      graph::Graph g;
      graph::Shape row(shape.end() - 1, shape.end());
      std::vector<cpu::HostTensor> inputs{random_tensor(dtype, shape, seed += 3, -3, 5),
                                          random_tensor(dtype, row, seed + 1, 0.5, 2),
                                          random_tensor(dtype, row, seed + 2, -1, 1)};
      graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
      graph::ValueId w = graph::add_graph_input(g, "w", dtype, row).value();
      graph::ValueId b = bias ? graph::add_graph_input(g, "b", dtype, row).value() : graph::kNone;
      if (!bias) inputs.pop_back();
      g.mark_output(graph::add_op(g, "layer_norm", "ln", {x, w, b}, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-5}})
                        .value()[0]);
      EXPECT_TRUE(graph_matches_cpu(g, inputs, tol, tol / 2)) << graph::dtype_name(dtype) << " " << shape.back();
      kernels::KernelGraphOptions options;
      options.profile_steps = true;
      RunStats stats;
      ASSERT_TRUE(run_on_vulkan(g, inputs, &stats, options).ok());
      ASSERT_EQ(stats.steps.size(), 1u);
      EXPECT_EQ(stats.steps[0].work.choice.find("four at a time") != std::string::npos, quads)
          << graph::dtype_name(dtype) << " " << shape.back() << ": " << stats.steps[0].work.choice;
    }
  }
}

// layer_norm over the last dim of a permuted value (convnext's NCHW conv
// output read as NHWC, also sliced) reads it in place: no transpose copy
// runs. `perm` puts dims of x last; the result is a region output.
std::string permuted_layer_norm_steps(DType dtype, const graph::Shape& shape, const std::vector<int64_t>& perm,
                                      bool slice, uint32_t seed, double tol) {
  using Ints = std::vector<int64_t>;
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
  graph::ValueId src = x;
  if (slice) {  // the first half of dim 1: a view with an offset and strides of the whole
    src = graph::add_op(g, "slice", "half", {x}, {{"axes", Ints{1}}, {"starts", Ints{0}}, {"ends", Ints{shape[1] / 2}}})
              .value()[0];
  }
  graph::ValueId t = graph::add_op(g, "transpose", "nhwc", {src}, {{"perm", perm}}).value()[0];
  const int64_t c = g.value(t).shape.back();
  graph::ValueId w = graph::add_graph_input(g, "w", dtype, {c}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", dtype, {c}).value();
  graph::ValueId y =
      graph::add_op(g, "layer_norm", "ln", {t, w, b}, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-6}}).value()[0];
  g.mark_output(y);
  std::vector<cpu::HostTensor> in = {random_tensor(dtype, shape, seed, -2, 2), random_tensor(dtype, {c}, seed + 1, -1, 1),
                                     random_tensor(dtype, {c}, seed + 2, -1, 1)};
  return joined(step_labels(g, in, tol, tol / 2));
}

TEST(VulkanLayerNorm, ReadsAPermutedValueInPlace) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    const double tol = dtype == DType::kF16 ? 4e-3 : 2e-5;
    const std::vector<int64_t> nhwc = {0, 2, 3, 1};
    // Channels 96 (a line per row) and 7 (an invocation per row), batch 1 and 2.
    EXPECT_EQ(permuted_layer_norm_steps(dtype, {1, 96, 14, 14}, nhwc, false, 3, tol), "ln") << graph::dtype_name(dtype);
    EXPECT_EQ(permuted_layer_norm_steps(dtype, {2, 7, 5, 6}, nhwc, false, 7, tol), "ln") << graph::dtype_name(dtype);
    EXPECT_EQ(permuted_layer_norm_steps(dtype, {2, 16, 5, 6}, nhwc, true, 11, tol), "ln") << graph::dtype_name(dtype);
    // [2, 3, 4, 5] -> [4, 2, 5, 3]: rows of three runs (4, 2 and 5 apart), which the kernel does not walk: copied.
    EXPECT_EQ(permuted_layer_norm_steps(dtype, {2, 3, 4, 5}, {2, 0, 3, 1}, false, 13, tol), "nhwc ln")
        << graph::dtype_name(dtype);
  }
}

// A quantized transformer's layer norm: the dequantize making its x (cast
// from i8, zero point, scale) and the quantize reading its result (scale,
// round, zero point, clamp, cast to i8 or i16) run in the row kernel, one
// dispatch, bit for bit as the three apart (and within a step of the CPU's
// double-precision norm), at the row widths of each kernel form (one
// invocation, a line, the workgroup), through the weight and bias or none.
// A row of an integer output that is no whole word keeps the quantize apart.
TEST(VulkanLayerNorm, RunsAQuantizedModelsDequantizeAndQuantize) {
  struct Case {
    graph::Shape shape;
    DType out;
    bool affine;
    const char* steps;
  };
  const char* all = "d_cast+d_zp+d_scale+ln+q_scale+q_round+q_zp+q_clamp+q_cast";
  const Case cases[] = {{{3, 8}, DType::kI8, true, all},          {{2, 5, 96}, DType::kI8, false, all},
                        {{2, 3, 768}, DType::kI8, true, all},      {{4, 1000}, DType::kI16, true, all},
                        {{3, 6}, DType::kI8, true, "d_cast+d_zp+d_scale+ln q_scale+q_round+q_zp+q_clamp+q_cast"},
                        {{3, 6}, DType::kI16, true, all}};
  uint32_t seed = 90;
  for (const Case& c : cases) {
    SCOPED_TRACE(graph::shape_to_string(c.shape) + " -> " + graph::dtype_name(c.out));
    graph::Graph g;
    auto scalar = [&](const std::string& name, float v) {
      return graph::add_graph_constant(g, name, DType::kF32, {1}, Blob::copy_of(&v, 4)).value();
    };
    auto op = [&](const char* o, const std::string& name, std::vector<graph::ValueId> in, graph::AttrMap attrs = {}) {
      return graph::add_op(g, o, name, std::move(in), std::move(attrs)).value()[0];
    };
    const int64_t d = c.shape.back();
    graph::ValueId q = graph::add_graph_input(g, "q", DType::kI8, c.shape).value();
    graph::ValueId w = c.affine ? graph::add_graph_input(g, "w", DType::kF32, {d}).value() : graph::kNone;
    graph::ValueId b = c.affine ? graph::add_graph_input(g, "b", DType::kF32, {d}).value() : graph::kNone;
    graph::ValueId f = op("cast", "d_cast", {q}, {{"dtype", std::string("f32")}});
    graph::ValueId x = op("mul", "d_scale", {op("sub", "d_zp", {f, scalar("dz", -5)}), scalar("ds", 0.031f)});
    graph::ValueId y = op("layer_norm", "ln", {x, w, b}, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-5}});
    const double hi = c.out == DType::kI8 ? 127 : 32767;
    graph::ValueId r = op("round", "q_round", {op("mul", "q_scale", {y, scalar("qs", c.out == DType::kI8 ? 40.f : 9000.f)})});
    graph::ValueId z = op("clamp", "q_clamp", {op("add", "q_zp", {r, scalar("qz", 3)})}, {{"min", -hi - 1}, {"max", hi}});
    g.mark_output(op("cast", "q_cast", {z}, {{"dtype", std::string(graph::dtype_name(c.out))}}));
    std::vector<cpu::HostTensor> in = {random_tensor(DType::kI8, c.shape, seed += 3, -128, 128)};
    if (c.affine) {
      in.push_back(random_tensor(DType::kF32, {d}, seed + 1, 0.5, 2));
      in.push_back(random_tensor(DType::kF32, {d}, seed + 2, -1, 1));
    }
    EXPECT_EQ(joined(step_labels(g, in, 1, 0)), c.steps);  // within one step of the CPU
    kernels::KernelGraphOptions apart;
    apart.fuse_elementwise = false;
    auto fused = run_on_vulkan(g, in);
    auto alone = run_on_vulkan(g, in, nullptr, apart);
    ASSERT_TRUE(fused.ok() && alone.ok());
    EXPECT_TRUE(all_close(fused.value()[0], alone.value()[0], 0, 0)) << "the fused norm differs from its three steps";
  }
}

// RMSNorm as model code writes it: x * rsqrt(mean(x * x, -1, keepdim) + eps),
// then times a weight along the last axis (or none). Returns the graph and its
// inputs' shapes; `weight` 0 none, 1 a [D] input, 2 a [1] constant expanded to
// [D] (a checkpoint's ones stored once).
graph::Graph rms_norm_graph(DType dtype, const graph::Shape& shape, int weight, bool mean_escapes = false) {
  using Ints = std::vector<int64_t>;
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
  graph::ValueId sq = graph::add_op(g, "mul", "sq", {x, x}, {}).value()[0];
  graph::ValueId ms = graph::add_op(g, "reduce_mean", "ms", {sq}, {{"axes", Ints{-1}}, {"keepdim", int64_t{1}}}).value()[0];
  std::vector<float> eps_value = {1e-5f};
  cpu::HostTensor eps = cpu::HostTensor::from_doubles(dtype, {1}, {1e-5}).value();
  graph::ValueId e =
      graph::add_graph_constant(g, "eps", dtype, {1}, Blob::copy_of(eps.bytes.data(), eps.bytes.size())).value();
  graph::ValueId r = graph::add_op(g, "rsqrt", "r", {graph::add_op(g, "add", "a", {ms, e}, {}).value()[0]}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "mul", "scaled", {x, r}, {}).value()[0];
  if (weight == 1) {
    graph::ValueId w = graph::add_graph_input(g, "w", dtype, {shape.back()}).value();
    y = graph::add_op(g, "mul", "weighted", {y, w}, {}).value()[0];
  } else if (weight == 2) {
    cpu::HostTensor one = cpu::HostTensor::from_doubles(dtype, {1}, {1.5}).value();
    graph::ValueId w =
        graph::add_graph_constant(g, "w", dtype, {1}, Blob::copy_of(one.bytes.data(), one.bytes.size())).value();
    graph::ValueId wide = graph::add_op(g, "expand", "wide", {w}, {{"shape", Ints{shape.back()}}}).value()[0];
    y = graph::add_op(g, "mul", "weighted", {wide, y}, {}).value()[0];
  }
  g.mark_output(y);
  if (mean_escapes) g.mark_output(ms);
  return g;
}

TEST(VulkanRmsNorm, WrittenOutNormIsOneRowKernel) {
  uint32_t seed = 80;
  for (int weight : {0, 1, 2}) {
    for (const graph::Shape& shape : std::vector<graph::Shape>{{1, 1, 768}, {2, 5, 64}, {3, 7}, {4, 2048}}) {
      graph::Graph g = rms_norm_graph(DType::kF32, shape, weight);
      std::vector<cpu::HostTensor> in = {random_tensor(DType::kF32, shape, seed += 3, -3, 3)};
      if (weight == 1) in.push_back(random_tensor(DType::kF32, {shape.back()}, seed += 3, 0.5, 2));
      std::vector<std::string> steps = step_labels(g, in, 2e-5, 2e-5);
      ASSERT_EQ(steps.size(), 1u) << "weight " << weight << " " << graph::shape_to_string(shape);
      EXPECT_EQ(steps[0], weight ? "sq+ms+a+r+scaled+weighted" : "sq+ms+a+r+scaled");
    }
  }
  if (!f16_kernels_or_refused()) return;
  graph::Graph h = rms_norm_graph(DType::kF16, {2, 3, 100}, 1);
  EXPECT_EQ(step_labels(h, {random_tensor(DType::kF16, {2, 3, 100}, 90, -3, 3),
                            random_tensor(DType::kF16, {100}, 91, 0.5, 2)},
                        4e-3, 4e-3)
                .size(),
            1u);
}

TEST(VulkanRmsNorm, AnInnerValueReadElsewhereKeepsTheOpsApart) {
  // The mean is a region output too: the pattern is not taken, the ops run as before.
  graph::Graph g = rms_norm_graph(DType::kF32, {2, 5, 64}, 1, /*mean_escapes=*/true);
  std::vector<std::string> steps = step_labels(
      g, {random_tensor(DType::kF32, {2, 5, 64}, 95, -3, 3), random_tensor(DType::kF32, {64}, 96, 0.5, 2)}, 2e-5, 2e-5);
  EXPECT_GT(steps.size(), 1u);
}

// Hugging Face's LlamaRMSNorm in a half model: the input cast to f32, the norm
// in f32, the product cast back to half, then times the half weight. One
// row-norm dispatch reading and writing the half tensors. With the first cast
// alone (an f32 result), the casts and ops run apart, still correct.
graph::Graph hf_rms_norm_graph(const graph::Shape& shape, bool cast_back) {
  using Ints = std::vector<int64_t>;
  graph::Graph g;
  graph::ValueId xh = graph::add_graph_input(g, "x", DType::kF16, shape).value();
  graph::ValueId x = graph::add_op(g, "cast", "up", {xh}, {{"dtype", std::string("f32")}}).value()[0];
  graph::ValueId sq = graph::add_op(g, "mul", "sq", {x, x}, {}).value()[0];
  graph::ValueId ms = graph::add_op(g, "reduce_mean", "ms", {sq}, {{"axes", Ints{-1}}, {"keepdim", int64_t{1}}}).value()[0];
  cpu::HostTensor eps = cpu::HostTensor::from_doubles(DType::kF32, {1}, {1e-6}).value();
  graph::ValueId e =
      graph::add_graph_constant(g, "eps", DType::kF32, {1}, Blob::copy_of(eps.bytes.data(), eps.bytes.size())).value();
  graph::ValueId r = graph::add_op(g, "rsqrt", "r", {graph::add_op(g, "add", "a", {ms, e}, {}).value()[0]}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "mul", "scaled", {x, r}, {}).value()[0];
  if (cast_back) {
    y = graph::add_op(g, "cast", "down", {y}, {{"dtype", std::string("f16")}}).value()[0];
    graph::ValueId w = graph::add_graph_input(g, "w", DType::kF16, {shape.back()}).value();
    y = graph::add_op(g, "mul", "weighted", {w, y}, {}).value()[0];
  }
  g.mark_output(y);
  return g;
}

TEST(VulkanRmsNorm, HuggingFaceHalfNormComputedInF32IsOneRowKernel) {
  if (!f16_kernels_or_refused()) return;
  for (const graph::Shape& shape : std::vector<graph::Shape>{{1, 1, 2048}, {2, 5, 64}}) {
    std::vector<cpu::HostTensor> in = {random_tensor(DType::kF16, shape, 120, -3, 3),
                                       random_tensor(DType::kF16, {shape.back()}, 121, 0.5, 2)};
    EXPECT_EQ(joined(step_labels(hf_rms_norm_graph(shape, true), in, 4e-3, 4e-3)),
              "up+sq+ms+a+r+scaled+down+weighted")
        << graph::shape_to_string(shape);
    in.pop_back();
    EXPECT_GT(step_labels(hf_rms_norm_graph(shape, false), in, 1e-4, 1e-4).size(), 1u);
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test
