// Indexing CPU kernels: gather (torch.gather), index_select, and the
// scatter-style writes scatter and index_put. Every index is checked before
// any element moves; a bad one is an error naming the node, the index value
// and where it sits, never an out-of-bounds access.
#include <cmath>
#include <cstring>

#include "backends/cpu/kernel_support.h"
#include "graph/index_math.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

namespace {

// Ok when every value of `index` lies in [0, dim); otherwise the first bad one.
Status check_indices(const KernelArgs& a, const std::vector<int64_t>& index, const graph::Shape& index_shape,
                     int64_t axis, int64_t dim) {
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] >= 0 && index[i] < dim) continue;
    return a.fail(a.in_desc[1], " holds ", index[i], " at ",
                  graph::position_string(index_shape, static_cast<int64_t>(i)), ", out of range for axis ", axis,
                  " of ", a.in_desc[0], " ", a.x(0).type_string(), " (valid: ",
                  dim ? "0.." + std::to_string(dim - 1) : std::string("none, the axis is empty"),
                  index[i] < 0 ? "; negative indices are not accepted)" : ")");
  }
  return Status::Ok();
}

// Where in x each element of the index points (gather, scatter): the index
// tensor's own coordinates address x off the axis (it may be smaller there),
// its values on it. Every index is checked first.
Result<std::vector<int64_t>> element_positions(const KernelArgs& a) {
  const HostTensor& x = a.x(0);
  const HostTensor& index = a.x(1);
  const size_t axis = a.axis_attr();
  std::vector<int64_t> idx = read_ints(index);
  GPUU_RETURN_IF_ERROR(check_indices(a, idx, index.shape, static_cast<int64_t>(axis), x.shape[axis]));
  std::vector<int64_t> strides = row_major_strides(x.shape);
  const int64_t axis_stride = strides[axis];
  strides[axis] = 0;
  std::vector<int64_t> at = strided_offsets(index.shape, strides);
  for (size_t i = 0; i < at.size(); ++i) at[i] += idx[i] * axis_stride;
  return at;
}

// Where in x each element of [outer, len(index), inner] lies (index_select's
// output, index_put's values): x [outer, idx[j], inner]. Every index is checked first.
Result<std::vector<int64_t>> row_positions(const KernelArgs& a) {
  const HostTensor& x = a.x(0);
  const HostTensor& index = a.x(1);
  const size_t axis = a.axis_attr();
  std::vector<int64_t> idx = read_ints(index);
  const int64_t dim = x.shape[axis];
  GPUU_RETURN_IF_ERROR(check_indices(a, idx, index.shape, static_cast<int64_t>(axis), dim));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  std::vector<int64_t> at;
  at.reserve(static_cast<size_t>(outer * static_cast<int64_t>(idx.size()) * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : idx) {
      for (int64_t i = 0; i < inner; ++i) at.push_back((o * dim + j) * inner + i);
    }
  }
  return at;
}

// gather: out[p] = x[p with p[axis] replaced by index[p]].
Status kernel_gather(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> src, element_positions(a));
  HostTensor result = a.zeroed_output();
  gather_elements(a.x(0), src, &result);
  return a.emit(outputs, std::move(result));
}

// index_select: output [outer, len(index), inner] reads x [outer, idx[j], inner].
Status kernel_index_select(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> src, row_positions(a));
  HostTensor result = a.zeroed_output();
  gather_elements(a.x(0), src, &result);
  return a.emit(outputs, std::move(result));
}

// ---- scatter and index_put --------------------------------------------------

// How an output element combines with the updates landing on it, in update
// order (row-major over the updates): floats in double, integers in int64
// wrapped to the dtype at the end (products wrap mod 2^64 on the way, which
// the final wrap keeps exact).
template <typename T>
T combine(const std::string& reduce, T acc, T v) {
  if (reduce == "sum" || reduce == "mean") return acc + v;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(acc) || std::isnan(v)) return std::isnan(acc) ? acc : v;  // NaN wins, as in torch
    if (reduce == "prod") return acc * v;
  } else {
    if (reduce == "prod") return static_cast<T>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
  }
  return reduce == "amax" ? std::max(acc, v) : std::min(acc, v);
}

// out = x, then update u combined into out[dest[u]] ("none": written; with
// duplicate destinations the last update wins, where torch leaves it undefined).
template <typename T>
std::vector<T> reduce_into(const KernelArgs& a, std::vector<T> out, const std::vector<T>& updates,
                           const std::vector<int64_t>& dest) {
  const std::string reduce = graph::attr_string(a.attrs, "reduce");
  const bool include_self = graph::attr_int(a.attrs, "include_self") != 0;
  std::vector<int64_t> count(out.size(), 0);  // values combined so far; 0: untouched
  for (size_t u = 0; u < dest.size(); ++u) {
    const auto d = static_cast<size_t>(dest[u]);
    if (count[d] == 0 && !include_self) {
      out[d] = updates[u];
      count[d] = 1;
      continue;
    }
    if (count[d] == 0) count[d] = 1;  // x's own value
    out[d] = combine(reduce, out[d], updates[u]);
    ++count[d];
  }
  if (reduce == "mean") {
    for (size_t d = 0; d < out.size(); ++d) {
      if (count[d] == 0) continue;
      if constexpr (std::is_floating_point_v<T>) {
        out[d] /= static_cast<T>(count[d]);
      } else {  // torch floors an integer mean of the (wrapped) sum
        T sum = wrap_int(a.out[0].dtype, out[d]);
        out[d] = sum / count[d] - ((sum % count[d] != 0 && sum < 0) ? 1 : 0);
      }
    }
  }
  return out;
}

// Result = x with each update (input 2) placed or combined at dest[u].
Status scatter_into(const KernelArgs& a, const std::vector<int64_t>& dest, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& updates = a.x(2);
  if (graph::attr_string(a.attrs, "reduce") == "none") {
    HostTensor result = x;
    const size_t esize = x.element_size();
    for (size_t u = 0; u < dest.size(); ++u) {
      std::memcpy(result.bytes.data() + static_cast<size_t>(dest[u]) * esize, updates.bytes.data() + u * esize, esize);
    }
    return a.emit(outputs, std::move(result));
  }
  if (is_float(x.dtype)) return a.emit_reals(outputs, reduce_into(a, read_reals(x), read_reals(updates), dest));
  return a.emit_ints(outputs, reduce_into(a, read_ints(x), read_ints(updates), dest));
}

// scatter: src[p] lands on x at p with p[axis] replaced by index[p].
Status kernel_scatter(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> dest, element_positions(a));
  return scatter_into(a, dest, outputs);
}

// index_put: values' row j along the axis lands on x's row index[j].
Status kernel_index_put(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  GPUU_ASSIGN_OR_RETURN(std::vector<int64_t> dest, row_positions(a));
  return scatter_into(a, dest, outputs);
}

}  // namespace

void add_index_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"gather", kernel_gather}, {"index_select", kernel_index_select}});
  table.insert(table.end(), {{"scatter", kernel_scatter}, {"index_put", kernel_index_put}});
}

}  // namespace gpuu::cpu
