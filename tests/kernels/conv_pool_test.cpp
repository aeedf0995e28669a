// Vulkan conv2d (implicit GEMM and direct) and avg/max pool2d against the CPU reference, on the test device.
// Tolerances: conv2d sums K = C/groups * kH * kW products in f32 (the reference
// in double), inputs in [-1, 1]: atol = 1e-6 * K + 1e-6, rtol 1e-5, as for
// matmul; f16 adds the final half rounding: rtol 1e-3, atol 1e-3 + 1e-6 * K.
// avg_pool2d sums at most kH*kW values in f32 and divides once (GLSL division
// is within 2.5 ulp): 1e-6 abs and relative (f16: 1e-3). max_pool2d only
// compares, so it must match exactly (NaNs and infinities included).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/gemm_select.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using Ints = std::vector<int64_t>;

struct Conv {
  Shape x;
  Shape w;
  bool bias = true;
  Ints stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};

testing::AssertionResult conv_matches(DType dtype, const Conv& c, uint32_t seed, const std::vector<bool>& constants = {}) {
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, c.x, seed, -1, 1), random_tensor(dtype, c.w, seed + 1, -1, 1)};
  if (c.bias) inputs.push_back(random_tensor(dtype, {c.w[0]}, seed + 2, -1, 1));
  graph::AttrMap attrs = {{"stride", c.stride}, {"padding", c.padding}, {"dilation", c.dilation}, {"groups", c.groups}};
  double k = static_cast<double>(c.w[1] * c.w[2] * c.w[3] + 1);
  double atol = (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * k;
  double rtol = dtype == DType::kF16 ? 1e-3 : 1e-5;
  return node_matches_cpu("conv2d", inputs, attrs, atol, rtol, constants);
}

std::string describe(const Conv& c) {
  return "x " + graph::shape_to_string(c.x) + " w " + graph::shape_to_string(c.w) + " groups " +
         std::to_string(c.groups);
}

// `c` run on the test device with `options` (profile_steps set), against the
// CPU with conv_matches's tolerances; its dispatches' work into `stats`.
testing::AssertionResult conv_profiled(DType dtype, const Conv& c, uint32_t seed, kernels::KernelGraphOptions options,
                                       RunStats* stats) {
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, c.x, seed, -1, 1),
                                         random_tensor(dtype, c.w, seed + 1, -1, 1)};
  if (c.bias) inputs.push_back(random_tensor(dtype, {c.w[0]}, seed + 2, -1, 1));
  graph::Graph g;
  std::vector<graph::ValueId> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(graph::add_graph_input(g, "in" + std::to_string(i), dtype, inputs[i].shape).value());
  }
  graph::AttrMap attrs = {{"stride", c.stride}, {"padding", c.padding}, {"dilation", c.dilation}, {"groups", c.groups}};
  g.mark_output(graph::add_op(g, "conv2d", "conv", in, attrs).value()[0]);
  options.profile_steps = true;
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, inputs, stats, options);
  if (!got.ok()) return testing::AssertionFailure() << got.status().message();
  if (stats->steps.empty()) return testing::AssertionFailure() << "no dispatch profiled";
  const double k = static_cast<double>(c.w[1] * c.w[2] * c.w[3] + 1);
  const double atol = (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * k, rtol = dtype == DType::kF16 ? 1e-3 : 1e-5;
  return all_close(got.value()[0], cpu::run_graph(g, inputs).value()[0], atol, rtol);
}

// Output channels per group >= 16 take the tiled implicit GEMM; fewer, the
// direct kernels (on more than 4 output pixels: GemvForFewPixels; one input
// channel per group, the depthwise kernel: Conv2dDepthwise).
const Conv kGemmConvs[] = {
    {{2, 8, 11, 13}, {32, 8, 3, 3}, true, {1, 1}, {1, 1}},                   // 'same' 3x3, odd spatial sizes
    {{1, 5, 17, 9}, {70, 5, 3, 5}, true, {2, 1}, {1, 2}, {1, 2}},             // two M tiles, stride, dilation
    {{1, 64, 7, 7}, {128, 64, 1, 1}, false},                                  // 1x1, no bias
    {{3, 4, 9, 10}, {48, 2, 2, 3}, true, {2, 3}, {1, 1}, {2, 1}, 2},         // groups of 24 output channels
    {{1, 3, 31, 29}, {16, 3, 7, 7}, true, {2, 2}, {3, 3}},                    // stem-like 7x7 stride 2
};
const Conv kDirectConvs[] = {
    {{2, 12, 9, 11}, {12, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 12},       // depthwise
    {{1, 6, 10, 7}, {12, 1, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 6},        // depthwise, multiplier 2, stride 2
    {{2, 8, 8, 9}, {12, 2, 3, 2}, true, {1, 2}, {2, 1}, {2, 3}, 4},          // groups of 3 outputs, dilation
    {{1, 3, 5, 5}, {1, 3, 5, 5}, true, {1, 1}, {1, 1}},                      // one output channel, 3x3 pixels
    {{1, 2, 3, 3}, {4, 2, 1, 1}, true},                                      // 1x1 over 9 pixels
};

TEST(VulkanConvPool, Conv2dImplicitGemm) {
  uint32_t seed = 1;
  for (const Conv& c : kGemmConvs) EXPECT_TRUE(conv_matches(DType::kF32, c, seed += 3)) << describe(c);
}

TEST(VulkanConvPool, Conv2dDirect) {
  uint32_t seed = 100;
  for (const Conv& c : kDirectConvs) EXPECT_TRUE(conv_matches(DType::kF32, c, seed += 3)) << describe(c);
}

// At most 4 output pixels take the GEMV however few their output channels
// per group: squeeze-excite 1x1 convolutions on a pooled pixel (240 -> 10
// channels as efficientnet_b0's, two images of 96 -> 4 without bias), one
// output channel whose window is the input, a depthwise 3x3 on 2x2 pixels.
// Each against the CPU (f32; the first in f16 too), and the profile names the GEMV.
TEST(VulkanConvPool, GemvForFewPixels) {
  const Conv cases[] = {
      {{1, 240, 1, 1}, {10, 240, 1, 1}, true},
      {{2, 96, 1, 1}, {4, 96, 1, 1}, false},
      {{1, 3, 5, 5}, {1, 3, 5, 5}, true},
      {{1, 16, 2, 2}, {16, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 16},
  };
  uint32_t seed = 150;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const Conv& c : cases) {
      if (dtype == DType::kF16 && &c != &cases[0]) break;
      const std::string what = describe(c) + " " + graph::dtype_name(dtype);
      RunStats stats;
      ASSERT_TRUE(conv_profiled(dtype, c, seed += 3, {}, &stats)) << what;
      EXPECT_NE(stats.steps[0].kernel.find("gemv"), std::string::npos) << what << ": " << stats.steps[0].kernel;
    }
  }
}

// One input channel per group takes conv2d_depthwise.comp (its window
// compiled in, 4 outputs of a row per invocation): 3x3 and 5x5 windows,
// strides 1 and 2 (rows of 7 and 9 outputs: strips cut short), padding off
// and asymmetric to the window, dilation 2, a channel multiplier of 2, two
// images, 1-pixel-wide planes; f32 and f16 against the CPU, each profiled as
// depthwise. A group of two input channels stays on the direct kernel.
TEST(VulkanConvPool, Conv2dDepthwise) {
  const Conv cases[] = {
      {{2, 12, 9, 11}, {12, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 12},
      {{1, 8, 13, 17}, {8, 1, 5, 5}, true, {2, 2}, {2, 2}, {1, 1}, 8},
      {{1, 6, 10, 7}, {12, 1, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 6},  // multiplier 2
      {{1, 4, 12, 12}, {4, 1, 3, 3}, true, {1, 2}, {0, 2}, {2, 2}, 4},   // dilation, rows of 7
      {{2, 5, 9, 1}, {5, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 5},     // one pixel wide
      {{1, 3, 7, 9}, {3, 1, 1, 5}, false, {1, 1}, {0, 2}, {1, 1}, 3},    // a 1x5 window
  };
  uint32_t seed = 170;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const Conv& c : cases) {
      const std::string what = describe(c) + " " + graph::dtype_name(dtype);
      RunStats stats;
      ASSERT_TRUE(conv_profiled(dtype, c, seed += 3, {}, &stats)) << what;
      EXPECT_NE(stats.steps[0].kernel.find("conv2d_depthwise"), std::string::npos) << what << ": " << stats.steps[0].kernel;
    }
  }
  RunStats stats;
  const Conv grouped = kDirectConvs[2];
  ASSERT_TRUE(conv_profiled(DType::kF32, grouped, seed += 3, {}, &stats)) << describe(grouped);
  EXPECT_NE(stats.steps[0].kernel.find("conv2d_direct"), std::string::npos) << stats.steps[0].kernel;
}

TEST(VulkanConvPool, Conv2dLargerGemm) {
  // 784 output pixels x 64 channels, K = 288: many tiles and K slices.
  EXPECT_TRUE(conv_matches(DType::kF32, {{1, 32, 28, 28}, {64, 32, 3, 3}, true, {1, 1}, {1, 1}}, 200));
}

TEST(VulkanConvPool, Conv2dWithConstantWeightAndBias) {
  EXPECT_TRUE(conv_matches(DType::kF32, kGemmConvs[0], 300, {false, true, true}));
  EXPECT_TRUE(conv_matches(DType::kF32, kDirectConvs[0], 310, {false, true, true}));
}

TEST(VulkanConvPool, Conv2dF16) {
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(conv_matches(DType::kF16, kGemmConvs[1], 400)) << describe(kGemmConvs[1]);
  EXPECT_TRUE(conv_matches(DType::kF16, kGemmConvs[3], 410)) << describe(kGemmConvs[3]);
  EXPECT_TRUE(conv_matches(DType::kF16, kDirectConvs[0], 420)) << describe(kDirectConvs[0]);
  EXPECT_TRUE(conv_matches(DType::kF16, kDirectConvs[2], 430)) << describe(kDirectConvs[2]);
}

// Patch convolutions (stride = kernel, no padding: a vision transformer's
// patch embedding) read the im2col view along k, a tap row's columns side by
// side in vectors (gemm_common.glsl's CONV_PATCHES), where kw and W are whole
// vectors: ViT's 16x16 patches over 3 channels (an input whose rows the
// patches do not cover to the end), and 8x8 ones over 8. 2x2 patches, or a
// row width off the vector, are gathered as before. Each against the CPU, on
// the kernel the device picks and on the forced tiled one, with and without
// a split of K; the choice says which read ran.
TEST(VulkanConvPool, Conv2dPatchesReadAlongK) {
  struct Patches {
    Conv conv;
    bool along_k;
  };
  const Patches cases[] = {
      {{{2, 3, 134, 128}, {64, 3, 16, 16}, true, {16, 16}}, true},
      {{{1, 8, 64, 72}, {64, 8, 8, 8}, false, {8, 8}}, true},
      {{{1, 4, 24, 36}, {64, 4, 2, 2}, true, {2, 2}}, false},
      {{{1, 3, 32, 66}, {64, 3, 4, 4}, true, {4, 4}}, false},
  };
  uint32_t seed = 500;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const Patches& c : cases) {
      for (int form = 0; form < 3; ++form) {
        kernels::KernelGraphOptions options;
        if (form > 0) options.gemm_kernel = kernels::GemmKernel::kTiled64;
        if (form == 2) options.gemm_splits = 3;
        const std::string what = describe(c.conv) + " " + graph::dtype_name(dtype) + " form " + std::to_string(form);
        RunStats stats;
        ASSERT_TRUE(conv_profiled(dtype, c.conv, seed += 3, options, &stats)) << what;
        EXPECT_EQ(stats.steps[0].work.choice.find("patches read along k") != std::string::npos, c.along_k)
            << what << ": " << stats.steps[0].work.choice;
      }
    }
  }
}

// A convolution that gathers its im2col view (padding, stride without
// patches, dilation, groups), or a pointwise one whose images' pixels are not
// whole vectors, may materialize the view first (im2col.comp) and run
// its GEMM over plain rows (CONV_IM2COL): each against the CPU, on the
// kernel the device picks, the forced 64 and 128 tiles, and a split of K,
// with row lengths (batch x pixels) whole vectors and not; the im2col
// dispatch comes first and the GEMM's choice says it read the view.
// Forced off, the same convolutions gather as before.
TEST(VulkanConvPool, Conv2dIm2colViewMaterialized) {
  const Conv cases[] = {
      kGemmConvs[0],                                               // 'same' 3x3, 2 x 143 pixels
      kGemmConvs[1],                                               // stride, dilation, 9 x 5 pixels
      kGemmConvs[3],                                               // groups: a view per group
      kGemmConvs[4],                                               // 7x7 stride 2
      {{2, 32, 14, 14}, {64, 32, 3, 3}, true, {1, 1}, {1, 1}},     // 392 pixels: whole vectors
      {{2, 48, 8, 8}, {96, 48, 1, 1}, false, {2, 2}},              // 1x1 stride 2 (a downsample)
      {{8, 40, 7, 7}, {64, 40, 1, 1}, true},                       // pointwise, 49 pixels an image: 392 a row
  };
  uint32_t seed = 700;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const Conv& v : cases) {
      for (int form = 0; form < 5; ++form) {
        kernels::KernelGraphOptions options;
        options.conv_im2col = form < 4;
        if (form == 1 || form == 3 || form == 4) options.gemm_kernel = kernels::GemmKernel::kTiled64;
        if (form == 2) options.gemm_kernel = kernels::GemmKernel::kTiled128;
        if (form == 3) options.gemm_splits = 3;
        const std::string what = describe(v) + " " + graph::dtype_name(dtype) + " form " + std::to_string(form);
        RunStats stats;
        ASSERT_TRUE(conv_profiled(dtype, v, seed += 3, options, &stats)) << what;
        // (On a CPU device the device's pick may be the direct kernel.)
        const bool gemm = stats.steps.back().work.choice != "direct";
        EXPECT_TRUE(gemm || form == 0) << what;
        const bool materialized = options.conv_im2col.value() && gemm;
        ASSERT_GE(stats.steps.size(), materialized ? 2u : 1u) << what;
        EXPECT_EQ(stats.steps[0].work.choice.rfind("im2col view ", 0) == 0, materialized)
            << what << ": " << stats.steps[0].work.choice;
        EXPECT_EQ(stats.steps[materialized ? 1 : 0].work.choice.find("im2col view materialized") != std::string::npos,
                  materialized)
            << what << ": " << stats.steps[materialized ? 1 : 0].work.choice;
      }
    }
  }
}

struct Pool {
  Shape x;
  Ints kernel, stride, padding;
  int64_t ceil_mode = 0;
};

// Odd sizes and windows that end in the padding or (ceil_mode) past it.
const Pool kPools[] = {
    {{2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}},
    {{2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}, 1},
    {{1, 2, 6, 6}, {3, 3}, {2, 2}, {1, 1}, 1},  // last ceil window runs past the right padding
    {{1, 2, 4, 5}, {2, 2}, {2, 2}, {1, 1}, 1},
    {{1, 4, 5, 9}, {2, 3}, {1, 2}, {0, 1}, 1},  // non-square kernel and stride
    {{3, 2, 11, 10}, {4, 4}, {3, 3}, {2, 0}},
    {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0}},
};

std::string describe(const Pool& p) {
  return "x " + graph::shape_to_string(p.x) + " kernel " + std::to_string(p.kernel[0]) + "x" +
         std::to_string(p.kernel[1]) + " stride " + std::to_string(p.stride[0]) + "," + std::to_string(p.stride[1]) +
         " padding " + std::to_string(p.padding[0]) + "," + std::to_string(p.padding[1]) + " ceil " +
         std::to_string(p.ceil_mode);
}

TEST(VulkanConvPool, AvgPoolCeilModeAndCountIncludePad) {
  uint32_t seed = 500;
  for (const Pool& p : kPools) {
    for (int64_t include_pad : {0, 1}) {
      graph::AttrMap attrs = {{"kernel", p.kernel},       {"stride", p.stride},
                              {"padding", p.padding},     {"ceil_mode", p.ceil_mode},
                              {"count_include_pad", include_pad}};
      EXPECT_TRUE(node_matches_cpu("avg_pool2d", {random_tensor(DType::kF32, p.x, seed++, -2, 2)}, attrs, 1e-6, 1e-6))
          << describe(p) << " count_include_pad " << include_pad;
    }
  }
}

TEST(VulkanConvPool, AvgPoolStrideDefaultsToKernel) {
  EXPECT_TRUE(node_matches_cpu("avg_pool2d", {random_tensor(DType::kF32, {2, 3, 9, 7}, 550, -2, 2)},
                               {{"kernel", Ints{3, 2}}}, 1e-6, 1e-6));
}

// max_pool2d only selects, so it must match exactly. all_close measures
// |got - want|, which is NaN for two equal infinities; this compares element
// for element instead (NaN matches NaN).
testing::AssertionResult max_pool_matches_exactly(const cpu::HostTensor& x, const graph::AttrMap& attrs) {
  graph::Graph g;
  graph::ValueId in = graph::add_graph_input(g, "x", x.dtype, x.shape).value();
  Result<std::vector<graph::ValueId>> out = graph::add_op(g, "max_pool2d", "pool", {in}, attrs);
  if (!out.ok()) return testing::AssertionFailure() << "building the node: " << out.status().message();
  g.mark_output(out.value()[0]);
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(g, {x});
  if (!want.ok()) return testing::AssertionFailure() << "CPU reference: " << want.status().message();
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, {x});
  if (!got.ok()) return testing::AssertionFailure() << "Vulkan: " << got.status().message();
  if (got.value()[0].shape != want.value()[0].shape) return testing::AssertionFailure() << "shapes differ";
  std::vector<double> g_values = got.value()[0].to_doubles(), w_values = want.value()[0].to_doubles();
  for (size_t i = 0; i < w_values.size(); ++i) {
    if (g_values[i] != w_values[i] && !(std::isnan(g_values[i]) && std::isnan(w_values[i]))) {
      return testing::AssertionFailure() << "[" << i << "] got " << g_values[i] << " want " << w_values[i];
    }
  }
  return testing::AssertionSuccess();
}

TEST(VulkanConvPool, MaxPoolWithDilationAndCeilMode) {
  uint32_t seed = 600;
  for (const Pool& p : kPools) {
    for (Ints dilation : {Ints{1, 1}, Ints{2, 1}}) {
      graph::AttrMap attrs = {{"kernel", p.kernel},       {"stride", p.stride},    {"padding", p.padding},
                              {"ceil_mode", p.ceil_mode}, {"dilation", dilation}};
      cpu::HostTensor x = random_tensor(DType::kF32, p.x, seed++, -2, 2);
      // Skip combinations whose dilated window does not fit (the registry refuses them).
      graph::Graph probe;
      graph::ValueId in = graph::add_graph_input(probe, "x", DType::kF32, p.x).value();
      if (!graph::add_op(probe, "max_pool2d", "probe", {in}, attrs).ok()) continue;
      EXPECT_TRUE(max_pool_matches_exactly(x, attrs))
          << describe(p) << " dilation " << dilation[0] << "," << dilation[1];
    }
  }
}

TEST(VulkanConvPool, MaxPoolPropagatesNaNAndKeepsInfinities) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // 4x4, 2x2 windows with stride 2: a NaN window, an all -inf window, a +inf window, a plain one.
  std::vector<double> v = {nan, 1, -inf, -inf,  //
                           2,   3, -inf, -inf,  //
                           inf, 0, -1,   -2,    //
                           5,   6, -3,   -4};
  cpu::HostTensor x = cpu::HostTensor::from_doubles(DType::kF32, {1, 1, 4, 4}, v).value();
  EXPECT_TRUE(max_pool_matches_exactly(x, {{"kernel", Ints{2, 2}}}));
  // Padding with a NaN at the border, overlapping windows.
  EXPECT_TRUE(max_pool_matches_exactly(x, {{"kernel", Ints{3, 3}}, {"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}}));
}

TEST(VulkanConvPool, PoolsF16) {
  if (!f16_kernels_or_refused()) return;
  uint32_t seed = 700;
  for (const Pool& p : {kPools[1], kPools[2], kPools[4]}) {
    cpu::HostTensor x = random_tensor(DType::kF16, p.x, seed++, -2, 2);
    EXPECT_TRUE(node_matches_cpu("avg_pool2d", {x},
                                 {{"kernel", p.kernel}, {"stride", p.stride}, {"padding", p.padding},
                                  {"ceil_mode", p.ceil_mode}, {"count_include_pad", int64_t{0}}},
                                 1e-3, 1e-3))
        << describe(p);
    EXPECT_TRUE(max_pool_matches_exactly(
                    x, {{"kernel", p.kernel}, {"stride", p.stride}, {"padding", p.padding}, {"ceil_mode", p.ceil_mode}}))
        << describe(p);
  }
}

TEST(VulkanConvPool, IntegerMaxPoolRunsOnTheIntegerKernels) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "pixels", DType::kI32, {1, 1, 4, 4}).value();
  ASSERT_TRUE(graph::add_op(g, "max_pool2d", "pool", {x}, {{"kernel", Ints{2, 2}}}).ok());
  EXPECT_EQ(kernels::vulkan_supports(g, g.nodes()[0]), "");  // exactness: vulkan_quant_test
}

TEST(VulkanConvPool, TableTakesFloatConvAndPools) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF16, {1, 4, 8, 8}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF16, {4, 1, 3, 3}).value();
  ASSERT_TRUE(graph::add_op(g, "conv2d", "dw", {x, w}, {{"groups", int64_t{4}}}).ok());
  ASSERT_TRUE(graph::add_op(g, "avg_pool2d", "avg", {x}, {{"kernel", Ints{2, 2}}}).ok());
  ASSERT_TRUE(graph::add_op(g, "max_pool2d", "max", {x}, {{"kernel", Ints{2, 2}}}).ok());
  for (const graph::Node& node : g.nodes()) EXPECT_EQ(kernels::vulkan_supports(g, node), "") << node.name;
}

}  // namespace
}  // namespace gpuu::vulkan_test
