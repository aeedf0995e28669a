// JsonWriter: a small streaming writer of compact, deterministic JSON text
// (explain reports, benchmark results). Separate from the JSON reader in json.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuu {

// Builds one JSON document into a string. Commas and quoting are handled
// here; the caller only says what comes next. Misuse (a value where a key is
// due, unbalanced end_*) is a programming error and is caught in tests by
// ok(), never by aborting.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);  // inside an object, before each value

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text ? text : "")); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int32_t number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint32_t number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint64_t number);
  // Shortest text that reads back to the same double; NaN and infinities,
  // which JSON cannot hold, become null.
  JsonWriter& value(double number);
  JsonWriter& null();

  // Shorthands for "key": value.
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // True when every container was closed and no key was left without a value.
  bool ok() const { return !broken_ && stack_.empty() && !key_pending_; }
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

  // Appends `text` as a quoted JSON string (UTF-8 passed through; control
  // characters, quote and backslash escaped).
  static void append_quoted(std::string* out, std::string_view text);

 private:
  void before_value();
  // begin_object/begin_array and end_object/end_array: `open` is '{' or '['.
  // A close that does not match the innermost open (or `refused`) breaks the writer.
  JsonWriter& open_container(char open);
  JsonWriter& close_container(char open, char close, bool refused);

  std::string out_;
  std::vector<char> stack_;        // '{' or '['
  std::vector<bool> has_element_;  // per open container: a comma is due before the next element
  bool key_pending_ = false;
  bool broken_ = false;
};

}  // namespace gpuu
