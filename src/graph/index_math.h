// Index arithmetic that the CPU kernels, the Vulkan lowering and the TOSA
// lowering/raising share: transpose permutations, where a slice reads its
// input, and flat positions for messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace gpuu::graph {

// Transpose perms (output dim i is input dim perm[i]): whether `perm` keeps
// every dim, and the one perm doing `first` then `then` (composed[i] = first[then[i]]).
bool is_identity_perm(const std::vector<int64_t>& perm);
std::vector<int64_t> compose_perms(const std::vector<int64_t>& first, const std::vector<int64_t>& then);
// The perm that undoes `perm` (inverse[perm[i]] = i); `perm` must be a permutation of 0..n-1.
std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm);
// Row-major elements of `esize` bytes of a tensor of `shape`, permuted by
// `perm` (out dim i = in dim perm[i]), written to `out`. Constants rearranged
// for a backend's layout (TOSA's OHWI weights) and read back by the program's
// loader use it.
void permute_bytes_into(uint8_t* out, const uint8_t* data, size_t esize, const Shape& shape,
                        const std::vector<int64_t>& perm);
std::vector<uint8_t> permute_bytes(const uint8_t* data, size_t esize, const Shape& shape,
                                   const std::vector<int64_t>& perm);
// `source` so permuted, made when read (a derived Blob): a loaded weight in
// another layout costs no host copy on its way to a device, and two loads of
// it name one content.
Blob permuted_blob(const Blob& source, size_t esize, const Shape& shape, const std::vector<int64_t>& perm);

// Where a slice node (resolved attributes) reads its input `x`: the element
// strides of each output dim and the flat offset of the first element. `out`
// is the output shape the registry inferred.
struct SliceReads {
  std::vector<int64_t> strides;
  int64_t base = 0;
};
SliceReads slice_reads(const AttrMap& attrs, const Shape& x, const Shape& out);

// Row-major flat index -> "[i0,i1,...]" within `shape`, for messages.
std::string position_string(const Shape& shape, int64_t flat);

}  // namespace gpuu::graph
