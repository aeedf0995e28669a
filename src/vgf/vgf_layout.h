// Fixed byte layout of a VGF file (header, section table, CONST00 block), shared
// by the encoder and the decoder. Little-endian on disk, read without alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuu::vgf::layout {

inline constexpr uint8_t kMagic[4] = {'V', 'G', 'F', '1'};
inline constexpr uint8_t kLegacyMagic[4] = {0xC3, 0xD2, 0xE1, 0xF0};  // 0xF0E1D2C3 little-endian

// Header: magic 0, vk_header_version 4, version bytes 8..10, then
// (offset u64, size u64) for each section from byte 16.
inline constexpr size_t kVkHeaderVersionOffset = 4;
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kSectionTableOffset = 16;
inline constexpr int kSectionCount = 4;
enum Section { kModules = 0, kSequence = 1, kResources = 2, kConstants = 3 };

// Names as they appear in messages ("vgf: model sequence section at offset 968: ...").
inline const char* section_name(int section) {
  static const char* const kNames[kSectionCount] = {"module table", "model sequence", "model resource",
                                                    "constants"};
  return kNames[section];
}

// CONST00 block: 8-byte tag, u64 count, count x 24-byte records, payload area.
inline constexpr uint8_t kConstantsTag[8] = {'C', 'O', 'N', 'S', 'T', '0', '0', 0};
inline constexpr size_t kConstantsHeaderSize = 16;
inline constexpr size_t kConstantRecordSize = 24;

inline constexpr size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

template <typename T>
void store_le(uint8_t* p, T value) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(u >> (8 * i));
}

template <typename T>
T load_le(const uint8_t* p) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(static_cast<U>(p[i]) << (8 * i));
  return static_cast<T>(u);
}

}  // namespace gpuu::vgf::layout
