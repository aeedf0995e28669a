// Vulkan conv3d, conv_transpose2d, avg/max pool3d, resize, grid_sample, pad
// modes, expand and flip against the CPU reference, on the test device, f32
// and f16 (data movement: every dtype). Tolerances: convolutions as in
// conv_pool_test (f32 sums of K products: 1e-6 * K + 1e-6 abs, 1e-5 rel; f16
// 1e-3 more); avg pools and bilinear resize 1e-6 (f16 1e-3); bilinear and
// bicubic grid samples 1e-5 (f16 2e-3: one rounding of the f16 result apart);
// max pools, nearest resizes and samples, and data movement exactly.
#include <gtest/gtest.h>

#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using graph::Shape;
using Ints = std::vector<int64_t>;

const DType kFloats[] = {DType::kF32, DType::kF16};

bool skip_dtype(DType dtype) { return dtype == DType::kF16 && !device_has_f16(); }

testing::AssertionResult conv_matches(const char* op, DType dtype, const Shape& x, const Shape& w, int64_t bias_size,
                                      const graph::AttrMap& attrs, uint32_t seed, bool constant_weight = false) {
  std::vector<cpu::HostTensor> inputs = {random_tensor(dtype, x, seed, -1, 1), random_tensor(dtype, w, seed + 1, -1, 1)};
  if (bias_size > 0) inputs.push_back(random_tensor(dtype, {bias_size}, seed + 2, -1, 1));
  // Products per output: C/groups * kernel volume (weight dim 1 is C/groups for conv3d, dim 0 is C for transposed).
  double k = static_cast<double>(graph::shape_numel(w) / (std::string(op) == "conv3d" ? w[0] : w[1]) + 1);
  double atol = (dtype == DType::kF16 ? 1e-3 : 1e-6) + 1e-6 * k;
  double rtol = dtype == DType::kF16 ? 1e-3 : 1e-5;
  std::vector<bool> constants(inputs.size(), constant_weight);
  constants[0] = false;
  return node_matches_cpu(op, inputs, attrs, atol, rtol, constants);
}

TEST(VulkanSpatial, ConvTranspose2d) {
  struct Case {
    Shape x, w;
    int64_t bias;
    graph::AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {{1, 3, 4, 5}, {3, 2, 3, 3}, 2, {}},
      {{2, 4, 5, 3}, {4, 3, 3, 2}, 6,
       {{"stride", Ints{2, 3}}, {"padding", Ints{1, 0}}, {"output_padding", Ints{1, 2}}, {"groups", int64_t{2}}}},
      {{1, 2, 3, 4}, {2, 4, 2, 3}, 0, {{"stride", Ints{3, 2}}, {"dilation", Ints{2, 3}}, {"output_padding", Ints{2, 1}},
                                      {"padding", Ints{1, 2}}}},
      {{1, 6, 4, 4}, {6, 1, 4, 4}, 6, {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"groups", int64_t{6}}}},
  };
  uint32_t seed = 10;
  for (DType dtype : kFloats) {
    if (skip_dtype(dtype)) continue;
    for (const Case& c : cases) {
      seed += 3;
      EXPECT_TRUE(conv_matches("conv_transpose2d", dtype, c.x, c.w, c.bias, c.attrs, seed, seed % 2 == 0))
          << graph::dtype_name(dtype) << " x " << graph::shape_to_string(c.x) << " w " << graph::shape_to_string(c.w);
    }
  }
}

TEST(VulkanSpatial, Conv3d) {
  struct Case {
    Shape x, w;
    int64_t bias;
    graph::AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {{1, 3, 4, 5, 6}, {4, 3, 3, 3, 3}, 4, {{"padding", Ints{1, 1, 1}}}},
      {{2, 4, 5, 4, 6}, {6, 2, 2, 2, 3}, 0,
       {{"stride", Ints{2, 1, 2}}, {"padding", Ints{1, 0, 1}}, {"dilation", Ints{1, 2, 1}}, {"groups", int64_t{2}}}},
      {{1, 2, 3, 3, 3}, {1, 2, 1, 1, 1}, 1, {}},
  };
  uint32_t seed = 100;
  for (DType dtype : kFloats) {
    if (skip_dtype(dtype)) continue;
    for (const Case& c : cases) {
      seed += 3;
      EXPECT_TRUE(conv_matches("conv3d", dtype, c.x, c.w, c.bias, c.attrs, seed, seed % 2 == 1))
          << graph::dtype_name(dtype) << " x " << graph::shape_to_string(c.x) << " w " << graph::shape_to_string(c.w);
    }
  }
}

TEST(VulkanSpatial, Pools3d) {
  struct Case {
    Shape x;
    Ints kernel, stride, padding;
    int64_t ceil_mode;
  };
  const std::vector<Case> cases = {
      {{1, 2, 4, 5, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 0},
      {{2, 1, 5, 6, 7}, {3, 2, 3}, {2, 2, 2}, {1, 1, 1}, 1},
      {{1, 3, 3, 4, 5}, {2, 3, 2}, {1, 2, 3}, {1, 1, 0}, 1},
  };
  uint32_t seed = 200;
  for (DType dtype : kFloats) {
    if (skip_dtype(dtype)) continue;
    double tol = dtype == DType::kF16 ? 1e-3 : 1e-6;
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(graph::dtype_name(dtype)) + " x " + graph::shape_to_string(c.x));
      for (int64_t include_pad : {0, 1}) {
        EXPECT_TRUE(node_matches_cpu("avg_pool3d", {random_tensor(dtype, c.x, seed++, -2, 2)},
                                     {{"kernel", c.kernel}, {"stride", c.stride}, {"padding", c.padding},
                                      {"ceil_mode", c.ceil_mode}, {"count_include_pad", include_pad}},
                                     tol, tol));
      }
      for (Ints dilation : {Ints{1, 1, 1}, Ints{1, 2, 1}}) {
        EXPECT_TRUE(node_matches_cpu("max_pool3d", {random_tensor(dtype, c.x, seed++, -2, 2)},
                                     {{"kernel", c.kernel}, {"stride", c.stride}, {"padding", c.padding},
                                      {"ceil_mode", c.ceil_mode}, {"dilation", dilation}},
                                     0, 0));
      }
    }
  }
}

TEST(VulkanSpatial, ResizeEveryModeAndScale) {
  struct Case {
    Shape x;
    Ints size;
    const char* mode;
    int64_t align;
    std::vector<double> scales;
  };
  const std::vector<Case> cases = {
      {{1, 2, 3, 4}, {6, 8}, "nearest", 0, {}},              // 2x shortcut
      {{1, 2, 3, 4}, {7, 5}, "nearest", 0, {}},              // non-integer
      {{2, 1, 5, 6}, {3, 4}, "nearest", 0, {}},              // downscale
      {{1, 2, 3, 4}, {5, 10}, "nearest", 0, {1.7, 2.5}},     // the user's scales
      {{1, 2, 3, 4}, {7, 5}, "nearest_exact", 0, {}},
      {{1, 2, 4, 4}, {10, 10}, "nearest_exact", 0, {2.5, 2.5}},
      {{1, 2, 3, 4}, {7, 9}, "bilinear", 0, {}},
      {{1, 2, 6, 5}, {4, 3}, "bilinear", 0, {}},
      {{1, 2, 3, 4}, {5, 10}, "bilinear", 0, {1.7, 2.5}},
      {{1, 2, 3, 4}, {7, 9}, "bilinear", 1, {}},
      {{1, 1, 4, 3}, {1, 3}, "bilinear", 1, {}},             // one output row: src 0
      {{1, 1, 4, 3}, {4, 3}, "bilinear", 0, {}},             // same size: a copy
  };
  uint32_t seed = 300;
  for (DType dtype : kFloats) {
    if (skip_dtype(dtype)) continue;
    for (const Case& c : cases) {
      graph::AttrMap attrs = {{"size", c.size}, {"mode", std::string(c.mode)}, {"align_corners", c.align}};
      if (!c.scales.empty()) attrs["scales"] = c.scales;
      bool exact = std::string(c.mode) != "bilinear";
      double tol = exact ? 0.0 : dtype == DType::kF16 ? 1e-3 : 1e-6;
      EXPECT_TRUE(node_matches_cpu("resize", {random_tensor(dtype, c.x, seed++, -2, 2)}, attrs, tol, tol))
          << graph::dtype_name(dtype) << " " << c.mode << " align " << c.align << " x " << graph::shape_to_string(c.x)
          << " -> " << c.size[0] << "x" << c.size[1];
    }
  }
}

TEST(VulkanSpatial, GridSampleEveryModePaddingAndAlignment) {
  // Odd, non-square sizes, batch 2; grid points up to 1.6 out, so every
  // padding rule is exercised; one 1-pixel-wide input (reflection's empty span).
  const std::vector<std::pair<Shape, Shape>> shapes = {{{2, 3, 5, 7}, {2, 4, 3, 2}}, {{1, 2, 4, 1}, {1, 3, 5, 2}}};
  uint32_t seed = 400;
  for (DType dtype : kFloats) {
    if (skip_dtype(dtype)) continue;
    for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
      for (const char* padding : {"zeros", "border", "reflection"}) {
        for (int64_t align : {0, 1}) {
          for (const auto& [x, grid] : shapes) {
            graph::AttrMap attrs = {
                {"mode", std::string(mode)}, {"padding_mode", std::string(padding)}, {"align_corners", align}};
            double tol = std::string(mode) == "nearest" ? 0.0 : dtype == DType::kF16 ? 2e-3 : 1e-5;
            EXPECT_TRUE(node_matches_cpu("grid_sample",
                                         {random_tensor(dtype, x, seed, -2, 2), random_tensor(dtype, grid, seed + 1, -1.6, 1.6)},
                                         attrs, tol, tol))
                << graph::dtype_name(dtype) << " " << mode << " " << padding << " align " << align << " x "
                << graph::shape_to_string(x);
            seed += 2;
          }
        }
      }
    }
  }
}

const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8, DType::kBool};

TEST(VulkanSpatial, PadModesEveryDType) {
  const std::vector<std::pair<Shape, Ints>> cases = {
      {{7}, {3, 2}},
      {{3, 5}, {2, 1, 0, 4}},
      {{2, 3, 4, 5}, {0, 0, 1, 2, 3, 3, 2, 4}},
  };
  uint32_t seed = 400;
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    for (DType dtype : kAllDTypes) {
      for (const auto& [shape, pads] : cases) {
        EXPECT_TRUE(node_matches_cpu("pad", {exact_values(dtype, shape, seed++)},
                                     {{"pads", pads}, {"mode", std::string(mode)}}, 0, 0))
            << mode << " " << graph::dtype_name(dtype) << graph::shape_to_string(shape);
      }
    }
  }
}

TEST(VulkanSpatial, ExpandEveryDType) {
  const std::vector<std::pair<Shape, Ints>> cases = {
      {{3, 1}, {2, 3, 5}},
      {{1}, {4, 7}},
      {{2, 1, 3}, {2, 4, 3}},
      {{4, 1, 1}, {3, 4, 2, 5}},
  };
  uint32_t seed = 500;
  for (DType dtype : kAllDTypes) {
    for (const auto& [shape, target] : cases) {
      EXPECT_TRUE(node_matches_cpu("expand", {exact_values(dtype, shape, seed++)}, {{"shape", target}}, 0, 0))
          << graph::dtype_name(dtype) << graph::shape_to_string(shape);
    }
  }
}

TEST(VulkanSpatial, FlipEveryDType) {
  const std::vector<std::pair<Shape, Ints>> cases = {
      {{9}, {0}},
      {{3, 5}, {1}},
      {{3, 5}, {0, 1}},
      {{2, 3, 4, 5}, {-1, 1}},
      {{2, 1, 7}, {1}},
  };
  uint32_t seed = 600;
  for (DType dtype : kAllDTypes) {
    for (const auto& [shape, axes] : cases) {
      EXPECT_TRUE(node_matches_cpu("flip", {exact_values(dtype, shape, seed++)}, {{"axes", axes}}, 0, 0))
          << graph::dtype_name(dtype) << graph::shape_to_string(shape);
    }
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test
