// Base64 encoding and strict decoding.
#include "base/base64.h"

namespace gpuu {
namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t chunk = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < size) chunk |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < size) chunk |= data[i + 2];
    out.push_back(kAlphabet[(chunk >> 18) & 63]);
    out.push_back(kAlphabet[(chunk >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(chunk >> 6) & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[chunk & 63] : '=');
  }
  return out;
}

Result<std::vector<uint8_t>> base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) {
    return err(StatusCode::kInvalidFormat, "base64: length ", text.size(), " is not a multiple of 4");
  }
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + static_cast<size_t>(k)];
      bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        v[k] = 0;
        ++pad;
        continue;
      }
      v[k] = value_of(c);
      if (v[k] < 0 || pad > 0) return err(StatusCode::kInvalidFormat, "base64: bad character at offset ", i + k);
    }
    uint32_t chunk = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                     (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out.push_back(static_cast<uint8_t>(chunk >> 16));
    if (pad < 2) out.push_back(static_cast<uint8_t>(chunk >> 8));
    if (pad < 1) out.push_back(static_cast<uint8_t>(chunk));
  }
  return out;
}

}  // namespace gpuu
