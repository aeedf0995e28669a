// Permuting a tensor's bytes (weights rearranged for a backend's layout).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "graph/index_math.h"

namespace gpuu::graph {
namespace {

// Element by element: output index -> input index, the definition.
std::vector<uint8_t> permuted_by_definition(const std::vector<uint8_t>& in, size_t esize, const Shape& shape,
                                            const std::vector<int64_t>& perm) {
  const size_t rank = shape.size();
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
  std::vector<uint8_t> out(in.size());
  const int64_t numel = shape_numel(shape);
  for (int64_t o = 0; o < numel; ++o) {
    std::vector<int64_t> out_idx(rank), in_idx(rank);
    int64_t rest = o;
    for (size_t i = rank; i-- > 0;) {
      out_idx[i] = rest % out_shape[i];
      rest /= out_shape[i];
    }
    for (size_t i = 0; i < rank; ++i) in_idx[static_cast<size_t>(perm[i])] = out_idx[i];
    int64_t flat = 0;
    for (size_t i = 0; i < rank; ++i) flat = flat * shape[i] + in_idx[i];
    std::copy_n(in.begin() + flat * static_cast<int64_t>(esize), esize, out.begin() + o * static_cast<int64_t>(esize));
  }
  return out;
}

TEST(PermuteBytes, EveryPermOfRanksOneToFourAndEveryElementSize) {
  for (const Shape& shape : {Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{3, 1, 4, 5}, Shape{2, 3, 0, 2}}) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (size_t esize : {1, 2, 3, 4, 8}) {
        std::vector<uint8_t> in(static_cast<size_t>(shape_numel(shape)) * esize);
        for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
        const std::vector<uint8_t> want = permuted_by_definition(in, esize, shape, perm);
        EXPECT_EQ(permute_bytes(in.data(), esize, shape, perm), want)
            << shape_to_string(shape) << " by perm of " << perm.size() << ", " << esize << "-byte elements";
        const Blob lazy = permuted_blob(Blob::take(in), esize, shape, perm);
        EXPECT_EQ(lazy.size(), want.size());
        if (!want.empty()) {
          EXPECT_EQ(std::vector<uint8_t>(lazy.data(), lazy.data() + lazy.size()), want);
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(PermuteBytes, ABlobPermutedAlikeNamesOneContent) {
  const Blob source = Blob::take(std::vector<uint8_t>(24, 1));
  EXPECT_EQ(permuted_blob(source, 4, {2, 3}, {1, 0}).name(), permuted_blob(source, 4, {2, 3}, {1, 0}).name());
  EXPECT_NE(permuted_blob(source, 4, {2, 3}, {1, 0}).name(), permuted_blob(source, 4, {3, 2}, {1, 0}).name());
  EXPECT_NE(permuted_blob(source, 4, {2, 3}, {1, 0}).name(), permuted_blob(source, 2, {4, 3}, {1, 0}).name());
  EXPECT_NE(permuted_blob(source, 4, {2, 3}, {1, 0}).name(), source.name());
}

}  // namespace
}  // namespace gpuu::graph
