// JsonWriter: well-formed, compact, deterministic output, and misuse detected
// through ok() rather than by aborting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/json.h"
#include "base/json_writer.h"

namespace gpuu {
namespace {

TEST(JsonWriter, WritesNestedContainersWithCommas) {
  JsonWriter w;
  w.begin_object();
  w.field("a", int64_t{1}).field("b", "two").field("c", true);
  w.key("d").begin_array().value(int64_t{1}).value(2.5).null().begin_object().end_object().end_array();
  w.end_object();
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.str(), R"({"a":1,"b":"two","c":true,"d":[1,2.5,null,{}]})");
}

TEST(JsonWriter, EscapesStrings) {
  JsonWriter w;
  w.value(std::string_view("q\"b\\n\n\t\x01 \xc3\xa9", 11));
  EXPECT_EQ(w.str(), "\"q\\\"b\\\\n\\n\\t\\u0001 \xc3\xa9\"");
  Result<JsonValue> back = parse_json(w.str());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->as_string(), std::string("q\"b\\n\n\t\x01 \xc3\xa9", 11));
}

TEST(JsonWriter, NumbersRoundTripAndNonFiniteBecomesNull) {
  JsonWriter w;
  w.begin_array().value(0.1).value(1e300).value(-0.0).value(22.0);
  w.value(std::numeric_limits<double>::quiet_NaN()).value(std::numeric_limits<double>::infinity());
  w.value(std::numeric_limits<int64_t>::min()).value(std::numeric_limits<uint64_t>::max()).end_array();
  EXPECT_EQ(w.str(), "[0.1,1e+300,-0,22,null,null,-9223372036854775808,18446744073709551615]");
}

TEST(JsonWriter, ReportsMisuse) {
  JsonWriter unclosed;
  unclosed.begin_object();
  EXPECT_FALSE(unclosed.ok());

  JsonWriter value_without_key;
  value_without_key.begin_object().value(int64_t{1}).end_object();
  EXPECT_FALSE(value_without_key.ok());

  JsonWriter dangling_key;
  dangling_key.begin_object().key("k");
  EXPECT_FALSE(dangling_key.ok());
  dangling_key.end_object();
  EXPECT_FALSE(dangling_key.ok());

  JsonWriter mismatched;
  mismatched.begin_array().end_object();
  EXPECT_FALSE(mismatched.ok());

  JsonWriter two_documents;
  two_documents.value(int64_t{1}).value(int64_t{2});
  EXPECT_FALSE(two_documents.ok());
}

}  // namespace
}  // namespace gpuu
