// The JSON reader behind custom-shader implementation_attrs: strict RFC 8259,
// exact integers, UTF-8 checked, and errors that point at the fault.
#include <gtest/gtest.h>

#include <string>

#include "base/json.h"

namespace gpuu {
namespace {

JsonValue parse_ok(const std::string& text) {
  Result<JsonValue> r = parse_json(text);
  EXPECT_TRUE(r.ok()) << text << " -> " << r.status().message();
  return r.ok() ? r.value() : JsonValue();
}

std::string parse_error(const std::string& text) {
  Result<JsonValue> r = parse_json(text);
  EXPECT_FALSE(r.ok()) << "accepted: " << text;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidFormat);
  return r.status().message();
}

TEST(JsonReader, ReadsTheCustomShaderExample) {
  JsonValue v = parse_ok(R"({
    "entry_point": "main",
    "workgroup_sizes": [8, 8, 1],
    "shader_language": "GLSL",
    "shader_code": "void main() { }",
    "input_0_binding": 0
  })");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.as_object().size(), 5u);
  EXPECT_EQ(v.as_object()[0].first, "entry_point") << "members keep their written order";
  ASSERT_NE(v.find("entry_point"), nullptr);
  EXPECT_EQ(v.find("entry_point")->as_string(), "main");
  const JsonValue* sizes = v.find("workgroup_sizes");
  ASSERT_TRUE(sizes && sizes->is_array());
  ASSERT_EQ(sizes->as_array().size(), 3u);
  EXPECT_TRUE(sizes->as_array()[0].is_integer());
  EXPECT_EQ(sizes->as_array()[0].as_integer(), 8);
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonReader, Scalars) {
  EXPECT_TRUE(parse_ok("null").is_null());
  EXPECT_TRUE(parse_ok(" true ").as_bool());
  EXPECT_FALSE(parse_ok("false").as_bool());
  EXPECT_TRUE(parse_ok("false").is_bool());
  EXPECT_EQ(parse_ok("-0").as_integer(), 0);
  EXPECT_DOUBLE_EQ(parse_ok("-12.5e-1").as_number(), -1.25);
  EXPECT_FALSE(parse_ok("1.0").is_integer());
  EXPECT_FALSE(parse_ok("1e2").is_integer());
  EXPECT_DOUBLE_EQ(parse_ok("1E2").as_number(), 100.0);
  EXPECT_EQ(parse_ok("9223372036854775807").as_integer(), INT64_MAX);
  EXPECT_EQ(parse_ok("-9223372036854775808").as_integer(), INT64_MIN);
  JsonValue big = parse_ok("9223372036854775808");
  EXPECT_FALSE(big.is_integer()) << "past int64: a double only";
  EXPECT_DOUBLE_EQ(big.as_number(), 9223372036854775808.0);
  EXPECT_TRUE(parse_ok("[]").as_array().empty());
  EXPECT_TRUE(parse_ok("{}").as_object().empty());
}

TEST(JsonReader, StringEscapesAndUnicode) {
  EXPECT_EQ(parse_ok(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse_ok(R"("\u0041\u00e9\u20AC")").as_string(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse_ok(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse_ok("\"\xC3\xA9\"").as_string(), "\xC3\xA9") << "raw UTF-8 passes through";
}

TEST(JsonReader, AccessorsOfTheWrongKindAreNeutral) {
  JsonValue n = parse_ok("3");
  EXPECT_EQ(n.as_string(), "");
  EXPECT_TRUE(n.as_array().empty());
  EXPECT_EQ(n.find("x"), nullptr);
  EXPECT_FALSE(parse_ok("\"3\"").is_integer());
  EXPECT_EQ(parse_ok("\"3\"").as_integer(), 0);
}

TEST(JsonReader, RefusesMalformedText) {
  for (const char* bad : {"", "   ", "{", "[1,]", "{\"a\":1,}", "{'a':1}", "{\"a\" 1}", "{\"a\":}", "[1 2]", "01",
                          "1.", ".5", "-", "1e", "+1", "tru", "nul", "NaN", "Infinity", "\"abc", "\"\\x\"", "\"\\u12\"",
                          "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\nb\"", "{} {}", "[1] x", "// c\n1",
                          "{1:2}", "1e400", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xE2\x82\""}) {
    parse_error(bad);
  }
}

TEST(JsonReader, ErrorsGiveBytePositionLineAndColumn) {
  std::string m = parse_error("{\n  \"a\": 1,\n  \"b\": ]\n}");
  EXPECT_NE(m.find("at byte 19 (line 3, column 8)"), std::string::npos) << m;
  m = parse_error("[1, 2] 3");
  EXPECT_NE(m.find("after the value at byte 7"), std::string::npos) << m;
}

TEST(JsonReader, RefusesDuplicateKeys) {
  std::string m = parse_error(R"({"entry_point": "a", "entry_point": "b"})");
  EXPECT_NE(m.find("duplicate key \"entry_point\""), std::string::npos) << m;
}

TEST(JsonReader, BoundsNestingInsteadOfOverflowingTheStack) {
  std::string ok_text = std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']');
  parse_ok(ok_text);
  std::string deep = std::string(100000, '[');
  std::string m = parse_error(deep);
  EXPECT_NE(m.find("nesting deeper"), std::string::npos) << m;
}

TEST(JsonReader, BuildsValuesForWriters) {
  JsonValue v = JsonValue::object({{"k", JsonValue::array({JsonValue::integer(3), JsonValue::string("s")})}});
  ASSERT_NE(v.find("k"), nullptr);
  EXPECT_EQ(v.find("k")->as_array()[0].as_integer(), 3);
  EXPECT_EQ(v.find("k")->as_array()[1].as_string(), "s");
  EXPECT_STREQ(json_kind_name(v.kind()), "object");
}

}  // namespace
}  // namespace gpuu
