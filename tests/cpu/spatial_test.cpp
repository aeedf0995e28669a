// CPU kernels for resize (nearest, nearest_exact, bilinear both ways, user
// scales), conv_transpose2d, conv3d, the 3-D pools, pad modes, expand and
// flip: small cases worked out by hand, larger ones against plain loops
// written here from the definitions.
#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

using Resize = OpTest;

AttrMap resize_attrs(Ints size, const char* mode, int64_t align = 0) {
  return {{"size", size}, {"mode", std::string(mode)}, {"align_corners", align}};
}

TEST_F(Resize, NearestDoublesEachPixel) {
  ValueId x = iota(DType::kF32, {1, 1, 2, 2});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({4, 4}, "nearest")), DType::kF32, {1, 1, 4, 4},
                      {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}));
}

TEST_F(Resize, NearestAndNearestExactAtNonIntegerScales) {
  // 3 -> 5: step 0.6. nearest floor(d * 0.6) = 0 0 1 1 2; exact floor((d + .5) * 0.6) = 0 0 1 2 2.
  ValueId x = f32({1, 1, 1, 3}, {10, 20, 30});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({1, 5}, "nearest")), DType::kF32, {1, 1, 1, 5},
                      {10, 10, 20, 20, 30}));
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({1, 5}, "nearest_exact")), DType::kF32, {1, 1, 1, 5},
                      {10, 10, 20, 30, 30}));
  // Downscale 5 -> 2: step 2.5: nearest 0, 2; exact floor(1.25) = 1, floor(3.75) = 3.
  ValueId y = iota(DType::kF32, {1, 1, 5, 1});
  EXPECT_TRUE(Matches(run1("resize", {y}, resize_attrs({2, 1}, "nearest")), DType::kF32, {1, 1, 2, 1}, {0, 2}));
  EXPECT_TRUE(Matches(run1("resize", {y}, resize_attrs({2, 1}, "nearest_exact")), DType::kF32, {1, 1, 2, 1}, {1, 3}));
}

TEST_F(Resize, UserScalesSetTheStep) {
  // 4 -> 6: by size the step is 4/6 (0 0 1 2 2 3); scale_factor 1.6 makes it 0.625 (0 0 1 1 2 3).
  ValueId x = iota(DType::kF32, {1, 1, 1, 4});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({1, 6}, "nearest")), DType::kF32, {1, 1, 1, 6},
                      {0, 0, 1, 2, 2, 3}));
  AttrMap scaled = resize_attrs({1, 6}, "nearest");
  scaled["scales"] = std::vector<double>{1.0, 1.6};
  EXPECT_TRUE(Matches(run1("resize", {x}, scaled), DType::kF32, {1, 1, 1, 6}, {0, 0, 1, 1, 2, 3}));
}

TEST_F(Resize, BilinearHalfPixelClampsAtTheEdges) {
  // 2 -> 4, step 0.5: src = max((d + .5) * .5 - .5, 0) = 0, .25, .75, 1.25 (reads 1, 1).
  ValueId x = f32({1, 1, 1, 2}, {0, 4});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({1, 4}, "bilinear")), DType::kF32, {1, 1, 1, 4}, {0, 1, 3, 4}));
  // 4 -> 2, step 2: src = .5 and 2.5.
  ValueId y = f32({1, 1, 1, 4}, {0, 10, 20, 30});
  EXPECT_TRUE(Matches(run1("resize", {y}, resize_attrs({1, 2}, "bilinear")), DType::kF32, {1, 1, 1, 2}, {5, 25}));
}

TEST_F(Resize, BilinearAlignCorners) {
  // 2 -> 4: src = d / 3.
  ValueId x = f32({1, 1, 1, 2}, {0, 4});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({1, 4}, "bilinear", 1)), DType::kF32, {1, 1, 1, 4},
                      {0, 4.0 / 3, 8.0 / 3, 4}, 1e-6));
  // 2x2 -> 3x3: src = d / 2 on both axes; value = 2 * row + col.
  ValueId y = iota(DType::kF32, {1, 1, 2, 2});
  EXPECT_TRUE(Matches(run1("resize", {y}, resize_attrs({3, 3}, "bilinear", 1)), DType::kF32, {1, 1, 3, 3},
                      {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}));
  // One output: src 0.
  ValueId z = f32({1, 1, 3, 1}, {7, 8, 9});
  EXPECT_TRUE(Matches(run1("resize", {z}, resize_attrs({1, 1}, "bilinear", 1)), DType::kF32, {1, 1, 1, 1}, {7}));
}

TEST_F(Resize, HalfAndPlanesStayApart) {
  ValueId x = in(DType::kF16, {2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(Matches(run1("resize", {x}, resize_attrs({2, 1}, "nearest")), DType::kF16, {2, 2, 2, 1},
                      {1, 1, 3, 3, 5, 5, 7, 7}));
}

using ConvTranspose = OpTest;

TEST_F(ConvTranspose, StrideTwoStampsTheKernel) {
  // Each input pixel stamps x * w at (2i, 2j).
  ValueId x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  ValueId w = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(Matches(run1("conv_transpose2d", {x, w}, {{"stride", Ints{2, 2}}}), DType::kF32, {1, 1, 4, 4},
                      {1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16}));
  // padding 1 crops a pixel on each side; output_padding 1 gives back one at the end; bias adds.
  EXPECT_TRUE(Matches(run1("conv_transpose2d", {x, w, f32({1}, {0.5})},
                           {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"output_padding", Ints{1, 1}}}),
                      DType::kF32, {1, 1, 3, 3}, {4.5, 6.5, 8.5, 6.5, 4.5, 8.5, 12.5, 12.5, 16.5}));
}

// torch's definition read as a gather: out[n, o, y, x] = bias[o] + sum over the
// group's input channels c and taps (u, v) with y = iy * s - p + u * d.
std::vector<double> conv_transpose_loop(const HostTensor& x, const HostTensor& w, const Reals& bias, Ints s, Ints p,
                                        Ints d, int64_t groups, const Shape& out) {
  int64_t cin = x.shape[1], h = x.shape[2], wd = x.shape[3], og = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t cg = cin / groups;
  std::vector<double> r;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t o = 0; o < out[1]; ++o)
      for (int64_t y = 0; y < out[2]; ++y)
        for (int64_t xo = 0; xo < out[3]; ++xo) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
          for (int64_t c = (o / og) * cg; c < (o / og + 1) * cg; ++c)
            for (int64_t iy = 0; iy < h; ++iy)
              for (int64_t ix = 0; ix < wd; ++ix)
                for (int64_t u = 0; u < kh; ++u)
                  for (int64_t v = 0; v < kw; ++v) {
                    if (iy * s[0] - p[0] + u * d[0] != y || ix * s[1] - p[1] + v * d[1] != xo) continue;
                    acc += x.element(((n * cin + c) * h + iy) * wd + ix) * w.element(((c * og + o % og) * kh + u) * kw + v);
                  }
          r.push_back(acc);
        }
  return r;
}

TEST_F(ConvTranspose, GroupedDilatedStridedWithOutputPadding) {
  Reals xv, wv;
  for (int i = 0; i < 2 * 4 * 3 * 4; ++i) xv.push_back((i % 7) - 3);
  for (int i = 0; i < 4 * 3 * 2 * 3; ++i) wv.push_back((i % 5) * 0.5 - 1);
  ValueId x = f32({2, 4, 3, 4}, xv);
  ValueId w = f32({4, 3, 2, 3}, wv);
  ValueId b = f32({6}, {1, -1, 2, -2, 3, -3});
  Ints s{3, 2}, p{1, 2}, op{2, 1}, d{2, 3};
  // H = 2*3 - 2 + 2*1 + 2 + 1 = 9; W = 3*2 - 4 + 3*2 + 1 + 1 = 10.
  Shape out{2, 6, 9, 10};
  HostTensor got = run1("conv_transpose2d", {x, w, b},
                        {{"stride", s}, {"padding", p}, {"output_padding", op}, {"dilation", d}, {"groups", int64_t{2}}});
  EXPECT_TRUE(Matches(got, DType::kF32, out, conv_transpose_loop(tensors_[x], tensors_[w], {1, -1, 2, -2, 3, -3}, s, p, d, 2, out)));
}

using Conv3d = OpTest;

TEST_F(Conv3d, SumsTheWholeVolume) {
  // Ones over iota 0..7, plus bias 1: 28 + 1.
  ValueId x = iota(DType::kF32, {1, 1, 2, 2, 2});
  EXPECT_TRUE(Matches(run1("conv3d", {x, f32({1, 1, 2, 2, 2}, Reals(8, 1.0)), f32({1}, {1})}), DType::kF32,
                      {1, 1, 1, 1, 1}, {29}));
  // Padding 1 in depth only: windows over depth {-1, 0} and {0, 1}, {1, 2}: sums 0+1+2+3, 28, 4+5+6+7.
  EXPECT_TRUE(Matches(run1("conv3d", {x, f32({1, 1, 2, 2, 2}, Reals(8, 1.0))}, {{"padding", Ints{1, 0, 0}}}),
                      DType::kF32, {1, 1, 3, 1, 1}, {6, 28, 22}));
}

TEST_F(Conv3d, GroupsStrideDilationAgainstALoop) {
  Reals xv, wv;
  for (int i = 0; i < 1 * 4 * 5 * 4 * 6; ++i) xv.push_back(((i * 7) % 11) - 5);
  for (int i = 0; i < 4 * 2 * 2 * 2 * 3; ++i) wv.push_back(((i * 3) % 7) - 3);
  ValueId x = f32({1, 4, 5, 4, 6}, xv);
  ValueId w = f32({4, 2, 2, 2, 3}, wv);
  Ints s{2, 1, 2}, p{1, 0, 1}, d{1, 2, 1};
  // D = (5+2-2)/2+1 = 3; H = (4-2-1)/1+1 = 2; W = (6+2-3)/2+1 = 3.
  Shape out{1, 4, 3, 2, 3};
  Reals want;
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t z = 0; z < 3; ++z)
      for (int64_t y = 0; y < 2; ++y)
        for (int64_t xo = 0; xo < 3; ++xo) {
          double acc = 0;
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t a = 0; a < 2; ++a)
              for (int64_t b = 0; b < 2; ++b)
                for (int64_t e = 0; e < 3; ++e) {
                  int64_t zi = z * s[0] - p[0] + a * d[0], yi = y * s[1] - p[1] + b * d[1], xi = xo * s[2] - p[2] + e * d[2];
                  if (zi < 0 || zi >= 5 || yi < 0 || yi >= 4 || xi < 0 || xi >= 6) continue;
                  int64_t ch = (o / 2) * 2 + c;
                  acc += xv[static_cast<size_t>(((ch * 5 + zi) * 4 + yi) * 6 + xi)] *
                         wv[static_cast<size_t>((((o * 2 + c) * 2 + a) * 2 + b) * 3 + e)];
                }
          want.push_back(acc);
        }
  EXPECT_TRUE(Matches(run1("conv3d", {x, w}, {{"stride", s}, {"padding", p}, {"dilation", d}, {"groups", int64_t{2}}}),
                      DType::kF32, out, want));
}

using Pool3d = OpTest;

TEST_F(Pool3d, AverageAndMaxOfOneWindow) {
  ValueId x = iota(DType::kF32, {1, 1, 2, 2, 2});
  EXPECT_TRUE(Matches(run1("avg_pool3d", {x}, {{"kernel", Ints{2, 2, 2}}}), DType::kF32, {1, 1, 1, 1, 1}, {3.5}));
  EXPECT_TRUE(Matches(run1("max_pool3d", {x}, {{"kernel", Ints{2, 2, 2}}}), DType::kF32, {1, 1, 1, 1, 1}, {7}));
}

TEST_F(Pool3d, AveragePaddingCountsOrNot) {
  // kernel 2, stride 2, padding 1: each window holds the one cell x[a][b][c] = 4a + 2b + c.
  ValueId x = iota(DType::kF32, {1, 1, 2, 2, 2});
  AttrMap attrs = {{"kernel", Ints{2, 2, 2}}, {"stride", Ints{2, 2, 2}}, {"padding", Ints{1, 1, 1}}};
  Reals all = {0, 1, 2, 3, 4, 5, 6, 7}, eighths;
  for (double v : all) eighths.push_back(v / 8);
  EXPECT_TRUE(Matches(run1("avg_pool3d", {x}, attrs), DType::kF32, {1, 1, 2, 2, 2}, eighths));
  attrs["count_include_pad"] = int64_t{0};
  EXPECT_TRUE(Matches(run1("avg_pool3d", {x}, attrs), DType::kF32, {1, 1, 2, 2, 2}, all));
}

TEST_F(Pool3d, MaxWithDilationCeilModeNaNAndIntegers) {
  ValueId x = f32({1, 1, 1, 1, 5}, {1, 5, 2, 4, 3});
  EXPECT_TRUE(Matches(run1("max_pool3d", {x}, {{"kernel", Ints{1, 1, 2}}, {"stride", Ints{1, 1, 1}}, {"dilation", Ints{1, 1, 2}}}),
                      DType::kF32, {1, 1, 1, 1, 3}, {2, 5, 3}));
  // ceil_mode keeps the last, partial window {4}.
  EXPECT_TRUE(Matches(run1("max_pool3d", {x}, {{"kernel", Ints{1, 1, 2}}, {"ceil_mode", int64_t{1}}}), DType::kF32,
                      {1, 1, 1, 1, 3}, {5, 4, 3}));
  ValueId n = f32({1, 1, 1, 1, 4}, {1, kNaN, 2, 3});
  EXPECT_TRUE(Matches(run1("max_pool3d", {n}, {{"kernel", Ints{1, 1, 2}}}), DType::kF32, {1, 1, 1, 1, 2}, {kNaN, 3}));
  ValueId i = i32({1, 1, 1, 1, 4}, {-7, -9, 100, 3});
  EXPECT_TRUE(Matches(run1("max_pool3d", {i}, {{"kernel", Ints{1, 1, 2}}}), DType::kI32, {1, 1, 1, 1, 2}, {-7, 100}));
}

using PadModes = OpTest;

AttrMap pad_attrs(Ints pads, const char* mode) { return {{"pads", pads}, {"mode", std::string(mode)}}; }

TEST_F(PadModes, OneAxis) {
  ValueId x = f32({4}, {1, 2, 3, 4});
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({2, 1}, "reflect")), DType::kF32, {7}, {3, 2, 1, 2, 3, 4, 3}));
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({2, 1}, "replicate")), DType::kF32, {7}, {1, 1, 1, 2, 3, 4, 4}));
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({2, 1}, "circular")), DType::kF32, {7}, {3, 4, 1, 2, 3, 4, 1}));
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({3, 4}, "circular")), DType::kF32, {11},
                      {2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST_F(PadModes, TwoAxes) {
  ValueId x = iota(DType::kI32, {2, 3}, 1);  // [[1,2,3],[4,5,6]]
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({1, 1, 1, 1}, "reflect")), DType::kI32, {4, 5},
                      {5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 2, 1, 2, 3, 2}));
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({1, 0, 0, 2}, "replicate")), DType::kI32, {3, 5},
                      {1, 2, 3, 3, 3, 1, 2, 3, 3, 3, 4, 5, 6, 6, 6}));
  EXPECT_TRUE(Matches(run1("pad", {x}, pad_attrs({0, 1, 2, 1}, "circular")), DType::kI32, {3, 6},
                      {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4, 2, 3, 1, 2, 3, 1}));
}

TEST_F(PadModes, ConstantStillTakesTheValue) {
  ValueId x = f32({2}, {1, 2});
  EXPECT_TRUE(Matches(run1("pad", {x}, {{"pads", Ints{1, 1}}, {"value", 9.0}, {"mode", std::string("constant")}}),
                      DType::kF32, {4}, {9, 1, 2, 9}));
}

using ExpandFlip = OpTest;

TEST_F(ExpandFlip, ExpandRepeatsSizeOneDims) {
  ValueId x = f32({3, 1}, {1, 2, 3});
  EXPECT_TRUE(Matches(run1("expand", {x}, {{"shape", Ints{2, 3, 2}}}), DType::kF32, {2, 3, 2},
                      {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  ValueId b = boolean({1, 2}, {1, 0});
  EXPECT_TRUE(Matches(run1("expand", {b}, {{"shape", Ints{2, -1}}}), DType::kBool, {2, 2}, {1, 0, 1, 0}));
  ValueId l = i64({1}, {-5});
  EXPECT_TRUE(Matches(run1("expand", {l}, {{"shape", Ints{3}}}), DType::kI64, {3}, {-5, -5, -5}));
}

TEST_F(ExpandFlip, FlipReversesTheNamedAxes) {
  ValueId x = iota(DType::kF32, {2, 3});
  EXPECT_TRUE(Matches(run1("flip", {x}, {{"axes", Ints{1}}}), DType::kF32, {2, 3}, {2, 1, 0, 5, 4, 3}));
  EXPECT_TRUE(Matches(run1("flip", {x}, {{"axes", Ints{-2}}}), DType::kF32, {2, 3}, {3, 4, 5, 0, 1, 2}));
  EXPECT_TRUE(Matches(run1("flip", {x}, {{"axes", Ints{0, 1}}}), DType::kF32, {2, 3}, {5, 4, 3, 2, 1, 0}));
  ValueId i = iota(DType::kI8, {2, 2, 2});
  EXPECT_TRUE(Matches(run1("flip", {i}, {{"axes", Ints{0, 2}}}), DType::kI8, {2, 2, 2}, {5, 4, 7, 6, 1, 0, 3, 2}));
  EXPECT_TRUE(Matches(run1("flip", {x}, {{"axes", Ints{}}}), DType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace gpuu::cpu
