// JSON values and a strict RFC 8259 reader (custom-shader implementation_attrs,
// explain reports). Errors name the byte offset, line and column of the fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace gpuu {

class JsonValue {
 public:
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<JsonValue>;
  // Members in the order they were written; the reader refuses duplicate keys.
  using Object = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() = default;  // null
  static JsonValue boolean(bool b);
  static JsonValue number(double d);
  static JsonValue integer(int64_t i);
  static JsonValue string(std::string s);
  static JsonValue array(Array items);
  static JsonValue object(Object members);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  // A number with an exact int64 value: written without fraction or exponent
  // and in range, or made with integer().
  bool is_integer() const { return kind_ == Kind::kNumber && has_integer_; }

  // Accessors return a neutral value (false, 0, empty) for the wrong kind, so
  // callers check the kind first and never trip over a bad document.
  bool as_bool() const { return kind_ == Kind::kBool && bool_; }
  double as_number() const { return kind_ == Kind::kNumber ? number_ : 0.0; }
  int64_t as_integer() const { return is_integer() ? integer_ : 0; }
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;

  // The member named `key` of an object, or nullptr (also for non-objects).
  const JsonValue* find(std::string_view key) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  bool has_integer_ = false;
  double number_ = 0.0;
  int64_t integer_ = 0;
  std::string string_;
  Array array_;
  Object object_;
};

const char* json_kind_name(JsonValue::Kind kind);  // "null", "bool", "number", ...

// Parses exactly one JSON value (surrounding whitespace allowed). Strings must be
// valid UTF-8; nesting deeper than kJsonMaxDepth is refused rather than risking
// the stack. Fails with kInvalidFormat: "... at byte 12 (line 1, column 13)".
constexpr int kJsonMaxDepth = 256;
Result<JsonValue> parse_json(std::string_view text);

}  // namespace gpuu
