// The VGF decoder against damaged input: every truncation and thousands of
// random byte changes of each golden file give an error or a valid file, never
// a crash (run under ASan/UBSan in build-vgf-asan); what it accepts re-encodes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "base/json.h"
#include "vgf/vgf_file.h"
#include "vgf/vgf_file_test_util.h"
#include "vgf/vgf_layout.h"

namespace gpuu::vgf {
namespace {

using testing::content_difference;
using testing::kGoldenFiles;
using testing::read_sample;

// What every accepted file must allow: a JSON dump (parsed back when
// `parse_dump`: parsing is the slow part), and an encoding that decodes back to the same content.
void expect_usable(const VgfFile& file, const std::string& what, bool parse_dump = true) {
  const std::string text = dump_vgf_json(file);
  if (parse_dump) {
    Result<JsonValue> dump = parse_json(text);
    EXPECT_TRUE(dump.ok()) << what << ": " << dump.status().message();
  }
  Result<std::vector<uint8_t>> bytes = encode_vgf(file);
  ASSERT_TRUE(bytes.ok()) << what << ": decoded but does not encode: " << bytes.status().message();
  Result<VgfFile> back = decode_vgf(bytes->data(), bytes->size());
  ASSERT_TRUE(back.ok()) << what << ": re-encoded file refused: " << back.status().message();
  EXPECT_EQ(content_difference(file, *back, /*compare_header=*/false), "") << what;
}

TEST(VgfRobustness, TruncationAtEveryOffsetIsAnError) {
  for (const std::string& name : kGoldenFiles) {
    std::vector<uint8_t> bytes = read_sample(name);
    ASSERT_FALSE(bytes.empty());
    for (size_t n = 0; n < bytes.size(); ++n) {
      // A fresh allocation of exactly n bytes, so that ASan sees any read past the end.
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      Result<VgfFile> f = decode_vgf(cut.data(), cut.size());
      // The constants section ends at EOF in every golden file: any cut loses part of it.
      ASSERT_FALSE(f.ok()) << name << " cut to " << n << " bytes";
      ASSERT_EQ(f.status().code(), StatusCode::kInvalidFormat);
      ASSERT_EQ(f.status().message().rfind("vgf: ", 0), 0u) << f.status().message();
    }
  }
}

TEST(VgfRobustness, RandomByteChangesGiveErrorsOrUsableFiles) {
  constexpr int kMutationsPerFile = 10000;
  std::mt19937 rng(20260821);
  for (const std::string& name : kGoldenFiles) {
    const std::vector<uint8_t> bytes = read_sample(name);
    ASSERT_FALSE(bytes.empty());
    std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
    std::uniform_int_distribution<int> count(1, 4);
    std::uniform_int_distribution<int> value(0, 255);
    int accepted = 0;
    for (int i = 0; i < kMutationsPerFile; ++i) {
      std::vector<uint8_t> mutated = bytes;
      const int changes = count(rng);
      for (int k = 0; k < changes; ++k) {
        const size_t p = position(rng);
        // Small deltas hit counts and offsets more often than random values do.
        mutated[p] = (i % 2) ? static_cast<uint8_t>(value(rng)) : static_cast<uint8_t>(mutated[p] ^ (1u << (value(rng) % 8)));
      }
      Result<VgfFile> f = decode_vgf(mutated.data(), mutated.size());
      if (!f.ok()) {
        ASSERT_EQ(f.status().code(), StatusCode::kInvalidFormat) << f.status().message();
        continue;
      }
      ++accepted;
      expect_usable(*f, str_cat(name, " mutation ", i), /*parse_dump=*/accepted % 4 == 1);
      if (::testing::Test::HasFatalFailure()) return;
    }
    // Changes inside SPIR-V words, names and payloads are harmless: some must pass.
    EXPECT_GT(accepted, 0) << name;
  }
}

TEST(VgfRobustness, RandomSectionTablesOverRandomBytes) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> file(128 + static_cast<size_t>(byte(rng)) * 4, 0);
    for (size_t k = 128; k < file.size(); ++k) file[k] = static_cast<uint8_t>(byte(rng) < 160 ? 0 : byte(rng));
    std::memcpy(file.data(), layout::kMagic, 4);
    file[9] = 4;
    file[10] = 3;
    for (int s = 0; s < 4; ++s) {
      const uint64_t offset = 128 + 4 * static_cast<uint64_t>(byte(rng) % 64);
      const uint64_t size = 4 * static_cast<uint64_t>(byte(rng) % 64);
      layout::store_le<uint64_t>(file.data() + 16 + 16 * s, offset);
      layout::store_le<uint64_t>(file.data() + 24 + 16 * s, size);
    }
    if (i % 3 == 0) {  // a CONST00 tag where the constants section starts
      const uint64_t c = layout::load_le<uint64_t>(file.data() + 64);
      if (c + 8 <= file.size()) std::memcpy(file.data() + c, layout::kConstantsTag, 8);
    }
    Result<VgfFile> f = decode_vgf(file.data(), file.size());
    if (f.ok()) {
      expect_usable(*f, str_cat("random file ", i));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace gpuu::vgf
