// Vulkan matmul and linear (the tiled GEMM) against the CPU reference, on the test device.
// Tolerances: the reference sums in double and rounds once; the GEMM sums in
// f32 in tile order. With inputs in [-1, 1] the f32 error grows with K (each
// of the K additions may round by half an ulp of a partial sum of size up to
// ~sqrt(K)), so f32 uses atol = 1e-6 * K + 1e-6 and rtol 1e-5: several times
// the observed error, yet far below the ~0.1 that one missing or misplaced
// product term causes. f16 (f16 storage, f32 sums) adds the final rounding to
// half precision, 2^-11 relative: rtol 1e-3, atol 1e-3 + 1e-6 * K.
#include <gtest/gtest.h>

#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;

double atol_for(DType dtype, int64_t k) { return (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * static_cast<double>(k); }
double rtol_for(DType dtype) { return dtype == DType::kF16 ? 1e-3 : 1e-5; }

testing::AssertionResult matmul_matches(DType dtype, const Shape& a, const Shape& b, uint32_t seed,
                                        const std::vector<bool>& constants = {}) {
  int64_t k = a.back();
  return node_matches_cpu("matmul", {random_tensor(dtype, a, seed, -1, 1), random_tensor(dtype, b, seed + 1, -1, 1)},
                          {}, atol_for(dtype, k), rtol_for(dtype), constants);
}

TEST(VulkanLinalg, MatmulOddSizes) {
  // Each size in every role (M, N, K), against a 64x64 tile and 16-deep K slices:
  // single rows/columns, partial tiles, exactly-one-past-a-tile, two tiles plus two.
  const int64_t sizes[] = {1, 3, 17, 65, 130};
  uint32_t seed = 1;
  for (size_t i = 0; i < 5; ++i) {
    for (size_t j : {i, (i + 1) % 5, (i + 3) % 5}) {
      int64_t m = sizes[i], n = sizes[j], k = sizes[(i + j + 2) % 5];
      EXPECT_TRUE(matmul_matches(DType::kF32, {m, k}, {k, n}, seed += 2)) << "M=" << m << " N=" << n << " K=" << k;
    }
  }
}

TEST(VulkanLinalg, MatmulKOfOneAndLargeK) {
  EXPECT_TRUE(matmul_matches(DType::kF32, {70, 1}, {1, 67}, 20));
  EXPECT_TRUE(matmul_matches(DType::kF32, {3, 4099}, {4099, 5}, 22));
}

TEST(VulkanLinalg, MatmulBroadcastsBatchDims) {
  const std::pair<Shape, Shape> cases[] = {
      {{2, 1, 3, 17, 5}, {4, 1, 5, 9}},  // a broadcast over b's dim 1 of 3, b over a's dims 0 and 2
      {{17, 33}, {3, 33, 20}},        // rank-2 a shared by every batch of b
      {{4, 3, 19, 8}, {8, 66}},       // rank-2 b shared by every batch of a
      {{3, 1, 65, 2}, {1, 2, 2, 70}},  // both broadcast, in different dims
      {{5, 1, 1, 1, 4, 3}, {1, 2, 1, 3, 3, 2}},  // rank 6: four batch dims
  };
  uint32_t seed = 30;
  for (const auto& c : cases) {
    EXPECT_TRUE(matmul_matches(DType::kF32, c.first, c.second, seed += 2))
        << graph::shape_to_string(c.first) << " x " << graph::shape_to_string(c.second);
  }
}

TEST(VulkanLinalg, LargeMatmulSpansManyTiles) {
  // 4 x 6 tiles of 64x64, 24 K slices.
  EXPECT_TRUE(matmul_matches(DType::kF32, {256, 384}, {384, 512}, 40));
}

TEST(VulkanLinalg, MatmulWithConstantOperand) {
  EXPECT_TRUE(matmul_matches(DType::kF32, {2, 19, 33}, {33, 21}, 50, {false, true}));
}

TEST(VulkanLinalg, MatmulF16) {
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(matmul_matches(DType::kF16, {3, 65, 130}, {130, 17}, 60));
  EXPECT_TRUE(matmul_matches(DType::kF16, {2, 1, 1, 9}, {3, 9, 70}, 62));
  EXPECT_TRUE(matmul_matches(DType::kF16, {128, 300}, {300, 96}, 64));
}

testing::AssertionResult linear_matches(DType dtype, const Shape& x, int64_t n, bool bias, uint32_t seed,
                                        const std::vector<bool>& constants = {}) {
  int64_t k = x.back();
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, x, seed, -1, 1),
                                         random_tensor(dtype, {n, k}, seed + 1, -1, 1)};
  if (bias) inputs.push_back(random_tensor(dtype, {n}, seed + 2, -1, 1));
  return node_matches_cpu("linear", inputs, {}, atol_for(dtype, k + 1), rtol_for(dtype), constants);
}

TEST(VulkanLinalg, LinearWithAndWithoutBias) {
  EXPECT_TRUE(linear_matches(DType::kF32, {5, 17}, 65, true, 70));
  EXPECT_TRUE(linear_matches(DType::kF32, {5, 17}, 65, false, 73));
  EXPECT_TRUE(linear_matches(DType::kF32, {130, 3}, 1, true, 76));
  EXPECT_TRUE(linear_matches(DType::kF32, {1, 1}, 130, true, 79));
}

TEST(VulkanLinalg, LinearFlattensLeadingDims) {
  EXPECT_TRUE(linear_matches(DType::kF32, {33}, 70, true, 80));           // a single vector
  EXPECT_TRUE(linear_matches(DType::kF32, {2, 3, 7, 65}, 40, true, 83));  // 42 rows
  EXPECT_TRUE(linear_matches(DType::kF32, {3, 90, 260}, 130, false, 86));
}

TEST(VulkanLinalg, LinearWithConstantWeightAndBias) {
  EXPECT_TRUE(linear_matches(DType::kF32, {9, 48}, 66, true, 90, {false, true, true}));
}

TEST(VulkanLinalg, LinearF16) {
  if (!f16_kernels_or_refused()) return;
  EXPECT_TRUE(linear_matches(DType::kF16, {4, 17, 65}, 33, true, 100));
  EXPECT_TRUE(linear_matches(DType::kF16, {3, 130}, 67, false, 103, {false, true}));
}

TEST(VulkanLinalg, TableTakesMatmulAndLinear) {
  graph::Graph g;
  graph::ValueId a = graph::add_graph_input(g, "a", DType::kF32, {4, 8}).value();
  graph::ValueId b = graph::add_graph_input(g, "b", DType::kF32, {8, 3}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF16, {5, 8}).value();
  graph::ValueId xh = graph::add_graph_input(g, "xh", DType::kF16, {2, 8}).value();
  ASSERT_TRUE(graph::add_op(g, "matmul", "mm", {a, b}, {}).ok());
  ASSERT_TRUE(graph::add_op(g, "linear", "fc", {xh, w}, {}).ok());
  for (const graph::Node& node : g.nodes()) EXPECT_EQ(kernels::vulkan_supports(g, node), "") << node.name;
}

}  // namespace
}  // namespace gpuu::vulkan_test
