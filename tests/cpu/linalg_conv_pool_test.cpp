// CPU kernels for matmul, linear, scaled_dot_product_attention (masks, causal,
// grouped heads, fully-masked rows), conv2d (stride, padding, dilation, groups,
// depthwise) and pooling (PyTorch's ceil_mode and count_include_pad rules).
#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

using Matmul = OpTest;

TEST_F(Matmul, TwoByThreeTimesThreeByTwo) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]]:
  // 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64, 4*7+5*9+6*11 = 139, 4*8+5*10+6*12 = 154.
  ValueId a = iota(DType::kF32, {2, 3}, 1);
  ValueId b = iota(DType::kF32, {3, 2}, 7);
  EXPECT_TRUE(Matches(run1("matmul", {a, b}), DType::kF32, {2, 2}, {58, 64, 139, 154}));
}

TEST_F(Matmul, BroadcastsBatchDims) {
  // a [2,1,2,2] = (i+1) * identity, b [3,2,2] = iota: out[i][j] = (i+1) * b[j].
  ValueId a = f32({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  ValueId b = iota(DType::kF32, {3, 2, 2});
  Reals expected;
  for (int i = 1; i <= 2; ++i) {
    for (int v = 0; v < 12; ++v) expected.push_back(i * v);
  }
  EXPECT_TRUE(Matches(run1("matmul", {a, b}), DType::kF32, {2, 3, 2, 2}, expected));
  // [2,2,3] x [3,1] of ones: row sums 0+1+2 = 3, 3+4+5 = 12, 21, 30.
  EXPECT_TRUE(Matches(run1("matmul", {iota(DType::kF32, {2, 2, 3}), f32({3, 1}, {1, 1, 1})}), DType::kF32, {2, 2, 1},
                      {3, 12, 21, 30}));
}

TEST_F(Matmul, EmptyInnerDimGivesZeros) {
  EXPECT_TRUE(Matches(run1("matmul", {f32({2, 0}, {}), f32({0, 3}, {})}), DType::kF32, {2, 3}, Reals(6, 0.0)));
}

TEST_F(Matmul, HalfAccumulatesWide) {
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly (a half); summing in half would lose
  // each 2^-11 to round-to-even and give 1.
  ValueId a = f16({1, 3}, {1, std::ldexp(1.0, -11), std::ldexp(1.0, -11)});
  EXPECT_TRUE(Matches(run1("matmul", {a, f16({3, 1}, {1, 1, 1})}), DType::kF16, {1, 1}, {1.0009765625}));
}

TEST_F(Matmul, RejectsMismatchedInnerDims) {
  EXPECT_MENTIONS(error_of("matmul", {f32({2, 3}, Reals(6, 0)), f32({2, 2}, Reals(4, 0))}), "inner dims differ");
}

using Linear = OpTest;

TEST_F(Linear, ComputesXWTransposedPlusBias) {
  // x [[1,2,3],[4,5,6]], W [[1,0,-1],[0.5,0.5,0.5]], b [10,20]:
  // row 0: 1-3 = -2 (+10 = 8), 0.5*6 = 3 (+20 = 23); row 1: 4-6 = -2 (8), 0.5*15 = 7.5 (27.5).
  ValueId x = iota(DType::kF32, {2, 3}, 1);
  ValueId w = f32({2, 3}, {1, 0, -1, 0.5, 0.5, 0.5});
  ValueId b = f32({2}, {10, 20});
  EXPECT_TRUE(Matches(run1("linear", {x, w, b}), DType::kF32, {2, 2}, {8, 23, 8, 27.5}));
  EXPECT_TRUE(Matches(run1("linear", {x, w}), DType::kF32, {2, 2}, {-2, 3, -2, 7.5}));
  EXPECT_TRUE(Matches(run1("linear", {x, w, graph::kNone}), DType::kF32, {2, 2}, {-2, 3, -2, 7.5}));
  // Leading dims are kept: [1,2,3] -> [1,2,2]; a 1-D x is one row.
  EXPECT_TRUE(Matches(run1("linear", {iota(DType::kF32, {1, 2, 3}, 1), w, b}), DType::kF32, {1, 2, 2},
                      {8, 23, 8, 27.5}));
  EXPECT_TRUE(Matches(run1("linear", {f32({3}, {1, 2, 3}), w}), DType::kF32, {2}, {-2, 3}));
}

TEST_F(Linear, HalfAndBadBias) {
  ValueId x = f16({1, 2}, {0.5, 0.25});
  ValueId w = f16({1, 2}, {2, 4});
  EXPECT_TRUE(Matches(run1("linear", {x, w, f16({1}, {-1})}), DType::kF16, {1, 1}, {1}));  // 1 + 1 - 1
  EXPECT_MENTIONS(error_of("linear", {x, w, f16({2}, {0, 0})}), "bias");
}

// Attention over two keys: k = [0, ln 2], v = [[3, 0], [0, 6]]. A query q (E = 1,
// scale 1) scores [0, q ln 2], so its weights are [1, 2^q] / (1 + 2^q): q = 1
// gives [1/3, 2/3] -> [1, 4]; q = 2 gives [1/5, 4/5] -> [0.6, 4.8].
class Attention : public OpTest {
 protected:
  static constexpr const char* kOp = "scaled_dot_product_attention";
  ValueId q_ = f32({1, 2, 1}, {1, 2});
  ValueId k_ = f32({1, 2, 1}, {0, std::log(2.0)});
  ValueId v_ = f32({1, 2, 2}, {3, 0, 0, 6});
};

TEST_F(Attention, WeighsValuesBySoftmaxOfScores) {
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_}), DType::kF32, {1, 2, 2}, {1, 4, 0.6, 4.8}, 1e-6));
  // scale 2 doubles the scores: q = 1 weighs like q = 2, and q = 2 gives [1/17, 16/17].
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_}, {{"scale", 2.0}}), DType::kF32, {1, 2, 2},
                      {0.6, 4.8, 3.0 / 17, 96.0 / 17}, 1e-6));
}

TEST_F(Attention, CausalIsTopLeftAligned) {
  // Query i sees keys j <= i: query 0 only key 0, query 1 both.
  EXPECT_TRUE(
      Matches(run1(kOp, {q_, k_, v_}, {{"is_causal", int64_t{1}}}), DType::kF32, {1, 2, 2}, {3, 0, 0.6, 4.8}, 1e-6));
  // One query over two keys (L < S): it sees key 0 alone, as torch.ones(L, S).tril().
  ValueId q1 = f32({1, 1, 1}, {5});
  EXPECT_TRUE(Matches(run1(kOp, {q1, k_, v_}, {{"is_causal", int64_t{1}}}), DType::kF32, {1, 1, 2}, {3, 0}, 1e-6));
}

TEST_F(Attention, BoolMaskAttendsWhereTrueAndFullyMaskedRowsAreZero) {
  ValueId swap = boolean({2, 2}, {0, 1, 1, 0});
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_, swap}), DType::kF32, {1, 2, 2}, {0, 6, 3, 0}, 1e-6));
  // Query 0 may see no key: its row is 0, not NaN (PyTorch's _safe_softmax).
  ValueId none_for_first = boolean({2, 2}, {0, 0, 1, 1});
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_, none_for_first}), DType::kF32, {1, 2, 2}, {0, 0, 0.6, 4.8}, 1e-6));
}

TEST_F(Attention, FloatMaskIsAddedAndAllMinusInfinityRowsAreZero) {
  // Row 0: [0, ln 2] + [ln 2, 0] = equal scores -> [1.5, 3]; row 1: every score -inf -> 0.
  ValueId add = f32({1, 2, 2}, {std::log(2.0), 0, -kInf, -kInf});
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_, add}), DType::kF32, {1, 2, 2}, {1.5, 3, 0, 0}, 1e-6));
  // A NaN in the mask makes its row NaN.
  ValueId nan = f32({2, 1}, {kNaN, 0});
  EXPECT_TRUE(Matches(run1(kOp, {q_, k_, v_, nan}), DType::kF32, {1, 2, 2}, {kNaN, kNaN, 0.6, 4.8}, 1e-6));
}

TEST_F(Attention, GroupedHeadsShareKeysAndValues) {
  // Two query heads over one kv head: head 0 holds q = 1, head 1 q = 2.
  ValueId q = f32({2, 1, 1}, {1, 2});
  EXPECT_TRUE(Matches(run1(kOp, {q, k_, v_}), DType::kF32, {2, 1, 2}, {1, 4, 0.6, 4.8}, 1e-6));
  // Four query heads over two kv heads: heads 0, 1 read kv head 0; heads 2, 3 kv head 1 (values doubled).
  ValueId q4 = f32({4, 1, 1}, {1, 2, 1, 2});
  ValueId k2 = f32({2, 2, 1}, {0, std::log(2.0), 0, std::log(2.0)});
  ValueId v2 = f32({2, 2, 2}, {3, 0, 0, 6, 6, 0, 0, 12});
  EXPECT_TRUE(Matches(run1(kOp, {q4, k2, v2}), DType::kF32, {4, 1, 2}, {1, 4, 0.6, 4.8, 2, 8, 1.2, 9.6}, 1e-6));
}

TEST_F(Attention, BatchDimsAndNoKeys) {
  // [2, 1, 1, 1] queries over per-batch keys: batch 1's values are negated.
  ValueId q = f32({2, 1, 1, 1}, {1, 2});
  ValueId k = f32({2, 1, 2, 1}, {0, std::log(2.0), 0, std::log(2.0)});
  ValueId v = f32({2, 1, 2, 2}, {3, 0, 0, 6, -3, 0, 0, -6});
  EXPECT_TRUE(Matches(run1(kOp, {q, k, v}), DType::kF32, {2, 1, 1, 2}, {1, 4, -0.6, -4.8}, 1e-6));
  // No keys at all: every row is fully masked, so 0.
  EXPECT_TRUE(Matches(run1(kOp, {q_, f32({1, 0, 1}, {}), f32({1, 0, 3}, {})}), DType::kF32, {1, 2, 3}, Reals(6, 0.0)));
}

TEST_F(Attention, HalfComputesWideAndRoundsOnce) {
  ValueId q = f16({1, 2, 1}, {1, 2});
  ValueId k = f16({1, 2, 1}, {0, std::log(2.0)});
  ValueId v = f16({1, 2, 2}, {3, 0, 0, 6});
  // k's ln 2 rounds to half (0.69287...): the weights follow from that value.
  double k1 = HostTensor::from_doubles(DType::kF16, {1}, {std::log(2.0)}).value().element(0);
  Reals want;
  for (double qi : {1.0, 2.0}) {
    double w = std::exp(qi * k1) / (1 + std::exp(qi * k1));
    want.insert(want.end(), {3 * (1 - w), 6 * w});
  }
  EXPECT_TRUE(Matches(run1(kOp, {q, k, v}), DType::kF16, {1, 2, 2}, want));
}

using Conv2d = OpTest;

TEST_F(Conv2d, PlainWithBias) {
  // x = 1..9 in 3x3, w = [[1,0],[0,-1]]: x[i][j] - x[i+1][j+1] = -4 everywhere; +0.5 bias.
  ValueId x = iota(DType::kF32, {1, 1, 3, 3}, 1);
  ValueId w = f32({1, 1, 2, 2}, {1, 0, 0, -1});
  EXPECT_TRUE(Matches(run1("conv2d", {x, w}), DType::kF32, {1, 1, 2, 2}, {-4, -4, -4, -4}));
  EXPECT_TRUE(Matches(run1("conv2d", {x, w, f32({1}, {0.5})}), DType::kF32, {1, 1, 2, 2}, {-3.5, -3.5, -3.5, -3.5}));
}

TEST_F(Conv2d, StrideAndZeroPadding) {
  // 3x3 ones kernel, padding 1, stride 2 on 1..9: windows centred on (0,0), (0,2),
  // (2,0), (2,2) see 1+2+4+5 = 12, 2+3+5+6 = 16, 4+5+7+8 = 24, 5+6+8+9 = 28.
  ValueId x = iota(DType::kF32, {1, 1, 3, 3}, 1);
  ValueId w = f32({1, 1, 3, 3}, Reals(9, 1));
  EXPECT_TRUE(Matches(run1("conv2d", {x, w}, {{"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}}), DType::kF32,
                      {1, 1, 2, 2}, {12, 16, 24, 28}));
}

TEST_F(Conv2d, Dilation) {
  // 2x2 ones kernel with dilation 2 on x[i][j] = 5i + j (5x5): taps (i,j), (i,j+2),
  // (i+2,j), (i+2,j+2) sum to 4(5i+j) + 24.
  ValueId x = iota(DType::kF32, {1, 1, 5, 5});
  ValueId w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  EXPECT_TRUE(Matches(run1("conv2d", {x, w}, {{"dilation", Ints{2, 2}}}), DType::kF32, {1, 1, 3, 3},
                      {24, 28, 32, 44, 48, 52, 64, 68, 72}));
}

TEST_F(Conv2d, AsymmetricStridePaddingAndBatch) {
  // w = [1, 10] (1x2), stride [1,2], padding [0,1]: output column 0 reads (pad, x[h][0]),
  // column 1 reads (x[h][1], x[h][2]). Batch 0 rows [0,1,2], [3,4,5]: 10*0 = 0, 1+20 = 21,
  // 30, 4+50 = 54; batch 1 rows [6,7,8], [9,10,11]: 60, 87, 90, 120. Bias +0.5.
  ValueId x = iota(DType::kF32, {2, 1, 2, 3});
  ValueId w = f32({1, 1, 1, 2}, {1, 10});
  EXPECT_TRUE(Matches(run1("conv2d", {x, w, f32({1}, {0.5})}, {{"stride", Ints{1, 2}}, {"padding", Ints{0, 1}}}),
                      DType::kF32, {2, 1, 2, 2}, {0.5, 21.5, 30.5, 54.5, 60.5, 87.5, 90.5, 120.5}));
}

TEST_F(Conv2d, Groups) {
  // groups 2, x channels [1,2,3,4], w [[1,1],[1,-1]]: group 0 (channels 0,1) -> 1+2 = 3;
  // group 1 (channels 2,3) -> 3-4 = -1.
  EXPECT_TRUE(Matches(run1("conv2d", {f32({1, 4, 1, 1}, {1, 2, 3, 4}), f32({2, 2, 1, 1}, {1, 1, 1, -1})},
                           {{"groups", int64_t{2}}}),
                      DType::kF32, {1, 2, 1, 1}, {3, -1}));
  // Two output channels per group: x [1,2], w [1,2,3,4] -> channel 0 feeds 1*1, 2*1;
  // channel 1 feeds 3*2, 4*2.
  EXPECT_TRUE(Matches(run1("conv2d", {f32({1, 2, 1, 1}, {1, 2}), f32({4, 1, 1, 1}, {1, 2, 3, 4})},
                           {{"groups", int64_t{2}}}),
                      DType::kF32, {1, 4, 1, 1}, {1, 2, 6, 8}));
  EXPECT_MENTIONS(error_of("conv2d", {f32({1, 3, 1, 1}, {1, 2, 3}), f32({2, 1, 1, 1}, {1, 1})},
                           {{"groups", int64_t{2}}}),
                  "not divisible");
}

TEST_F(Conv2d, Depthwise) {
  // groups = channels = 3, x = 0..11, w[c] all c+1: c0 1*(0+1+2+3) = 6,
  // c1 2*(4+5+6+7) = 44, c2 3*(8+9+10+11) = 114.
  ValueId x = iota(DType::kF32, {1, 3, 2, 2});
  ValueId w = f32({3, 1, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  EXPECT_TRUE(Matches(run1("conv2d", {x, w}, {{"groups", int64_t{3}}}), DType::kF32, {1, 3, 1, 1}, {6, 44, 114}));
}

TEST_F(Conv2d, Half) {
  // 0.5 + 0.25 + 0.125 + 2 = 2.875, then -0.875 bias = 2.
  ValueId x = f16({1, 1, 2, 2}, {0.5, 0.25, 0.125, 2});
  EXPECT_TRUE(Matches(run1("conv2d", {x, f16({1, 1, 2, 2}, {1, 1, 1, 1}), f16({1}, {-0.875})}), DType::kF16,
                      {1, 1, 1, 1}, {2}));
  EXPECT_MENTIONS(error_of("conv2d", {x, f32({1, 1, 2, 2}, {1, 1, 1, 1})}), "must match");
}

using AvgPool = OpTest;

TEST_F(AvgPool, TwoByTwoStrideTwo) {
  // 1..16 in 4x4: (1+2+5+6)/4 = 3.5, (3+4+7+8)/4 = 5.5, 11.5, 13.5. Stride defaults to the kernel.
  EXPECT_TRUE(Matches(run1("avg_pool2d", {iota(DType::kF32, {1, 1, 4, 4}, 1)}, {{"kernel", Ints{2, 2}}}), DType::kF32,
                      {1, 1, 2, 2}, {3.5, 5.5, 11.5, 13.5}));
}

TEST_F(AvgPool, PaddingWithAndWithoutCountIncludePad) {
  // 1..9 in 3x3, kernel 2, stride 2, padding 1: windows cover rows/cols {-1,0} and {1,2}.
  // (0,0) sees 1 of 4 cells; (0,1) sees 2+3; (1,0) sees 4+7; (1,1) sees 5+6+8+9 = 28.
  ValueId x = iota(DType::kF32, {1, 1, 3, 3}, 1);
  AttrMap attrs = {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}};
  // Padding counts: 1/4, 5/4, 11/4, 28/4.
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, attrs), DType::kF32, {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7}));
  // Only input cells count: 1/1, 5/2, 11/2, 28/4.
  attrs["count_include_pad"] = int64_t{0};
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, attrs), DType::kF32, {1, 1, 2, 2}, {1, 2.5, 5.5, 7}));
}

TEST_F(AvgPool, CeilModeClipsTheDivisorToThePaddedInput) {
  // 1..16 in 4x4, kernel 3, stride 2, padding 1, ceil_mode: out = ceil((4+2-3)/2)+1 = 3.
  // Windows start at -1, 1, 3 (rows and cols alike); the last one would span 3..5 but the
  // padded input ends at 4, so even with count_include_pad its size there is 2, not 3.
  // (0,0): rows/cols -1..1 -> 9 cells, input 1+2+5+6 = 14: 14/9 and 14/4.
  // (0,2): rows -1..1 (3) x cols 3..4 (2) = 6 cells, input 4+8 = 12: 12/6 = 2 and 12/2 = 6.
  // (2,2): 2x2 = 4 cells, input 16 only: 16/4 = 4 and 16/1 = 16.
  ValueId x = iota(DType::kF32, {1, 1, 4, 4}, 1);
  AttrMap attrs = {{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", int64_t{1}}};
  // torch.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True) gives the same nine values.
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, attrs), DType::kF32, {1, 1, 3, 3},
                      {14.0 / 9, 30.0 / 9, 2, 57.0 / 9, 11, 6, 4.5, 7.5, 4}, 1e-6));
  attrs["count_include_pad"] = int64_t{0};
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, attrs), DType::kF32, {1, 1, 3, 3},
                      {3.5, 5, 6, 9.5, 11, 12, 13.5, 15, 16}));
}

TEST_F(AvgPool, CeilModeDropsAWindowStartingInThePadding) {
  // 5x5 (x = 5i+j), kernel 2, stride 2, padding 1, ceil_mode: ceil((5+2-2)/2)+1 = 4, but
  // window 3 would start at 3*2-1 = 5, in the right padding: dropped, out is 3x3.
  // Windows cover {-1,0}, {1,2}, {3,4}. (0,0): x[0][0] = 0 over 4 cells; (1,1):
  // 6+7+11+12 = 36 / 4 = 9; (2,2): 18+19+23+24 = 84 / 4 = 21; (0,1): 1+2 = 3 / 4 = 0.75.
  ValueId x = iota(DType::kF32, {1, 1, 5, 5});
  AttrMap attrs = {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}}, {"ceil_mode", int64_t{1}}};
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, attrs), DType::kF32, {1, 1, 3, 3},
                      {0, 0.75, 1.75, 3.75, 9, 11, 8.75, 19, 21}));
  // Without padding, ceil_mode keeps a last window that hangs off the input:
  // ceil((5-2)/2)+1 = 3; (0,2) averages x[0][4], x[1][4] = (4+9)/2; (2,2) is x[4][4] = 24.
  EXPECT_TRUE(Matches(run1("avg_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}), DType::kF32,
                      {1, 1, 3, 3}, {3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24}));
}

TEST_F(AvgPool, HalfAndRejectsOversizedPadding) {
  EXPECT_TRUE(Matches(run1("avg_pool2d", {f16({1, 1, 1, 2}, {1, 2})}, {{"kernel", Ints{1, 2}}}), DType::kF16,
                      {1, 1, 1, 1}, {1.5}));
  EXPECT_MENTIONS(error_of("avg_pool2d", {iota(DType::kF32, {1, 1, 4, 4})},
                           {{"kernel", Ints{2, 2}}, {"padding", Ints{2, 2}}}),
                  "padding");
}

using MaxPool = OpTest;

TEST_F(MaxPool, PlainDilationAndCeilMode) {
  // x = 5i + j on 5x5 unless noted.
  // 4x4 1..16, kernel 2: 6, 8, 14, 16.
  EXPECT_TRUE(Matches(run1("max_pool2d", {iota(DType::kF32, {1, 1, 4, 4}, 1)}, {{"kernel", Ints{2, 2}}}), DType::kF32,
                      {1, 1, 2, 2}, {6, 8, 14, 16}));
  ValueId x = iota(DType::kF32, {1, 1, 5, 5});
  // Dilation 2, stride 1: taps (i,j) .. (i+2,j+2); the max is x[i+2][j+2] = 5i+j+12.
  EXPECT_TRUE(Matches(run1("max_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"stride", Ints{1, 1}}, {"dilation", Ints{2, 2}}}),
                      DType::kF32, {1, 1, 3, 3}, {12, 13, 14, 17, 18, 19, 22, 23, 24}));
  // ceil_mode: the last window holds row/col 4 only.
  EXPECT_TRUE(Matches(run1("max_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}), DType::kF32,
                      {1, 1, 3, 3}, {6, 8, 9, 16, 18, 19, 21, 23, 24}));
}

TEST_F(MaxPool, PaddingIsMinusInfinity) {
  // All negative: -1..-9 in 3x3, kernel 2, stride 2, padding 1. Zero padding would give 0s;
  // -inf padding gives max(-1) = -1, max(-2,-3) = -2, max(-4,-7) = -4, max(-5,-6,-8,-9) = -5.
  ValueId x = f32({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  EXPECT_TRUE(Matches(run1("max_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"padding", Ints{1, 1}}}), DType::kF32,
                      {1, 1, 2, 2}, {-1, -2, -4, -5}));
  ValueId q = i8({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -128});
  EXPECT_TRUE(Matches(run1("max_pool2d", {q}, {{"kernel", Ints{2, 2}}, {"padding", Ints{1, 1}}}), DType::kI8,
                      {1, 1, 2, 2}, {-1, -2, -4, -5}));
}

TEST_F(MaxPool, NaNWinsAndIntegersWork) {
  ValueId x = f32({1, 1, 2, 4}, {1, kNaN, 3, 4, 5, 6, 7, -kInf});
  EXPECT_TRUE(Matches(run1("max_pool2d", {x}, {{"kernel", Ints{2, 2}}}), DType::kF32, {1, 1, 1, 2}, {kNaN, 7}));
  ValueId y = i32({1, 2, 1, 2}, {3, -7, 2147483647, 0});  // two channels, each pooled alone
  EXPECT_TRUE(Matches(run1("max_pool2d", {y}, {{"kernel", Ints{1, 2}}}), DType::kI32, {1, 2, 1, 1}, {3, 2147483647}));
  ValueId h = f16({1, 1, 1, 3}, {0.5, -1, 0.25});
  EXPECT_TRUE(Matches(run1("max_pool2d", {h}, {{"kernel", Ints{1, 3}}}), DType::kF16, {1, 1, 1, 1}, {0.5}));
}

}  // namespace
}  // namespace gpuu::cpu
