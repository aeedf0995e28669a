// CPU kernels for reductions, softmax, layer_norm, the data-movement ops
// (transpose, reshape, slice, concat, pad) and indexing (gather, index_select,
// scatter, index_put).
#include <cmath>
#include <limits>

#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

using Reduce = OpTest;

TEST_F(Reduce, SumOverAxesWithKeepdimAndNegativeAxes) {
  ValueId x = iota(DType::kF32, {2, 3}, 1);  // [[1,2,3],[4,5,6]]
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{1}}}), DType::kF32, {2}, {6, 15}));
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{1}}, {"keepdim", int64_t{1}}}), DType::kF32, {2, 1},
                      {6, 15}));
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{0}}}), DType::kF32, {3}, {5, 7, 9}));
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{-1, 0}}}), DType::kF32, {}, {21}));
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{-1, 0}}, {"keepdim", int64_t{1}}}), DType::kF32, {1, 1},
                      {21}));
  EXPECT_MENTIONS(error_of("reduce_sum", {x}, {{"axes", Ints{2}}}), "out of range");
}

TEST_F(Reduce, MeanOverNonAdjacentAxes) {
  // x[a][b][c] = 6a + 2b + c on [2,3,2]; the mean over a and c is (0+1+6+7)/4 + 2b = 3.5 + 2b.
  ValueId x = iota(DType::kF32, {2, 3, 2});
  EXPECT_TRUE(Matches(run1("reduce_mean", {x}, {{"axes", Ints{0, 2}}}), DType::kF32, {3}, {3.5, 5.5, 7.5}));
  EXPECT_TRUE(Matches(run1("reduce_mean", {iota(DType::kF32, {2, 3}, 1)}, {{"axes", Ints{0}}}), DType::kF32, {3},
                      {2.5, 3.5, 4.5}));
  EXPECT_MENTIONS(error_of("reduce_mean", {i32({2}, {1, 2})}, {{"axes", Ints{0}}}), "i32");
}

TEST_F(Reduce, MaxPropagatesNaNAndHandlesIntegers) {
  ValueId x = f32({2, 2}, {1, kNaN, 3, 4});
  EXPECT_TRUE(Matches(run1("reduce_max", {x}, {{"axes", Ints{1}}}), DType::kF32, {2}, {kNaN, 4}));
  EXPECT_TRUE(Matches(run1("reduce_max", {f32({3}, {kNaN, 1, 2})}, {{"axes", Ints{0}}}), DType::kF32, {}, {kNaN}));
  EXPECT_TRUE(Matches(run1("reduce_max", {i8({2, 2}, {-128, -5, 7, 3})}, {{"axes", Ints{0}}}), DType::kI8, {2},
                      {7, 3}));
  EXPECT_TRUE(Matches(run1("reduce_max", {f16({3}, {-kInf, -1, -2})}, {{"axes", Ints{0}}}), DType::kF16, {}, {-1}));
}

TEST_F(Reduce, IntegerSumsWrapAndHalfSumsWide) {
  EXPECT_TRUE(Matches(run1("reduce_sum", {i32({2}, {2147483647, 1})}, {{"axes", Ints{0}}}), DType::kI32, {},
                      {-2147483648.0}));
  EXPECT_TRUE(Matches(run1("reduce_sum", {i64({3}, {-5, 10, 1e12})}, {{"axes", Ints{0}}}), DType::kI64, {},
                      {1e12 + 5}));
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly.
  ValueId h = f16({3}, {1, std::ldexp(1.0, -11), std::ldexp(1.0, -11)});
  EXPECT_TRUE(Matches(run1("reduce_sum", {h}, {{"axes", Ints{0}}}), DType::kF16, {}, {1.0009765625}));
}

TEST_F(Reduce, EmptyReductions) {
  ValueId x = f32({0, 3}, {});
  EXPECT_TRUE(Matches(run1("reduce_sum", {x}, {{"axes", Ints{0}}}), DType::kF32, {3}, {0, 0, 0}));
  EXPECT_TRUE(Matches(run1("reduce_mean", {x}, {{"axes", Ints{0}}}), DType::kF32, {3}, {kNaN, kNaN, kNaN}));  // 0/0
  EXPECT_MENTIONS(error_of("reduce_max", {x}, {{"axes", Ints{0}}}), "zero elements");
  // Reducing the non-empty axis of an empty tensor is fine: nothing to produce.
  EXPECT_TRUE(Matches(run1("reduce_max", {x}, {{"axes", Ints{1}}}), DType::kF32, {0}, {}));
}

using Softmax = OpTest;

TEST_F(Softmax, AlongAnyAxisAndStable) {
  // e^1, e^2, e^3 over their sum 30.192: 0.0900306, 0.2447285, 0.6652410.
  EXPECT_TRUE(Matches(run1("softmax", {f32({3}, {1, 2, 3})}, {{"axis", int64_t{0}}}), DType::kF32, {3},
                      {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-7));
  // Axis -1 of [2,3]; 1000s would overflow exp without subtracting the max.
  EXPECT_TRUE(Matches(run1("softmax", {f32({2, 3}, {0, 0, 0, 1000, 1000, 1000})}, {{"axis", int64_t{-1}}}),
                      DType::kF32, {2, 3}, Reals(6, 1.0 / 3), 1e-7));
  // Axis 0 of [[0, 0], [0, -inf]]: column 0 splits evenly, column 1 is [1, 0].
  EXPECT_TRUE(Matches(run1("softmax", {f32({2, 2}, {0, 0, 0, -kInf})}, {{"axis", int64_t{0}}}), DType::kF32, {2, 2},
                      {0.5, 1, 0.5, 0}));
  EXPECT_TRUE(Matches(run1("softmax", {f16({2}, {0, 0})}, {{"axis", int64_t{0}}}), DType::kF16, {2}, {0.5, 0.5}));
  EXPECT_MENTIONS(error_of("softmax", {f32({2}, {0, 0})}, {{"axis", int64_t{1}}}), "out of range");
}

using LayerNorm = OpTest;

TEST_F(LayerNorm, NormalizesTrailingDimsWithBiasedVariance) {
  // Rows [1,3] (mean 2, var 1) and [2,2] (var 0): (x - mean) / sqrt(var + 1e-5).
  ValueId x = f32({2, 2}, {1, 3, 2, 2});
  const double s = 1 / std::sqrt(1 + 1e-5);  // 0.999995
  EXPECT_TRUE(Matches(run1("layer_norm", {x}, {{"normalized_ndim", int64_t{1}}}), DType::kF32, {2, 2},
                      {-s, s, 0, 0}));
  // weight [2, 1], bias [0.5, -0.5]: row 0 -> [-2s + 0.5, s - 0.5], row 1 -> the bias.
  EXPECT_TRUE(Matches(run1("layer_norm", {x, f32({2}, {2, 1}), f32({2}, {0.5, -0.5})}, {{"normalized_ndim", int64_t{1}}}),
                      DType::kF32, {2, 2}, {-2 * s + 0.5, s - 0.5, 0.5, -0.5}));
  // eps 0: exactly [-1, 1].
  EXPECT_TRUE(Matches(run1("layer_norm", {f32({2}, {1, 3})}, {{"normalized_ndim", int64_t{1}}, {"eps", 0.0}}),
                      DType::kF32, {2}, {-1, 1}));
}

TEST_F(LayerNorm, OverTwoDimsAndHalf) {
  // 1..4 over both trailing dims: mean 2.5, var (2.25+0.25+0.25+2.25)/4 = 1.25;
  // (x - 2.5) / sqrt(1.25 + 1e-5) = [-1.5, -0.5, 0.5, 1.5] * 0.894424.
  const double r = 1 / std::sqrt(1.25 + 1e-5);
  EXPECT_TRUE(Matches(run1("layer_norm", {iota(DType::kF32, {1, 2, 2}, 1)}, {{"normalized_ndim", int64_t{2}}}),
                      DType::kF32, {1, 2, 2}, {-1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r}));
  EXPECT_TRUE(Matches(run1("layer_norm", {f16({2}, {1, 3}), graph::kNone, f16({2}, {1, 1})},
                           {{"normalized_ndim", int64_t{1}}, {"eps", 0.0}}),
                      DType::kF16, {2}, {0, 2}));
  EXPECT_MENTIONS(error_of("layer_norm", {f32({2, 2}, {1, 2, 3, 4}), f32({3}, {1, 1, 1})},
                           {{"normalized_ndim", int64_t{1}}}),
                  "normalized shape");
}

using ShapeOps = OpTest;

TEST_F(ShapeOps, Transpose) {
  EXPECT_TRUE(Matches(run1("transpose", {iota(DType::kF32, {2, 3})}, {{"perm", Ints{1, 0}}}), DType::kF32, {3, 2},
                      {0, 3, 1, 4, 2, 5}));
  // perm [2,0,1] on [2,3,4]: out[k][i][j] = x[i][j][k] = 12i + 4j + k.
  Reals expected;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) expected.push_back(12 * i + 4 * j + k);
    }
  }
  EXPECT_TRUE(Matches(run1("transpose", {iota(DType::kI64, {2, 3, 4})}, {{"perm", Ints{2, 0, 1}}}), DType::kI64,
                      {4, 2, 3}, expected));
  EXPECT_TRUE(Matches(run1("transpose", {boolean({1, 2}, {1, 0})}, {{"perm", Ints{1, 0}}}), DType::kBool, {2, 1},
                      {1, 0}));
  EXPECT_TRUE(Matches(run1("transpose", {f16({1, 2}, {0.5, -2})}, {{"perm", Ints{1, 0}}}), DType::kF16, {2, 1},
                      {0.5, -2}));
  EXPECT_MENTIONS(error_of("transpose", {iota(DType::kF32, {2, 3})}, {{"perm", Ints{0, 0}}}), "permutation");
}

TEST_F(ShapeOps, Reshape) {
  EXPECT_TRUE(Matches(run1("reshape", {iota(DType::kI8, {2, 3})}, {{"shape", Ints{3, -1}}}), DType::kI8, {3, 2},
                      {0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(Matches(run1("reshape", {f32({1}, {7})}, {{"shape", Ints{}}}), DType::kF32, {}, {7}));
  EXPECT_MENTIONS(error_of("reshape", {iota(DType::kF32, {2, 3})}, {{"shape", Ints{4, -1}}}), "cannot hold");
}

TEST_F(ShapeOps, SliceFollowsPython) {
  ValueId x = iota(DType::kF32, {10});
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    return run1("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{start}}, {"ends", Ints{end}}, {"steps", Ints{step}}});
  };
  EXPECT_TRUE(Matches(slice(-3, 100, 1), DType::kF32, {3}, {7, 8, 9}));  // x[-3:100]
  EXPECT_TRUE(Matches(slice(1, -1, 3), DType::kF32, {3}, {1, 4, 7}));    // x[1:-1:3]
  EXPECT_TRUE(Matches(slice(-100, 2, 1), DType::kF32, {2}, {0, 1}));     // x[-100:2]
  EXPECT_TRUE(Matches(slice(5, 2, 1), DType::kF32, {0}, {}));            // x[5:2] is empty
  EXPECT_TRUE(Matches(slice(9, 10, 4), DType::kF32, {1}, {9}));
  // Two axes, one negative; steps default to 1 when left out: x[0:3:2, 1:3] of 4i + j.
  EXPECT_TRUE(Matches(run1("slice", {iota(DType::kI32, {3, 4})},
                           {{"axes", Ints{-1, 0}}, {"starts", Ints{1, 0}}, {"ends", Ints{3, 3}}, {"steps", Ints{1, 2}}}),
                      DType::kI32, {2, 2}, {1, 2, 9, 10}));
  EXPECT_TRUE(Matches(run1("slice", {iota(DType::kI32, {3, 4})}, {{"axes", Ints{1}}, {"starts", Ints{2}}, {"ends", Ints{4}}}),
                      DType::kI32, {3, 2}, {2, 3, 6, 7, 10, 11}));
  EXPECT_MENTIONS(error_of("slice", {x}, {{"axes", Ints{0}}, {"starts", Ints{0}}, {"ends", Ints{1}}, {"steps", Ints{0}}}),
                  "steps");
}

// x[1::huge] along the outer axis of a 3x4 tensor: one row. Its stride (4) times
// the step would overflow int64, which the kernel must never compute.
TEST_F(ShapeOps, SliceWithAHugeStepTakesTheStartAlone) {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(Matches(run1("slice", {iota(DType::kI32, {3, 4})},
                           {{"axes", Ints{0}}, {"starts", Ints{1}}, {"ends", Ints{huge}}, {"steps", Ints{huge}}}),
                      DType::kI32, {1, 4}, {4, 5, 6, 7}));
}

TEST_F(ShapeOps, Concat) {
  ValueId a = f32({2, 1}, {1, 2});
  ValueId b = f32({2, 2}, {3, 4, 5, 6});
  EXPECT_TRUE(Matches(run1("concat", {a, b}, {{"axis", int64_t{1}}}), DType::kF32, {2, 3}, {1, 3, 4, 2, 5, 6}));
  EXPECT_TRUE(Matches(run1("concat", {a, b}, {{"axis", int64_t{-1}}}), DType::kF32, {2, 3}, {1, 3, 4, 2, 5, 6}));
  // Three inputs along axis 0, one of them empty.
  EXPECT_TRUE(Matches(run1("concat", {i8({1, 2}, {1, 2}), i8({0, 2}, {}), i8({2, 2}, {3, 4, 5, 6})}),
                      DType::kI8, {3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(Matches(run1("concat", {a}, {{"axis", int64_t{0}}}), DType::kF32, {2, 1}, {1, 2}));
  EXPECT_MENTIONS(error_of("concat", {a, i32({2, 1}, {1, 2})}, {{"axis", int64_t{1}}}), "must match");
  EXPECT_MENTIONS(error_of("concat", {a, f32({3, 1}, {1, 2, 3})}, {{"axis", int64_t{1}}}), "does not match");
}

TEST_F(ShapeOps, PadWithConstant) {
  // [[1,2],[3,4]] with one row before and two columns after, filled with 9.
  ValueId x = iota(DType::kF32, {2, 2}, 1);
  EXPECT_TRUE(Matches(run1("pad", {x}, {{"pads", Ints{1, 0, 0, 2}}, {"value", 9.0}}), DType::kF32, {3, 4},
                      {9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}));
  EXPECT_TRUE(Matches(run1("pad", {x}, {{"pads", Ints{0, 0, 1, 1}}}), DType::kF32, {2, 4}, {0, 1, 2, 0, 0, 3, 4, 0}));
  // The value converts as cast does: -1.5 -> -1 for i32; 0.1 -> 0.0999755859375 for f16.
  EXPECT_TRUE(Matches(run1("pad", {i32({1}, {5})}, {{"pads", Ints{1, 1}}, {"value", -1.5}}), DType::kI32, {3},
                      {-1, 5, -1}));
  EXPECT_TRUE(Matches(run1("pad", {f16({1}, {1})}, {{"pads", Ints{0, 1}}, {"value", 0.1}}), DType::kF16, {2},
                      {1, 0.0999755859375}));
  EXPECT_TRUE(Matches(run1("pad", {boolean({1}, {0})}, {{"pads", Ints{2, 0}}, {"value", 1.0}}), DType::kBool, {3},
                      {1, 1, 0}));
  EXPECT_MENTIONS(error_of("pad", {x}, {{"pads", Ints{1, 1}}}), "pads");
}

using Gather = OpTest;

TEST_F(Gather, FollowsTorchGather) {
  // torch.gather([[1,2],[3,4]], 1, [[0,0],[1,0]]) = [[1,1],[4,3]].
  ValueId x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(Matches(run1("gather", {x, i64({2, 2}, {0, 0, 1, 0})}, {{"axis", int64_t{1}}}), DType::kF32, {2, 2},
                      {1, 1, 4, 3}));
  // Along axis 0 with a [1,2] index: out[0][j] = x[idx[0][j]][j] = x[1][0], x[0][1] = 3, 2.
  EXPECT_TRUE(Matches(run1("gather", {x, i32({1, 2}, {1, 0})}, {{"axis", int64_t{0}}}), DType::kF32, {1, 2}, {3, 2}));
  // The index may be smaller off the axis: x = 3i + j on [3,3], index [[2],[0]] along -1
  // gives x[0][2] = 2 and x[1][0] = 3.
  EXPECT_TRUE(Matches(run1("gather", {iota(DType::kI8, {3, 3}), i64({2, 1}, {2, 0})}, {{"axis", int64_t{-1}}}),
                      DType::kI8, {2, 1}, {2, 3}));
}

TEST_F(Gather, RejectsOutOfRangeAndNegativeIndices) {
  ValueId x = f32({2, 2}, {1, 2, 3, 4});
  std::string m = error_of("gather", {x, i64({2, 2}, {0, 1, 2, 0})}, {{"axis", int64_t{1}}});
  EXPECT_MENTIONS(m, "holds 2 at [1,0]");
  EXPECT_MENTIONS(m, "valid: 0..1");
  EXPECT_MENTIONS(m, "input 1 (index");
  m = error_of("gather", {x, i32({1, 1}, {-1})}, {{"axis", int64_t{0}}});
  EXPECT_MENTIONS(m, "holds -1 at [0,0]");
  EXPECT_MENTIONS(m, "negative");
  EXPECT_MENTIONS(error_of("gather", {x, f32({2, 2}, {0, 0, 0, 0})}, {{"axis", int64_t{0}}}), "i32, i64");
}

using IndexSelect = OpTest;

TEST_F(IndexSelect, PicksSlicesAlongAnAxis) {
  // x = 2i + j on [3,2]: rows 2, 0, 2.
  ValueId x = iota(DType::kF32, {3, 2});
  EXPECT_TRUE(Matches(run1("index_select", {x, i64({3}, {2, 0, 2})}, {{"axis", int64_t{0}}}), DType::kF32, {3, 2},
                      {4, 5, 0, 1, 4, 5}));
  EXPECT_TRUE(Matches(run1("index_select", {x, i32({1}, {1})}, {{"axis", int64_t{-1}}}), DType::kF32, {3, 1},
                      {1, 3, 5}));
  EXPECT_TRUE(Matches(run1("index_select", {x, i64({0}, {})}, {{"axis", int64_t{0}}}), DType::kF32, {0, 2}, {}));
  // A middle axis of [2,3,2] (x = 6a + 2b + c), index [2, 1].
  EXPECT_TRUE(Matches(run1("index_select", {iota(DType::kI64, {2, 3, 2}), i32({2}, {2, 1})}, {{"axis", int64_t{1}}}),
                      DType::kI64, {2, 2, 2}, {4, 5, 2, 3, 10, 11, 8, 9}));
}

TEST_F(IndexSelect, RejectsOutOfRangeAndNegativeIndices) {
  ValueId x = iota(DType::kF32, {3, 2});
  std::string m = error_of("index_select", {x, i64({2}, {0, 3})}, {{"axis", int64_t{0}}});
  EXPECT_MENTIONS(m, "holds 3 at [1]");
  EXPECT_MENTIONS(m, "valid: 0..2");
  EXPECT_MENTIONS(error_of("index_select", {x, i64({1}, {-1})}, {{"axis", int64_t{1}}}), "negative");
  EXPECT_MENTIONS(error_of("index_select", {x, i64({1, 1}, {0})}, {{"axis", int64_t{0}}}), "rank 1");
}

using Scatter = OpTest;

AttrMap scatter_attrs(int64_t axis, const std::string& reduce = "none", int64_t include_self = 1) {
  return {{"axis", axis}, {"reduce", reduce}, {"include_self", include_self}};
}

TEST_F(Scatter, WritesSourceElementsAtTheirIndices) {
  // x = zeros [3,2]; src[i][j] lands at row index[i][j], column j.
  ValueId x = f32({3, 2}, {0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(Matches(run1("scatter", {x, i64({2, 2}, {2, 0, 1, 2}), f32({2, 2}, {1, 2, 3, 4})}, scatter_attrs(0)),
                      DType::kF32, {3, 2}, {0, 2, 3, 0, 1, 4}));
  // Along the last axis, an index smaller than x off the axis.
  EXPECT_TRUE(Matches(run1("scatter", {x, i32({1, 1}, {1}), f32({1, 1}, {7})}, scatter_attrs(-1)), DType::kF32,
                      {3, 2}, {0, 7, 0, 0, 0, 0}));
  // Duplicates with reduce "none": the last update wins (torch leaves it undefined).
  EXPECT_TRUE(Matches(run1("scatter", {iota(DType::kI32, {3}), i64({3}, {1, 1, 1}), i32({3}, {5, 6, 7})},
                           scatter_attrs(0)),
                      DType::kI32, {3}, {0, 7, 2}));
}

TEST_F(Scatter, ReductionsCombineDuplicatesWithOrWithoutSelf) {
  // x = 10, 20, 30, 40; updates 3, 4, 5, -7 at 0, 0, 1, 3 (torch's scatter_reduce).
  auto run = [&](const std::string& reduce, int64_t include_self) {
    return run1("scatter", {i32({4}, {10, 20, 30, 40}), i64({4}, {0, 0, 1, 3}), i32({4}, {3, 4, 5, -7})},
                scatter_attrs(0, reduce, include_self));
  };
  EXPECT_TRUE(Matches(run("sum", 1), DType::kI32, {4}, {17, 25, 30, 33}));
  EXPECT_TRUE(Matches(run("sum", 0), DType::kI32, {4}, {7, 5, 30, -7}));
  EXPECT_TRUE(Matches(run("prod", 1), DType::kI32, {4}, {120, 100, 30, -280}));
  EXPECT_TRUE(Matches(run("prod", 0), DType::kI32, {4}, {12, 5, 30, -7}));
  EXPECT_TRUE(Matches(run("mean", 1), DType::kI32, {4}, {5, 12, 30, 16}));  // integer means floor: 33 / 2 = 16
  EXPECT_TRUE(Matches(run("mean", 0), DType::kI32, {4}, {3, 5, 30, -7}));
  EXPECT_TRUE(Matches(run("amax", 1), DType::kI32, {4}, {10, 20, 30, 40}));
  EXPECT_TRUE(Matches(run("amax", 0), DType::kI32, {4}, {4, 5, 30, -7}));
  EXPECT_TRUE(Matches(run("amin", 1), DType::kI32, {4}, {3, 5, 30, -7}));
  // A negative integer mean floors: (-7 + 2) / 2 = -3.
  EXPECT_TRUE(Matches(run1("scatter", {i64({1}, {-7}), i64({1}, {0}), i64({1}, {2})}, scatter_attrs(0, "mean")),
                      DType::kI64, {1}, {-3}));
  // Float means divide; a NaN wins amax.
  EXPECT_TRUE(Matches(run1("scatter", {f32({2}, {1, 2}), i64({3}, {0, 0, 1}), f32({3}, {2, 6, kNaN})},
                           scatter_attrs(0, "mean")),
                      DType::kF32, {2}, {3, kNaN}));
  EXPECT_TRUE(Matches(run1("scatter", {f32({2}, {1, 2}), i64({2}, {0, 1}), f32({2}, {kNaN, 1})},
                           scatter_attrs(0, "amax")),
                      DType::kF32, {2}, {kNaN, 2}));
}

TEST_F(Scatter, IndexPutWritesAndAccumulatesRows) {
  // A KV cache [1, 2, 4, 1] (x = 0..7) takes rows at positions 3 and 1.
  ValueId cache = iota(DType::kF32, {1, 2, 4, 1});
  ValueId v = f32({1, 2, 2, 1}, {10, 11, 12, 13});
  EXPECT_TRUE(Matches(run1("index_put", {cache, i32({2}, {3, 1}), v}, scatter_attrs(2)), DType::kF32, {1, 2, 4, 1},
                      {0, 11, 2, 10, 4, 13, 6, 12}));
  // Accumulate with a duplicate position.
  EXPECT_TRUE(Matches(run1("index_put", {cache, i64({2}, {1, 1}), v}, scatter_attrs(-2, "sum")), DType::kF32,
                      {1, 2, 4, 1}, {0, 22, 2, 3, 4, 30, 6, 7}));
  // f16 sums are made wide and rounded once: 1 + 2^-11 + 2^-11 = 1 + 2^-10.
  ValueId h = f16({1}, {1});
  ValueId tiny = f16({2}, {std::ldexp(1.0, -11), std::ldexp(1.0, -11)});
  EXPECT_TRUE(Matches(run1("index_put", {h, i64({2}, {0, 0}), tiny}, scatter_attrs(0, "sum")), DType::kF16, {1},
                      {1.0009765625}));
}

TEST_F(Scatter, RejectsOutOfRangeIndicesNamingThem) {
  ValueId x = iota(DType::kF32, {3, 2});
  std::string m = error_of("index_put", {x, i64({2}, {0, 3}), f32({2, 2}, {1, 2, 3, 4})}, scatter_attrs(0));
  EXPECT_MENTIONS(m, "input 1 (index");
  EXPECT_MENTIONS(m, "holds 3 at [1]");
  EXPECT_MENTIONS(m, "valid: 0..2");
  EXPECT_MENTIONS(error_of("scatter", {x, i32({1, 1}, {-1}), f32({1, 1}, {1})}, scatter_attrs(1, "sum")), "negative");
}

}  // namespace
}  // namespace gpuu::cpu
