// The integer ops of TOSA's INT profile on the CPU reference, against values
// worked out by hand from the TOSA 1.0 formulas (apply_scale_32/16 with single
// and double rounding, reciprocal_scale for the average pool, zero points,
// saturation, unsigned i8 on either side of rescale).
#include <cstring>

#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

class IntQuantTest : public OpTest {
 protected:
  // An i32 graph constant (rescale's multiplier and shift must be constants).
  ValueId const_i32(const Reals& values) {
    std::vector<uint8_t> bytes(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
      int32_t v = static_cast<int32_t>(static_cast<int64_t>(values[i]));
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
    Shape shape = {static_cast<int64_t>(values.size())};
    ValueId id = graph_.add_constant("c" + std::to_string(graph_.values().size()), DType::kI32, shape,
                                     Blob::copy_of(bytes.data(), bytes.size()));
    Result<HostTensor> t = HostTensor::from_doubles(DType::kI32, shape, values);
    EXPECT_TRUE(t.ok());
    tensors_[id] = std::move(t).value();
    return id;
  }
  HostTensor rescale(ValueId x, const Reals& multiplier, const Reals& shift, AttrMap attrs) {
    return run1("rescale", {x, const_i32(multiplier), const_i32(shift)}, std::move(attrs));
  }
};

constexpr double k2p30 = 1073741824.0;  // 2^30

TEST_F(IntQuantTest, RescaleSingleRoundRoundsHalfUp) {
  // x * 2^30 / 2^31 = x / 2: 1.5 -> 2, -1.5 -> -1 (half up, not away from zero).
  ValueId x = i32({4}, {100, -100, 3, -3});
  EXPECT_TRUE(Matches(rescale(x, {k2p30}, {31}, {{"dtype", std::string("i32")}}), DType::kI32, {4}, {50, -50, 2, -1}));
}

TEST_F(IntQuantTest, RescaleDoubleRoundAddsTheSignedCorrectionAboveShift31) {
  // x / 4 with shift 32: single rounding gives -6 -> -1, 5 -> 1; double
  // rounding (+-2^30 by the sign of x) gives -6 -> -2, 5 -> 2.
  ValueId x = i32({4}, {-6, 6, 5, 7});
  EXPECT_TRUE(Matches(rescale(x, {k2p30}, {32}, {{"dtype", std::string("i32")}}), DType::kI32, {4}, {-1, 2, 1, 2}));
  EXPECT_TRUE(Matches(rescale(x, {k2p30}, {32}, {{"dtype", std::string("i32")}, {"rounding", std::string("double_round")}}),
                      DType::kI32, {4}, {-2, 2, 2, 2}));
  // inexact_round rounds as single_round.
  EXPECT_TRUE(Matches(rescale(x, {k2p30}, {32}, {{"dtype", std::string("i32")}, {"rounding", std::string("inexact_round")}}),
                      DType::kI32, {4}, {-1, 2, 1, 2}));
  // Shift 31 and below: double rounding changes nothing.
  ValueId y = i32({4}, {100, -100, 3, -3});
  EXPECT_TRUE(Matches(rescale(y, {k2p30}, {31}, {{"dtype", std::string("i32")}, {"rounding", std::string("double_round")}}),
                      DType::kI32, {4}, {50, -50, 2, -1}));
}

TEST_F(IntQuantTest, RescalePerChannelWithShifts0And31And63) {
  // Channels along the last dim: (x*5), (x*2^30 + 2^30) >> 31, and shift 63
  // where even the extreme products round to 0.
  ValueId x = i32({2, 3}, {3, 7, -2147483648.0, -3, -7, 2147483647.0});
  HostTensor y = rescale(x, {5, k2p30, 2147483647.0}, {0, 31, 63}, {{"dtype", std::string("i32")}});
  EXPECT_TRUE(Matches(y, DType::kI32, {2, 3}, {15, 4, 0, -15, -3, 0}));
  // The same along axis 0 of the transposed layout.
  ValueId xt = i32({3, 2}, {3, -3, 7, -7, -2147483648.0, 2147483647.0});
  HostTensor yt = rescale(xt, {5, k2p30, 2147483647.0}, {0, 31, 63}, {{"dtype", std::string("i32")}, {"axis", int64_t{0}}});
  EXPECT_TRUE(Matches(yt, DType::kI32, {3, 2}, {15, -15, 4, -3, 0, 0}));
  // Shift 62 on the most negative product: (-2^62 + 2^31 + 2^61) >> 62 = -1.
  ValueId z = i32({1}, {-2147483648.0});
  EXPECT_TRUE(Matches(rescale(z, {2147483647.0}, {62}, {{"dtype", std::string("i32")}}), DType::kI32, {1}, {-1}));
}

TEST_F(IntQuantTest, RescaleToI8SaturatesAroundTheOutputZeroPoint) {
  ValueId x = i32({5}, {0, 1000, -1000, 50, 117});
  HostTensor y = rescale(x, {k2p30}, {30}, {{"dtype", std::string("i8")}, {"output_zp", int64_t{10}}});
  EXPECT_TRUE(Matches(y, DType::kI8, {5}, {10, 127, -128, 60, 127}));
  // i8 in with an input zero point, i8 out.
  ValueId q = i8({4}, {-128, -5, 0, 127});
  EXPECT_TRUE(Matches(rescale(q, {k2p30}, {31}, {{"dtype", std::string("i8")}, {"input_zp", int64_t{-5}}}), DType::kI8,
                      {4}, {-61, 0, 3, 66}));
}

TEST_F(IntQuantTest, RescaleUnsignedInputAndOutput) {
  // Bits 0xFF, 0x00, 0x80 read as 255, 0, 128, minus zero point 128.
  ValueId x = i8({3}, {-1, 0, -128});
  EXPECT_TRUE(Matches(rescale(x, {k2p30}, {30}, {{"dtype", std::string("i8")}, {"input_unsigned", int64_t{1}},
                                                  {"input_zp", int64_t{128}}}),
                      DType::kI8, {3}, {127, -128, 0}));
  // Signed in, unsigned out around zero point 128: 0, 128, 255 stored as i8 bits.
  ValueId s = i8({4}, {-128, 0, 127, 100});
  EXPECT_TRUE(Matches(rescale(s, {k2p30}, {30}, {{"dtype", std::string("i8")}, {"output_unsigned", int64_t{1}},
                                                  {"output_zp", int64_t{128}}}),
                      DType::kI8, {4}, {0, -128, -1, -28}));
}

TEST_F(IntQuantTest, RescaleScale16UsesA16BitMultiplier) {
  // x * 2^14 / 2^15 = x / 2, half up.
  ValueId x = i32({4}, {5, -5, 8, -1});
  EXPECT_TRUE(Matches(rescale(x, {16384}, {15}, {{"dtype", std::string("i32")}, {"scale32", int64_t{0}}}), DType::kI32,
                      {4}, {3, -2, 4, 0}));
}

TEST_F(IntQuantTest, RescaleErrorsNameTheAttributeOrInput) {
  ValueId x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto bad = [&](const Reals& m, const Reals& s, AttrMap attrs) {
    return error_of("rescale", {x, const_i32(m), const_i32(s)}, std::move(attrs));
  };
  EXPECT_MENTIONS(bad({-1}, {2}, {{"dtype", std::string("i8")}}), "multiplier");
  EXPECT_MENTIONS(bad({1}, {64}, {{"dtype", std::string("i8")}}), "shift");
  EXPECT_MENTIONS(bad({40000}, {2}, {{"dtype", std::string("i8")}, {"scale32", int64_t{0}}}), "multiplier");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("f32")}}), "attribute 'dtype'");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("i8")}, {"rounding", std::string("nearest")}}), "attribute 'rounding'");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("i8")}, {"rounding", std::string("double_round")}, {"scale32", int64_t{0}}}),
                  "scale32");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("i8")}, {"input_zp", int64_t{3}}}), "attribute 'input_zp'");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("i8")}, {"output_zp", int64_t{200}}}), "attribute 'output_zp'");
  EXPECT_MENTIONS(bad({1}, {2}, {{"dtype", std::string("i8")}, {"input_unsigned", int64_t{1}}}), "input_unsigned");
  EXPECT_MENTIONS(bad({1, 2}, {2, 2}, {{"dtype", std::string("i8")}}), "per-channel");
  EXPECT_MENTIONS(bad({1, 2, 3}, {2, 2}, {{"dtype", std::string("i8")}}), "shift");
  // multiplier given as a graph input, not a constant
  ValueId m = i32({1}, {1});
  EXPECT_MENTIONS(error_of("rescale", {x, m, const_i32({2})}, {{"dtype", std::string("i8")}}), "graph constant");
  ValueId f = f32({2}, {1, 2});
  EXPECT_MENTIONS(error_of("rescale", {f, const_i32({1}), const_i32({2})}, {{"dtype", std::string("i8")}}), "f32");
}

TEST_F(IntQuantTest, Conv2dIntSubtractsZeroPointsAndSkipsPadding) {
  // x - 1 = 0..8 in a 3x3 plane; weights 3 - 2 = 1 over 2x2; pads bottom and
  // right (they contribute nothing, as TOSA's padding does); bias 100.
  ValueId x = iota(DType::kI8, {1, 1, 3, 3}, 1);
  ValueId w = i8({1, 1, 2, 2}, {3, 3, 3, 3});
  ValueId b = i32({1}, {100});
  HostTensor y = run1("conv2d_int", {x, w, b},
                      {{"padding", Ints{0, 1, 0, 1}}, {"input_zp", int64_t{1}}, {"weight_zp", int64_t{2}}});
  EXPECT_TRUE(Matches(y, DType::kI32, {1, 1, 3, 3}, {108, 112, 107, 120, 124, 113, 113, 115, 108}));
  // Depthwise (groups = channels), no bias, stride 2, top/left pads.
  ValueId xd = i8({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  ValueId wd = i8({2, 1, 1, 1}, {2, -3});
  HostTensor yd = run1("conv2d_int", {xd, wd}, {{"groups", int64_t{2}}, {"stride", Ints{2, 2}}, {"padding", Ints{1, 0, 1, 0}}});
  // Output 2x2 per channel at input rows/cols -1, 1: only (1,1) is real.
  EXPECT_TRUE(Matches(yd, DType::kI32, {1, 2, 2, 2}, {0, 0, 0, 8, 0, 0, 0, 12}));
  HostTensor ys = run1("conv2d_int", {xd, wd}, {{"groups", int64_t{2}}, {"stride", Ints{1, 1}}, {"padding", Ints{1, 0, 1, 0}}});
  EXPECT_TRUE(Matches(ys, DType::kI32, {1, 2, 3, 3}, {0, 0, 0, 0, 2, 4, 0, 6, 8, 0, 0, 0, 0, 3, 6, 0, 9, 12}));
}

TEST_F(IntQuantTest, Conv2dIntErrorsNameTheAttributeOrDtype) {
  ValueId x = i8({1, 1, 3, 3}, Reals(9, 1));
  ValueId w = i8({1, 1, 2, 2}, Reals(4, 1));
  EXPECT_MENTIONS(error_of("conv2d_int", {x, w}, {{"padding", Ints{0, 0}}}), "attribute 'padding'");
  EXPECT_MENTIONS(error_of("conv2d_int", {x, w}, {{"input_zp", int64_t{128}}}), "attribute 'input_zp'");
  ValueId f = f32({1, 1, 3, 3}, Reals(9, 1));
  EXPECT_MENTIONS(error_of("conv2d_int", {f, w}), "f32");
  ValueId bias8 = i8({1}, {1});
  EXPECT_MENTIONS(error_of("conv2d_int", {x, w, bias8}), "bias");
}

TEST_F(IntQuantTest, MatmulIntWithZeroPoints) {
  ValueId a = i8({1, 2, 2}, {1, 2, 3, 4});
  ValueId b = i8({1, 2, 2}, {5, 6, 7, 8});
  HostTensor y = run1("matmul_int", {a, b}, {{"a_zp", int64_t{1}}, {"b_zp", int64_t{5}}});
  EXPECT_TRUE(Matches(y, DType::kI32, {1, 2, 2}, {2, 3, 6, 11}));
  // -128 - 127 = -255 per element: 4 * 255^2 with no zero points' help.
  ValueId c = i8({1, 1, 4}, {-128, -128, -128, -128});
  ValueId d = i8({1, 4, 1}, {-128, -128, -128, -128});
  EXPECT_TRUE(Matches(run1("matmul_int", {c, d}, {{"a_zp", int64_t{127}}, {"b_zp", int64_t{127}}}), DType::kI32, {1, 1, 1},
                      {4.0 * 255 * 255}));
  EXPECT_MENTIONS(error_of("matmul_int", {a, i8({1, 3, 2}, Reals(6, 0))}), "inner dims");
  EXPECT_MENTIONS(error_of("matmul_int", {a, b}, {{"b_zp", int64_t{-129}}}), "attribute 'b_zp'");
}

TEST_F(IntQuantTest, AvgPool2dIntDividesByTheRealElementsWithReciprocalScale) {
  // Windows of 4, 2, 2, 1 real elements: 10/4 -> 3, 6/2 -> 3, 7/2 -> 4, 4 -> 4.
  ValueId x = i8({1, 1, 2, 2}, {1, 2, 3, 4});
  AttrMap a = {{"kernel", Ints{2, 2}}, {"stride", Ints{1, 1}}, {"padding", Ints{0, 1, 0, 1}}};
  EXPECT_TRUE(Matches(run1("avg_pool2d_int", {x}, a), DType::kI8, {1, 1, 2, 2}, {3, 3, 4, 4}));
  // Negative sums: the multiplier ((2^30+1) << k) / count rounds them down past the half.
  ValueId n = i8({1, 1, 2, 2}, {-1, -2, -3, -4});
  EXPECT_TRUE(Matches(run1("avg_pool2d_int", {n}, a), DType::kI8, {1, 1, 2, 2}, {-3, -3, -4, -4}));
  // Zero points and saturation at the i8 limits.
  ValueId s = i8({1, 1, 1, 2}, {127, -128});
  AttrMap k1 = {{"kernel", Ints{1, 1}}, {"output_zp", int64_t{100}}};
  EXPECT_TRUE(Matches(run1("avg_pool2d_int", {s}, k1), DType::kI8, {1, 1, 1, 2}, {127, -28}));
  AttrMap k2 = {{"kernel", Ints{1, 1}}, {"input_zp", int64_t{100}}};
  EXPECT_TRUE(Matches(run1("avg_pool2d_int", {s}, k2), DType::kI8, {1, 1, 1, 2}, {27, -128}));
  EXPECT_MENTIONS(error_of("avg_pool2d_int", {x}, {{"kernel", Ints{2, 2}}, {"padding", Ints{2, 0, 0, 0}}}),
                  "attribute 'padding'");
}

TEST_F(IntQuantTest, TableLooksUpXPlus128) {
  std::vector<double> entries(256);
  for (int i = 0; i < 256; ++i) entries[static_cast<size_t>(i)] = 127 - i;
  ValueId t = i8({256}, entries);
  ValueId x = i8({2, 2}, {-128, 0, 127, 5});
  EXPECT_TRUE(Matches(run1("table", {x, t}), DType::kI8, {2, 2}, {127, -1, -128, -6}));
  ValueId short_table = i8({255}, Reals(255, 0));
  EXPECT_MENTIONS(error_of("table", {x, short_table}), "[256]");
  ValueId wide = i32({2}, {1, 2});
  EXPECT_MENTIONS(error_of("table", {wide, t}), "i32");
}

TEST_F(IntQuantTest, MaxPool2dOnI8) {
  ValueId x = i8({1, 1, 2, 3}, {-128, 5, -7, 127, -1, 0});
  EXPECT_TRUE(Matches(run1("max_pool2d", {x}, {{"kernel", Ints{2, 2}}, {"stride", Ints{1, 1}}}), DType::kI8, {1, 1, 1, 2},
                      {127, 5}));
}

TEST_F(IntQuantTest, MulShiftRoundsTheExact64BitProduct) {
  // shift 0 wraps like mul; shift 1: 3*5 = 15 -> (15 + 1) >> 1 = 8, -15 -> -7;
  // (2^31-1)^2 keeps its low 32 bits; shift 63: (-2^31)^2 + 2^62 wraps to -2^63 -> -1.
  ValueId a = i32({5}, {3, -3, 2147483647.0, -2147483648.0, 65536});
  ValueId b = i32({5}, {5, 5, 2147483647.0, -2147483648.0, 65536});
  EXPECT_TRUE(Matches(run1("mul_shift", {a, b}), DType::kI32, {5}, {15, -15, 1, 0, 0}));
  EXPECT_TRUE(Matches(run1("mul_shift", {a, b}, {{"shift", int64_t{1}}}), DType::kI32, {5},
                      {8, -7, -2147483647.0, 0, -2147483648.0}));
  EXPECT_TRUE(Matches(run1("mul_shift", {a, b}, {{"shift", int64_t{31}}}), DType::kI32, {5},
                      {0, 0, 2147483646.0, -2147483648.0, 2}));
  EXPECT_TRUE(Matches(run1("mul_shift", {a, b}, {{"shift", int64_t{63}}}), DType::kI32, {5}, {0, 0, 0, -1, 0}));
  EXPECT_MENTIONS(error_of("mul_shift", {a, b}, {{"shift", int64_t{64}}}), "attribute 'shift'");
  ValueId f = f32({5}, {1, 2, 3, 4, 5});
  EXPECT_MENTIONS(error_of("mul_shift", {f, f}), "f32");
}

TEST_F(IntQuantTest, ArithmeticRightShiftWithAndWithoutRounding) {
  ValueId a = i32({6}, {-7, 7, -8, 2147483647.0, -2147483648.0, 5});
  ValueId b = i32({6}, {1, 1, 2, 31, 31, 40});  // 40 is clamped to 31
  EXPECT_TRUE(Matches(run1("arithmetic_right_shift", {a, b}), DType::kI32, {6}, {-4, 3, -2, 0, -1, 0}));
  EXPECT_TRUE(Matches(run1("arithmetic_right_shift", {a, b}, {{"round", int64_t{1}}}), DType::kI32, {6},
                      {-3, 4, -2, 1, -1, 0}));
  ValueId zero = i32({1}, {0});  // broadcast; shift 0 never rounds
  EXPECT_TRUE(Matches(run1("arithmetic_right_shift", {a, zero}, {{"round", int64_t{1}}}), DType::kI32, {6},
                      {-7, 7, -8, 2147483647.0, -2147483648.0, 5}));
  EXPECT_MENTIONS(error_of("arithmetic_right_shift", {a, b}, {{"round", int64_t{2}}}), "attribute 'round'");
}

}  // namespace
}  // namespace gpuu::cpu
