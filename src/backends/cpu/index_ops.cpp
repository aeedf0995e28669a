// Indexing CPU kernels: gather (torch.gather) and index_select. Every index is
// checked before any element moves; a bad one is an error naming the node, the
// index value and where it sits, never an out-of-bounds read.
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

Status kernel_gather(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& index = a.x(1);
  const size_t axis = a.axis_attr();
  std::vector<int64_t> idx = read_ints(index);
  GPUU_RETURN_IF_ERROR(check_indices(a, idx, index.shape, static_cast<int64_t>(axis), x.shape[axis]));
  // out[i0..i(r-1)] = x[i0.., idx[i0..i(r-1)] at `axis`, ..]: the index tensor's own
  // coordinates address x off the axis (it may be smaller there), the values on it.
  std::vector<int64_t> strides = row_major_strides(x.shape);
  const int64_t axis_stride = strides[axis];
  strides[axis] = 0;
  std::vector<int64_t> src = strided_offsets(index.shape, strides);
  for (size_t i = 0; i < src.size(); ++i) src[i] += idx[i] * axis_stride;
  HostTensor result = a.zeroed_output();
  gather_elements(x, src, &result);
  return a.emit(outputs, std::move(result));
}

Status kernel_index_select(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& index = a.x(1);
  const graph::Value& out = a.out[0];
  const size_t axis = a.axis_attr();
  std::vector<int64_t> idx = read_ints(index);
  const int64_t dim = x.shape[axis];
  GPUU_RETURN_IF_ERROR(check_indices(a, idx, index.shape, static_cast<int64_t>(axis), dim));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  // Output [outer, len(index), inner] reads input [outer, idx[j], inner].
  std::vector<int64_t> src;
  src.reserve(static_cast<size_t>(graph::shape_numel(out.shape)));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : idx) {
      for (int64_t i = 0; i < inner; ++i) src.push_back((o * dim + j) * inner + i);
    }
  }
  HostTensor result = a.zeroed_output();
  gather_elements(x, src, &result);
  return a.emit(outputs, std::move(result));
}

}  // namespace

void add_index_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"gather", kernel_gather}, {"index_select", kernel_index_select}});
}

}  // namespace gpuu::cpu
