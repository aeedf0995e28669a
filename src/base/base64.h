// Base64 (RFC 4648, with padding): how SPIR-V travels inside JSON attributes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace gpuu {

std::string base64_encode(const uint8_t* data, size_t size);
// kInvalidFormat naming the offset of the first character that is not base64.
Result<std::vector<uint8_t>> base64_decode(const std::string& text);

}  // namespace gpuu
