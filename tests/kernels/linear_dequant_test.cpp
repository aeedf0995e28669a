// linear_dequant (weight-only quantized linears: 8-bit per output channel,
// 4-bit per group along K) on the test device against the CPU reference, on
// every GEMM kernel that reads quantized weights (gemv, the 64 and 128
// tiles), with and without split-K, whole chunks and ragged K; and the
// registry's refusals of malformed weights, scales and attributes.
// Tolerances as linalg_test.cpp's: the reference dequantizes and sums in
// double, the kernels dequantize to f32 and sum in f32 (f16: f16 x and
// output). Scales in [0.002, 0.01] keep the weights within about [-1.3, 1.3]
// (8 bits) or [-0.08, 0.07] (4 bits).
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "kernels/gemm_select.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using kernels::GemmKernel;

double atol_for(DType dtype, int64_t k) { return (dtype == DType::kF16 ? 2e-3 : 1e-6) + 2e-6 * static_cast<double>(k); }
double rtol_for(DType dtype) { return dtype == DType::kF16 ? 1e-3 : 1e-5; }

struct Quantized {
  int64_t bits = 8;
  int64_t group_size = 0;  // 0: one scale per output row
};

testing::AssertionResult dequant_matches(DType dtype, const Shape& x, int64_t n, Quantized q, bool bias, uint32_t seed,
                                         const kernels::KernelGraphOptions& options = {}) {
  const int64_t k = x.back();
  const int64_t groups = q.group_size == 0 ? 1 : k / q.group_size;
  std::vector<cpu::HostTensor> inputs = {
      random_tensor(dtype, x, seed, -1, 1),
      random_tensor(DType::kI8, {n, q.bits == 8 ? k : k / 2}, seed + 1, -128, 128),
      random_tensor(dtype, {n, groups}, seed + 2, 0.002, 0.01)};
  if (bias) inputs.push_back(random_tensor(dtype, {n}, seed + 3, -1, 1));
  // The weights and scales are constants, as a model's are.
  std::vector<bool> constants = {false, true, true, true};
  return node_matches_cpu("linear_dequant", inputs, {{"bits", q.bits}, {"group_size", q.group_size}},
                          atol_for(dtype, k), rtol_for(dtype), constants, options);
}

kernels::KernelGraphOptions forced(GemmKernel kernel, uint32_t splits = 0) {
  kernels::KernelGraphOptions o;
  o.gemm_kernel = kernel;
  if (splits) o.gemm_splits = splits;
  return o;
}

// Each kernel and split against rows that are a decode step (1), a few (3),
// a tile's edge (70); K in whole chunks and groups (256, 384), ragged for
// element reads (8 bits: 301; 4 bits: 302, even as nibble pairs need); N off
// every tile (77).
void check_kernels(DType dtype) {
  uint32_t seed = 1;
  const Quantized forms[] = {{8, 0}, {8, 32}, {4, 32}, {4, 128}, {4, 0}};
  // The 64 tile unsplit is the test device's own pick: below.
  const std::pair<GemmKernel, uint32_t> kernels[] = {
      {GemmKernel::kGemv, 0}, {GemmKernel::kGemv, 3}, {GemmKernel::kTiled64, 2}, {GemmKernel::kTiled128, 0}};
  for (const Quantized& q : forms) {
    for (const auto& [kernel, splits] : kernels) {
      const kernels::KernelGraphOptions o = forced(kernel, splits);
      const std::string form = std::to_string(q.bits) + " bits, group " + std::to_string(q.group_size) + ", kernel " +
                               std::to_string(static_cast<int>(kernel)) + ", splits " + std::to_string(splits);
      const bool gemv = kernel == GemmKernel::kGemv;
      for (int64_t rows : gemv ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{3, 70}) {
        EXPECT_TRUE(dequant_matches(dtype, {rows, 256}, 77, q, true, seed += 4, o)) << rows << " rows, " << form;
      }
      EXPECT_TRUE(dequant_matches(dtype, {2, 2, 384}, 40, q, false, seed += 4, o)) << form;  // leading dims
      if (q.group_size == 0) {
        const int64_t ragged = q.bits == 8 ? 301 : 302;
        EXPECT_TRUE(dequant_matches(dtype, {gemv ? 2 : 33, ragged}, 19, q, true, seed += 4, o)) << form << ", ragged K";
      }
    }
  }
  // As the selector picks (gemv for a decode row, a tile for a prefill).
  for (const Quantized& q : {Quantized{8, 0}, Quantized{4, 64}}) {
    EXPECT_TRUE(dequant_matches(dtype, {1, 512}, 300, q, true, seed += 4)) << q.bits;
    EXPECT_TRUE(dequant_matches(dtype, {40, 512}, 96, q, true, seed += 4)) << q.bits;
  }
}

TEST(VulkanLinearDequant, F32) { check_kernels(DType::kF32); }

TEST(VulkanLinearDequant, F16) {
  if (!f16_kernels_or_refused()) return;
  check_kernels(DType::kF16);
}

// The selector never hands a quantized weight to the matrix-core kernels
// (they read float B), and names the quantized shader.
TEST(VulkanLinearDequant, SelectorKeepsQuantizedWeightsOffMatrixCores) {
  kernels::GemmProblem problem{false, 512, 4096, 4096, 1, true, 4};
  kernels::GemmChoice choice = kernels::select_gemm(*test_context(), DType::kF16, {}, problem);
  EXPECT_FALSE(choice.coopmat()) << choice.describe();
  EXPECT_EQ(choice.shader(false, DType::kF16, 4).rfind("gemm_qw4_f16", 0), 0u) << choice.shader(false, DType::kF16, 4);
  problem.m = 1;
  choice = kernels::select_gemm(*test_context(), DType::kF16, {}, problem);
  EXPECT_EQ(choice.shader(false, DType::kF16, 8), "gemv_qw8_f16");
}

// A decode row's GEMV reads whole uvec4s of quantized weights (32 4-bit or 16
// 8-bit under one scale) where K and the group allow, 4-element chunks
// otherwise; the CPU's results either way, K split (every other case) or not.
TEST(VulkanLinearDequant, DecodeGemvReadsWholeUvec4sOfWeights) {
  struct Case {
    int64_t bits, group, k;
    bool wide;
  };
  const Case cases[] = {{4, 64, 512, true},   {4, 32, 256, true},  {4, 0, 1024, true}, {8, 0, 512, true},
                        {8, 16, 256, true},   {4, 16, 256, false}, {8, 0, 300, false}, {8, 4, 256, false}};
  uint32_t seed = 700;
  for (const Case& c : cases) {
    const uint32_t splits = seed % 2 ? 2 : 0;
    const int64_t n = 72, groups = c.group == 0 ? 1 : c.k / c.group;
    const cpu::HostTensor w = random_tensor(DType::kI8, {n, c.bits == 8 ? c.k : c.k / 2}, seed++, -128, 128);
    const cpu::HostTensor scales = random_tensor(DType::kF32, {n, groups}, seed++, 0.002, 0.01);
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, c.k}).value();
    graph::ValueId wq = graph::add_graph_constant(g, "w", DType::kI8, w.shape, w.to_blob()).value();
    graph::ValueId s = graph::add_graph_constant(g, "s", DType::kF32, scales.shape, scales.to_blob()).value();
    g.mark_output(
        graph::add_op(g, "linear_dequant", "lin", {x, wq, s}, {{"bits", c.bits}, {"group_size", c.group}}).value()[0]);
    const std::vector<cpu::HostTensor> inputs = {random_tensor(DType::kF32, {1, c.k}, seed++, -1, 1)};
    kernels::KernelGraphOptions options = forced(GemmKernel::kGemv, splits);
    options.profile_steps = true;
    RunStats stats;
    Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
    const std::string what = std::to_string(c.bits) + " bits, group " + std::to_string(c.group) + ", K " +
                             std::to_string(c.k) + ", splits " + std::to_string(splits);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    EXPECT_TRUE(all_close(got.value()[0], cpu::run_graph(g, inputs).value()[0], atol_for(DType::kF32, c.k),
                          rtol_for(DType::kF32)))
        << what;
    ASSERT_FALSE(stats.steps.empty()) << what;
    EXPECT_EQ(stats.steps[0].work.choice.find("uvec4") != std::string::npos, c.wide)
        << what << ": " << stats.steps[0].work.choice;
  }
}

// Malformed nodes are refused by the registry, each naming what is wrong.
TEST(VulkanLinearDequant, RegistryRefusesMalformedNodes) {
  struct Case {
    Shape weight, scales;
    graph::AttrMap attrs;
    const char* says;
  };
  const Case cases[] = {
      {{16, 64}, {16, 1}, {{"bits", int64_t{5}}}, "'bits' must be 8 or 4"},
      {{16, 64}, {16, 1}, {{"bits", int64_t{4}}}, "must be [N, 32] for 4-bit weights over K=64"},
      {{16, 64}, {16, 2}, {}, "must have shape [16, 1]"},
      {{16, 64}, {16, 3}, {{"group_size", int64_t{24}}}, "'group_size' 24 does not divide K=64"},
      {{16, 64}, {16, 4}, {{"group_size", int64_t{32}}}, "must have shape [16, 2]"},
  };
  for (const Case& c : cases) {
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {2, 64}).value();
    graph::ValueId w = graph::add_graph_input(g, "w", DType::kI8, c.weight).value();
    graph::ValueId s = graph::add_graph_input(g, "s", DType::kF32, c.scales).value();
    auto added = graph::add_op(g, "linear_dequant", "lin", {x, w, s}, c.attrs);
    ASSERT_FALSE(added.ok()) << c.says;
    EXPECT_NE(added.status().message().find(c.says), std::string::npos) << added.status().message();
  }
  // A float weight is refused as a dtype.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {2, 64}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF32, {16, 64}).value();
  graph::ValueId s = graph::add_graph_input(g, "s", DType::kF32, {16, 1}).value();
  auto added = graph::add_op(g, "linear_dequant", "lin", {x, w, s}, {});
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("accepts i8"), std::string::npos) << added.status().message();
}

}  // namespace
}  // namespace gpuu::vulkan_test
