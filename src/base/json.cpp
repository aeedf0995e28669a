// The JSON reader: recursive descent over bytes, locale-independent number
// conversion (std::from_chars), UTF-8 validated, positions in every error.
#include "base/json.h"

#include <charconv>
#include <cmath>

namespace gpuu {

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::number(double d) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.number_ = d;
  return v;
}

JsonValue JsonValue::integer(int64_t i) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.number_ = static_cast<double>(i);
  v.integer_ = i;
  v.has_integer_ = true;
  return v;
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.string_ = std::move(s);
  return v;
}

JsonValue JsonValue::array(Array items) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.array_ = std::move(items);
  return v;
}

JsonValue JsonValue::object(Object members) {
  JsonValue v;
  v.kind_ = Kind::kObject;
  v.object_ = std::move(members);
  return v;
}

const std::string& JsonValue::as_string() const {
  static const std::string kEmpty;
  return kind_ == Kind::kString ? string_ : kEmpty;
}

const JsonValue::Array& JsonValue::as_array() const {
  static const Array kEmpty;
  return kind_ == Kind::kArray ? array_ : kEmpty;
}

const JsonValue::Object& JsonValue::as_object() const {
  static const Object kEmpty;
  return kind_ == Kind::kObject ? object_ : kEmpty;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& member : object_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

const char* json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull: return "null";
    case JsonValue::Kind::kBool: return "bool";
    case JsonValue::Kind::kNumber: return "number";
    case JsonValue::Kind::kString: return "string";
    case JsonValue::Kind::kArray: return "array";
    case JsonValue::Kind::kObject: return "object";
  }
  return "?";
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<JsonValue> parse_document() {
    skip_whitespace();
    if (at_end()) return fail("expected a value but the text is empty");
    GPUU_ASSIGN_OR_RETURN(JsonValue v, parse_value(0));
    skip_whitespace();
    if (!at_end()) return fail("unexpected '", printable(peek()), "' after the value");
    return v;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string(1, c);
    static const char kHex[] = "0123456789abcdef";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
  }

  // Errors point at pos_ (or `at`): byte offset plus 1-based line and column.
  template <typename... Parts>
  Status fail_at(size_t at, const Parts&... parts) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return err(StatusCode::kInvalidFormat, "JSON: ", parts..., " at byte ", at, " (line ", line, ", column ", column,
               ")");
  }
  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return fail_at(pos_, parts...);
  }

  void skip_whitespace() {
    while (!at_end()) {
      char c = peek();
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  Result<JsonValue> parse_value(int depth) {
    if (at_end()) return fail("expected a value but the text ended");
    char c = peek();
    switch (c) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': {
        GPUU_ASSIGN_OR_RETURN(std::string s, parse_string());
        return JsonValue::string(std::move(s));
      }
      case 't': return parse_literal("true", JsonValue::boolean(true));
      case 'f': return parse_literal("false", JsonValue::boolean(false));
      case 'n': return parse_literal("null", JsonValue());
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        return fail("unexpected '", printable(c), "' where a value was expected");
    }
  }

  Result<JsonValue> parse_literal(std::string_view word, JsonValue value) {
    if (text_.substr(pos_, word.size()) != word) return fail("invalid literal (expected '", word, "')");
    pos_ += word.size();
    return value;
  }

  // The loop parse_object and parse_array share: after the opening bracket,
  // `read_one` reads one member or item at a time, separated by ',' up to
  // `close`. `kind` names the container in messages.
  template <typename ReadOne>
  Status parse_sequence(int depth, char close, const char* kind, ReadOne read_one) {
    if (depth >= kJsonMaxDepth) return fail("nesting deeper than ", kJsonMaxDepth, " levels");
    ++pos_;  // the opening bracket
    skip_whitespace();
    if (!at_end() && peek() == close) {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      skip_whitespace();
      GPUU_RETURN_IF_ERROR(read_one());
      skip_whitespace();
      if (at_end()) return fail("unterminated ", kind, " (expected ',' or '", close, "')");
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == close) {
        ++pos_;
        return Status::Ok();
      }
      return fail("expected ',' or '", close, "' in the ", kind, ", found '", printable(peek()), "'");
    }
  }

  Result<JsonValue> parse_object(int depth) {
    JsonValue::Object members;
    GPUU_RETURN_IF_ERROR(parse_sequence(depth, '}', "object", [&]() -> Status {
      if (at_end() || peek() != '"') return fail("expected a string key in the object");
      size_t key_pos = pos_;
      GPUU_ASSIGN_OR_RETURN(std::string key, parse_string());
      for (const auto& m : members) {
        if (m.first == key) return fail_at(key_pos, "duplicate key \"", key, "\"");
      }
      skip_whitespace();
      if (at_end() || peek() != ':') return fail("expected ':' after key \"", key, "\"");
      ++pos_;
      skip_whitespace();
      GPUU_ASSIGN_OR_RETURN(JsonValue v, parse_value(depth + 1));
      members.emplace_back(std::move(key), std::move(v));
      return Status::Ok();
    }));
    return JsonValue::object(std::move(members));
  }

  Result<JsonValue> parse_array(int depth) {
    JsonValue::Array items;
    GPUU_RETURN_IF_ERROR(parse_sequence(depth, ']', "array", [&]() -> Status {
      GPUU_ASSIGN_OR_RETURN(JsonValue v, parse_value(depth + 1));
      items.push_back(std::move(v));
      return Status::Ok();
    }));
    return JsonValue::array(std::move(items));
  }

  Result<JsonValue> parse_number() {
    size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (at_end() || !is_digit(peek())) return fail("expected a digit in the number");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && is_digit(peek())) return fail("leading zeros are not allowed in numbers");
    } else {
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    if (!at_end() && peek() == '.') {
      integral = false;
      ++pos_;
      if (at_end() || !is_digit(peek())) return fail("expected a digit after the decimal point");
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !is_digit(peek())) return fail("expected a digit in the exponent");
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    double d = 0.0;
    auto [dend, derr] = std::from_chars(first, last, d);
    if (derr != std::errc() || dend != last || !std::isfinite(d)) {
      return fail_at(start, "number '", std::string(first, last), "' is out of range");
    }
    if (integral) {
      int64_t i = 0;
      auto [iend, ierr] = std::from_chars(first, last, i);
      if (ierr == std::errc() && iend == last) {
        JsonValue v = JsonValue::integer(i);
        return v;
      }
    }
    return JsonValue::number(d);
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Result<uint32_t> parse_hex4() {
    if (text_.size() - pos_ < 4) return fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex_value(text_[pos_]);
      if (h < 0) return fail("invalid hex digit '", printable(text_[pos_]), "' in \\u escape");
      cp = (cp << 4) | static_cast<uint32_t>(h);
      ++pos_;
    }
    return cp;
  }

  static void append_utf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Length of the valid UTF-8 sequence at pos_ (lead byte >= 0x80), or 0.
  // Refuses overlong forms, surrogates and code points past U+10FFFF.
  size_t utf8_sequence_length() const {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text_[pos_ + i]); };
    unsigned char lead = byte(0);
    size_t len = 0;
    uint32_t cp = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      len = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      len = 3;
      cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      len = 4;
      cp = lead & 0x07;
    } else {
      return 0;
    }
    if (text_.size() - pos_ < len) return 0;
    for (size_t i = 1; i < len; ++i) {
      if ((byte(i) & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (byte(i) & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return len;
  }

  Result<std::string> parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (at_end()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) return fail("control character ", printable(static_cast<char>(c)), " must be escaped in a string");
      if (c >= 0x80) {
        size_t len = utf8_sequence_length();
        if (len == 0) return fail("invalid UTF-8 in a string");
        out.append(text_.substr(pos_, len));
        pos_ += len;
        continue;
      }
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      size_t escape_pos = pos_;
      ++pos_;
      if (at_end()) return fail("unterminated escape in a string");
      char e = peek();
      ++pos_;
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          GPUU_ASSIGN_OR_RETURN(uint32_t cp, parse_hex4());
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail_at(escape_pos, "unpaired low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") return fail_at(escape_pos, "unpaired high surrogate in \\u escape");
            pos_ += 2;
            GPUU_ASSIGN_OR_RETURN(uint32_t low, parse_hex4());
            if (low < 0xDC00 || low > 0xDFFF) return fail_at(escape_pos, "unpaired high surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(&out, cp);
          break;
        }
        default:
          return fail_at(escape_pos, "invalid escape '\\", printable(e), "' in a string");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<JsonValue> parse_json(std::string_view text) { return Parser(text).parse_document(); }

}  // namespace gpuu
