// base/half.h conversions (round-to-nearest-even, subnormals, specials) and
// HostTensor construction, checks and the conversion rules of from_doubles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/half.h"
#include "cpu_test_util.h"

namespace gpuu::cpu {
namespace {

TEST(Half, ConvertsExactValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);               // largest finite half
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);  // 1.0101010101b * 2^-2
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x83FF), -std::ldexp(1023.0f, -24));
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 lies halfway between 0x3C01 and 0x3C02 (even).
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above halfway rounds up.
  EXPECT_EQ(float_to_half(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3C01);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 3*2^-25 between 1 and 2 ulps -> 2.
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);
  // Rounding up out of the subnormals gives the smallest normal.
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);
}

TEST(Half, RoundsDoublesOnce) {
  // Through float this would round twice: 1 + 2^-11 + 2^-40 becomes the tie 1 + 2^-11
  // in float, then 1.0 in half. Straight from double it is above the tie: 0x3C01.
  double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(float_to_half(static_cast<float>(d)), 0x3C00);
  EXPECT_EQ(double_to_half(d), 0x3C01);
}

TEST(Half, HandlesOverflowInfinityAndNaN) {
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);  // below the 65520 midpoint
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // tie with the odd 0x7BFF: rounds to inf
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(double_to_half(1e300), 0x7C00);
  EXPECT_EQ(double_to_half(1e-300), 0x0000);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    auto h = static_cast<uint16_t>(bits);
    float f = half_to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << std::hex << bits;
    } else {
      ASSERT_EQ(float_to_half(f), h) << std::hex << bits;
    }
  }
}

TEST(HostTensor, FromBytesChecksTheSize) {
  float data[3] = {1, 2, 3};
  EXPECT_TRUE(HostTensor::from_bytes(DType::kF32, {3}, data, sizeof data).ok());
  Result<HostTensor> bad = HostTensor::from_bytes(DType::kF32, {2, 2}, data, sizeof data);
  ASSERT_FALSE(bad.ok());
  EXPECT_MENTIONS(bad.status().message(), "f32[2,2] needs 16 bytes, got 12");
  EXPECT_FALSE(HostTensor::from_bytes(DType::kF32, {-1}, data, 0).ok());
}

TEST(HostTensor, FromDataPicksTheDtype) {
  Result<HostTensor> t = HostTensor::from_data<int64_t>({2}, {-5, int64_t{1} << 40});
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(Matches(*t, DType::kI64, {2}, {-5, std::ldexp(1.0, 40)}));
  Result<HostTensor> h = HostTensor::from_halves({2}, {0x3C00, 0xC000});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(Matches(*h, DType::kF16, {2}, {1.0, -2.0}));
  EXPECT_FALSE(HostTensor::from_data<float>({3}, {1.0f}).ok());
}

TEST(HostTensor, FromDoublesConvertsLikeCast) {
  // Integers truncate toward zero and saturate; NaN becomes 0.
  Result<HostTensor> t = HostTensor::from_doubles(DType::kI8, {5}, {-1.7, 1.7, 300, -300, kNaN});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->to_doubles(), (Reals{-1, 1, 127, -128, 0}));
  // bool is x != 0.
  Result<HostTensor> b = HostTensor::from_doubles(DType::kBool, {3}, {0.0, 0.5, kNaN});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bytes, (std::vector<uint8_t>{0, 1, 1}));
  Result<HostTensor> bad = HostTensor::from_doubles(DType::kF32, {2}, {1, 2, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_MENTIONS(bad.status().message(), "needs 2 values, got 3");
}

TEST(HostTensor, CheckFindsMalformedTensors) {
  HostTensor t = HostTensor::zeros(DType::kF16, {2, 3});
  EXPECT_EQ(t.bytes.size(), 12u);
  EXPECT_TRUE(t.check("x").ok());
  t.bytes.pop_back();
  Status s = t.check("input 0 'x'");
  ASSERT_FALSE(s.ok());
  EXPECT_MENTIONS(s.message(), "input 0 'x' (f16[2,3]) holds 11 bytes, but needs 12");
}

TEST(HostTensor, ScalarsHaveOneElement) {
  Result<HostTensor> t = HostTensor::from_doubles(DType::kF32, {}, {2.5});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 1);
  EXPECT_EQ(t->element(0), 2.5);
  EXPECT_EQ(t->to_blob().size(), 4u);
}

}  // namespace
}  // namespace gpuu::cpu
