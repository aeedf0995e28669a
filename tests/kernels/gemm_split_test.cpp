// Split-K, the pointwise convolution and the GEMV kernel, forced on the
// test device against the CPU reference, and the selector's occupancy policy
// (tile and split for the GEMMs of real models on a GPU of 132
// multiprocessors, an H100's or H200's). Tolerances as in gemm_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "kernels/gemm_select.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using kernels::GemmChoice;
using kernels::GemmForce;
using kernels::GemmKernel;
using kernels::GemmProblem;

double atol_for(DType dtype, int64_t k) { return (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * static_cast<double>(k); }
double rtol_for(DType dtype) { return dtype == DType::kF16 ? 1e-3 : 1e-5; }

kernels::KernelGraphOptions split(uint32_t splits, std::optional<GemmKernel> kernel = std::nullopt) {
  kernels::KernelGraphOptions options;
  options.gemm_splits = splits;
  options.gemm_kernel = kernel;
  return options;
}

testing::AssertionResult matmul_matches(DType dtype, const Shape& a, const Shape& b, uint32_t seed,
                                        const kernels::KernelGraphOptions& options) {
  return node_matches_cpu("matmul", {random_tensor(dtype, a, seed, -1, 1), random_tensor(dtype, b, seed + 1, -1, 1)},
                          {}, atol_for(dtype, a.back()), rtol_for(dtype), {}, options);
}

testing::AssertionResult linear_matches(DType dtype, const Shape& x, int64_t n, uint32_t seed,
                                        const kernels::KernelGraphOptions& options) {
  int64_t k = x.back();
  return node_matches_cpu("linear",
                          {random_tensor(dtype, x, seed, -1, 1), random_tensor(dtype, {n, k}, seed + 1, -1, 1),
                           random_tensor(dtype, {n}, seed + 2, -1, 1)},
                          {}, atol_for(dtype, k + 1), rtol_for(dtype), {}, options);
}

testing::AssertionResult conv_matches(DType dtype, const Shape& x, const Shape& w, std::vector<int64_t> stride,
                                      std::vector<int64_t> padding, int64_t groups, bool bias, uint32_t seed,
                                      const kernels::KernelGraphOptions& options) {
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, x, seed, -1, 1), random_tensor(dtype, w, seed + 1, -1, 1)};
  if (bias) inputs.push_back(random_tensor(dtype, {w[0]}, seed + 2, -1, 1));
  graph::AttrMap attrs = {
      {"stride", stride}, {"padding", padding}, {"dilation", std::vector<int64_t>{1, 1}}, {"groups", groups}};
  return node_matches_cpu("conv2d", inputs, attrs, atol_for(dtype, w[1] * w[2] * w[3] + 1), rtol_for(dtype), {},
                          options);
}

// Shares of K that are not equal (K off the share), a K of fewer slices than
// asked shares, batches with a broadcast operand, each gemm.comp tile and
// gemm_coopmat2.comp's where the device has it.
void check_split_matmuls(DType dtype) {
  uint32_t seed = 1;
  std::vector<std::pair<GemmKernel, uint32_t>> forms = {
      {GemmKernel::kTiled64, 2}, {GemmKernel::kTiled64, 5}, {GemmKernel::kTiled128, 3}};
  if (kernels::f16_matrix_cores_2(*test_context())) forms.push_back({GemmKernel::kCoopMat2, 3});
  for (const auto& [kernel, splits] : forms) {
    kernels::KernelGraphOptions o = split(splits, kernel);
    EXPECT_TRUE(matmul_matches(dtype, {37, 300}, {300, 45}, seed += 2, o)) << splits;
    EXPECT_TRUE(matmul_matches(dtype, {64, 256}, {256, 128}, seed += 2, o)) << splits;  // aligned
    EXPECT_TRUE(matmul_matches(dtype, {2, 3, 20, 96}, {96, 24}, seed += 2, o)) << splits;
    EXPECT_TRUE(matmul_matches(dtype, {5, 17}, {17, 9}, seed += 2, o)) << splits;  // fewer slices than shares
    EXPECT_TRUE(linear_matches(dtype, {1, 512}, 70, seed += 3, o)) << splits;        // decode: one row
  }
}

TEST(VulkanGemmSplit, MatmulAndLinearF32) { check_split_matmuls(DType::kF32); }

TEST(VulkanGemmSplit, MatmulAndLinearF16) {
  if (!f16_kernels_or_refused()) return;
  check_split_matmuls(DType::kF16);
}

// Whole tiles first, then the split shares of the rest (GemmChoice::
// whole_tile_rows, the selector's pick where a large tile's last round would
// leave the GPU idle): the whole tiles store their results, the reduction
// adds the partials of the rows after them. Ragged rows, columns and K;
// whole rows that end inside a batch (and a group of a grouped convolution),
// so the split rows start mid-batch; every gemm.comp tile and, where the
// device has matrix cores, gemm_coopmat.comp's.
TEST(VulkanGemmSplit, WholeTilesThenSharesOfTheRest) {
  uint32_t seed = 700;
  struct Form {
    DType dtype;
    GemmKernel kernel;
    uint32_t tile;
  };
  const Form forms[] = {{DType::kF32, GemmKernel::kTiled64, 64},
                        {DType::kF32, GemmKernel::kTiled128, 128},
                        {DType::kF16, GemmKernel::kTiled64, 64},
                        {DType::kF16, GemmKernel::kCoopMat, 128}};
  for (const Form& f : forms) {
    if (f.dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    const GemmChoice picked = kernels::select_gemm(*test_context(), f.dtype, f.kernel);
    SCOPED_TRACE(picked.describe());
    const uint32_t tile = picked.tile_m;  // a forced matrix-core tile falls back where the device has none
    for (uint32_t splits : {2u, 3u}) {
      kernels::KernelGraphOptions o = split(splits, f.kernel);
      // 300 rows: 3 (128) or 5 (64) rows of tiles; all but the last whole.
      o.gemm_whole_tile_rows = (300 + tile - 1) / tile - 1;
      EXPECT_TRUE(matmul_matches(f.dtype, {300, 520}, {520, 380}, seed += 2, o)) << splits;
      EXPECT_TRUE(linear_matches(f.dtype, {300, 520}, 200, seed += 3, o)) << splits;
      // Two batches of 200 rows: the whole rows end in the second batch.
      o.gemm_whole_tile_rows = (200 + tile - 1) / tile + 1;
      EXPECT_TRUE(matmul_matches(f.dtype, {2, 200, 384}, {384, 136}, seed += 2, o)) << splits;
      // A convolution of 160 output channels, and a grouped one of 2 x 80.
      o.gemm_whole_tile_rows = 1;
      EXPECT_TRUE(conv_matches(f.dtype, {2, 64, 9, 9}, {160, 64, 3, 3}, {1, 1}, {1, 1}, 1, true, seed += 3, o)) << splits;
      o.gemm_whole_tile_rows = (80 + tile - 1) / tile;
      EXPECT_TRUE(conv_matches(f.dtype, {2, 64, 9, 9}, {160, 32, 3, 3}, {1, 1}, {1, 1}, 2, true, seed += 3, o)) << splits;
    }
  }
}

// Convolutions split along K (channels x taps): the reduction adds the bias per
// output channel and writes NCHW, groups included.
TEST(VulkanGemmSplit, Conv2dF32) {
  uint32_t seed = 300;
  for (uint32_t splits : {2u, 4u}) {
    kernels::KernelGraphOptions o = split(splits, GemmKernel::kTiled64);
    EXPECT_TRUE(conv_matches(DType::kF32, {1, 32, 7, 7}, {40, 32, 3, 3}, {1, 1}, {1, 1}, 1, true, seed += 3, o));
    EXPECT_TRUE(conv_matches(DType::kF32, {2, 32, 9, 8}, {48, 16, 3, 3}, {2, 2}, {1, 1}, 2, true, seed += 3, o));
    EXPECT_TRUE(conv_matches(DType::kF32, {1, 256, 7, 7}, {64, 256, 1, 1}, {1, 1}, {0, 0}, 1, false, seed += 3, o));
  }
}

// 1x1, stride 1, no padding: B is the input itself, read directly, in vector
// chunks where the pixels are whole chunks (8x8) and element by element where
// not (7x7), over two images, with and without a split.
TEST(VulkanGemmSplit, PointwiseConv2d) {
  uint32_t seed = 400;
  const std::tuple<DType, GemmKernel, uint32_t> forms[] = {
      {DType::kF32, GemmKernel::kTiled64, 1}, {DType::kF32, GemmKernel::kTiled128, 3}, {DType::kF16, GemmKernel::kTiled64, 3}};
  for (const auto& [dtype, kernel, splits] : forms) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    kernels::KernelGraphOptions o = split(splits, kernel);
    EXPECT_TRUE(conv_matches(dtype, {2, 64, 8, 8}, {96, 64, 1, 1}, {1, 1}, {0, 0}, 1, true, seed += 3, o));
    EXPECT_TRUE(conv_matches(dtype, {2, 48, 7, 7}, {80, 48, 1, 1}, {1, 1}, {0, 0}, 1, true, seed += 3, o));
    EXPECT_TRUE(conv_matches(dtype, {1, 64, 6, 6}, {64, 16, 1, 1}, {1, 1}, {0, 0}, 4, false, seed += 3, o));
  }
}

// gemv.comp, forced and as picked: column lines (a few rows against linear's
// [N, K] weight: decode steps, batch-1 MLPs) with K whole chunks or ragged,
// N off the 8 lines of a workgroup; row lines (a few columns); B contiguous
// along N (correct, if slow); batches; split K; conv2d on 1 to 4 output
// pixels, grouped, with and without bias.
void check_gemv(DType dtype) {
  uint32_t seed = 500;
  for (uint32_t splits : {1u, 3u}) {
    kernels::KernelGraphOptions o = split(splits, GemmKernel::kGemv);
    for (int64_t rows : {1, 2, 4}) {
      EXPECT_TRUE(linear_matches(dtype, {rows, 768}, 77, seed += 3, o)) << rows << " rows, " << splits;
      EXPECT_TRUE(linear_matches(dtype, {rows, 301}, 40, seed += 3, o)) << rows << " rows, " << splits;  // ragged K
    }
    // Several passes of a line's loads, the last one partial.
    EXPECT_TRUE(linear_matches(dtype, {1, 2600}, 9, seed += 3, o)) << splits;
    EXPECT_TRUE(linear_matches(dtype, {2, 3, 128}, 24, seed += 3, o)) << splits;  // leading dims: 6 rows
    EXPECT_TRUE(linear_matches(dtype, {50, 256}, 3, seed += 3, o)) << splits;     // 3 columns: row lines
    EXPECT_TRUE(matmul_matches(dtype, {1, 200}, {200, 33}, seed += 2, o)) << splits;
    EXPECT_TRUE(matmul_matches(dtype, {2, 3, 1, 64}, {64, 20}, seed += 2, o)) << splits;  // batches, broadcast B
    EXPECT_TRUE(conv_matches(dtype, {1, 96, 1, 1}, {40, 96, 1, 1}, {1, 1}, {0, 0}, 1, true, seed += 3, o)) << splits;
    EXPECT_TRUE(conv_matches(dtype, {2, 64, 1, 1}, {32, 32, 1, 1}, {1, 1}, {0, 0}, 2, false, seed += 3, o)) << splits;
    EXPECT_TRUE(conv_matches(dtype, {1, 24, 4, 4}, {48, 24, 3, 3}, {2, 2}, {1, 1}, 1, true, seed += 3, o)) << splits;
  }
  // As the selector picks it (no kernel forced).
  kernels::KernelGraphOptions picked;
  EXPECT_TRUE(linear_matches(dtype, {1, 512}, 300, seed += 3, picked));
  EXPECT_TRUE(conv_matches(dtype, {1, 128, 1, 1}, {64, 128, 1, 1}, {1, 1}, {0, 0}, 1, true, seed += 3, picked));
}

TEST(VulkanGemv, F32) { check_gemv(DType::kF32); }

TEST(VulkanGemv, F16) {
  if (!f16_kernels_or_refused()) return;
  check_gemv(DType::kF16);
}

// The policy on a GPU of 132 multiprocessors, f32 (the tiled kernels), as the
// lowering asks, whatever the test device is: a GEMM that makes too few
// 128x128 tiles takes 64x64 ones, and one that still leaves multiprocessors
// idle splits K.
GemmChoice on_132(GemmProblem problem) {
  GemmForce force;
  force.compute_units = 132;
  force.as_gpu = true;
  return kernels::select_gemm(*test_context(), DType::kF32, force, problem);
}

// Split-K partials live only within their GEMM's dispatches, so GEMMs one
// after the other reuse their memory, alternating between two sets of blocks
// (so that a GEMM does not wait for the reads of the one just before it):
// x [256, 64] @ W1 [64, 1024], then @ W2 [1024, 64], then @ W3 [64, 1024],
// each in 4 shares, have 4 MiB, 256 KiB and 4 MiB of partials; the third
// takes the first's block: 8 MiB in all, not 12.
TEST(VulkanGemmSplit, GemmsOneAfterTheOtherReusePartials) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {256, 64}).value();
  graph::ValueId w1 = graph::add_graph_input(g, "w1", DType::kF32, {64, 1024}).value();
  graph::ValueId w2 = graph::add_graph_input(g, "w2", DType::kF32, {1024, 64}).value();
  graph::ValueId w3 = graph::add_graph_input(g, "w3", DType::kF32, {64, 1024}).value();
  graph::ValueId a = graph::add_op(g, "matmul", "first", {x, w1}, {}).value()[0];
  graph::ValueId b = graph::add_op(g, "matmul", "second", {a, w2}, {}).value()[0];
  graph::ValueId c = graph::add_op(g, "matmul", "third", {b, w3}, {}).value()[0];
  ASSERT_TRUE(graph::add_graph_output(g, c).ok());
  // Whole numbers in [-1, 1]: every sum is exact in f32 (|c| <= 64 * 1024 * 64).
  std::vector<cpu::HostTensor> in = {
      random_tensor(DType::kF32, {256, 64}, 3, -1, 2), random_tensor(DType::kF32, {64, 1024}, 4, -1, 2),
      random_tensor(DType::kF32, {1024, 64}, 5, -1, 2), random_tensor(DType::kF32, {64, 1024}, 6, -1, 2)};
  std::vector<std::vector<double>> v(in.size());
  for (size_t t = 0; t < in.size(); ++t) {
    for (size_t i = 0; i < in[t].bytes.size() / 4; ++i) {
      float f;
      std::memcpy(&f, in[t].bytes.data() + i * 4, 4);
      f = std::floor(f);
      std::memcpy(in[t].bytes.data() + i * 4, &f, 4);
      v[t].push_back(f);
    }
  }
  auto matmul = [](const std::vector<double>& l, const std::vector<double>& r, size_t m, size_t k, size_t n) {
    std::vector<double> out(m * n, 0.0);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < k; ++j) {
        for (size_t o = 0; o < n; ++o) out[i * n + o] += l[i * k + j] * r[j * n + o];
      }
    }
    return out;
  };
  std::vector<double> want = matmul(matmul(matmul(v[0], v[1], 256, 64, 1024), v[2], 256, 1024, 64), v[3], 256, 64, 1024);
  RunStats stats;
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, in, &stats, split(4, GemmKernel::kTiled64));
  ASSERT_TRUE(got.ok()) << got.status().message();
  for (size_t i = 0; i < want.size(); ++i) {
    float f;
    std::memcpy(&f, (*got)[0].bytes.data() + i * 4, 4);
    ASSERT_EQ(static_cast<double>(f), want[i]) << "element " << i;
  }
  EXPECT_EQ(stats.scratch_bytes, size_t{8} << 20) << "the third GEMM's partials reuse the first's memory";
}

TEST(VulkanGemmSplit, SelectorFillsTheGpu) {
  // resnet50's last 3x3 convolution at batch 1: 512 channels, 7x7 pixels, K = 512 x 9.
  GemmChoice late = on_132(GemmProblem{true, 512, 49, 4608});
  EXPECT_EQ(late.tile_m, 64u) << late.describe();
  EXPECT_GE(uint64_t{late.tiles_m(512)} * late.tiles_n(49) * late.splits, 100u) << late.describe();
  EXPECT_EQ(late.k_split % late.depth, 0u) << late.describe();
  EXPECT_GE(uint64_t{late.k_split} * late.splits, 4608u) << late.describe();
  EXPECT_LT(uint64_t{late.k_split} * (late.splits - 1), 4608u) << late.describe();
  // A decode step's linear: one row, 768 -> 3072: a GEMV, 384 workgroups of 8 columns, no split.
  GemmChoice decode = on_132(GemmProblem{false, 1, 3072, 768, 1, true});
  EXPECT_EQ(decode.kernel, GemmKernel::kGemv) << decode.describe();
  EXPECT_TRUE(decode.lines_are_columns) << decode.describe();
  EXPECT_EQ(decode.splits, 1u) << decode.describe();
  // The same rows against a [K, N] matrix (B contiguous along N) stay tiled: a column would be read with stride N.
  GemmChoice decode_kn = on_132(GemmProblem{false, 1, 3072, 768, 1, false});
  EXPECT_NE(decode_kn.kernel, GemmKernel::kGemv) << decode_kn.describe();
  // A squeeze-excite 1x1 convolution on one pooled pixel (mobilenet_v3: 960 -> 240): row lines, and K split
  // because 30 workgroups leave the GPU idle.
  GemmChoice excite = on_132(GemmProblem{true, 240, 1, 960});
  EXPECT_EQ(excite.kernel, GemmKernel::kGemv) << excite.describe();
  EXPECT_FALSE(excite.lines_are_columns) << excite.describe();
  EXPECT_GT(excite.splits, 1u) << excite.describe();
  EXPECT_EQ(late.kernel, GemmKernel::kTiled64) << late.describe();
  // resnet50's first 3x3 convolution at batch 8: 64 channels, 8 x 56 x 56 pixels: enough 128x128 tiles, but
  // half of each would compute nothing: the 64x64 tile (the 128x128 one is a GPU's usual pick).
  GemmChoice narrow = on_132(GemmProblem{true, 64, 8 * 56 * 56, 576});
  EXPECT_EQ(narrow.kernel, GemmKernel::kTiled64) << narrow.describe();
  EXPECT_EQ(narrow.splits, 1u) << narrow.describe();
  // resnet50's batch-8 3x3 convolutions of 512 channels at 7x7 (16 tiles of 128x128) and of 128 at 28x28 (49):
  // the 128x128 tile with K in the shares that fill half a round or more (8 of 576, 2 of 576).
  GemmChoice late8 = on_132(GemmProblem{true, 512, 8 * 49, 4608});
  EXPECT_EQ(late8.kernel, GemmKernel::kTiled128) << late8.describe();
  EXPECT_EQ(late8.splits, 8u) << late8.describe();
  EXPECT_EQ(late8.k_split, 576u) << late8.describe();
  GemmChoice mid8 = on_132(GemmProblem{true, 128, 8 * 28 * 28, 1152});
  EXPECT_EQ(mid8.kernel, GemmKernel::kTiled128) << mid8.describe();
  EXPECT_EQ(mid8.splits, 2u) << mid8.describe();
  // A GEMM of 2048 rows by 3072 columns keeps a GPU's usual tile: 384 tiles of 128x128 fill 3 rounds.
  GemmChoice wide = on_132(GemmProblem{false, 2048, 3072, 768, 1, true});
  EXPECT_EQ(wide.kernel, GemmKernel::kTiled128) << wide.describe();
  EXPECT_EQ(wide.splits, 1u) << wide.describe();
  // By 2304 columns, 288 tiles of 128x128 fill their 3 rounds to 73 %: two rounds of whole tiles (14 rows of 18)
  // and the last 36 tiles in 4 shares of K. (4096^3 below: 1024 tiles in 8 rounds, 97 %, keeps the 128x128 one.)
  GemmChoice qkv = on_132(GemmProblem{false, 2048, 2304, 768, 1, true});
  EXPECT_EQ(qkv.kernel, GemmKernel::kTiled128) << qkv.describe();
  EXPECT_EQ(qkv.whole_tile_rows, 14u) << qkv.describe();
  EXPECT_EQ(qkv.splits, 4u) << qkv.describe();
  // 2048 x 3072 -> 768: 96 tiles of 128x128, K in 4 shares of 768 (384 workgroups, 97 % of 3 rounds); with K =
  // 768 the shares would be too shallow: the 64x64 tile, unsplit.
  GemmChoice fc2 = on_132(GemmProblem{false, 2048, 768, 3072, 1, true});
  EXPECT_EQ(fc2.kernel, GemmKernel::kTiled128) << fc2.describe();
  EXPECT_EQ(fc2.splits, 4u) << fc2.describe();
  EXPECT_EQ(fc2.whole_tile_rows, 0u) << fc2.describe();
  GemmChoice proj = on_132(GemmProblem{false, 2048, 768, 768, 1, true});
  EXPECT_EQ(proj.kernel, GemmKernel::kTiled64) << proj.describe();
  EXPECT_EQ(proj.splits, 1u) << proj.describe();
  // Too shallow a K to split (2 x 128): the 64x64 tile, unsplit.
  GemmChoice shallow = on_132(GemmProblem{false, 2048, 2304, 192, 1, true});
  EXPECT_EQ(shallow.kernel, GemmKernel::kTiled64) << shallow.describe();
  EXPECT_EQ(shallow.splits, 1u) << shallow.describe();
  // ViT-B/16's MLP: 197 tokens, 768 -> 3072: the 64x64 tile (4 x 48 tiles) fills the GPU without a split.
  GemmChoice vit = on_132(GemmProblem{false, 197, 3072, 768});
  EXPECT_EQ(vit.tile_m, 64u) << vit.describe();
  EXPECT_EQ(vit.splits, 1u) << vit.describe();
  // ... and back, 3072 -> 768: 48 tiles, K in 8 shares (about three workgroups a multiprocessor), not the
  // 3 that fill it once; its attention's 768 -> 2304, 144 tiles, in 3.
  GemmChoice vit_down = on_132(GemmProblem{false, 197, 768, 3072});
  EXPECT_EQ(vit_down.tile_m, 64u) << vit_down.describe();
  EXPECT_EQ(vit_down.splits, 8u) << vit_down.describe();
  GemmChoice vit_qkv = on_132(GemmProblem{false, 197, 2304, 768});
  EXPECT_EQ(vit_qkv.splits, 3u) << vit_qkv.describe();
  // A large GEMM keeps a GPU's usual choice.
  GemmChoice large = on_132(GemmProblem{false, 4096, 4096, 4096});
  EXPECT_EQ(large.splits, 1u) << large.describe();
  EXPECT_EQ(large.kernel, GemmKernel::kTiled128) << large.describe();
  // Every choice says why.
  EXPECT_EQ(large.whole_tile_rows, 0u) << large.describe();
  for (const GemmChoice& c :
       {late, late8, mid8, decode, decode_kn, excite, narrow, wide, qkv, fc2, proj, shallow, vit, vit_down, vit_qkv,
        large}) {
    EXPECT_FALSE(c.why.empty()) << c.describe();
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test
