// JsonWriter: compact JSON output with exact, locale-independent numbers.
#include "base/json_writer.h"

#include <charconv>
#include <cmath>

namespace gpuu {

void JsonWriter::append_quoted(std::string* out, std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t clean = 0;  // start of the run of characters that need no escape
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(text.data() + clean, i - clean);
    clean = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->append(text.data() + clean, text.size() - clean);
  out->push_back('"');
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    // Only one top-level value per document.
    if (!out_.empty()) broken_ = true;
    return;
  }
  if (stack_.back() == '{') {
    if (!key_pending_) broken_ = true;
    key_pending_ = false;
    return;
  }
  if (has_element_.back()) out_.push_back(',');
  has_element_.back() = true;
}

JsonWriter& JsonWriter::open_container(char open) {
  before_value();
  out_.push_back(open);
  stack_.push_back(open);
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::close_container(char open, char close, bool refused) {
  if (stack_.empty() || stack_.back() != open || refused) {
    broken_ = true;
    return *this;
  }
  stack_.pop_back();
  has_element_.pop_back();
  out_.push_back(close);
  return *this;
}

JsonWriter& JsonWriter::begin_object() { return open_container('{'); }

// A key without its value cannot be closed over.
JsonWriter& JsonWriter::end_object() { return close_container('{', '}', key_pending_); }

JsonWriter& JsonWriter::begin_array() { return open_container('['); }

JsonWriter& JsonWriter::end_array() { return close_container('[', ']', false); }

JsonWriter& JsonWriter::key(std::string_view name) {
  if (stack_.empty() || stack_.back() != '{' || key_pending_) {
    broken_ = true;
    return *this;
  }
  if (has_element_.back()) out_.push_back(',');
  has_element_.back() = true;
  append_quoted(&out_, name);
  out_.push_back(':');
  key_pending_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_quoted(&out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_.append(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  before_value();
  out_.append(std::to_string(number));
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  before_value();
  out_.append(std::to_string(number));
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  char buffer[64];
  // std::to_chars gives the shortest round-trip form and ignores the locale.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), number);
  if (ec != std::errc()) {
    broken_ = true;
    return *this;
  }
  out_.append(buffer, end);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_.append("null");
  return *this;
}

}  // namespace gpuu
