// Elementwise chains folded into the store of the GEMM they alone read
// (fusion.h, gemm_epilogue.glsl): conv2d with batch norm's per-channel scale
// and shift, ReLU and a residual; linear with a second per-column bias, GELU
// and a residual; batched matmul with a scalar; each with and without split-K,
// against the CPU reference, and with the dispatch count that shows the fold.
// Chains the store cannot read (a per-row input of a linear, a GEMM output
// read elsewhere too) still run, after the GEMM. Linears of one input run as
// one GEMM.
#include <gtest/gtest.h>

#include "kernels/gemm_select.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using graph::ValueId;
using kernels::GemmKernel;

// A graph under construction with its input tensors, for the CPU and Vulkan runs.
struct Case {
  graph::Graph g;
  std::vector<cpu::HostTensor> inputs;
  uint32_t seed = 1;

  ValueId input(const std::string& name, const Shape& shape, double lo = -1, double hi = 1) {
    inputs.push_back(random_tensor(DType::kF32, shape, seed++, lo, hi));
    return graph::add_graph_input(g, name, DType::kF32, shape).value();
  }
  ValueId constant(const std::string& name, const Shape& shape, double lo = -1, double hi = 1) {
    cpu::HostTensor t = random_tensor(DType::kF32, shape, seed++, lo, hi);
    return graph::add_graph_constant(g, name, DType::kF32, shape, Blob::copy_of(t.bytes.data(), t.bytes.size()))
        .value();
  }
  ValueId op(const std::string& op, std::vector<ValueId> in, graph::AttrMap attrs = {}) {
    return graph::add_op(g, op, op + std::to_string(g.nodes().size()), std::move(in), std::move(attrs)).value()[0];
  }
};

kernels::KernelGraphOptions gemm_forced(std::optional<uint32_t> splits = std::nullopt) {
  kernels::KernelGraphOptions o;
  o.gemm_kernel = GemmKernel::kTiled64;  // lavapipe would run small convolutions directly
  o.gemm_splits = splits;
  o.conv_im2col = false;  // GPUs would write a padded convolution's im2col view first: a dispatch more
  return o;
}

// Runs the case on Vulkan with `options` and on the CPU; the dispatch count in `dispatches`.
testing::AssertionResult matches(Case& c, const kernels::KernelGraphOptions& options, size_t* dispatches) {
  RunStats stats;
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(c.g, c.inputs, &stats, options);
  if (!got.ok()) return testing::AssertionFailure() << got.status().message();
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(c.g, c.inputs);
  if (!want.ok()) return testing::AssertionFailure() << want.status().message();
  *dispatches = stats.dispatches;
  for (size_t i = 0; i < want->size(); ++i) {
    testing::AssertionResult close = all_close((*got)[i], (*want)[i], 1e-4, 1e-4);
    if (!close) return close << " (output " << i << ")";
  }
  return testing::AssertionSuccess();
}

// conv -> * scale[c] + shift[c] -> + residual -> relu: one dispatch (two
// with a split), on both gemm.comp tiles (the 128x128 one is GPUs').
TEST(VulkanGemmEpilogue, ConvBatchNormResidualRelu) {
  for (GemmKernel kernel : {GemmKernel::kTiled64, GemmKernel::kTiled128}) {
    for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{3}}) {
      SCOPED_TRACE(kernels::select_gemm(*test_context(), DType::kF32, kernel).describe());
      Case c;
      ValueId x = c.input("x", {2, 24, 9, 9});
      ValueId residual = c.input("residual", {2, 32, 9, 9});
      ValueId w = c.constant("w", {32, 24, 3, 3}, -0.2, 0.2);
      ValueId y = c.op("conv2d", {x, w}, {{"padding", std::vector<int64_t>{1, 1}}});
      y = c.op("mul", {y, c.constant("scale", {1, 32, 1, 1}, 0.5, 1.5)});
      y = c.op("add", {y, c.constant("shift", {32, 1, 1}, -0.5, 0.5)});
      y = c.op("add", {y, residual});
      ASSERT_TRUE(graph::add_graph_output(c.g, c.op("relu", {y})).ok());
      kernels::KernelGraphOptions options = gemm_forced(splits);
      options.gemm_kernel = kernel;
      size_t dispatches = 0;
      EXPECT_TRUE(matches(c, options, &dispatches));
      EXPECT_EQ(dispatches, splits ? 2u : 1u);
    }
  }
}

// linear (bias) -> + bias2[n] -> gelu(tanh) -> + x: one dispatch, on both
// gemm.comp tiles.
TEST(VulkanGemmEpilogue, LinearBiasGeluResidual) {
  for (GemmKernel kernel : {GemmKernel::kTiled64, GemmKernel::kTiled128}) {
    for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{2}}) {
      SCOPED_TRACE(kernels::select_gemm(*test_context(), DType::kF32, kernel).describe());
      Case c;
      ValueId x = c.input("x", {3, 5, 40});
      ValueId w = c.constant("w", {40, 40}, -0.2, 0.2);
      ValueId y = c.op("linear", {x, w, c.constant("b", {40})});
      y = c.op("add", {y, c.constant("b2", {40})});
      y = c.op("gelu", {y}, {{"approximate", std::string("tanh")}});
      ASSERT_TRUE(graph::add_graph_output(c.g, c.op("add", {y, x})).ok());
      kernels::KernelGraphOptions options = gemm_forced(splits);
      options.gemm_kernel = kernel;
      size_t dispatches = 0;
      EXPECT_TRUE(matches(c, options, &dispatches));
      EXPECT_EQ(dispatches, splits ? 2u : 1u);
    }
  }
}

// Whole tiles first, the rest split (GemmChoice::whole_tile_rows): the whole
// tiles apply the chain in their store, the reduction in its own; a layer
// norm after the chain runs apart (the reduction covers only the split rows):
// linear (bias) -> + bias2[n] -> gelu(tanh) -> + x -> layer_norm, and conv ->
// batch norm -> + residual -> relu.
TEST(VulkanGemmEpilogue, WholeTilesAndSplitSharesBothApplyTheChain) {
  for (GemmKernel kernel : {GemmKernel::kTiled64, GemmKernel::kTiled128}) {
    SCOPED_TRACE(kernels::select_gemm(*test_context(), DType::kF32, kernel).describe());
    kernels::KernelGraphOptions options = gemm_forced(3);
    options.gemm_kernel = kernel;
    options.gemm_whole_tile_rows = 1;
    {
      Case c;
      ValueId x = c.input("x", {2, 100, 48});  // 200 rows: 2 (128) or 4 (64) rows of tiles
      ValueId w = c.constant("w", {48, 48}, -0.2, 0.2);
      ValueId y = c.op("linear", {x, w, c.constant("b", {48})});
      y = c.op("add", {y, c.constant("b2", {48})});
      y = c.op("gelu", {y}, {{"approximate", std::string("tanh")}});
      y = c.op("add", {y, x});
      ASSERT_TRUE(graph::add_graph_output(c.g, y).ok());
      ASSERT_TRUE(graph::add_graph_output(
          c.g, c.op("layer_norm", {y}, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-5}})).ok());
      EXPECT_EQ(joined(step_labels(c.g, c.inputs, 1e-4, 1e-4, options)),
                "linear0+add1+gelu2+add3 linear0+add1+gelu2+add3 layer_norm4");
    }
    {
      Case c;
      ValueId x = c.input("x", {2, 24, 9, 9});
      ValueId residual = c.input("residual", {2, 160, 9, 9});  // 160 channels: 2 or 3 rows of tiles
      ValueId y = c.op("conv2d", {x, c.constant("w", {160, 24, 3, 3}, -0.2, 0.2)}, {{"padding", std::vector<int64_t>{1, 1}}});
      y = c.op("mul", {y, c.constant("scale", {1, 160, 1, 1}, 0.5, 1.5)});
      y = c.op("add", {y, c.constant("shift", {160, 1, 1}, -0.5, 0.5)});
      y = c.op("add", {y, residual});
      ASSERT_TRUE(graph::add_graph_output(c.g, c.op("relu", {y})).ok());
      size_t dispatches = 0;
      EXPECT_TRUE(matches(c, options, &dispatches));
      EXPECT_EQ(dispatches, 2u);
    }
  }
}

// A transformer's projection: linear over [tokens, d], reshaped to
// [batch, seq, d] (the last axis kept), then bias, GELU and the residual:
// the chain folds through the reshape, one dispatch (two with a split). A
// reshape that moves the columns ([tokens, d] -> [tokens, heads, d/heads])
// keeps its chain apart.
TEST(VulkanGemmEpilogue, ThroughAReshapeThatKeepsTheColumns) {
  using Ints = std::vector<int64_t>;
  for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{2}}) {
    Case c;
    ValueId x = c.input("x", {10, 32});
    ValueId residual = c.input("residual", {2, 5, 32});
    ValueId y = c.op("linear", {x, c.constant("w", {32, 32}, -0.2, 0.2)});
    y = c.op("reshape", {y}, {{"shape", Ints{2, 5, 32}}});
    y = c.op("add", {y, c.constant("b", {32})});
    y = c.op("gelu", {y}, {{"approximate", std::string("tanh")}});
    ASSERT_TRUE(graph::add_graph_output(c.g, c.op("add", {y, residual})).ok());
    size_t dispatches = 0;
    EXPECT_TRUE(matches(c, gemm_forced(splits), &dispatches));
    EXPECT_EQ(dispatches, splits ? 2u : 1u);
  }
  Case c;
  ValueId x = c.input("x", {10, 32});
  ValueId y = c.op("linear", {x, c.constant("w", {32, 32}, -0.2, 0.2)});
  y = c.op("reshape", {y}, {{"shape", Ints{10, 4, 8}}});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("mul", {y, c.constant("s", {8})})).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
  EXPECT_EQ(dispatches, 2u) << "the GEMM, then the chain on its own";
}

// torchvision's attention output projection at batch 1: linear over
// [seq, d], reshaped to [seq, 1, d], transposed to [1, seq, d] (only the unit
// dim moves: the same bytes), then the residual add: the chain folds through
// both views, one dispatch. A transpose that moves real dims stops it.
TEST(VulkanGemmEpilogue, ThroughAReshapeAndAUnitDimTranspose) {
  using Ints = std::vector<int64_t>;
  for (bool unit_only : {true, false}) {
    Case c;
    ValueId x = c.input("x", {12, 32});
    ValueId residual = c.input("residual", unit_only ? Shape{1, 12, 32} : Shape{3, 4, 32});
    ValueId y = c.op("linear", {x, c.constant("w", {32, 32}, -0.2, 0.2)});
    y = c.op("reshape", {y}, {{"shape", unit_only ? Ints{12, 1, 32} : Ints{4, 3, 32}}});
    y = c.op("transpose", {y}, {{"perm", Ints{1, 0, 2}}});
    ASSERT_TRUE(graph::add_graph_output(c.g, c.op("add", {y, residual})).ok());
    size_t dispatches = 0;
    EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
    EXPECT_EQ(dispatches, unit_only ? 1u : 2u) << (unit_only ? "unit dim moved" : "real dims moved");
  }
}

// ConvNeXt's block end: linear over [B x H x W, C], reshaped to [B, H, W, C],
// + bias, transposed to [B, C, H, W], * layer scale [C, 1, 1], + the residual
// in NCHW. The GEMM stores channels-first itself: one dispatch (two with a
// split, and the GEMV kernel's store does the same), two images checking the
// image stride, in f32 and through the tiled and GEMV kernels. Where the
// chain reads, before the transpose, an input of the GEMM's full shape (whose
// element the channels-first index does not address), the transpose stays a
// dispatch of its own.
TEST(VulkanGemmEpilogue, TransposedToChannelsFirstByTheStore) {
  using Ints = std::vector<int64_t>;
  struct Run {
    Shape image;  // B, H, W
    std::optional<uint32_t> splits;
    GemmKernel kernel;
  };
  for (const Run& run : {Run{{2, 3, 5}, std::nullopt, GemmKernel::kTiled64}, Run{{2, 3, 5}, 3u, GemmKernel::kTiled64},
                         Run{{1, 2, 2}, std::nullopt, GemmKernel::kGemv}}) {
    const int64_t b = run.image[0], h = run.image[1], w = run.image[2];
    Case c;
    ValueId x = c.input("x", {b * h * w, 96});
    ValueId residual = c.input("residual", {b, 24, h, w});
    ValueId y = c.op("linear", {x, c.constant("w", {24, 96}, -0.1, 0.1)});
    y = c.op("reshape", {y}, {{"shape", Ints{b, h, w, 24}}});
    y = c.op("add", {y, c.constant("bias", {24})});
    y = c.op("transpose", {y}, {{"perm", Ints{0, 3, 1, 2}}});
    y = c.op("mul", {y, c.constant("gamma", {24, 1, 1}, 0.5, 1.5)});
    ASSERT_TRUE(graph::add_graph_output(c.g, c.op("add", {y, residual})).ok());
    kernels::KernelGraphOptions options = gemm_forced(run.splits);
    options.gemm_kernel = run.kernel;
    size_t dispatches = 0;
    EXPECT_TRUE(matches(c, options, &dispatches)) << "images " << b;
    EXPECT_EQ(dispatches, run.splits ? 2u : 1u) << "images " << b;
  }
  Case c;
  ValueId x = c.input("x", {6, 16});
  ValueId before = c.input("before", {1, 2, 3, 24});
  ValueId y = c.op("linear", {x, c.constant("w", {24, 16}, -0.3, 0.3)});
  y = c.op("reshape", {y}, {{"shape", Ints{1, 2, 3, 24}}});
  y = c.op("add", {y, before});
  y = c.op("transpose", {y}, {{"perm", Ints{0, 3, 1, 2}}});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("mul", {y, c.constant("gamma", {24, 1, 1})})).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
  EXPECT_GE(dispatches, 2u) << "an input at the GEMM's own element before the transpose";
}

// conv -> hardswish as the frontend writes it (y * clamp(y + 3, 0, 6) / 6):
// clamp to [0, 6] fuses, so the whole activation is the conv's epilogue.
TEST(VulkanGemmEpilogue, ConvHardswish) {
  Case c;
  ValueId x = c.input("x", {1, 8, 7, 7}, -4, 4);
  ValueId y = c.op("conv2d", {x, c.constant("w", {16, 8, 1, 1}, -1, 1)});
  ValueId gate = c.op("add", {y, c.constant("three", {1}, 3, 3)});
  gate = c.op("clamp", {gate}, {{"min", 0.0}, {"max", 6.0}});
  ValueId out = c.op("div", {c.op("mul", {y, gate}), c.constant("six", {1}, 6, 6)});
  ASSERT_TRUE(graph::add_graph_output(c.g, out).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
  EXPECT_EQ(dispatches, 1u);
}

// conv -> batch norm's scale and shift -> hardswish, as mobilenet_v3 has it:
// two bound inputs (scale, shift) and two immediates (3 and 6, compiled in),
// so the whole chain is the store's: one dispatch (two with a split). Bound,
// the four would exceed the epilogue's three inputs.
TEST(VulkanGemmEpilogue, ConvBatchNormHardswishWithImmediates) {
  for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{2}}) {
    Case c;
    ValueId x = c.input("x", {1, 48, 6, 6}, -2, 2);
    ValueId y = c.op("conv2d", {x, c.constant("w", {24, 48, 1, 1}, -0.3, 0.3)});
    y = c.op("mul", {y, c.constant("scale", {1, 24, 1, 1}, 0.5, 1.5)});
    y = c.op("add", {y, c.constant("shift", {1, 24, 1, 1}, -1, 1)});
    ValueId gate = c.op("add", {y, c.constant("three", {1, 1, 1, 1}, 3, 3)});
    gate = c.op("clamp", {gate}, {{"min", 0.0}, {"max", 6.0}});
    ValueId out = c.op("div", {c.op("mul", {y, gate}), c.constant("six", {1, 1, 1, 1}, 6, 6)});
    ASSERT_TRUE(graph::add_graph_output(c.g, out).ok());
    size_t dispatches = 0;
    EXPECT_TRUE(matches(c, gemm_forced(splits), &dispatches));
    EXPECT_EQ(dispatches, splits ? 2u : 1u);
  }
}

// A depthwise convolution (the direct kernel) stores through the chain too:
// batch norm then SiLU (efficientnet) or ReLU6 (mobilenet_v2), one dispatch;
// and a grouped one with a residual.
TEST(VulkanGemmEpilogue, DirectConvolutionTakesTheChain) {
  for (bool silu : {true, false}) {
    Case c;
    ValueId x = c.input("x", {2, 16, 9, 9}, -2, 2);
    ValueId y = c.op("conv2d", {x, c.constant("w", {16, 1, 3, 3}, -1, 1), c.constant("b", {16})},
                     {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{1, 1}}, {"groups", int64_t{16}}});
    y = c.op("mul", {y, c.constant("scale", {1, 16, 1, 1}, 0.5, 1.5)});
    y = c.op("add", {y, c.constant("shift", {1, 16, 1, 1}, -1, 1)});
    y = silu ? c.op("mul", {y, c.op("sigmoid", {y})}) : c.op("clamp", {y}, {{"min", 0.0}, {"max", 6.0}});
    ASSERT_TRUE(graph::add_graph_output(c.g, y).ok());
    size_t dispatches = 0;
    EXPECT_TRUE(matches(c, {}, &dispatches)) << silu;
    EXPECT_EQ(dispatches, 1u) << silu;
  }
  Case c;
  ValueId x = c.input("x", {1, 8, 6, 6});
  ValueId residual = c.input("residual", {1, 8, 6, 6});
  ValueId y = c.op("conv2d", {x, c.constant("w", {8, 2, 3, 3}, -1, 1)},
                   {{"padding", std::vector<int64_t>{1, 1}}, {"groups", int64_t{4}}});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("relu", {c.op("add", {y, residual})})).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, {}, &dispatches));
  EXPECT_EQ(dispatches, 1u);
}

// Batched matmul times a scalar constant: one dispatch.
TEST(VulkanGemmEpilogue, BatchedMatmulScaled) {
  Case c;
  ValueId a = c.input("a", {2, 3, 17, 20});
  ValueId b = c.input("b", {2, 3, 20, 19});
  ValueId y = c.op("matmul", {a, b});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("mul", {y, c.constant("s", {1})})).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
  EXPECT_EQ(dispatches, 1u);
}

// A per-row input of a linear (broadcast along its columns), which the store
// cannot read, and a GEMM output that a later node reads too: both still right.
TEST(VulkanGemmEpilogue, ChainsTheStoreCannotTakeStillRun) {
  Case c;
  ValueId x = c.input("x", {6, 16});
  ValueId y = c.op("linear", {x, c.constant("w", {24, 16})});
  ValueId rows = c.input("rows", {6, 1});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("relu", {c.op("mul", {y, rows})})).ok());
  ValueId z = c.op("linear", {x, c.constant("w2", {24, 16})});
  ValueId t = c.op("tanh", {z});
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("add", {t, z})).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, gemm_forced(), &dispatches));
  // The first linear and its chain: two dispatches; the second linear (read
  // by tanh and add, both in its chain): one.
  EXPECT_EQ(dispatches, 3u);
}

// RAFT's ConvGRU, two steps: z's convolution takes (1 - z) * h + z * q as its
// epilogue, so it runs after q's, later than it stands in the graph. The
// arena placed values by id, so a value made before it but placed after it
// found live blocks freed and overwrote one (a concat of h and x).
TEST(VulkanGemmEpilogue, AGemmLoweredAfterLaterNodesLeavesLiveValuesAlone) {
  Case c;
  const graph::AttrMap same = {{"padding", std::vector<int64_t>{1, 1}}};
  ValueId h = c.input("h", {1, 8, 12, 16});
  ValueId x = c.op("relu", {c.op("conv2d", {c.input("x", {1, 8, 12, 16}), c.constant("enc", {8, 8, 3, 3}, -0.2, 0.2)},
                                 same)});
  ValueId one = c.constant("one", {1}, 1, 1);
  for (int step = 0; step < 2; ++step) {
    const std::string k = std::to_string(step);
    ValueId hx = c.op("concat", {h, x}, {{"axis", int64_t{1}}});
    ValueId z = c.op("sigmoid", {c.op("conv2d", {hx, c.constant("wz" + k, {8, 16, 3, 3}, -0.2, 0.2)}, same)});
    ValueId r = c.op("sigmoid", {c.op("conv2d", {hx, c.constant("wr" + k, {8, 16, 3, 3}, -0.2, 0.2)}, same)});
    ValueId rhx = c.op("concat", {c.op("mul", {r, h}), x}, {{"axis", int64_t{1}}});
    ValueId q = c.op("tanh", {c.op("conv2d", {rhx, c.constant("wq" + k, {8, 16, 3, 3}, -0.2, 0.2)}, same)});
    h = c.op("add", {c.op("mul", {c.op("sub", {one, z}), h}), c.op("mul", {z, q})});
  }
  ASSERT_TRUE(graph::add_graph_output(c.g, c.op("conv2d", {h, c.constant("head", {2, 8, 3, 3})}, same)).ok());
  size_t dispatches = 0;
  EXPECT_TRUE(matches(c, kernels::KernelGraphOptions{}, &dispatches));
}

// A pre-norm transformer's residual stream: the projection's store adds the
// residual, and the next block's layer norm reads that sum (also read on, by
// the next residual add). Under split-K the reduction normalises each row as
// it stores it (fusion.h's norm_after: gemm_split_reduce_norm.comp), one
// dispatch for both; rows of 40 (one element per invocation, most idle),
// 768 (GPT-2's and ViT's width, 3 each) and 1100 (5, the last ragged), with
// and without the norm's weight and bias, in f32 and f16. Unsplit, or rows
// longer than the kernel keeps in registers (5000), the norm runs on its own.
TEST(VulkanGemmEpilogue, ALayerNormAfterTheResidualAddRunsInTheSplitReduction) {
  struct Width {
    int64_t d;
    bool affine;
  };
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    for (const Width& width : {Width{40, true}, Width{768, true}, Width{1100, false}, Width{5000, true}}) {
      for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{3}}) {
        SCOPED_TRACE(std::string(graph::dtype_name(dtype)) + " d " + std::to_string(width.d) + (splits ? " split" : ""));
        const int64_t d = width.d, k = 48;
        graph::Graph g;
        std::vector<cpu::HostTensor> inputs;
        uint32_t seed = 1;
        auto input = [&](const std::string& name, const Shape& shape) {
          inputs.push_back(random_tensor(dtype, shape, seed++, -1, 1));
          return graph::add_graph_input(g, name, dtype, shape).value();
        };
        auto constant = [&](const std::string& name, const Shape& shape, double lo, double hi) {
          cpu::HostTensor t = random_tensor(dtype, shape, seed++, lo, hi);
          return graph::add_graph_constant(g, name, dtype, shape, Blob::copy_of(t.bytes.data(), t.bytes.size())).value();
        };
        auto op = [&](const std::string& name, std::vector<ValueId> in, graph::AttrMap attrs = {}) {
          return graph::add_op(g, name, name + std::to_string(g.nodes().size()), std::move(in), std::move(attrs))
              .value()[0];
        };
        ValueId x = input("x", {2, 5, k});
        ValueId residual = input("residual", {2, 5, d});
        ValueId y = op("linear", {x, constant("w", {d, k}, -0.2, 0.2), constant("b", {d}, -0.5, 0.5)});
        ValueId stream = op("add", {y, residual});
        std::vector<ValueId> norm_in = {stream};
        if (width.affine) norm_in = {stream, constant("gamma", {d}, 0.5, 1.5), constant("beta", {d}, -0.5, 0.5)};
        ValueId normed = op("layer_norm", norm_in, {{"normalized_ndim", int64_t{1}}, {"eps", 1e-5}});
        ASSERT_TRUE(graph::add_graph_output(g, normed).ok());
        ASSERT_TRUE(graph::add_graph_output(g, op("mul", {stream, constant("two", {1}, 2, 2)})).ok());
        kernels::KernelGraphOptions options = gemm_forced(splits);
        const double tol = dtype == DType::kF16 ? 4e-3 : 1e-4;
        const std::string labels = joined(step_labels(g, inputs, tol, tol, options));
        if (splits && d <= 4096) {
          EXPECT_EQ(labels, "linear0+add1 linear0+add1+layer_norm2 mul3");
        } else if (splits) {
          EXPECT_EQ(labels, "linear0+add1 linear0+add1 layer_norm2 mul3");
        } else {
          EXPECT_EQ(labels, "linear0+add1 layer_norm2 mul3");
        }
      }
    }
  }
}

// The matrix-core kernels store a convolution's results eight of a row at a
// time: one 16-byte store where they lie side by side in the output (an
// image's pixels whole runs of eight), else one each; under split-K two
// 4-float partial stores where the columns are a multiple of 4. Linears store
// one result at a time. f16 convolutions with batch norm, a residual and ReLU
// on 8 x 8 and 7 x 7 images and linears with bias, GELU and a residual on 48,
// 44 and 42 columns of 37 rows, on every matrix-core tile with and without
// split-K, against the CPU. On devices without matrix cores the forced tiles
// fall back (lavapipe runs the shader-core kernels here); where they have
// them, the profile must name the kernel.
TEST(VulkanGemmEpilogue, MatrixCoreStoresInRunsOfEight) {
  if (!f16_kernels_or_refused()) return;
  const bool matrix_cores = kernels::f16_matrix_cores(*test_context());
  using Ints = std::vector<int64_t>;
  struct Shape2 {
    bool conv;
    int64_t size;  // conv: the image's side; linear: the columns
  };
  // gemm_coopmat2.comp, where the device has it, applies the chain element
  // by element on its accumulator instead; it takes the linears of whole
  // 8-column rows (48), the others fall back.
  std::vector<GemmKernel> kernels = {GemmKernel::kCoopMat, GemmKernel::kCoopMatTall, GemmKernel::kCoopMatSmall};
  if (kernels::f16_matrix_cores_2(*test_context())) {
    kernels.push_back(GemmKernel::kCoopMat2);
    kernels.push_back(GemmKernel::kCoopMat2Tall);
  }
  for (GemmKernel kernel : kernels) {
    for (const Shape2& shape : {Shape2{true, 8}, Shape2{true, 7}, Shape2{false, 48}, Shape2{false, 44},
                                Shape2{false, 42}}) {
      for (std::optional<uint32_t> splits : {std::optional<uint32_t>{}, std::optional<uint32_t>{2}}) {
        SCOPED_TRACE(std::string(shape.conv ? "conv " : "linear ") + std::to_string(shape.size) + " kernel " +
                     std::to_string(static_cast<int>(kernel)) + (splits ? " split" : ""));
        graph::Graph g;
        std::vector<cpu::HostTensor> inputs;
        uint32_t seed = 7;
        auto input = [&](const std::string& name, const Shape& s) {
          inputs.push_back(random_tensor(DType::kF16, s, seed++, -1, 1));
          return graph::add_graph_input(g, name, DType::kF16, s).value();
        };
        auto constant = [&](const std::string& name, const Shape& s, double lo, double hi) {
          cpu::HostTensor t = random_tensor(DType::kF16, s, seed++, lo, hi);
          return graph::add_graph_constant(g, name, DType::kF16, s, Blob::copy_of(t.bytes.data(), t.bytes.size()))
              .value();
        };
        auto op = [&](const std::string& name, std::vector<ValueId> in, graph::AttrMap attrs = {}) {
          return graph::add_op(g, name, name + std::to_string(g.nodes().size()), std::move(in), std::move(attrs))
              .value()[0];
        };
        ValueId y;
        if (shape.conv) {
          const int64_t side = shape.size;
          ValueId x = input("x", {2, 16, side, side});
          ValueId residual = input("residual", {2, 24, side, side});
          y = op("conv2d", {x, constant("w", {24, 16, 3, 3}, -0.2, 0.2), constant("b", {24}, -0.5, 0.5)},
                 {{"stride", Ints{1, 1}}, {"padding", Ints{1, 1}}, {"dilation", Ints{1, 1}}, {"groups", int64_t{1}}});
          y = op("mul", {y, constant("scale", {24, 1, 1}, 0.5, 1.5)});
          y = op("add", {y, constant("shift", {24, 1, 1}, -0.5, 0.5)});
          y = op("relu", {op("add", {y, residual})});
        } else {
          const int64_t n = shape.size;
          ValueId x = input("x", {37, 192});  // three 64-deep slices: room for a split
          ValueId residual = input("residual", {37, n});
          y = op("linear", {x, constant("w", {n, 192}, -0.1, 0.1), constant("b", {n}, -0.5, 0.5)});
          y = op("add", {op("gelu", {y}), residual});
        }
        ASSERT_TRUE(graph::add_graph_output(g, y).ok());
        kernels::KernelGraphOptions options;
        options.gemm_kernel = kernel;
        options.gemm_splits = splits;
        options.profile_steps = true;
        options.conv_im2col = false;  // one dispatch on GPUs too (the store is the same either way)
        RunStats stats;
        Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, inputs, &stats, options);
        ASSERT_TRUE(got.ok()) << got.status().message();
        Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(g, inputs);
        ASSERT_TRUE(want.ok()) << want.status().message();
        EXPECT_TRUE(all_close((*got)[0], (*want)[0], 2e-2, 1e-2));
        EXPECT_EQ(stats.dispatches, splits ? 2u : 1u) << "the chain in the store (and the split's reduction)";
        if (matrix_cores) {
          ASSERT_FALSE(stats.steps.empty());
          EXPECT_NE(stats.steps[0].kernel.find("coopmat"), std::string::npos) << stats.steps[0].kernel;
        }
      }
    }
  }
}

// Sibling linears (sibling_linears.h): q, k and v projections of one input, a
// decode row and a short prefill, and a biased pair on a second input, each
// group one GEMM whose columns the consumers read as views; a linear of
// another depth stays alone. Against the CPU and the unmerged run.
TEST(VulkanSiblingLinears, RunAsOneGemmPerGroup) {
  for (const Shape& shape : {Shape{1, 1, 64}, Shape{2, 5, 64}}) {
    Case c;
    ValueId x = c.input("x", shape);
    ValueId h = c.input("h", {3, 32});
    ValueId q = c.op("linear", {x, c.constant("wq", {48, 64}, -0.2, 0.2)});
    ValueId k = c.op("linear", {x, c.constant("wk", {16, 64}, -0.2, 0.2)});
    ValueId v = c.op("linear", {x, c.constant("wv", {16, 64}, -0.2, 0.2)});
    ValueId q_part = c.op("slice", {q}, {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{8}},
                                         {"ends", std::vector<int64_t>{24}}});
    ASSERT_TRUE(graph::add_graph_output(c.g, c.op("mul", {q_part, c.op("sigmoid", {k})})).ok());
    ASSERT_TRUE(graph::add_graph_output(c.g, v).ok());
    ValueId gate = c.op("linear", {h, c.constant("wg", {40, 32}, -0.3, 0.3), c.constant("bg", {40})});
    ValueId up = c.op("linear", {h, c.constant("wu", {40, 32}, -0.3, 0.3), c.constant("bu", {40})});
    ASSERT_TRUE(graph::add_graph_output(c.g, c.op("mul", {c.op("relu", {gate}), up})).ok());
    ValueId other = c.op("linear", {c.op("relu", {x}), c.constant("wo", {8, 64}, -0.3, 0.3)});
    ASSERT_TRUE(graph::add_graph_output(c.g, other).ok());

    std::vector<std::string> merged = step_labels(c.g, c.inputs, 1e-4, 1e-4);
    kernels::KernelGraphOptions apart;
    apart.merge_sibling_linears = false;
    std::vector<std::string> separate = step_labels(c.g, c.inputs, 1e-4, 1e-4, apart);
    // One GEMM per group, named by its members, the other linear alone; v, a
    // region output, is copied out of the q/k/v GEMM's result; the chains read
    // their slices in place.
    EXPECT_EQ(joined(merged), "linear0+linear1+linear2 linear2 sigmoid4+mul5 linear6+linear7 relu8+mul9 relu10 linear11");
    // Apart: three GEMMs where one ran, q's slice copied for k's epilogue.
    EXPECT_EQ(joined(separate), "linear0 linear2 slice3 linear1+sigmoid4+mul5 linear7 linear6+relu8+mul9 relu10 linear11");
    EXPECT_LT(merged.size(), separate.size()) << joined(merged) << " | " << joined(separate);
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test
