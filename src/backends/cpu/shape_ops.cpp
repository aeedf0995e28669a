// Data-movement CPU kernels (any dtype, moved as raw elements): transpose,
// reshape, slice (python semantics), concat, pad (constant, reflect,
// replicate, circular), expand and flip.
#include <algorithm>
#include <cstring>
#include <string>

#include "backends/cpu/kernel_support.h"
#include "graph/index_math.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

namespace {

Status kernel_transpose(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> perm = graph::attr_ints(a.attrs, "perm");
  std::vector<int64_t> in_strides = row_major_strides(x.shape);
  // Output dim i walks input dim perm[i].
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[static_cast<size_t>(perm[i])];
  HostTensor result = a.zeroed_output();
  gather_elements(x, strided_offsets(out.shape, strides), &result);
  return a.emit(outputs, std::move(result));
}

Status kernel_reshape(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  HostTensor result = a.x(0);  // row-major bytes are already in the new order
  result.shape = a.out[0].shape;
  return a.emit(outputs, std::move(result));
}

Status kernel_slice(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  graph::SliceReads reads = graph::slice_reads(a.attrs, x.shape, out.shape);
  HostTensor result = a.zeroed_output();
  gather_elements(x, strided_offsets(out.shape, reads.strides, reads.base), &result);
  return a.emit(outputs, std::move(result));
}

Status kernel_concat(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const graph::Value& out = a.out[0];
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(a.attrs, "axis"), out.shape.size()));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= out.shape[d];
  for (size_t d = axis + 1; d < out.shape.size(); ++d) inner *= out.shape[d];
  HostTensor result = a.zeroed_output();
  const size_t esize = result.element_size();
  uint8_t* dst = result.bytes.data();
  // Each outer index takes one contiguous chunk from every input in turn.
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : a.in) {
      auto chunk = static_cast<size_t>(t->shape[axis] * inner) * esize;
      if (chunk == 0) continue;
      std::memcpy(dst, t->bytes.data() + static_cast<size_t>(o) * chunk, chunk);
      dst += chunk;
    }
  }
  return a.emit(outputs, std::move(result));
}

// The input index that output index `o` (of a dim padded by `lead` in front)
// reads in a reflect/replicate/circular pad; the registry keeps every pad
// within one reflection or wrap.
int64_t pad_source(const std::string& mode, int64_t o, int64_t lead, int64_t size) {
  int64_t i = o - lead;
  if (mode == "replicate") return std::min(std::max<int64_t>(i, 0), size - 1);
  if (mode == "circular") return ((i % size) + size) % size;
  if (i < 0) return -i;  // reflect
  if (i >= size) return 2 * (size - 1) - i;
  return i;
}

Status kernel_pad(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> pads = graph::attr_ints(a.attrs, "pads");
  std::string mode = graph::attr_string(a.attrs, "mode", "constant");
  if (mode != "constant") {
    // Every output element reads one input element: an odometer over the output.
    std::vector<int64_t> in_strides = row_major_strides(x.shape);
    std::vector<int64_t> src(static_cast<size_t>(graph::shape_numel(out.shape)));
    std::vector<int64_t> index(out.shape.size(), 0);
    for (size_t i = 0; i < src.size(); ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < index.size(); ++d) off += pad_source(mode, index[d], pads[2 * d], x.shape[d]) * in_strides[d];
      src[i] = off;
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < out.shape[d]) break;
        index[d] = 0;
      }
    }
    HostTensor result = a.zeroed_output();
    gather_elements(x, src, &result);
    return a.emit(outputs, std::move(result));
  }
  HostTensor result = a.zeroed_output();
  const size_t esize = result.element_size();
  // The fill converts as cast does (integers truncate toward zero and saturate).
  uint8_t fill[8];
  store_double(out.dtype, graph::attr_float(a.attrs, "value", 0.0), fill);
  for (size_t i = 0; i < result.bytes.size(); i += esize) std::memcpy(result.bytes.data() + i, fill, esize);
  // Where each input element lands: the output strides, shifted by the leading pads.
  std::vector<int64_t> out_strides = row_major_strides(out.shape);
  int64_t base = 0;
  for (size_t d = 0; d < x.shape.size(); ++d) base += pads[2 * d] * out_strides[d];
  std::vector<int64_t> dst = strided_offsets(x.shape, out_strides, base);
  for (size_t i = 0; i < dst.size(); ++i) {
    std::memcpy(result.bytes.data() + static_cast<size_t>(dst[i]) * esize, x.bytes.data() + i * esize, esize);
  }
  return a.emit(outputs, std::move(result));
}

Status kernel_expand(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  HostTensor result = a.zeroed_output();
  gather_elements(a.x(0), a.broadcast_input(0), &result);
  return a.emit(outputs, std::move(result));
}

Status kernel_flip(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  std::vector<int64_t> strides = row_major_strides(x.shape);
  int64_t base = 0;
  // A flipped axis starts at its last element and walks backwards.
  for (int64_t axis : graph::attr_ints(a.attrs, "axes")) {
    auto d = static_cast<size_t>(graph::normalize_axis(axis, x.shape.size()));
    if (x.shape[d] == 0) continue;
    base += (x.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  HostTensor result = HostTensor::zeros(x.dtype, x.shape);
  gather_elements(x, strided_offsets(x.shape, strides, base), &result);
  return a.emit(outputs, std::move(result));
}

}  // namespace

void add_shape_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"transpose", kernel_transpose}, {"reshape", kernel_reshape}, {"slice", kernel_slice},
                             {"concat", kernel_concat}, {"pad", kernel_pad}, {"expand", kernel_expand},
                             {"flip", kernel_flip}});
}

}  // namespace gpuu::cpu
