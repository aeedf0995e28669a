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
