// CPU kernels of the math and logic ops added with integer support: inverse
// and hyperbolic functions, rounding, sign, predicates, integer division in
// its three flavours, logical and bitwise ops, and the extra reductions
// (min, prod, any, all, argmax, argmin, cumsum).
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

int64_t first_i64(const HostTensor& t) {
  int64_t v = 0;
  if (t.dtype == DType::kI64 && t.bytes.size() >= 8) std::memcpy(&v, t.bytes.data(), 8);
  return v;
}

using MathOps = OpTest;

TEST_F(MathOps, FloatUnaryMatchesStd) {
  const Reals x = {-0.75, -0.1, 0.0, 0.3, 0.9};
  const Reals pos = {1.0, 1.5, 3.0, 10.0, 100.0};
  struct Case {
    const char* op;
    double (*fn)(double);
    const Reals* in;
  };
  const Case cases[] = {{"tan", std::tan, &x},     {"asin", std::asin, &x},   {"acos", std::acos, &x},
                        {"atan", std::atan, &x},   {"sinh", std::sinh, &x},   {"cosh", std::cosh, &x},
                        {"asinh", std::asinh, &x}, {"acosh", std::acosh, &pos}, {"atanh", std::atanh, &x},
                        {"expm1", std::expm1, &x}, {"log1p", std::log1p, &x}, {"trunc", std::trunc, &x}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Reals want;
    for (double v : *c.in) want.push_back(c.fn(static_cast<float>(v)));  // the f32 input, exactly
    EXPECT_TRUE(Matches(run1(c.op, {f32({5}, *c.in)}), DType::kF32, {5}, want));
  }
}

TEST_F(MathOps, Expm1AndLog1pStayAccurateNearZero) {
  // exp(1e-10) - 1 in double would keep only ~7 digits; expm1 keeps them all.
  EXPECT_TRUE(Matches(run1("expm1", {f32({1}, {1e-10})}), DType::kF32, {1}, {1.00000000005e-10}));
  EXPECT_TRUE(Matches(run1("log1p", {f32({1}, {1e-10})}), DType::kF32, {1}, {9.9999999995e-11}));
}

TEST_F(MathOps, RoundTiesToEven) {
  EXPECT_TRUE(Matches(run1("round", {f32({8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6})}), DType::kF32, {8},
                      {0, 2, 2, -0.0, -2, -2, 2, -3}));
  EXPECT_TRUE(Matches(run1("trunc", {f16({4}, {2.7, -2.7, 0.2, -0.2})}), DType::kF16, {4}, {2, -2, 0, -0.0}));
}

TEST_F(MathOps, SignOfEveryDtype) {
  EXPECT_TRUE(Matches(run1("sign", {f32({5}, {-3, 0, 2.5, kNaN, -kInf})}), DType::kF32, {5}, {-1, 0, 1, kNaN, -1}));
  EXPECT_TRUE(Matches(run1("sign", {i32({3}, {-7, 0, 9})}), DType::kI32, {3}, {-1, 0, 1}));
  EXPECT_TRUE(Matches(run1("sign", {i64({3}, {-7e12, 0, 9})}), DType::kI64, {3}, {-1, 0, 1}));
}

TEST_F(MathOps, NanAndInfPredicates) {
  ValueId x = f32({5}, {kNaN, kInf, -kInf, 0, 1e38});
  EXPECT_TRUE(Matches(run1("isnan", {x}), DType::kBool, {5}, {1, 0, 0, 0, 0}));
  EXPECT_TRUE(Matches(run1("isinf", {x}), DType::kBool, {5}, {0, 1, 1, 0, 0}));
  EXPECT_TRUE(Matches(run1("isinf", {f16({2}, {70000, 60000})}), DType::kBool, {2}, {1, 0}));  // 70000 overflows half
}

TEST_F(MathOps, LogicalNotIsEqualToZeroForAnyDtype) {
  EXPECT_TRUE(Matches(run1("logical_not", {f32({4}, {0, -0.0, kNaN, 2})}), DType::kBool, {4}, {1, 1, 0, 0}));
  EXPECT_TRUE(Matches(run1("logical_not", {i64({3}, {0, -1, 5})}), DType::kBool, {3}, {1, 0, 0}));
  EXPECT_TRUE(Matches(run1("logical_not", {boolean({2}, {0, 1})}), DType::kBool, {2}, {1, 0}));
}

TEST_F(MathOps, BitwiseNot) {
  EXPECT_TRUE(Matches(run1("bitwise_not", {i32({3}, {0, 5, -1})}), DType::kI32, {3}, {-1, -6, 0}));
  EXPECT_TRUE(Matches(run1("bitwise_not", {i64({2}, {0, 7})}), DType::kI64, {2}, {-1, -8}));
  EXPECT_TRUE(Matches(run1("bitwise_not", {boolean({2}, {0, 1})}), DType::kBool, {2}, {1, 0}));
}

TEST_F(MathOps, Atan2CoversAllQuadrants) {
  HostTensor y = run1("atan2", {f32({4}, {1, 1, -1, -1}), f32({4}, {1, -1, 1, -1})});
  EXPECT_TRUE(Matches(y, DType::kF32, {4}, {std::atan2(1, 1), std::atan2(1, -1), std::atan2(-1, 1), std::atan2(-1, -1)}));
}

TEST_F(MathOps, RemainderFmodAndFloorDivideFollowTheirSignRules) {
  const Reals a = {7, -7, 7, -7, 6};
  const Reals b = {3, 3, -3, -3, 3};
  // remainder takes the divisor's sign, fmod the dividend's; floor_divide rounds down.
  for (DType d : {DType::kF32, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(graph::dtype_name(d));
    EXPECT_TRUE(Matches(run1("remainder", {in(d, {5}, a), in(d, {5}, b)}), d, {5}, {1, 2, -2, -1, 0}));
    EXPECT_TRUE(Matches(run1("fmod", {in(d, {5}, a), in(d, {5}, b)}), d, {5}, {1, -1, 1, -1, 0}));
    EXPECT_TRUE(Matches(run1("floor_divide", {in(d, {5}, a), in(d, {5}, b)}), d, {5}, {2, -3, -3, 2, 2}));
  }
  // Floats keep fractions: 5.5 % -2 = -0.5, fmod(-5.5, 2) = -1.5, floor(-5.5 / 2) = -3.
  EXPECT_TRUE(Matches(run1("remainder", {f32({1}, {5.5}), f32({1}, {-2})}), DType::kF32, {1}, {-0.5}));
  EXPECT_TRUE(Matches(run1("fmod", {f32({1}, {-5.5}), f32({1}, {2})}), DType::kF32, {1}, {-1.5}));
  EXPECT_TRUE(Matches(run1("floor_divide", {f16({1}, {-5.5}), f16({1}, {2})}), DType::kF16, {1}, {-3}));
}

TEST_F(MathOps, IntegerDivisionByZeroGivesZero) {
  for (const char* op : {"remainder", "fmod", "floor_divide"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(Matches(run1(op, {i32({2}, {5, -5}), i32({1}, {0})}), DType::kI32, {2}, {0, 0}));
    EXPECT_TRUE(Matches(run1(op, {i64({2}, {5, -5}), i64({1}, {0})}), DType::kI64, {2}, {0, 0}));
  }
}

TEST_F(MathOps, IntegerMinDividedByMinusOneWraps) {
  const double min32 = -2147483648.0;
  EXPECT_TRUE(Matches(run1("floor_divide", {i32({1}, {min32}), i32({1}, {-1})}), DType::kI32, {1}, {min32}));
  EXPECT_TRUE(Matches(run1("remainder", {i32({1}, {min32}), i32({1}, {-1})}), DType::kI32, {1}, {0}));
  ValueId min64 = i64({1}, {-9223372036854775808.0});
  HostTensor q = run1("floor_divide", {min64, i64({1}, {-1})});
  EXPECT_EQ(first_i64(q), std::numeric_limits<int64_t>::min());
}

TEST_F(MathOps, BinaryOpsBroadcast) {
  ValueId a = i32({2, 1}, {-7, 9});
  ValueId b = i32({3}, {2, -4, 5});
  EXPECT_TRUE(Matches(run1("floor_divide", {a, b}), DType::kI32, {2, 3}, {-4, 1, -2, 4, -3, 1}));
  EXPECT_TRUE(Matches(run1("bitwise_and", {a, b}), DType::kI32, {2, 3}, {-7 & 2, -7 & -4, -7 & 5, 9 & 2, 9 & -4, 9 & 5}));
}

TEST_F(MathOps, LogicalOpsTreatNonzeroAsTrue) {
  ValueId a = f32({4}, {0, 0, 2, kNaN});
  ValueId b = f32({4}, {0, -1, 0, 3});
  EXPECT_TRUE(Matches(run1("logical_and", {a, b}), DType::kBool, {4}, {0, 0, 0, 1}));
  EXPECT_TRUE(Matches(run1("logical_or", {a, b}), DType::kBool, {4}, {0, 1, 1, 1}));
  EXPECT_TRUE(Matches(run1("logical_xor", {a, b}), DType::kBool, {4}, {0, 1, 1, 0}));
  EXPECT_TRUE(Matches(run1("logical_and", {i64({2}, {3, 0}), i64({1}, {-1})}), DType::kBool, {2}, {1, 0}));
}

TEST_F(MathOps, BitwiseOpsOnIntegersAndBool) {
  EXPECT_TRUE(Matches(run1("bitwise_or", {i64({2}, {12, -16}), i64({2}, {3, 1})}), DType::kI64, {2}, {15, -15}));
  EXPECT_TRUE(Matches(run1("bitwise_xor", {i32({2}, {12, -1}), i32({2}, {10, 1})}), DType::kI32, {2}, {6, -2}));
  EXPECT_TRUE(Matches(run1("bitwise_xor", {boolean({4}, {0, 0, 1, 1}), boolean({4}, {0, 1, 0, 1})}), DType::kBool,
                      {4}, {0, 1, 1, 0}));
}

TEST_F(MathOps, IntegerArithmeticOnI64Wraps) {
  ValueId big = i64({1}, {9223372036854775807.0});  // rounds to 2^63 in double, saturates to INT64_MAX
  HostTensor y = run1("add", {big, i64({1}, {1})});
  EXPECT_EQ(first_i64(y), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(Matches(run1("neg", {i64({2}, {5, -3})}), DType::kI64, {2}, {-5, 3}));
  EXPECT_TRUE(Matches(run1("abs", {i64({2}, {5, -3})}), DType::kI64, {2}, {5, 3}));
}

using NewReductions = OpTest;

TEST_F(NewReductions, MinAndProd) {
  ValueId x = f32({2, 3}, {3, -1, 2, 4, 5, kNaN});
  EXPECT_TRUE(Matches(run1("reduce_min", {x}, {{"axes", Ints{1}}}), DType::kF32, {2}, {-1, kNaN}));
  EXPECT_TRUE(Matches(run1("reduce_prod", {x}, {{"axes", Ints{0}}, {"keepdim", int64_t{1}}}), DType::kF32, {1, 3},
                      {12, -5, kNaN}));
  ValueId n = i64({2, 2}, {-3, 7, 2, -5});
  EXPECT_TRUE(Matches(run1("reduce_min", {n}, {{"axes", Ints{0, 1}}}), DType::kI64, {}, {-5}));
  EXPECT_TRUE(Matches(run1("reduce_prod", {n}, {{"axes", Ints{-1}}}), DType::kI64, {2}, {-21, -10}));
  EXPECT_MENTIONS(error_of("reduce_min", {f32({2, 0}, {})}, {{"axes", Ints{1}}}), "min over zero elements");
}

TEST_F(NewReductions, AnyAndAll) {
  ValueId b = boolean({2, 3}, {0, 1, 0, 1, 1, 1});
  EXPECT_TRUE(Matches(run1("reduce_any", {b}, {{"axes", Ints{1}}}), DType::kBool, {2}, {1, 1}));
  EXPECT_TRUE(Matches(run1("reduce_all", {b}, {{"axes", Ints{1}}}), DType::kBool, {2}, {0, 1}));
  EXPECT_TRUE(Matches(run1("reduce_all", {b}, {{"axes", Ints{0}}}), DType::kBool, {3}, {0, 1, 0}));
  // Over nothing: any false, all true.
  ValueId e = boolean({2, 0}, {});
  EXPECT_TRUE(Matches(run1("reduce_any", {e}, {{"axes", Ints{1}}}), DType::kBool, {2}, {0, 0}));
  EXPECT_TRUE(Matches(run1("reduce_all", {e}, {{"axes", Ints{1}}}), DType::kBool, {2}, {1, 1}));
}

TEST_F(NewReductions, ArgmaxAndArgminTakeTheFirstOfTies) {
  ValueId x = f32({2, 4}, {1, 5, 5, 0, 2, 2, -1, -1});
  EXPECT_TRUE(Matches(run1("argmax", {x}, {{"axis", int64_t{1}}}), DType::kI64, {2}, {1, 0}));
  EXPECT_TRUE(Matches(run1("argmin", {x}, {{"axis", int64_t{-1}}}), DType::kI64, {2}, {3, 2}));
  EXPECT_TRUE(Matches(run1("argmax", {x}, {{"axis", int64_t{0}}, {"keepdim", int64_t{1}}}), DType::kI64, {1, 4},
                      {1, 0, 0, 0}));
  ValueId n = i64({3}, {-4, 9, 9});
  EXPECT_TRUE(Matches(run1("argmax", {n}, {{"axis", int64_t{0}}}), DType::kI64, {}, {1}));
  // A NaN is the extreme for both, as in torch.
  ValueId nan = f32({4}, {1, kNaN, 3, kNaN});
  EXPECT_TRUE(Matches(run1("argmax", {nan}, {{"axis", int64_t{0}}}), DType::kI64, {}, {1}));
  EXPECT_TRUE(Matches(run1("argmin", {nan}, {{"axis", int64_t{0}}}), DType::kI64, {}, {1}));
}

TEST_F(NewReductions, CumsumAlongAnAxis) {
  ValueId x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(Matches(run1("cumsum", {x}, {{"axis", int64_t{1}}}), DType::kI32, {2, 3}, {1, 3, 6, 4, 9, 15}));
  EXPECT_TRUE(Matches(run1("cumsum", {x}, {{"axis", int64_t{0}}}), DType::kI32, {2, 3}, {1, 2, 3, 5, 7, 9}));
  EXPECT_TRUE(Matches(run1("cumsum", {f32({4}, {0.5, -1, 2, kInf})}, {{"axis", int64_t{0}}}), DType::kF32, {4},
                      {0.5, -0.5, 1.5, kInf}));
}

TEST_F(NewReductions, BadAttributesAreNamed) {
  EXPECT_MENTIONS(error_of("argmax", {f32({2}, {1, 2})}, {{"axis", int64_t{1}}}), "attribute 'axis'");
  EXPECT_MENTIONS(error_of("argmax", {f32({2}, {1, 2})}, {{"axis", int64_t{0}}, {"keepdim", int64_t{2}}}),
                  "attribute 'keepdim'");
  EXPECT_MENTIONS(error_of("argmin", {f32({2, 0}, {})}, {{"axis", int64_t{1}}}), "empty along attribute 'axis'");
  EXPECT_MENTIONS(error_of("cumsum", {f32({2}, {1, 2})}, {}), "attribute 'axis' (int) is required");
  EXPECT_MENTIONS(error_of("reduce_any", {f32({2}, {1, 2})}, {{"axes", Ints{0}}}), "accepts bool");
  EXPECT_MENTIONS(error_of("bitwise_and", {f32({1}, {1}), f32({1}, {1})}), "has dtype f32");
  EXPECT_MENTIONS(error_of("isnan", {i32({1}, {1})}), "has dtype i32");
  EXPECT_MENTIONS(error_of("logical_or", {i32({1}, {1}), i64({1}, {1})}), "they must match");
}

}  // namespace
}  // namespace gpuu::cpu
