// Index arithmetic shared across backends (see index_math.h).
#include "graph/index_math.h"

#include <algorithm>
#include <cstring>

#include "graph/op_registry.h"

namespace gpuu::graph {

bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> compose_perms(const std::vector<int64_t>& first, const std::vector<int64_t>& then) {
  std::vector<int64_t> composed(then.size());
  for (size_t i = 0; i < then.size(); ++i) composed[i] = first[static_cast<size_t>(then[i])];
  return composed;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

std::vector<uint8_t> permute_bytes(const uint8_t* data, size_t esize, const Shape& shape,
                                   const std::vector<int64_t>& perm) {
  std::vector<uint8_t> out(static_cast<size_t>(shape_numel(shape)) * esize);
  permute_bytes_into(out.data(), data, esize, shape, perm);
  return out;
}

Blob permuted_blob(const Blob& source, size_t esize, const Shape& shape, const std::vector<int64_t>& perm) {
  std::string how = "permute" + std::to_string(esize) + shape_to_string(shape) + "by";
  for (int64_t p : perm) how += std::to_string(p) + ".";
  return Blob::derived({source}, std::move(how), source.size(),
                       [esize, shape, perm](const std::vector<Blob>& sources, uint8_t* out) {
                         permute_bytes_into(out, sources[0].data(), esize, shape, perm);
                         sources[0].drop_file_pages();  // read once: not held beside what it made
                       });
}

namespace {

// One output row of `count` elements, the input read every `stride` elements.
template <typename T>
void copy_strided(uint8_t* out, const uint8_t* in, int64_t count, int64_t stride) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * sizeof(T), in + i * stride * sizeof(T), sizeof(T));
}

}  // namespace

void permute_bytes_into(uint8_t* out, const uint8_t* data, size_t esize, const Shape& shape,
                        const std::vector<int64_t>& perm) {
  const size_t rank = shape.size();
  const int64_t numel = shape_numel(shape);
  if (rank == 0 || numel == 0) {
    if (numel) std::memcpy(out, data, esize);
    return;
  }
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  // Row by row of the output's last dim (weights are rearranged as they are
  // uploaded, so this is on the load path).
  const int64_t row = out_shape[rank - 1], step = in_strides[static_cast<size_t>(perm[rank - 1])];
  std::vector<int64_t> idx(rank, 0);  // index into the output, its last dim 0
  for (int64_t o = 0; o < numel; o += row) {
    int64_t src = 0;
    for (size_t i = 0; i + 1 < rank; ++i) src += idx[i] * in_strides[static_cast<size_t>(perm[i])];
    uint8_t* dst = out + static_cast<size_t>(o) * esize;
    const uint8_t* from = data + static_cast<size_t>(src) * esize;
    switch (esize) {
      case 1: copy_strided<uint8_t>(dst, from, row, step); break;
      case 2: copy_strided<uint16_t>(dst, from, row, step); break;
      case 4: copy_strided<uint32_t>(dst, from, row, step); break;
      case 8: copy_strided<uint64_t>(dst, from, row, step); break;
      default:
        for (int64_t i = 0; i < row; ++i) std::memcpy(dst + i * esize, from + i * step * esize, esize);
    }
    for (size_t i = rank - 1; i-- > 0;) {
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
}

SliceReads slice_reads(const AttrMap& attrs, const Shape& x, const Shape& out) {
  std::vector<int64_t> axes = attr_ints(attrs, "axes"), starts = attr_ints(attrs, "starts"),
                       steps = attr_ints(attrs, "steps");
  SliceReads r{row_major_strides(x), 0};
  for (size_t i = 0; i < axes.size(); ++i) {
    auto d = static_cast<size_t>(normalize_axis(axes[i], x.size()));
    // Python: a negative start counts from the end, then it clamps into [0, dim].
    // The output length (ends included) was worked out by infer_slice the same way.
    int64_t dim = x[d];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    start = std::min(std::max<int64_t>(start, 0), dim);
    r.base += start * r.strides[d];
    // With one element or none along the axis its stride is never used, and a
    // huge step could overflow it.
    if (out[d] > 1) r.strides[d] *= steps[i];
  }
  return r;
}

std::string position_string(const Shape& shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shape_to_string(index);
}

}  // namespace gpuu::graph
