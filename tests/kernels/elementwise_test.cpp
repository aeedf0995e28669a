// Vulkan elementwise kernels against the CPU reference, on the test device.
// Tolerances: exact ops (abs, neg, relu, floor, ceil, clamp, add, sub, mul,
// max, min, comparisons) 0; IEEE-rounded division and sqrt 1 ulp-ish (1e-6
// relative); transcendental functions 2e-5 abs + 2e-5 relative, the accuracy
// GPU drivers give their builtins over the ranges used here.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/device_buffer.h"
#include "kernels/dispatch_sequence.h"
#include "kernels/kernel_cache.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;

cpu::HostTensor tensor_of(const std::vector<double>& values, const graph::Shape& shape) {
  return cpu::HostTensor::from_doubles(DType::kF32, shape, values).value();
}

struct UnaryCase {
  const char* op;
  double lo, hi, atol, rtol;
};

const UnaryCase kUnary[] = {
    {"abs", -4, 4, 0, 0},          {"neg", -4, 4, 0, 0},          {"exp", -4, 4, 2e-5, 2e-5},
    {"log", 0.05, 10, 2e-5, 2e-5}, {"sqrt", 0, 10, 1e-6, 1e-6},   {"rsqrt", 0.05, 10, 2e-5, 2e-5},
    {"reciprocal", 0.1, 4, 1e-6, 1e-6}, {"sin", -4, 4, 2e-5, 2e-5}, {"cos", -4, 4, 2e-5, 2e-5},
    {"tanh", -6, 6, 2e-5, 2e-5},   {"sigmoid", -8, 8, 2e-5, 2e-5}, {"relu", -4, 4, 0, 0},
    {"gelu", -5, 5, 2e-5, 2e-5},   {"erf", -3, 3, 2e-5, 2e-5},    {"floor", -9, 9, 0, 0},
    {"ceil", -9, 9, 0, 0}};

TEST(VulkanElementwise, EveryUnaryOpMatchesTheReference) {
  uint32_t seed = 1;
  for (const UnaryCase& c : kUnary) {
    for (const graph::Shape& shape : {graph::Shape{7}, graph::Shape{3, 5, 7}, graph::Shape{2, 3, 517, 3}}) {
      EXPECT_TRUE(node_matches_cpu(c.op, {random_tensor(DType::kF32, shape, seed++, c.lo, c.hi)}, {}, c.atol, c.rtol))
          << c.op << " " << graph::shape_to_string(shape);
    }
  }
}

TEST(VulkanElementwise, GeluTanhApproximation) {
  EXPECT_TRUE(node_matches_cpu("gelu", {random_tensor(DType::kF32, {1000}, 5, -6, 6)},
                               {{"approximate", std::string("tanh")}}, 2e-5, 2e-5));
}

TEST(VulkanElementwise, ClampWithBothOrOneBound) {
  auto x = random_tensor(DType::kF32, {33, 9}, 11, -5, 5);
  EXPECT_TRUE(node_matches_cpu("clamp", {x}, {{"min", -1.5}, {"max", 2.25}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("clamp", {x}, {{"min", 0.5}}, 0, 0));
  EXPECT_TRUE(node_matches_cpu("clamp", {x}, {{"max", -0.5}}, 0, 0));
}

TEST(VulkanElementwise, LargeTensorSpansMoreThanOneDispatchRow) {
  // 2^20 + 3 elements: 4097 workgroups of 256, past any single-row assumption.
  EXPECT_TRUE(node_matches_cpu("sin", {random_tensor(DType::kF32, {(1 << 20) + 3}, 3, -3, 3)}, {}, 2e-5, 2e-5));
}

// A kernel's binding wider than maxStorageBufferRange is refused before
// anything is recorded, every such binding named (a folded expand of a
// weight bound 192 MiB to a GEMM on lavapipe's 128 MiB range: the validation
// layer's error, and undefined behaviour elsewhere).
TEST(VulkanDispatchSequence, BindingsPastTheDeviceRangeAreRefusedByName) {
  const SharedGpuContextPtr ctx = test_context();
  const auto cache = kernels::KernelCache::shared(ctx);
  Result<const kernels::Kernel*> copy = cache->get(kernels::KernelKey{"peak_copy", {}, 2, 4});
  ASSERT_TRUE(copy.ok()) << copy.status().to_string();
  Result<gpu::DeviceBuffer> buffer = gpu::DeviceBuffer::create(*ctx, 4096, gpu::MemoryKind::kDevice, "small");
  ASSERT_TRUE(buffer.ok()) << buffer.status().to_string();
  const VkDeviceSize range = ctx->properties().limits.maxStorageBufferRange;
  kernels::DispatchSequence sequence(ctx);
  for (const char* label : {"fits", "wide_a", "wide_b"}) {
    kernels::Step step;
    step.label = label;
    step.kernel = *copy;
    const VkDeviceSize size = std::string(label) == "fits" ? 4096 : range + 16;
    step.bindings = {{gpu::BufferRange{buffer->buffer(), 0, 4096}, false}, {gpu::BufferRange{buffer->buffer(), 0, size}, true}};
    sequence.add(std::move(step));
  }
  const auto& vk = ctx->vkd();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = ctx->queue_family_index();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(vk.vkCreateCommandPool(ctx->device(), &pool_info, nullptr, &pool), VK_SUCCESS);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  ASSERT_EQ(ctx->allocate_command_buffer(pool, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  ASSERT_EQ(vk.vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
  const Status s = sequence.record(cb);
  vk.vkDestroyCommandPool(ctx->device(), pool, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("maxStorageBufferRange"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'wide_a' binding 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'wide_b' binding 1"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("'fits'"), std::string::npos) << s.message();
}

TEST(VulkanElementwise, BinaryOpsBroadcast) {
  const char* ops[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
  const std::pair<graph::Shape, graph::Shape> shapes[] = {
      {{4, 1, 5}, {3, 1}}, {{1}, {2, 3}}, {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{5, 1, 1, 7}, {1, 6, 1}}, {{}, {9}}};
  uint32_t seed = 100;
  for (const char* op : ops) {
    for (const auto& s : shapes) {
      auto a = random_tensor(DType::kF32, s.first, seed++, -3, 3);
      auto b = random_tensor(DType::kF32, s.second, seed++, 0.5, 3);  // positive: safe divisors
      double tol = std::string(op) == "div" ? 1e-6 : 0;
      EXPECT_TRUE(node_matches_cpu(op, {a, b}, {}, tol, tol))
          << op << " " << graph::shape_to_string(s.first) << " x " << graph::shape_to_string(s.second);
    }
  }
}

// Rank 8 (mvit_v2_s's relative-position terms: [B, heads, qt, qh, qw, kt, kh, kw] plus
// a term broadcast over kt and kw): dims merged where both operands read them as one.
TEST(VulkanElementwise, RankEightBroadcastsWhoseWalkMergesToSixDims) {
  auto supports = [](const graph::Shape& a, const graph::Shape& b, const std::string& op) {
    graph::Graph g;
    const graph::ValueId x = graph::add_graph_input(g, "in0", DType::kF32, a).value();
    const graph::ValueId y = graph::add_graph_input(g, "in1", DType::kF32, b).value();
    const std::vector<graph::ValueId> out = graph::add_op(g, op, op + "_0", {x, y}, {}).value();
    g.mark_output(out[0]);
    return kernels::vulkan_supports(g, g.nodes()[0]);
  };
  const graph::Shape attn{1, 2, 2, 3, 3, 2, 3, 3}, rel{1, 2, 2, 3, 3, 1, 3, 1};
  uint32_t seed = 300;
  for (const char* op : {"add", "mul", "greater"}) {
    EXPECT_EQ(supports(attn, rel, op), "") << op;
    EXPECT_TRUE(node_matches_cpu(op, {random_tensor(DType::kF32, attn, seed, -3, 3),
                                      random_tensor(DType::kF32, rel, seed + 1, -3, 3)}, {}, 0, 0))
        << op;
    seed += 2;
  }
  // Unary ops walk their elements in order at any rank.
  EXPECT_TRUE(node_matches_cpu("exp", {random_tensor(DType::kF32, attn, seed, -2, 2)}, {}, 2e-5, 2e-5));
  // Broadcasts alternating dim by dim leave eight dims to walk: refused, by name.
  const std::string why = supports({2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}, "add");
  EXPECT_NE(why.find("add 'add_0' walks 8 separate dims of 'add_0:0' (at most 6)"), std::string::npos) << why;
}

TEST(VulkanElementwise, PowHandlesNegativeBasesWithIntegralExponents) {
  auto base = tensor_of({-2.0, -2.0, -1.5, 3.0, 0.0, 2.0}, {6});
  auto exponent = tensor_of({2.0, 3.0, 2.0, 0.5, 2.0, -1.0}, {6});
  EXPECT_TRUE(node_matches_cpu("pow", {base, exponent}, {}, 1e-5, 1e-5));
}

TEST(VulkanElementwise, ComparisonsWritePackedBools) {
  const char* ops[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  uint32_t seed = 200;
  for (const char* op : ops) {
    // Small integers as floats so equality happens often; 7 * 11 = 77 is not a multiple of 4.
    auto a = random_tensor(DType::kF32, {7, 11}, seed++, -3, 3);
    auto b = random_tensor(DType::kF32, {1, 11}, seed++, -3, 3);
    a = cpu::HostTensor::from_doubles(DType::kF32, a.shape, [&] {
          std::vector<double> v = a.to_doubles();
          for (double& x : v) x = std::round(x);
          return v;
        }()).value();
    EXPECT_TRUE(node_matches_cpu(op, {a, b}, {}, 0, 0)) << op;
  }
}

TEST(VulkanElementwise, ConstantOperandsAreUploadedOnce) {
  auto x = random_tensor(DType::kF32, {4, 8}, 300, -2, 2);
  auto w = random_tensor(DType::kF32, {8}, 301, -2, 2);
  EXPECT_TRUE(node_matches_cpu("mul", {x, w}, {}, 0, 0, {false, true}));
}

TEST(VulkanElementwise, HalfPrecision) {
  if (!f16_kernels_or_refused()) return;
  // f16 results are rounded once from f32 math: within 1e-3 relative of the reference.
  EXPECT_TRUE(node_matches_cpu("sin", {random_tensor(DType::kF16, {1001}, 400, -3, 3)}, {}, 2e-3, 2e-3));
  EXPECT_TRUE(node_matches_cpu("add", {random_tensor(DType::kF16, {3, 1, 5}, 401, -3, 3),
                                       random_tensor(DType::kF16, {4, 1}, 402, -3, 3)},
                               {}, 2e-3, 2e-3));
  EXPECT_TRUE(node_matches_cpu("less", {random_tensor(DType::kF16, {9}, 403, -3, 3),
                                        random_tensor(DType::kF16, {9}, 404, -3, 3)},
                               {}, 0, 0));
}

TEST(VulkanElementwise, IntegerInputsOfFloatOnlyKernelsAreNotTakenAndSaySo) {
  // relu has no integer kernel (abs, neg and the arithmetic ops do: math_logic_test.cpp).
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kI32, {4}).value();
  graph::ValueId y = graph::add_op(g, "relu", "relu_0", {a}, {}).value()[0];
  g.mark_output(y);
  std::string why = kernels::vulkan_supports(g, g.node(0));
  EXPECT_NE(why.find("i32"), std::string::npos) << why;
}

TEST(VulkanElementwise, ChainOfOpsRecordsOneDispatchEachAndBarriersOnlyOnDependencies) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {64}).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId c = graph::add_op(g, "cos", "cos_0", {x}, {}).value()[0];  // independent of sin
  graph::ValueId r = graph::add_op(g, "reciprocal", "reciprocal_0", {c}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, r}, {}).value()[0];
  g.mark_output(m);
  RunStats stats;
  auto input = random_tensor(DType::kF32, {64}, 500, -1, 1);
  kernels::KernelGraphOptions unfused;
  unfused.fuse_elementwise = false;
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, {input}, &stats, unfused);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(stats.dispatches, 4u);
  EXPECT_EQ(stats.barriers, 2u) << "sin and cos share a phase; reciprocal and mul each wait";
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(g, {input});
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(all_close(got.value()[0], want.value()[0], 2e-5, 2e-5));
}

graph::Graph rfc_suffix() {
  // The RFC model's VGF suffix: sin, cos, reciprocal, mul, then a transpose.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 3, 4, 4}).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId c = graph::add_op(g, "cos", "cos_0", {x}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "reciprocal", "reciprocal_0", {c}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, r}, {}).value()[0];
  graph::ValueId t = graph::add_op(g, "transpose", "transpose_1", {m}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})
                         .value()[0];
  g.mark_output(t);
  return g;
}

TEST(VulkanFusion, ElementwiseChainBecomesOneDispatch) {
  graph::Graph g = rfc_suffix();
  auto input = random_tensor(DType::kF32, {1, 3, 4, 4}, 600, -1, 1);
  RunStats fused, unfused;
  kernels::KernelGraphOptions off;
  off.fuse_elementwise = false;
  auto a = run_on_vulkan(g, {input}, &fused);
  auto b = run_on_vulkan(g, {input}, &unfused, off);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().message() << b.status().message();
  EXPECT_EQ(fused.dispatches, 2u) << "sin+cos+reciprocal+mul fused, then the transpose";
  EXPECT_EQ(unfused.dispatches, 5u);
  auto want = cpu::run_graph(g, {input}).value();
  EXPECT_TRUE(all_close(a.value()[0], want[0], 2e-5, 2e-5));
  EXPECT_TRUE(all_close(b.value()[0], want[0], 2e-5, 2e-5));
  EXPECT_LT(fused.arena_bytes, unfused.arena_bytes) << "fused intermediates need no memory";
}

TEST(VulkanFusion, BroadcastInputsAndEscapingValuesAreRespected) {
  // y = relu(x * w + b) with w, b broadcast over rows; z = exp(x * w) also
  // escapes, so the product must stay materialized for both consumers.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {33, 17}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF32, {17}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, {33, 1}).value();
  graph::ValueId xw = graph::add_op(g, "mul", "mul_0", {x, w}, {}).value()[0];
  graph::ValueId s = graph::add_op(g, "add", "add_0", {xw, b}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "relu", "relu_0", {s}, {}).value()[0];
  graph::ValueId z = graph::add_op(g, "exp", "exp_0", {xw}, {}).value()[0];
  g.mark_output(y);
  g.mark_output(z);
  std::vector<cpu::HostTensor> in = {random_tensor(DType::kF32, {33, 17}, 601, -2, 2),
                                     random_tensor(DType::kF32, {17}, 602, -2, 2),
                                     random_tensor(DType::kF32, {33, 1}, 603, -2, 2)};
  RunStats stats;
  auto got = run_on_vulkan(g, in, &stats);
  ASSERT_TRUE(got.ok()) << got.status().message();
  auto want = cpu::run_graph(g, in).value();
  EXPECT_TRUE(all_close(got.value()[0], want[0], 2e-5, 2e-5));
  EXPECT_TRUE(all_close(got.value()[1], want[1], 2e-5, 2e-5));
  EXPECT_LT(stats.dispatches, 4u);
}

// The steps' labels of `g` on Vulkan, space-separated; every output within 2e-5 of the reference.
std::string steps_matching(const graph::Graph& g, const std::vector<cpu::HostTensor>& in,
                           const kernels::KernelGraphOptions& options = {}) {
  return joined(step_labels(g, in, 2e-5, 2e-5, options));
}

using Ints = std::vector<int64_t>;

// RoPE in rotate-half form over heads transposed out of a projection: the
// transpose and the four slices are read in place by the fused chains.
TEST(VulkanFusion, SlicesAndTransposesAreReadInPlace) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 5, 3, 8}).value();  // [B, T, H, D]
  graph::ValueId cs = graph::add_graph_input(g, "cos", DType::kF32, {5, 4}).value();
  graph::ValueId sn = graph::add_graph_input(g, "sin", DType::kF32, {5, 4}).value();
  graph::ValueId t = graph::add_op(g, "transpose", "heads", {x}, {{"perm", Ints{0, 2, 1, 3}}}).value()[0];
  auto half = [&](const char* name, int64_t start) {
    return graph::add_op(g, "slice", name, {t}, {{"axes", Ints{3}}, {"starts", Ints{start}}, {"ends", Ints{start + 4}}})
        .value()[0];
  };
  graph::ValueId x1 = half("x1", 0), x2 = half("x2", 4);
  auto op = [&](const char* o, const std::string& name, graph::ValueId a, graph::ValueId b) {
    return graph::add_op(g, o, name, {a, b}, {}).value()[0];
  };
  graph::ValueId lo = op("sub", "lo", op("mul", "lo_a", x1, cs), op("mul", "lo_b", x2, sn));
  graph::ValueId hi = op("add", "hi", op("mul", "hi_a", x2, cs), op("mul", "hi_b", x1, sn));
  g.mark_output(graph::add_op(g, "concat", "rope", {lo, hi}, {{"axis", int64_t{3}}}).value()[0]);
  // One node alone over a slice: relu(x[..., 1:7:2]) through the fused kernel.
  graph::ValueId strided =
      graph::add_op(g, "slice", "odd", {x}, {{"axes", Ints{3}}, {"starts", Ints{1}}, {"ends", Ints{7}}, {"steps", Ints{2}}})
          .value()[0];
  g.mark_output(graph::add_op(g, "relu", "relu", {strided}, {}).value()[0]);
  // An expanded weight (a norm's ones stored as [1]) read with stride 0.
  std::vector<float> one = {1.5f};
  graph::ValueId w = graph::add_graph_constant(g, "w", DType::kF32, {1}, Blob::copy_of(one.data(), 4)).value();
  graph::ValueId wide = graph::add_op(g, "expand", "wide", {w}, {{"shape", Ints{8}}}).value()[0];
  g.mark_output(op("mul", "scaled", x, wide));
  std::vector<cpu::HostTensor> in = {random_tensor(DType::kF32, {1, 5, 3, 8}, 610, -2, 2),
                                     random_tensor(DType::kF32, {5, 4}, 611, -1, 1),
                                     random_tensor(DType::kF32, {5, 4}, 612, -1, 1)};
  const std::string steps = steps_matching(g, in);
  for (const char* gone : {"heads", "x1", "x2", "odd", "wide"}) {
    EXPECT_EQ((" " + steps + " ").find(std::string(" ") + gone + " "), std::string::npos) << gone << " ran: " << steps;
  }
  EXPECT_NE(steps.find("relu"), std::string::npos) << steps;
  // Without fusion every op reads memory of its own: the movement ops run.
  kernels::KernelGraphOptions off;
  off.fuse_elementwise = false;
  const std::string unfused = steps_matching(g, in, off);
  EXPECT_NE(unfused.find("x1"), std::string::npos) << unfused;
  EXPECT_NE(unfused.find("wide"), std::string::npos) << unfused;
}

// A concat of two equal parts made by elementwise chains is the chains'
// dispatch: RoPE's rotate-half forms, as the Llama sample writes it
// (cat([x1 cos - x2 sin, x2 cos + x1 sin])) and as Hugging Face does
// (cat([-x2, x1]) read by x cos + r sin: the concat reads x1 in place), along
// the last axis and along a middle one with a broadcast input, f32 and f16.
// A part that something else reads too is an input of the dispatch instead.
TEST(VulkanFusion, AConcatOfTwoChainsEndsTheirDispatch) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) return;
    const double tol = dtype == DType::kF16 ? 4e-3 : 2e-5;
    uint32_t seed = 700;
    auto op = [](graph::Graph& g, const char* o, const std::string& name, std::vector<graph::ValueId> in) {
      return graph::add_op(g, o, name, std::move(in), {}).value()[0];
    };
    auto rope_input = [&](graph::Graph& g, std::vector<cpu::HostTensor>& in, graph::Shape cs_shape) {
      graph::ValueId x = graph::add_graph_input(g, "x", dtype, {1, 5, 3, 8}).value();  // [B, T, H, D]
      graph::ValueId cs = graph::add_graph_input(g, "cos", dtype, cs_shape).value();
      graph::ValueId sn = graph::add_graph_input(g, "sin", dtype, cs_shape).value();
      in = {random_tensor(dtype, {1, 5, 3, 8}, seed++, -2, 2), random_tensor(dtype, cs_shape, seed++, -1, 1),
            random_tensor(dtype, cs_shape, seed++, -1, 1)};
      graph::ValueId t = graph::add_op(g, "transpose", "heads", {x}, {{"perm", Ints{0, 2, 1, 3}}}).value()[0];
      auto half = [&](const char* name, int64_t start) {
        return graph::add_op(g, "slice", name, {t}, {{"axes", Ints{3}}, {"starts", Ints{start}}, {"ends", Ints{start + 4}}})
            .value()[0];
      };
      return std::array<graph::ValueId, 5>{t, half("x1", 0), half("x2", 4), cs, sn};
    };
    {  // The sample's form.
      graph::Graph g;
      std::vector<cpu::HostTensor> in;
      auto [t, x1, x2, cs, sn] = rope_input(g, in, {5, 4});
      graph::ValueId lo = op(g, "sub", "lo", {op(g, "mul", "lo_a", {x1, cs}), op(g, "mul", "lo_b", {x2, sn})});
      graph::ValueId hi = op(g, "add", "hi", {op(g, "mul", "hi_a", {x2, cs}), op(g, "mul", "hi_b", {x1, sn})});
      g.mark_output(graph::add_op(g, "concat", "rope", {lo, hi}, {{"axis", int64_t{3}}}).value()[0]);
      EXPECT_EQ(joined(step_labels(g, in, tol, tol)), "lo_a+lo_b+lo+hi_a+hi_b+hi+rope") << graph::dtype_name(dtype);
    }
    {  // Hugging Face's form: the rotated half is one dispatch, its use another.
      graph::Graph g;
      std::vector<cpu::HostTensor> in;
      auto [t, x1, x2, cs, sn] = rope_input(g, in, {5, 8});
      graph::ValueId rot = graph::add_op(g, "concat", "rot", {op(g, "neg", "neg", {x2}), x1}, {{"axis", int64_t{-1}}})
                               .value()[0];
      g.mark_output(op(g, "add", "out", {op(g, "mul", "xc", {t, cs}), op(g, "mul", "rs", {rot, sn})}));
      EXPECT_EQ(joined(step_labels(g, in, tol, tol)), "neg+rot xc+rs+out") << graph::dtype_name(dtype);
    }
    // Along a middle axis, a part's input broadcast along it and another's
    // along the innermost; and with the left part a region output too.
    for (bool left_is_output : {false, true}) {
      graph::Graph g;
      graph::ValueId a = graph::add_graph_input(g, "a", dtype, {2, 3, 5}).value();
      graph::ValueId b = graph::add_graph_input(g, "b", dtype, {2, 1, 5}).value();
      graph::ValueId c = graph::add_graph_input(g, "c", dtype, {3, 1}).value();
      graph::ValueId left = op(g, "relu", "left", {op(g, "mul", "ab", {a, b})});
      graph::ValueId right = op(g, "sub", "right", {b, c});
      g.mark_output(graph::add_op(g, "concat", "cat", {left, right}, {{"axis", int64_t{1}}}).value()[0]);
      if (left_is_output) g.mark_output(left);
      std::vector<cpu::HostTensor> in = {random_tensor(dtype, {2, 3, 5}, seed++, -2, 2),
                                         random_tensor(dtype, {2, 1, 5}, seed++, -2, 2),
                                         random_tensor(dtype, {3, 1}, seed++, -2, 2)};
      EXPECT_EQ(joined(step_labels(g, in, tol, tol)), left_is_output ? "ab+left right+cat" : "ab+left+right+cat")
          << graph::dtype_name(dtype);
    }
  }
}

// The fused kernel walks the fewest dims: unit dims dropped, dims every
// strided input steps over as one merged. Broadcasts in the middle, at the
// ends, of every input, a transposed view and a slice must survive that.
TEST(VulkanFusion, BroadcastsAndViewsOverMergedDims) {
  struct Case {
    graph::Shape x, a, b;
  };
  uint32_t seed = 640;
  for (const Case& c : {Case{{2, 1, 3, 4, 1, 5}, {3, 1, 1, 1}, {1, 4, 1, 5}}, Case{{6, 7}, {6, 1}, {1, 7}},
                        Case{{1, 1, 9}, {1}, {9}}, Case{{4, 3, 2}, {4, 3, 2}, {3, 1}}, Case{{5, 1}, {1, 1}, {5, 1}}}) {
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, c.x).value();
    graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, c.a).value();
    graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, c.b).value();
    graph::ValueId m = graph::add_op(g, "mul", "m", {x, a}, {}).value()[0];
    g.mark_output(graph::add_op(g, "relu", "r", {graph::add_op(g, "add", "s", {m, b}, {}).value()[0]}, {}).value()[0]);
    EXPECT_NE(steps_matching(g, {random_tensor(DType::kF32, c.x, seed += 3, -2, 2),
                                 random_tensor(DType::kF32, c.a, seed += 3, -2, 2),
                                 random_tensor(DType::kF32, c.b, seed += 3, -2, 2)}),
              "")
        << graph::shape_to_string(c.x);
  }
  // A transposed, sliced view beside a broadcast: [3, 4, 6] -> [4, 3, 6] -> [4, 3, 2:5].
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {3, 4, 6}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF32, {3, 1}).value();
  graph::ValueId t = graph::add_op(g, "transpose", "t", {x}, {{"perm", Ints{1, 0, 2}}}).value()[0];
  graph::ValueId part =
      graph::add_op(g, "slice", "p", {t}, {{"axes", Ints{2}}, {"starts", Ints{2}}, {"ends", Ints{5}}}).value()[0];
  g.mark_output(graph::add_op(g, "mul", "m", {part, w}, {}).value()[0]);
  const std::string steps = steps_matching(
      g, {random_tensor(DType::kF32, {3, 4, 6}, 660, -2, 2), random_tensor(DType::kF32, {3, 1}, 661, -2, 2)});
  EXPECT_EQ(steps, "m");
}

// A half model's f32 island, as PyTorch decomposes SiLU for f16: cast up,
// sigmoid, multiply, cast down, then the f16 gate. The casts fuse (rounding
// to half inside the f32 registers), so the chain is one dispatch, and one
// with the linear before it, as in f32.
TEST(VulkanFusion, FloatCastsInsideAChainFuse) {
  if (!f16_kernels_or_refused()) return;
  auto silu_gate = [](graph::Graph& g, graph::ValueId h, graph::ValueId gate) {
    graph::ValueId up = graph::add_op(g, "cast", "up", {h}, {{"dtype", std::string("f32")}}).value()[0];
    graph::ValueId s = graph::add_op(g, "sigmoid", "sig", {up}, {}).value()[0];
    graph::ValueId m = graph::add_op(g, "mul", "silu", {up, s}, {}).value()[0];
    graph::ValueId down = graph::add_op(g, "cast", "down", {m}, {{"dtype", std::string("f16")}}).value()[0];
    return graph::add_op(g, "mul", "gated", {down, gate}, {}).value()[0];
  };
  graph::Graph g;
  graph::ValueId h = graph::add_graph_input(g, "h", DType::kF16, {3, 40}).value();
  graph::ValueId gate = graph::add_graph_input(g, "gate", DType::kF16, {3, 40}).value();
  g.mark_output(silu_gate(g, h, gate));
  std::vector<cpu::HostTensor> in = {random_tensor(DType::kF16, {3, 40}, 670, -4, 4),
                                     random_tensor(DType::kF16, {3, 40}, 671, -2, 2)};
  EXPECT_EQ(joined(step_labels(g, in, 4e-3, 4e-3)), "up+sig+silu+down+gated");
  // After a linear: its epilogue.
  graph::Graph l;
  graph::ValueId x = graph::add_graph_input(l, "x", DType::kF16, {2, 32}).value();
  graph::ValueId w = graph::add_graph_input(l, "w", DType::kF16, {24, 32}).value();
  graph::ValueId gate2 = graph::add_graph_input(l, "gate", DType::kF16, {2, 24}).value();
  graph::ValueId y = graph::add_op(l, "linear", "w1", {x, w}, {}).value()[0];
  l.mark_output(silu_gate(l, y, gate2));
  std::vector<cpu::HostTensor> lin = {random_tensor(DType::kF16, {2, 32}, 672, -1, 1),
                                      random_tensor(DType::kF16, {24, 32}, 673, -0.3, 0.3),
                                      random_tensor(DType::kF16, {2, 24}, 674, -2, 2)};
  EXPECT_EQ(joined(step_labels(l, lin, 8e-3, 8e-3)), "w1+up+sig+silu+down+gated");
  // A chain that would stop inside the island (its input f16, its output
  // f32) is no one kernel's: the cast and the sigmoid run on their own.
  graph::Graph k;
  graph::ValueId hk = graph::add_graph_input(k, "h", DType::kF16, {3, 40}).value();
  graph::ValueId upk = graph::add_op(k, "cast", "up", {hk}, {{"dtype", std::string("f32")}}).value()[0];
  k.mark_output(graph::add_op(k, "sigmoid", "sig", {upk}, {}).value()[0]);
  EXPECT_EQ(step_labels(k, {in[0]}, 2e-5, 2e-5).size(), 2u);
}

// A quantized model's float islands: a dequantize (cast from i8 or i16,
// sub, mul) and a quantize (mul, round, add, clamp, cast to i8 or i16) around
// float ops are one dispatch, which loads and stores the integers converted
// (odd element counts: a part word at the end; an i8 input read through a
// transpose in place). Bit for bit as the reference.
TEST(VulkanFusion, IntegerEdgesOfAnF32ChainFuse) {
  auto scalar = [](graph::Graph& g, const std::string& name, float v) {
    return graph::add_graph_constant(g, name, DType::kF32, {1}, Blob::copy_of(&v, 4)).value();
  };
  auto op = [](graph::Graph& g, const char* o, const std::string& name, std::vector<graph::ValueId> in,
               graph::AttrMap attrs = {}) { return graph::add_op(g, o, name, std::move(in), std::move(attrs)).value()[0]; };
  auto dequantize = [&](graph::Graph& g, graph::ValueId q, const std::string& p) {
    graph::ValueId f = op(g, "cast", p + "cast", {q}, {{"dtype", std::string("f32")}});
    return op(g, "mul", p + "scale", {op(g, "sub", p + "zp", {f, scalar(g, p + "z", 3)}), scalar(g, p + "s", 0.05f)});
  };
  auto quantize = [&](graph::Graph& g, graph::ValueId x, DType to, const std::string& p) {
    const double hi = to == DType::kI8 ? 127 : 32767;
    graph::ValueId r = op(g, "round", p + "round", {op(g, "mul", p + "scale", {x, scalar(g, p + "s", 7.5f)})});
    graph::ValueId c = op(g, "clamp", p + "clamp", {op(g, "add", p + "zp", {r, scalar(g, p + "z", -2)})},
                          {{"min", -hi - 1}, {"max", hi}});
    return op(g, "cast", p + "cast", {c}, {{"dtype", std::string(graph::dtype_name(to))}});
  };
  for (DType in_type : {DType::kI8, DType::kI16}) {
    for (DType out_type : {DType::kI8, DType::kI16}) {
      SCOPED_TRACE(std::string(graph::dtype_name(in_type)) + " -> " + graph::dtype_name(out_type));
      graph::Graph g;
      graph::ValueId x = graph::add_graph_input(g, "x", in_type, {3, 5, 7}).value();
      // Requantized through a float op: one dispatch, integers at both ends.
      g.mark_output(quantize(g, op(g, "tanh", "act", {dequantize(g, x, "d_")}), out_type, "q_"));
      // Dequantized through a transpose of the integers, read in place.
      graph::ValueId t = op(g, "transpose", "heads", {x}, {{"perm", Ints{0, 2, 1}}});
      g.mark_output(op(g, "relu", "relu", {dequantize(g, t, "t_")}));
      // Quantized from a float input.
      graph::ValueId f = graph::add_graph_input(g, "f", DType::kF32, {2, 9}).value();
      g.mark_output(quantize(g, f, out_type, "f_"));
      const double span = in_type == DType::kI8 ? 128 : 32768;
      std::vector<cpu::HostTensor> in = {random_tensor(in_type, {3, 5, 7}, 680, -span, span),
                                         random_tensor(DType::kF32, {2, 9}, 681, -30, 30)};
      EXPECT_EQ(joined(step_labels(g, in, 0, 0)),
                "d_cast+d_zp+d_scale+act+q_scale+q_round+q_zp+q_clamp+q_cast t_cast+t_zp+t_scale+relu "
                "f_scale+f_round+f_zp+f_clamp+f_cast");
    }
  }
  // Each conversion as the cast kernel makes it: saturated, truncated toward zero, NaN to 0.
  graph::Graph g;
  graph::ValueId f = graph::add_graph_input(g, "f", DType::kF32, {11}).value();
  graph::ValueId scaled = op(g, "mul", "scaled", {f, scalar(g, "s", 1.0f)});
  g.mark_output(op(g, "cast", "to_i8", {scaled}, {{"dtype", std::string("i8")}}));
  std::vector<float> edge = {-1e9f, -128.9f, -2.7f, -0.5f, 0.5f, 2.7f, 126.99f, 127.5f, 300.0f, NAN, INFINITY};
  cpu::HostTensor values =
      cpu::HostTensor::from_doubles(DType::kF32, {11}, std::vector<double>(edge.begin(), edge.end())).value();
  EXPECT_EQ(joined(step_labels(g, {values}, 0, 0)), "scaled+to_i8");
}

TEST(VulkanFusion, ChainsInAGemmStoreReadTheirInputsAsThemselves) {
  // linear(x, w) + z[:, 2:10]: the add folds into the GEMM's store, which
  // reads its inputs whole, so the slice runs.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {6, 16}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF32, {8, 16}).value();
  graph::ValueId z = graph::add_graph_input(g, "z", DType::kF32, {6, 12}).value();
  graph::ValueId y = graph::add_op(g, "linear", "proj", {x, w}, {}).value()[0];
  graph::ValueId part =
      graph::add_op(g, "slice", "part", {z}, {{"axes", Ints{1}}, {"starts", Ints{2}}, {"ends", Ints{10}}}).value()[0];
  g.mark_output(graph::add_op(g, "add", "residual", {y, part}, {}).value()[0]);
  const std::string steps = steps_matching(g, {random_tensor(DType::kF32, {6, 16}, 620, -1, 1),
                                               random_tensor(DType::kF32, {8, 16}, 621, -1, 1),
                                               random_tensor(DType::kF32, {6, 12}, 622, -1, 1)});
  EXPECT_NE(steps.find("part"), std::string::npos) << steps;
  EXPECT_NE(steps.find("proj+residual"), std::string::npos) << steps;
}

// One-element constants are immediates, compiled into the fused pipeline:
// a chain over three inputs and five scalar constants (four compiled in, the
// fifth bound: four bindings, where all bound would need eight) is one
// dispatch in f32 and f16, and matches the reference.
TEST(VulkanFusion, ScalarConstantsAreImmediates) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    graph::Graph g;
    std::vector<cpu::HostTensor> in;
    std::vector<graph::ValueId> inputs;
    for (int i = 0; i < 3; ++i) {
      inputs.push_back(graph::add_graph_input(g, "x" + std::to_string(i), dtype, {5, 7}).value());
      in.push_back(random_tensor(dtype, {5, 7}, 610 + i, -2, 2));
    }
    auto scalar = [&](const std::string& name, double value) {
      cpu::HostTensor t = random_tensor(dtype, {1}, 620, value, value);
      return graph::add_graph_constant(g, name, dtype, {1}, Blob::copy_of(t.bytes.data(), t.bytes.size())).value();
    };
    graph::ValueId v = graph::add_op(g, "add", "a0", {inputs[0], scalar("three", 3)}, {}).value()[0];
    v = graph::add_op(g, "mul", "m0", {v, inputs[1]}, {}).value()[0];
    v = graph::add_op(g, "div", "d0", {v, scalar("six", 6)}, {}).value()[0];
    v = graph::add_op(g, "sub", "s0", {v, inputs[2]}, {}).value()[0];
    v = graph::add_op(g, "mul", "m1", {v, scalar("half", 0.5)}, {}).value()[0];
    v = graph::add_op(g, "add", "a1", {v, inputs[0]}, {}).value()[0];
    v = graph::add_op(g, "maximum", "x0", {v, scalar("floor", -0.25)}, {}).value()[0];
    v = graph::add_op(g, "mul", "m2", {v, scalar("two", 2)}, {}).value()[0];
    g.mark_output(v);
    RunStats stats;
    auto got = run_on_vulkan(g, in, &stats);
    ASSERT_TRUE(got.ok()) << got.status().message();
    auto want = cpu::run_graph(g, in).value();
    const double tol = dtype == DType::kF16 ? 4e-3 : 2e-5;
    EXPECT_TRUE(all_close(got.value()[0], want[0], tol, tol));
    EXPECT_EQ(stats.dispatches, 1u) << graph::dtype_name(dtype);
  }
}

TEST(VulkanFusion, LongChainsSplitAtTheInstructionLimit) {
  graph::Graph g;
  graph::ValueId v = graph::add_graph_input(g, "x", DType::kF32, {1000}).value();
  for (int i = 0; i < 100; ++i) {
    v = graph::add_op(g, i % 2 ? "cos" : "sin", "op" + std::to_string(i), {v}, {}).value()[0];
  }
  g.mark_output(v);
  auto input = random_tensor(DType::kF32, {1000}, 604, -1, 1);
  RunStats stats;
  auto got = run_on_vulkan(g, {input}, &stats);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(stats.dispatches, 3u) << "40 + 40 + 20";
  auto want = cpu::run_graph(g, {input}).value();
  EXPECT_TRUE(all_close(got.value()[0], want[0], 1e-5, 1e-5));
}

// Every float unary and binary op of op_codes.txt, read from the generated
// tables so that a new op is tested here without a line of its own: the range
// its operands are drawn from (b: the second operand's) and its tolerance,
// where the defaults do not fit. Defaults: x in [-0.9, 0.9); a in [-3, 3) and
// b in [0.5, 3) (positive: safe divisors); 2e-5 abs + 2e-5 relative.
struct OperandRange {
  const char* op;
  double lo, hi, b_lo, b_hi;
};
const OperandRange kOperandRanges[] = {
    {"log", 0.05, 10, 0, 0},       {"sqrt", 0, 10, 0, 0},         {"rsqrt", 0.05, 10, 0, 0},
    {"reciprocal", 0.1, 4, 0, 0},  {"acosh", 1.001, 10, 0, 0},    {"pow", 0.1, 3, -2, 2},
    {"remainder", -20, 20, 0.5, 3}, {"fmod", -20, 20, 0.5, 3},     {"floor_divide", -20, 20, 0.5, 3}};

struct OpOperands {
  std::vector<cpu::HostTensor> inputs;
  graph::AttrMap attrs;
};

bool is_binary_op(const std::string& op) {
  for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kBinaryTable) {
    if (op == c.name) return true;
  }
  return false;
}

// Operands of `op` of `shape` (a binary op's second one broadcast along the last axis).
OpOperands operands_of(const std::string& op, const graph::Shape& shape, uint32_t seed) {
  bool binary = is_binary_op(op);
  double lo = binary ? -3 : -0.9, hi = binary ? 3 : 0.9, b_lo = 0.5, b_hi = 3;
  for (const OperandRange& r : kOperandRanges) {
    if (op == r.op) std::tie(lo, hi, b_lo, b_hi) = std::make_tuple(r.lo, r.hi, r.b_lo, r.b_hi);
  }
  OpOperands o;
  o.inputs.push_back(random_tensor(DType::kF32, shape, seed, lo, hi));
  if (binary) o.inputs.push_back(random_tensor(DType::kF32, {shape.back()}, seed + 1, b_lo, b_hi));
  if (op == "clamp") o.attrs = {{"min", -0.5}, {"max", 0.25}};
  return o;
}

// Every float elementwise op op_codes.txt lists (its variants too: gelu's
// tanh form, clamp to [0, 6] and to the i8 range).
std::vector<std::pair<std::string, graph::AttrMap>> every_float_elementwise_op() {
  std::vector<std::pair<std::string, graph::AttrMap>> ops;
  for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kUnaryTable) ops.push_back({c.name, {}});
  for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kBinaryTable) ops.push_back({c.name, {}});
  ops.push_back({"gelu", {{"approximate", std::string("tanh")}}});
  ops.push_back({"clamp", {{"min", 0.0}, {"max", 6.0}}});
  ops.push_back({"clamp", {{"min", -128.0}, {"max", 127.0}}});
  ops.push_back({"clamp", {{"min", -32768.0}, {"max", 32767.0}}});
  ops.push_back({"clamp", {{"min", -32767.0}, {"max", 32767.0}}});
  return ops;
}

// The op's name in op_codes.txt: its variant's where its attributes choose
// one (as the unary kernel chooses it: the variants have codes, no table
// entries of their own).
std::string code_name(const std::string& op, const graph::AttrMap& attrs) {
  graph::Node node;
  node.op = op;
  node.attrs = attrs;
  const int32_t code = kernels::unary_code(node);
  for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kFusedInstructionTable) {
    if (code >= 0 && code < kernels::op_codes::kFusedBinaryBase && c.code == code) return c.name;
  }
  return op;
}

bool in_fused_set(const std::string& op) {
  for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kFusedInstructionTable) {
    if (op == c.name) return true;
  }
  return false;
}

TEST(VulkanElementwise, EveryOpOfTheCodeListMatchesTheReference) {
  uint32_t seed = 700;
  for (const auto& [op, attrs] : every_float_elementwise_op()) {
    OpOperands o = operands_of(op, {5, 67}, seed += 2);
    for (const auto& [name, value] : attrs) o.attrs[name] = value;
    kernels::KernelGraphOptions unfused;
    unfused.fuse_elementwise = false;
    EXPECT_TRUE(node_matches_cpu(op, o.inputs, o.attrs, 2e-5, 2e-5, {}, unfused)) << op;
  }
}

// y = neg(op(operands)): one dispatch when op is in the fused set, two when not.
TEST(VulkanFusion, EveryFusableOpFusesAndMatchesTheReference) {
  uint32_t seed = 800;
  std::set<std::string> fused_ops;
  for (const auto& [op, attrs] : every_float_elementwise_op()) {
    OpOperands o = operands_of(op, {33, 17}, seed += 2);
    for (const auto& [name, value] : attrs) o.attrs[name] = value;
    graph::Graph g;
    std::vector<graph::ValueId> ids;
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      ids.push_back(graph::add_graph_input(g, "in" + std::to_string(i), DType::kF32, o.inputs[i].shape).value());
    }
    graph::ValueId v = graph::add_op(g, op, op + "_0", ids, o.attrs).value()[0];
    g.mark_output(graph::add_op(g, "neg", "neg_1", {v}, {}).value()[0]);
    RunStats stats;
    auto got = run_on_vulkan(g, o.inputs, &stats);
    ASSERT_TRUE(got.ok()) << op << ": " << got.status().message();
    bool fusable = in_fused_set(code_name(op, attrs));
    if (fusable) fused_ops.insert(code_name(op, attrs));
    EXPECT_EQ(stats.dispatches, fusable ? 1u : 2u) << op << (fusable ? " is" : " is not") << " in the fused set";
    EXPECT_TRUE(all_close(got.value()[0], cpu::run_graph(g, o.inputs).value()[0], 2e-5, 2e-5)) << op;
  }
  // The float casts fuse only inside a chain of one element type (FloatCastsInsideAChainFuse), the
  // comparisons and where together (ComparisonsAndWhereFuseTogether).
  EXPECT_EQ(fused_ops.size(), std::size(kernels::op_codes::kFusedInstructionTable) -
                                  std::size(kernels::op_codes::kConvertTable) -
                                  std::size(kernels::op_codes::kCompareTable) - 1)
      << "a fused op went untested";
}

// NaN passes through relu, every clamp and maximum/minimum, as in torch
// (GLSL's max and min may return the other operand): alone and fused.
TEST(VulkanElementwise, NanPassesThroughReluClampMaximumAndMinimum) {
  std::vector<double> values = {NAN, -1.5, 0.25, 3.0, 200.0, -200.0, NAN, 7.0};
  cpu::HostTensor x = cpu::HostTensor::from_doubles(DType::kF32, {8}, values).value();
  cpu::HostTensor y = cpu::HostTensor::from_doubles(DType::kF32, {8}, {1.0, NAN, 0.5, NAN, 0.0, 1.0, NAN, -7.0}).value();
  std::vector<std::pair<std::string, graph::AttrMap>> unary = {
      {"relu", {}}, {"clamp", {{"min", -1.0}, {"max", 2.0}}}, {"clamp", {{"min", 0.0}, {"max", 6.0}}},
      {"clamp", {{"min", -128.0}, {"max", 127.0}}}, {"clamp", {{"min", -32767.0}, {"max", 32767.0}}}};
  for (bool fuse : {false, true}) {
    kernels::KernelGraphOptions options;
    options.fuse_elementwise = fuse;
    for (const auto& [op, attrs] : unary) {
      graph::Graph g;
      graph::ValueId in = graph::add_graph_input(g, "x", DType::kF32, {8}).value();
      graph::ValueId v = graph::add_op(g, op, "op", {in}, attrs).value()[0];
      g.mark_output(graph::add_op(g, "neg", "neg", {v}, {}).value()[0]);
      step_labels(g, {x}, 0, 0, options);  // compares with the reference, NaNs included
    }
    for (const char* op : {"maximum", "minimum"}) {
      graph::Graph g;
      graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, {8}).value();
      graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, {8}).value();
      graph::ValueId v = graph::add_op(g, op, "op", {a, b}, {}).value()[0];
      g.mark_output(graph::add_op(g, "neg", "neg", {v}, {}).value()[0]);
      step_labels(g, {x, y}, 0, 0, options);
    }
  }
}

TEST(VulkanFusion, ClampStaysOutOfTheFusedSet) {
  // clamp reads its bounds from push constants (but for its constant-bound variants).
  EXPECT_FALSE(in_fused_set("clamp"));
  EXPECT_TRUE(in_fused_set("gelu") && in_fused_set("add") && in_fused_set("relu") && in_fused_set("clamp.relu6") &&
              in_fused_set("clamp.int8") && in_fused_set("clamp.int16") && in_fused_set("clamp.int16_symmetric"));
}

// A where and the comparison making its condition join a chain: the bool
// lives in a register (1.0 or 0.0), never in memory. Every comparison, NaN
// operands included (only not_equal holds for them), scalar and tensor
// operands, f32 and f16; bit for bit as the reference. A where whose
// condition comes from elsewhere (an input, or a comparison something else
// reads too) runs on its own, and the chains beside it still fuse.
TEST(VulkanFusion, ComparisonsAndWhereFuseTogether) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const kernels::op_codes::NamedCode& c : kernels::op_codes::kCompareTable) {
      SCOPED_TRACE(std::string(c.name) + " " + graph::dtype_name(dtype));
      graph::Graph g;
      graph::ValueId x = graph::add_graph_input(g, "x", dtype, {7, 9}).value();
      graph::ValueId y = graph::add_graph_input(g, "y", dtype, {9}).value();
      auto op = [&](const char* o, const std::string& name, std::vector<graph::ValueId> in) {
        return graph::add_op(g, o, name, std::move(in), {}).value()[0];
      };
      graph::ValueId t = op("mul", "twice", {x, y});
      graph::ValueId cond = op(c.name, "cond", {t, y});
      graph::ValueId w = op("where", "pick", {cond, t, op("neg", "minus", {x})});
      g.mark_output(op("abs", "abs", {w}));
      cpu::HostTensor xs = random_tensor(dtype, {7, 9}, 690, -2, 2);
      cpu::HostTensor ys = random_tensor(dtype, {9}, 691, -2, 2);
      // NaNs and ties: y's first two are NaN and 1; x's first row 1 (so x * y == y there).
      std::vector<double> xv = xs.to_doubles(), yv = ys.to_doubles();
      yv[0] = NAN;
      yv[1] = 1.0;
      for (size_t j = 0; j < 9; ++j) xv[j] = 1.0;
      xs = cpu::HostTensor::from_doubles(dtype, {7, 9}, xv).value();
      ys = cpu::HostTensor::from_doubles(dtype, {9}, yv).value();
      EXPECT_EQ(joined(step_labels(g, {xs, ys}, 0, 0)), "twice+cond+minus+pick+abs");
    }
  }
  // The condition an input: the where alone, the chains around it fused.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {5, 8}).value();
  graph::ValueId mask = graph::add_graph_input(g, "mask", DType::kBool, {5, 8}).value();
  auto op = [&](const char* o, const std::string& name, std::vector<graph::ValueId> in) {
    return graph::add_op(g, o, name, std::move(in), {}).value()[0];
  };
  graph::ValueId a = op("exp", "exp", {op("neg", "neg", {x})});
  graph::ValueId w = op("where", "masked", {mask, a, x});
  g.mark_output(op("sigmoid", "sig", {op("abs", "abs", {w})}));
  // And a comparison read twice (a where and an output): both apart.
  graph::ValueId big = op("greater", "big", {x, a});
  g.mark_output(big);
  g.mark_output(op("where", "pick", {big, x, a}));
  cpu::HostTensor xs = random_tensor(DType::kF32, {5, 8}, 692, -3, 3);
  cpu::HostTensor ms = random_tensor(DType::kBool, {5, 8}, 693, 0, 2);
  const std::string steps = joined(step_labels(g, {xs, ms}, 2e-5, 2e-5));
  EXPECT_NE(steps.find("neg+exp"), std::string::npos) << steps;
  EXPECT_NE(steps.find(" masked "), std::string::npos) << steps;
  EXPECT_NE(steps.find("abs+sig"), std::string::npos) << steps;
  EXPECT_NE(steps.find("big"), std::string::npos) << steps;
  EXPECT_EQ(steps.find("big+pick"), std::string::npos) << steps;
  // In a GEMM's store: a leaky ReLU written as where(y > 0, y, 0.1 y) after a linear.
  graph::Graph l;
  graph::ValueId in = graph::add_graph_input(l, "x", DType::kF32, {6, 40}).value();
  graph::ValueId wt = graph::add_graph_input(l, "w", DType::kF32, {24, 40}).value();
  float tenth = 0.1f, zero = 0.0f;
  graph::ValueId k = graph::add_graph_constant(l, "k", DType::kF32, {1}, Blob::copy_of(&tenth, 4)).value();
  graph::ValueId z = graph::add_graph_constant(l, "z", DType::kF32, {1}, Blob::copy_of(&zero, 4)).value();
  graph::ValueId yl = graph::add_op(l, "linear", "lin", {in, wt}, {}).value()[0];
  graph::ValueId pos = graph::add_op(l, "greater", "pos", {yl, z}, {}).value()[0];
  graph::ValueId leak = graph::add_op(l, "mul", "leak", {yl, k}, {}).value()[0];
  l.mark_output(graph::add_op(l, "where", "leaky", {pos, yl, leak}, {}).value()[0]);
  std::vector<cpu::HostTensor> lin = {random_tensor(DType::kF32, {6, 40}, 694, -1, 1),
                                      random_tensor(DType::kF32, {24, 40}, 695, -0.5, 0.5)};
  EXPECT_EQ(joined(step_labels(l, lin, 2e-5, 2e-5)), "lin+pos+leak+leaky");
}

TEST(VulkanMemoryPlan, DeadIntermediatesShareMemory) {
  // A 20-step chain of transposes (not composed here): each intermediate dies
  // as the next is made, so two slots are enough instead of nineteen.
  graph::Graph g;
  graph::ValueId v = graph::add_graph_input(g, "x", DType::kF32, {64, 64}).value();
  for (int i = 0; i < 20; ++i) {
    v = graph::add_op(g, "transpose", "t" + std::to_string(i), {v}, {{"perm", std::vector<int64_t>{1, 0}}})
            .value()[0];
  }
  g.mark_output(v);
  auto input = random_tensor(DType::kF32, {64, 64}, 605, -1, 1);
  RunStats reuse, no_reuse;
  kernels::KernelGraphOptions on, off;
  on.compose_movement = off.compose_movement = false;  // composed, the chain has no intermediates at all
  off.reuse_memory = false;
  auto a = run_on_vulkan(g, {input}, &reuse, on);
  auto b = run_on_vulkan(g, {input}, &no_reuse, off);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LE(reuse.arena_bytes, 2u * 64 * 64 * 4);
  EXPECT_EQ(no_reuse.arena_bytes, 19u * 64 * 64 * 4);
  auto want = cpu::run_graph(g, {input}).value();
  EXPECT_TRUE(all_close(a.value()[0], want[0], 0, 0));
  EXPECT_TRUE(all_close(b.value()[0], want[0], 0, 0));
}

}  // namespace
}  // namespace gpuu::vulkan_test

#include "kernels/custom_shader.h"

namespace gpuu::vulkan_test {
namespace {

graph::Node shader_node(const std::string& implementation_attrs) {
  graph::Node n;
  n.name = "shader_0";
  n.op = "custom_shader";
  n.inputs = {0};
  n.outputs = {1};
  n.attrs = {{"operator_name", std::string("s")}, {"implementation_attrs", implementation_attrs}};
  return n;
}

TEST(CustomShaderAttributes, BindingsMustCoverZeroToNOnce) {
  auto s = kernels::parse_custom_shader(shader_node(
      R"({"entry_point":"main","workgroup_sizes":[8],"shader_code":"void main(){}","input_0_binding":0,"output_0_binding":0})"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("each used once"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("shader_0"), std::string::npos);
}

TEST(CustomShaderAttributes, RefusesOtherDescriptorSetsAndBadSpirv) {
  auto set1 = kernels::parse_custom_shader(shader_node(
      R"({"entry_point":"main","workgroup_sizes":[8],"shader_code":"x","input_0_descriptorset":1})"));
  ASSERT_FALSE(set1.ok());
  EXPECT_NE(set1.status().message().find("descriptorset must be 0"), std::string::npos);
  auto spirv = kernels::parse_custom_shader(shader_node(
      R"({"entry_point":"main","workgroup_sizes":[8],"shader_language":"SPIR-V","shader_code":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})"));
  ASSERT_FALSE(spirv.ok());
  EXPECT_NE(spirv.status().message().find("magic"), std::string::npos) << spirv.status().message();
}

TEST(CustomShaderAttributes, GlslThatDoesNotCompileNamesTheShader) {
  graph::Node n = shader_node(
      R"({"entry_point":"main","workgroup_sizes":[8],"shader_code":"#version 450\nvoid main() { nonsense; }"})");
  auto attrs = kernels::attrs_with_spirv(n);
  ASSERT_FALSE(attrs.ok());
  EXPECT_NE(attrs.status().message().find("custom shader 'shader_0'"), std::string::npos) << attrs.status().message();
}

}  // namespace
}  // namespace gpuu::vulkan_test
