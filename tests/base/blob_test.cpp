// Blob: stored bytes and derived ones (made from others when read).
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "base/blob.h"

namespace gpuu {
namespace {

// Each byte of the source plus `add`, counting how often it was made.
Blob plus(const Blob& source, uint8_t add, std::atomic<int>* made) {
  return Blob::derived({source}, "plus" + std::to_string(add), source.size(),
                       [add, made](const std::vector<Blob>& sources, uint8_t* out) {
                         ++*made;
                         for (size_t i = 0; i < sources[0].size(); ++i) out[i] = sources[0].data()[i] + add;
                       });
}

TEST(Blob, DerivedBytesAreMadeWhenReadAndWrittenOutWithoutAHostCopy) {
  const Blob source = Blob::take({1, 2, 3, 4});
  std::atomic<int> made{0};
  const Blob b = plus(source, 10, &made);
  EXPECT_TRUE(b.is_derived());
  EXPECT_EQ(b.size(), 4u);
  EXPECT_EQ(made, 0) << "nothing is made until someone reads it";
  std::vector<uint8_t> out(4);
  b.write_to(out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{11, 12, 13, 14}));
  EXPECT_EQ(made, 1);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(std::vector<uint8_t>(b.data(), b.data() + 4), out);
  const Blob copy = b;
  EXPECT_EQ(copy.data(), b.data()) << "data() makes one host copy, shared by the blob's copies";
  EXPECT_EQ(made, 2);
  const Blob tail = b.sub_view(2, 2);
  EXPECT_EQ(tail.data()[0], 13);
  EXPECT_TRUE(b.same_bytes(Blob::take({11, 12, 13, 14})));
}

TEST(Blob, NamesSayWhatTheBytesAreMadeOf) {
  const Blob a = Blob::take({1, 2, 3, 4}), other = Blob::take({1, 2, 3, 4});
  std::atomic<int> made{0};
  EXPECT_EQ(a.name(), Blob::view(a.data(), a.size(), nullptr).name()) << "a stored blob is its address and size";
  EXPECT_NE(a.name(), other.name()) << "equal bytes elsewhere are another content as far as names go";
  EXPECT_NE(a.name(), a.sub_view(0, 2).name());
  EXPECT_EQ(plus(a, 1, &made).name(), plus(a, 1, &made).name()) << "made alike from the same bytes: one content";
  EXPECT_NE(plus(a, 1, &made).name(), plus(a, 2, &made).name());
  EXPECT_NE(plus(a, 1, &made).name(), plus(other, 1, &made).name());
  const Blob nested = plus(plus(a, 1, &made), 1, &made);
  EXPECT_NE(nested.name(), plus(a, 1, &made).name());
  EXPECT_EQ(nested.data()[3], 6);
  EXPECT_EQ(made, 2) << "naming makes nothing; the nested read made each level once";
}

TEST(Blob, WithoutMadeBytesKeepsTheNameAndDropsTheHostCopy) {
  std::atomic<int> made{0};
  const Blob b = plus(Blob::take({5, 6}), 1, &made);
  const uint8_t* bytes = b.data();
  EXPECT_EQ(made, 1);
  const Blob bare = b.without_made_bytes();
  EXPECT_EQ(bare.name(), b.name());
  EXPECT_EQ(made, 1) << "no bytes are made for it";
  EXPECT_NE(bare.data(), bytes) << "it reads its own when asked";
  EXPECT_EQ(made, 2);
  EXPECT_EQ(bare.data()[1], 7);
  const Blob stored = Blob::take({1});
  EXPECT_EQ(stored.without_made_bytes().data(), stored.data()) << "a stored blob is itself";
}

}  // namespace
}  // namespace gpuu
