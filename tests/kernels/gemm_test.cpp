// The GEMM kernels behind matmul, linear and conv2d, each forced in turn, and
// the selector that picks among them, against the CPU reference on the test
// device. On devices without VK_KHR_cooperative_matrix (lavapipe) the
// selector must report the fallback; where the context has it enabled with a
// shape gemm_coopmat.comp tiles, it must pick the matrix-core kernel for f16.
// Tolerances as in linalg_test.cpp: f32 atol 1e-6 * K + 1e-6, rtol 1e-5; f16
// (f16 inputs, f32 sums, f16 result) rtol 1e-3, atol 1e-3 + 1e-6 * K.
#include <gtest/gtest.h>

#include <optional>

#include "kernels/gemm_select.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using kernels::GemmKernel;

double atol_for(DType dtype, int64_t k) { return (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * static_cast<double>(k); }
double rtol_for(DType dtype) { return dtype == DType::kF16 ? 1e-3 : 1e-5; }

kernels::KernelGraphOptions forced(std::optional<GemmKernel> kernel) {
  kernels::KernelGraphOptions options;
  options.gemm_kernel = kernel;
  return options;
}

// Every kernel: both gemm.comp tiles, the three gemm_coopmat.comp tiles
// (each the selector's fallback where the device has none), the two
// gemm_coopmat2.comp ones where the device has them (the GEMMs they do not
// suit fall back; where it has none, the fallback is the selector's own pick,
// run anyway, and SelectorPicksByDevice checks it), and the selector's own
// pick (a matrix-core kernel where the device has one).
std::vector<std::optional<GemmKernel>> all_kernels() {
  std::vector<std::optional<GemmKernel>> kernels = {GemmKernel::kTiled64, GemmKernel::kTiled128, GemmKernel::kCoopMat,
                                                    GemmKernel::kCoopMatTall, GemmKernel::kCoopMatSmall};
  if (kernels::f16_matrix_cores_2(*test_context())) {
    kernels.push_back(GemmKernel::kCoopMat2);
    kernels.push_back(GemmKernel::kCoopMat2Tall);
  }
  kernels.push_back(std::nullopt);
  return kernels;
}

std::string name(std::optional<GemmKernel> k, DType dtype) {
  if (k) return kernels::select_gemm(*test_context(), dtype, k).describe();
  return "selected: " + kernels::select_gemm(*test_context(), dtype).describe();
}

bool coopmat_possible() {
  const SharedGpuContext& ctx = *test_context();
  return ctx.has_feature(kFeatureCooperativeMatrix) && ctx.has_feature(kFeatureVulkanMemoryModel) &&
         ctx.has_feature(kFeatureShaderFloat16) && ctx.has_feature(kFeatureStorageBuffer16Bit) &&
         ctx.subgroup_size() == 32;
}

TEST(VulkanGemm, SelectorPicksByDevice) {
  const SharedGpuContext& ctx = *test_context();
  const bool cpu = ctx.properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  // f32 never has a matrix-core path (no TF32 in Vulkan's cooperative-matrix types here).
  kernels::GemmChoice f32 = kernels::select_gemm(ctx, DType::kF32);
  EXPECT_EQ(f32.kernel, cpu ? GemmKernel::kTiled64 : GemmKernel::kTiled128) << f32.describe();
  kernels::GemmChoice f16 = kernels::select_gemm(ctx, DType::kF16);
  if (!ctx.has_feature(kFeatureCooperativeMatrix)) {
    // lavapipe and every device without the extension: the fallback.
    EXPECT_TRUE(ctx.cooperative_matrix_shapes().empty());
    EXPECT_EQ(f16.kernel, cpu ? GemmKernel::kTiled64 : GemmKernel::kTiled128) << f16.describe();
    EXPECT_EQ(f16.shader(false, DType::kF16), cpu ? "gemm_f16" : "gemm_f16_t8");
    // Asking for the matrix cores falls back the same way.
    EXPECT_EQ(kernels::select_gemm(ctx, DType::kF16, GemmKernel::kCoopMat).kernel, f16.kernel);
    kernels::GemmProblem addressable{false, 2048, 3072, 768};
    addressable.tensor_addressable = true;
    EXPECT_EQ(kernels::select_gemm(ctx, DType::kF16, GemmKernel::kCoopMat2, addressable).kernel, f16.kernel);
    EXPECT_FALSE(kernels::f16_matrix_cores_2(ctx));
    return;
  }
  // The extension is enabled: the device must report shapes, and an f16 x f16
  // -> f32 subgroup shape the kernel tiles (NVIDIA's 16x16x16 / 16x8x16, say).
  EXPECT_FALSE(ctx.cooperative_matrix_shapes().empty());
  ASSERT_TRUE(coopmat_possible()) << "subgroup size " << ctx.subgroup_size();
  EXPECT_EQ(f16.kernel, GemmKernel::kCoopMat) << f16.describe();
  EXPECT_EQ(f16.shader(false, DType::kF16), "gemm_coopmat_f16");
  EXPECT_EQ(f16.shader(true, DType::kF16), "conv2d_gemm_coopmat_f16");
  EXPECT_EQ(f16.tile_m, 128u);
  // conv2d with 256 rows or more takes the tall tile; a matmul does not.
  kernels::GemmChoice conv = kernels::select_gemm(ctx, DType::kF16, std::nullopt, kernels::GemmProblem{true, 256});
  EXPECT_EQ(conv.kernel, GemmKernel::kCoopMatTall) << conv.describe();
  EXPECT_EQ(conv.tile_m, 256u);
  EXPECT_EQ(conv.shader(true, DType::kF16), "conv2d_gemm_coopmat_tall_f16");
  EXPECT_EQ(kernels::select_gemm(ctx, DType::kF16, std::nullopt, kernels::GemmProblem{false, 4096}).kernel,
            GemmKernel::kCoopMat);
  // A GEMM of too few 128x128 tiles for 132 multiprocessors (a transformer's
  // projection over 128 tokens: 1 x 6) takes 64x64 tiles (2 x 12), then splits K.
  kernels::GemmForce on_132;
  on_132.compute_units = 132;
  kernels::GemmChoice few = kernels::select_gemm(ctx, DType::kF16, on_132, kernels::GemmProblem{false, 128, 768, 3072});
  if (16 % f16.cm_n == 0) {
    EXPECT_EQ(few.kernel, GemmKernel::kCoopMatSmall) << few.describe();
    EXPECT_EQ(few.shader(false, DType::kF16), "gemm_coopmat_small_f16");
    EXPECT_GT(few.splits, 1u) << few.describe();
  }
  // Workgroup-scope matrices, forced, where the device has them, for a GEMM
  // whose operands tensor addressing takes; not for one whose rows are not
  // whole 16-byte chunks, nor for a convolution; never unforced (yet).
  kernels::GemmProblem addressable{false, 2048, 3072, 768};
  addressable.tensor_addressable = true;
  kernels::GemmForce coop2 = on_132;
  coop2.kernel = GemmKernel::kCoopMat2;
  const kernels::GemmChoice wide = kernels::select_gemm(ctx, DType::kF16, coop2, addressable);
  if (kernels::f16_matrix_cores_2(ctx)) {
    EXPECT_TRUE(wide.coopmat2()) << wide.describe();
    EXPECT_EQ(wide.shader(false, DType::kF16), "gemm_coopmat2_f16");
  } else {
    EXPECT_EQ(wide.kernel, GemmKernel::kCoopMat) << wide.describe();
  }
  EXPECT_EQ(kernels::select_gemm(ctx, DType::kF16, on_132, addressable).kernel, GemmKernel::kCoopMat);
  addressable.tensor_addressable = false;
  EXPECT_EQ(kernels::select_gemm(ctx, DType::kF16, coop2, addressable).kernel, GemmKernel::kCoopMat);
  kernels::GemmProblem conv_2{true, 2048, 3072, 768};
  conv_2.tensor_addressable = true;
  EXPECT_FALSE(kernels::select_gemm(ctx, DType::kF16, coop2, conv_2).coopmat2());
  bool reported = false;
  for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
    reported = reported || (s.m == f16.cm_m && s.n == f16.cm_n && s.k == f16.cm_k);
  }
  EXPECT_TRUE(reported) << f16.describe();
}

testing::AssertionResult matmul_matches(DType dtype, const Shape& a, const Shape& b, uint32_t seed,
                                        std::optional<GemmKernel> kernel) {
  return node_matches_cpu("matmul", {random_tensor(dtype, a, seed, -1, 1), random_tensor(dtype, b, seed + 1, -1, 1)},
                          {}, atol_for(dtype, a.back()), rtol_for(dtype), {}, forced(kernel));
}

testing::AssertionResult linear_matches(DType dtype, const Shape& x, int64_t n, bool bias, uint32_t seed,
                                        std::optional<GemmKernel> kernel) {
  int64_t k = x.back();
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, x, seed, -1, 1),
                                         random_tensor(dtype, {n, k}, seed + 1, -1, 1)};
  if (bias) inputs.push_back(random_tensor(dtype, {n}, seed + 2, -1, 1));
  return node_matches_cpu("linear", inputs, {}, atol_for(dtype, k + 1), rtol_for(dtype), {}, forced(kernel));
}

testing::AssertionResult conv_matches(DType dtype, const Shape& x, const Shape& w, std::vector<int64_t> stride,
                                      std::vector<int64_t> padding, int64_t groups, uint32_t seed,
                                      std::optional<GemmKernel> kernel) {
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, x, seed, -1, 1), random_tensor(dtype, w, seed + 1, -1, 1),
                                         random_tensor(dtype, {w[0]}, seed + 2, -1, 1)};
  graph::AttrMap attrs = {
      {"stride", stride}, {"padding", padding}, {"dilation", std::vector<int64_t>{1, 1}}, {"groups", groups}};
  int64_t k = w[1] * w[2] * w[3] + 1;
  return node_matches_cpu("conv2d", inputs, attrs, atol_for(dtype, k), rtol_for(dtype), {}, forced(kernel));
}

// M, N, K off every tile (64, 128, 256, slices of 8 to 64) and off the vector
// widths (4, 8), and on them (the vector reads), batched and broadcast.
void check_matmuls(DType dtype) {
  const std::pair<Shape, Shape> cases[] = {
      {{1, 1}, {1, 1}},
      {{3, 17}, {17, 5}},
      {{65, 33}, {33, 130}},
      {{129, 40}, {40, 136}},       // K, N multiples of 8: vector reads, edge tiles
      {{200, 72}, {72, 257}},       // vector A, element B
      {{2, 3, 70, 48}, {48, 24}},    // batch with a broadcast B
      {{2, 1, 33, 64}, {3, 64, 72}},  // both broadcast
      {{130, 300}, {300, 70}},      // K over many slices, not a multiple of one
      {{300, 64}, {64, 520}},       // several 256-wide tiles and their edges
      {{256, 64}, {64, 256}},       // whole tiles and slices of every kernel: no bounds checks
      {{200, 64}, {64, 256}},       // ... but for the rows (ALIGNED 2)
      {{256, 64}, {64, 200}},       // ... but for the columns (ALIGNED 1)
  };
  uint32_t seed = 1;
  for (auto kernel : all_kernels()) {
    for (const auto& c : cases) {
      EXPECT_TRUE(matmul_matches(dtype, c.first, c.second, seed += 2, kernel))
          << name(kernel, dtype) << ": " << graph::shape_to_string(c.first) << " x "
          << graph::shape_to_string(c.second);
    }
  }
}

void check_linears(DType dtype) {
  uint32_t seed = 100;
  for (auto kernel : all_kernels()) {
    EXPECT_TRUE(linear_matches(dtype, {5, 17}, 65, true, seed += 3, kernel)) << name(kernel, dtype);
    EXPECT_TRUE(linear_matches(dtype, {3, 45, 64}, 136, true, seed += 3, kernel)) << name(kernel, dtype);
    EXPECT_TRUE(linear_matches(dtype, {131, 96}, 40, false, seed += 3, kernel)) << name(kernel, dtype);
    EXPECT_TRUE(linear_matches(dtype, {256, 64}, 256, true, seed += 3, kernel)) << name(kernel, dtype);  // aligned
    EXPECT_TRUE(linear_matches(dtype, {197, 64}, 256, true, seed += 3, kernel)) << name(kernel, dtype);  // but rows
  }
}

void check_convs(DType dtype) {
  uint32_t seed = 200;
  for (auto kernel : all_kernels()) {
    // 3x3 padded (K = 27, gathered), strided; grouped; a 1x1 with K = 64 (vector weight reads), whose 90
    // pixels per image leave its runs of 8 on and off 4-element boundaries and across images.
    EXPECT_TRUE(conv_matches(dtype, {2, 3, 13, 11}, {20, 3, 3, 3}, {1, 1}, {1, 1}, 1, seed += 3, kernel))
        << name(kernel, dtype);
    EXPECT_TRUE(conv_matches(dtype, {1, 8, 17, 19}, {34, 4, 3, 3}, {2, 2}, {1, 0}, 2, seed += 3, kernel))
        << name(kernel, dtype);
    EXPECT_TRUE(conv_matches(dtype, {2, 64, 9, 10}, {130, 64, 1, 1}, {1, 1}, {0, 0}, 1, seed += 3, kernel))
        << name(kernel, dtype);
    // 1x1s over planes that are not whole 8-element runs, gathered: efficientnet_b0's 14x14 (196 pixels, runs
    // on 4-element boundaries) and two 7x7 images (runs that cross from one image to the next).
    EXPECT_TRUE(conv_matches(dtype, {1, 240, 14, 14}, {80, 240, 1, 1}, {1, 1}, {0, 0}, 1, seed += 3, kernel))
        << name(kernel, dtype);
    EXPECT_TRUE(conv_matches(dtype, {2, 32, 7, 7}, {48, 32, 1, 1}, {1, 1}, {0, 0}, 1, seed += 3, kernel))
        << name(kernel, dtype);
  }
}

TEST(VulkanGemm, MatmulF32EveryKernel) { check_matmuls(DType::kF32); }
TEST(VulkanGemm, LinearF32EveryKernel) { check_linears(DType::kF32); }
TEST(VulkanGemm, Conv2dF32EveryKernel) { check_convs(DType::kF32); }

TEST(VulkanGemm, MatmulF16EveryKernel) {
  if (!f16_kernels_or_refused()) return;
  check_matmuls(DType::kF16);
}
TEST(VulkanGemm, LinearF16EveryKernel) {
  if (!f16_kernels_or_refused()) return;
  check_linears(DType::kF16);
}
TEST(VulkanGemm, Conv2dF16EveryKernel) {
  if (!f16_kernels_or_refused()) return;
  check_convs(DType::kF16);
}

}  // namespace
}  // namespace gpuu::vulkan_test
