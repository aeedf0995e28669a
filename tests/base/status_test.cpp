// Status and Result: the error type every layer returns.
#include <gtest/gtest.h>

#include "base/status.h"

namespace gpuu {
namespace {

Result<int> half(int x) {
  if (x % 2) return err(StatusCode::kInvalidArgument, "odd value ", x);
  return x / 2;
}

Result<int> quarter(int x) {
  GPUU_ASSIGN_OR_RETURN(int h, half(x));
  GPUU_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s = err(StatusCode::kNotFound, "no context '", "tok", "' group ", 3);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no context 'tok' group 3");
  EXPECT_EQ(s.to_string(), "not found: no context 'tok' group 3");
}

TEST(Result, PropagatesTheFirstFailure) {
  EXPECT_EQ(quarter(8).value(), 2);
  Result<int> r = quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd value 3");
  EXPECT_TRUE(quarter(4).status().ok());
}

}  // namespace
}  // namespace gpuu

#include "base/base64.h"

namespace gpuu {
namespace {

TEST(Base64, RoundTripsEveryLengthModuloThree) {
  for (size_t n = 0; n < 10; ++n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 200);
    std::string text = base64_encode(bytes.data(), bytes.size());
    EXPECT_EQ(text.size(), (n + 2) / 3 * 4);
    Result<std::vector<uint8_t>> back = base64_decode(text);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back.value(), bytes);
  }
  EXPECT_EQ(base64_encode(reinterpret_cast<const uint8_t*>("gpu"), 3), "Z3B1");
}

TEST(Base64, RefusesWhatIsNotBase64) {
  EXPECT_FALSE(base64_decode("abc").ok());
  Result<std::vector<uint8_t>> bad = base64_decode("ab!d");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset 2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(base64_decode("a=bc").ok());
}

}  // namespace
}  // namespace gpuu
