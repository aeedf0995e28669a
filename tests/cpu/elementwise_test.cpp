// CPU kernels of the elementwise family: unary math, broadcasting binary ops
// and comparisons, clamp, where and cast, on every dtype the registry allows.
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

using Unary = OpTest;

TEST_F(Unary, FloatMathMatchesHandValues) {
  struct Case {
    const char* op;
    Reals x, y;
  };
  const Case cases[] = {
      {"abs", {-1.5, 0, 2}, {1.5, 0, 2}},
      {"neg", {-1.5, 0, 2}, {1.5, 0, -2}},
      {"exp", {0, 1, -1}, {1, 2.718281828459045, 0.36787944117144233}},
      {"log", {1, 2, 0, -1}, {0, 0.6931471805599453, -kInf, kNaN}},  // log(0) = -inf, log(-1) = NaN
      {"sqrt", {4, 2, -1}, {2, 1.4142135623730951, kNaN}},
      {"rsqrt", {4, 0.25, 0}, {0.5, 2, kInf}},  // 1/sqrt(x)
      {"reciprocal", {-4, 0.5, 0}, {-0.25, 2, kInf}},
      {"sin", {0, 0.5}, {0, 0.479425538604203}},
      {"cos", {0, 0.5}, {1, 0.8775825618903728}},
      {"tanh", {0, 0.5, -100}, {0, 0.46211715726000974, -1}},
      {"sigmoid", {0, 2, -1000}, {0.5, 0.8807970779778823, 0}},  // 1/(1+e^-2); no overflow at -1000
      {"relu", {-1, 0, 3, kNaN}, {0, 0, 3, kNaN}},                // NaN passes through, as in torch
      {"erf", {0, 0.5, -0.5}, {0, 0.5204998778130465, -0.5204998778130465}},
      {"floor", {-1.5, 1.5, 2}, {-2, 1, 2}},
      {"ceil", {-1.5, 1.5, 2}, {-1, 2, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    auto n = static_cast<int64_t>(c.x.size());
    // Results are computed in double and rounded once, so they equal the
    // correctly rounded float of the exact value.
    EXPECT_TRUE(Matches(run1(c.op, {f32({n}, c.x)}), DType::kF32, {n}, c.y));
  }
}

TEST_F(Unary, GeluExactAndTanh) {
  // exact: 0.5 x (1 + erf(x / sqrt 2)); gelu(1) = 0.5 (1 + erf(0.70710678)) = 0.5 (1 + 0.68268949)
  EXPECT_TRUE(Matches(run1("gelu", {f32({3}, {1, -0.5, 0})}), DType::kF32, {3},
                      {0.8413447460685429, -0.15426876936299344, 0}));
  // tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); gelu(1) = 0.5 (1 + tanh(0.83356718))
  EXPECT_TRUE(Matches(run1("gelu", {f32({3}, {1, -0.5, 0})}, {{"approximate", std::string("tanh")}}), DType::kF32,
                      {3}, {0.8411919906082768, -0.15428599017485606, 0}));
  EXPECT_MENTIONS(error_of("gelu", {f32({1}, {1})}, {{"approximate", std::string("fast")}}), "approximate");
}

TEST_F(Unary, HalfComputesWideAndRoundsToHalf) {
  // e = 2.71828 lies between halves 2.716796875 and 2.71875 (spacing 2^-9 in [2, 4)).
  // e^-1 = 0.3678794 -> 1507 * 2^-12 = 0.367919921875.
  HostTensor y = run1("exp", {f16({3}, {0, 1, -1})});
  EXPECT_TRUE(Matches(y, DType::kF16, {3}, {1, 2.71875, 0.367919921875}));
  EXPECT_EQ(y.bytes.size(), 6u);
  EXPECT_TRUE(Matches(run1("neg", {f16({2}, {1.5, -65504})}), DType::kF16, {2}, {-1.5, 65504}));
}

TEST_F(Unary, IntegerAbsNegReluWrapLikeTorch) {
  const double min32 = std::numeric_limits<int32_t>::min();
  // The most negative value has no positive counterpart: abs and neg give it back.
  EXPECT_TRUE(Matches(run1("abs", {i32({4}, {-3, 0, 5, min32})}), DType::kI32, {4}, {3, 0, 5, min32}));
  EXPECT_TRUE(Matches(run1("neg", {i32({4}, {-3, 0, 5, min32})}), DType::kI32, {4}, {3, 0, -5, min32}));
  EXPECT_TRUE(Matches(run1("relu", {i32({4}, {-3, 0, 5, min32})}), DType::kI32, {4}, {0, 0, 5, 0}));
  EXPECT_TRUE(Matches(run1("abs", {i8({3}, {-128, -7, 127})}), DType::kI8, {3}, {-128, 7, 127}));
  EXPECT_TRUE(Matches(run1("relu", {i8({2}, {-128, 9})}), DType::kI8, {2}, {0, 9}));
}

TEST_F(Unary, RejectsDtypesTheRegistryRefuses) {
  EXPECT_MENTIONS(error_of("exp", {i32({2}, {1, 2})}), "i32");
  EXPECT_MENTIONS(error_of("abs", {boolean({2}, {1, 0})}), "bool");
}

using Binary = OpTest;

TEST_F(Binary, ArithmeticBroadcastsLikeNumpy) {
  ValueId a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ValueId row = f32({3}, {10, 20, 30});
  // [2,3] + [3]: the row is added to each row.
  EXPECT_TRUE(Matches(run1("add", {a, row}), DType::kF32, {2, 3}, {11, 22, 33, 14, 25, 36}));
  // [2,1] - [1,3] -> [2,3]: col[i] - r[j].
  ValueId col = f32({2, 1}, {100, 200});
  ValueId r = f32({1, 3}, {1, 2, 3});
  EXPECT_TRUE(Matches(run1("sub", {col, r}), DType::kF32, {2, 3}, {99, 98, 97, 199, 198, 197}));
  // A rank-0 scalar broadcasts everywhere.
  ValueId two = f32({}, {2});
  EXPECT_TRUE(Matches(run1("mul", {a, two}), DType::kF32, {2, 3}, {2, 4, 6, 8, 10, 12}));
  EXPECT_TRUE(Matches(run1("div", {two, a}), DType::kF32, {2, 3}, {2, 1, 2.0 / 3, 0.5, 0.4, 2.0 / 6}));
}

TEST_F(Binary, DivAndPowFollowIeee) {
  ValueId x = f32({4}, {1, -1, 0, 2});
  ValueId zero = f32({1}, {0});
  EXPECT_TRUE(Matches(run1("div", {x, zero}), DType::kF32, {4}, {kInf, -kInf, kNaN, kInf}));
  // 2^3 = 8, 4^0.5 = 2, (-8)^(1/3) = NaN (negative base, non-integer exponent), 0^0 = 1.
  EXPECT_TRUE(Matches(run1("pow", {f32({4}, {2, 4, -8, 0}), f32({4}, {3, 0.5, 1.0 / 3, 0})}), DType::kF32, {4},
                      {8, 2, kNaN, 1}));
}

TEST_F(Binary, MaximumAndMinimumPropagateNaN) {
  ValueId a = f32({3}, {1, kNaN, 5});
  ValueId b = f32({3}, {2, 0, kNaN});
  EXPECT_TRUE(Matches(run1("maximum", {a, b}), DType::kF32, {3}, {2, kNaN, kNaN}));
  EXPECT_TRUE(Matches(run1("minimum", {a, b}), DType::kF32, {3}, {1, kNaN, kNaN}));
  EXPECT_TRUE(Matches(run1("maximum", {i32({3}, {-1, 7, 3}), i32({1}, {3})}), DType::kI32, {3}, {3, 7, 3}));
}

TEST_F(Binary, IntegersWrapAround) {
  // i8: 100 + 100 = 200 = -56 mod 256; -100 - 100 = -200 = 56; 16 * 16 = 256 = 0.
  EXPECT_TRUE(Matches(run1("add", {i8({1}, {100}), i8({1}, {100})}), DType::kI8, {1}, {-56}));
  EXPECT_TRUE(Matches(run1("sub", {i8({1}, {-100}), i8({1}, {100})}), DType::kI8, {1}, {56}));
  EXPECT_TRUE(Matches(run1("mul", {i8({1}, {16}), i8({1}, {16})}), DType::kI8, {1}, {0}));
  // i32: INT_MAX + 1 = INT_MIN.
  EXPECT_TRUE(Matches(run1("add", {i32({1}, {2147483647}), i32({1}, {1})}), DType::kI32, {1}, {-2147483648.0}));
  // i64 keeps all 64 bits: 2^62 * 2 = 2^63 wraps to -2^63; 3 * 5 = 15.
  Result<std::vector<HostTensor>> r = run("mul", {i64({2}, {std::ldexp(1.0, 62), 3}), i64({2}, {2, 5})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  int64_t got[2];
  std::memcpy(got, r->front().bytes.data(), sizeof got);
  EXPECT_EQ(got[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(got[1], 15);
}

TEST_F(Binary, HalfRoundsTheExactResultToNearestEven) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even 1 wins. 1 + 3*2^-11 ties
  // between 1 + 2^-10 and 1 + 2^-9: even 1 + 2^-9 = 1.001953125 wins.
  ValueId one = f16({2}, {1, 1});
  ValueId small = f16({2}, {std::ldexp(1.0, -11), 3 * std::ldexp(1.0, -11)});
  EXPECT_TRUE(Matches(run1("add", {one, small}), DType::kF16, {2}, {1.0, 1.001953125}));
  // 60000 + 10000 overflows half: inf.
  EXPECT_TRUE(Matches(run1("add", {f16({1}, {60000}), f16({1}, {10000})}), DType::kF16, {1}, {kInf}));
}

TEST_F(Binary, RejectsMismatchedShapesAndDtypes) {
  EXPECT_MENTIONS(error_of("add", {f32({2, 3}, Reals(6, 0)), f32({2}, {0, 0})}), "do not broadcast");
  EXPECT_MENTIONS(error_of("mul", {f32({2}, {0, 0}), i32({2}, {0, 0})}), "must match");
  // The registry admits div and pow only for f32/f16.
  EXPECT_MENTIONS(error_of("div", {i32({1}, {7}), i32({1}, {2})}), "i32");
}

using Compare = OpTest;

TEST_F(Compare, AllSixWithBroadcastAndNaN) {
  ValueId a = f32({4}, {1, 2, 3, kNaN});
  ValueId b = f32({1}, {2});
  EXPECT_TRUE(Matches(run1("equal", {a, b}), DType::kBool, {4}, {0, 1, 0, 0}));
  EXPECT_TRUE(Matches(run1("not_equal", {a, b}), DType::kBool, {4}, {1, 0, 1, 1}));  // NaN != anything
  EXPECT_TRUE(Matches(run1("less", {a, b}), DType::kBool, {4}, {1, 0, 0, 0}));
  EXPECT_TRUE(Matches(run1("less_equal", {a, b}), DType::kBool, {4}, {1, 1, 0, 0}));
  EXPECT_TRUE(Matches(run1("greater", {a, b}), DType::kBool, {4}, {0, 0, 1, 0}));
  EXPECT_TRUE(Matches(run1("greater_equal", {a, b}), DType::kBool, {4}, {0, 1, 1, 0}));
  // [2,1] vs [3] -> [2,3]
  EXPECT_TRUE(Matches(run1("less", {i8({2, 1}, {0, 5}), i8({3}, {-1, 3, 7})}), DType::kBool, {2, 3},
                      {0, 1, 1, 0, 0, 1}));
}

TEST_F(Compare, IntegersCompareExactlyAndBoolsCompare) {
  // 2^53 and 2^53 + 1 are the same double, but different i64 values.
  HostTensor big = *HostTensor::from_data<int64_t>({2}, {int64_t{1} << 53, int64_t{7}});
  HostTensor bigger = *HostTensor::from_data<int64_t>({2}, {(int64_t{1} << 53) + 1, int64_t{7}});
  ValueId a = graph_.add_input("big", DType::kI64, {2});
  ValueId b = graph_.add_input("bigger", DType::kI64, {2});
  tensors_[a] = big;
  tensors_[b] = bigger;
  EXPECT_TRUE(Matches(run1("equal", {a, b}), DType::kBool, {2}, {0, 1}));
  EXPECT_TRUE(Matches(run1("less", {a, b}), DType::kBool, {2}, {1, 0}));
  EXPECT_TRUE(Matches(run1("equal", {boolean({3}, {1, 0, 1}), boolean({3}, {1, 1, 0})}), DType::kBool, {3}, {1, 0, 0}));
  EXPECT_TRUE(Matches(run1("equal", {f16({2}, {0.5, 1}), f16({2}, {0.5, 2})}), DType::kBool, {2}, {1, 0}));
}

using Clamp = OpTest;

TEST_F(Clamp, FloatBoundsAndNaN) {
  ValueId x = f32({5}, {-2, -0.5, 0.5, 2, kNaN});
  EXPECT_TRUE(Matches(run1("clamp", {x}, {{"min", -1.0}, {"max", 1.0}}), DType::kF32, {5}, {-1, -0.5, 0.5, 1, kNaN}));
  EXPECT_TRUE(Matches(run1("clamp", {x}, {{"min", 0.0}}), DType::kF32, {5}, {0, 0, 0.5, 2, kNaN}));
  EXPECT_TRUE(Matches(run1("clamp", {x}, {{"max", 0.0}}), DType::kF32, {5}, {-2, -0.5, 0, 0, kNaN}));
  // f16: the bound 0.1 itself rounds to the half 0.0999755859375.
  EXPECT_TRUE(Matches(run1("clamp", {f16({2}, {0, 1})}, {{"min", 0.1}}), DType::kF16, {2}, {0.0999755859375, 1}));
  EXPECT_MENTIONS(error_of("clamp", {x}, {{"min", 1.0}, {"max", 0.0}}), "greater than 'max'");
}

TEST_F(Clamp, IntegersClampToIntegersInsideTheBounds) {
  // [min, max] = [-1.5, 2.5] holds the integers -1..2: ceil(-1.5) = -1, floor(2.5) = 2.
  EXPECT_TRUE(Matches(run1("clamp", {i32({5}, {-3, -1, 0, 2, 3})}, {{"min", -1.5}, {"max", 2.5}}), DType::kI32, {5},
                      {-1, -1, 0, 2, 2}));
  // Bounds beyond the dtype's range leave values alone.
  EXPECT_TRUE(Matches(run1("clamp", {i8({2}, {-128, 127})}, {{"min", -1e30}, {"max", 1e30}}), DType::kI8, {2},
                      {-128, 127}));
  EXPECT_TRUE(Matches(run1("clamp", {i64({2}, {-5, 5})}, {{"min", 0.0}}), DType::kI64, {2}, {0, 5}));
  // A bound beyond the range clamps to the type's end (the Vulkan kernels'
  // result), not to the bound wrapped into the type (40000 as i16 is -25536).
  EXPECT_TRUE(Matches(run1("clamp", {in(DType::kI16, {3}, {-32768, 0, 32767})}, {{"min", 40000.0}}), DType::kI16, {3},
                      {32767, 32767, 32767}));
  EXPECT_TRUE(Matches(run1("clamp", {i8({2}, {-128, 127})}, {{"max", -300.0}}), DType::kI8, {2}, {-128, -128}));
}

using Where = OpTest;

TEST_F(Where, SelectsWithBroadcasting) {
  // cond [2,1], a [2,3], b scalar: row 0 takes a, row 1 takes b.
  ValueId cond = boolean({2, 1}, {1, 0});
  ValueId a = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  ValueId b = i32({}, {-1});
  EXPECT_TRUE(Matches(run1("where", {cond, a, b}), DType::kI32, {2, 3}, {1, 2, 3, -1, -1, -1}));
  // cond [3] against a [2,1] and b [1,3] -> [2,3]: out[i][j] = cond[j] ? a[i] : b[j].
  ValueId c3 = boolean({3}, {1, 0, 1});
  ValueId ha = f16({2, 1}, {0.5, 1.5});
  ValueId hb = f16({1, 3}, {10, 20, 30});
  EXPECT_TRUE(Matches(run1("where", {c3, ha, hb}), DType::kF16, {2, 3}, {0.5, 20, 0.5, 1.5, 20, 1.5}));
  EXPECT_MENTIONS(error_of("where", {a, a, a}), "bool");
}

using Cast = OpTest;

TEST_F(Cast, FloatToIntegerTruncatesAndSaturates) {
  ValueId x = f32({5}, {-1.7, 1.7, 3e9, -3e9, kNaN});
  EXPECT_TRUE(Matches(run1("cast", {x}, {{"dtype", std::string("i32")}}), DType::kI32, {5},
                      {-1, 1, 2147483647, -2147483648.0, 0}));
  EXPECT_TRUE(Matches(run1("cast", {f32({3}, {300, -300, 127.9})}, {{"dtype", std::string("i8")}}), DType::kI8, {3},
                      {127, -128, 127}));
  Result<std::vector<HostTensor>> r = run("cast", {f32({2}, {1e19, -1e19})}, {{"dtype", std::string("i64")}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  int64_t got[2];
  std::memcpy(got, r->front().bytes.data(), sizeof got);
  EXPECT_EQ(got[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(got[1], std::numeric_limits<int64_t>::min());
}

TEST_F(Cast, IntegerNarrowingWrapsAndWideningIsExact) {
  // 200 = -56 mod 256, -129 = 127 mod 256.
  EXPECT_TRUE(Matches(run1("cast", {i32({3}, {200, -129, 5})}, {{"dtype", std::string("i8")}}), DType::kI8, {3},
                      {-56, 127, 5}));
  EXPECT_TRUE(Matches(run1("cast", {i8({2}, {-128, 127})}, {{"dtype", std::string("i64")}}), DType::kI64, {2},
                      {-128, 127}));
  // 2^24 + 1 is not a float: it rounds to even 2^24.
  EXPECT_TRUE(Matches(run1("cast", {i64({1}, {16777217})}, {{"dtype", std::string("f32")}}), DType::kF32, {1},
                      {16777216}));
  // Half: 65519 -> 65504 (largest finite), 65520 -> inf, 2049 -> 2048 (tie to even; spacing 2 there).
  EXPECT_TRUE(Matches(run1("cast", {i32({3}, {65519, 65520, 2049})}, {{"dtype", std::string("f16")}}), DType::kF16,
                      {3}, {65504, kInf, 2048}));
}

TEST_F(Cast, ToAndFromBool) {
  EXPECT_TRUE(Matches(run1("cast", {f32({4}, {0, -0.0, 0.1, kNaN})}, {{"dtype", std::string("bool")}}), DType::kBool,
                      {4}, {0, 0, 1, 1}));
  EXPECT_TRUE(Matches(run1("cast", {i8({2}, {0, -3})}, {{"dtype", std::string("bool")}}), DType::kBool, {2}, {0, 1}));
  EXPECT_TRUE(Matches(run1("cast", {boolean({2}, {1, 0})}, {{"dtype", std::string("f16")}}), DType::kF16, {2}, {1, 0}));
  EXPECT_TRUE(Matches(run1("cast", {boolean({2}, {1, 0})}, {{"dtype", std::string("i32")}}), DType::kI32, {2}, {1, 0}));
}

TEST_F(Cast, BetweenFloatWidths) {
  // f32 -> f16 rounds to nearest even (1 + 2^-11 is a tie: 1); f16 -> f32 is exact.
  EXPECT_TRUE(Matches(run1("cast", {f32({3}, {1 + std::ldexp(1.0, -11), 0.1, 1e6})}, {{"dtype", std::string("f16")}}),
                      DType::kF16, {3}, {1, 0.0999755859375, kInf}));
  EXPECT_TRUE(Matches(run1("cast", {f16({1}, {0.1})}, {{"dtype", std::string("f32")}}), DType::kF32, {1},
                      {0.0999755859375}));
  EXPECT_TRUE(Matches(run1("cast", {f32({1}, {1.5})}, {{"dtype", std::string("f32")}}), DType::kF32, {1}, {1.5}));
  EXPECT_MENTIONS(error_of("cast", {f32({1}, {1})}, {{"dtype", std::string("f64")}}), "f64");
}

}  // namespace
}  // namespace gpuu::cpu
