// One byte as a "\\xNN" escape (lower-case hex), for text that shows bytes which are not printable.
#pragma once

#include <cstdint>
#include <string>

namespace gpuu {

inline void append_hex_escape(std::string& out, uint8_t b) {
  static const char* kHex = "0123456789abcdef";
  out += "\\x";
  out.push_back(kHex[b >> 4]);
  out.push_back(kHex[b & 15]);
}

}  // namespace gpuu
