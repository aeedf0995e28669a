// What the CPU kernels share (internal to src/backends/cpu): the arguments a
// kernel receives, typed reads and writes of HostTensors, and index helpers.
//
// Numerics: f32 and f16 are read into doubles, computed in double and rounded
// once to the output dtype (f16 round-to-nearest-even); integers and bool are
// read into int64 and written back wrapping to the dtype's width (two's
// complement, as torch does for integer overflow).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/host_tensor.h"
#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::cpu {

// One node's call: inputs validated against the registry, outputs inferred.
struct KernelArgs {
  const graph::Node& node;
  const graph::AttrMap& attrs;                // defaults filled in (graph::resolve_attrs)
  const std::vector<const HostTensor*>& in;   // nullptr for an absent optional input
  const std::vector<graph::Value>& out;       // the inferred dtype and shape of each output
  const std::vector<std::string>& in_desc;    // "input 1 (index 'idx')", for messages

  const HostTensor* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  const HostTensor& x(size_t i) const { return *in[i]; }

  // kInvalidArgument "node '<name>' (<op>): <parts>", as the registry words errors.
  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): ", parts...);
  }
};

using Kernel = Status (*)(const KernelArgs& args, std::vector<HostTensor>* outputs);

inline bool is_float(graph::DType d) { return d == graph::DType::kF32 || d == graph::DType::kF16; }

// f32/f16 elements as doubles (exact).
std::vector<double> read_reals(const HostTensor& t);
// i8/i32/i64/bool elements as int64 (exact).
std::vector<int64_t> read_ints(const HostTensor& t);
// A float tensor (f32 or f16) from doubles, each rounded once to nearest(-even).
HostTensor make_reals(graph::DType dtype, const graph::Shape& shape, const std::vector<double>& values);
// An integer or bool tensor from int64s: integers wrap to the dtype's width, bool is v != 0.
HostTensor make_ints(graph::DType dtype, const graph::Shape& shape, const std::vector<int64_t>& values);
// int64 wrapped to an integer dtype's width (two's complement); bool: v != 0.
int64_t wrap_int(graph::DType dtype, int64_t v);

using graph::row_major_strides;  // the cpu kernels' name for it
// For every element of a tensor of shape `shape`, in row-major order:
// base + sum_d index[d] * strides[d]. Transpose, slice and broadcast are all this.
std::vector<int64_t> strided_offsets(const graph::Shape& shape, const std::vector<int64_t>& strides, int64_t base = 0);
// Flat indices into a tensor of shape `in` read as if broadcast (numpy rules) to
// `out`, one per element of `out`. The shapes must broadcast (checked by infer).
std::vector<int64_t> broadcast_offsets(const graph::Shape& in, const graph::Shape& out);
// out.bytes element i = in.bytes element src[i], for any element size; `out`
// must already have in's dtype and src.size() elements.
void gather_elements(const HostTensor& in, const std::vector<int64_t>& src, HostTensor* out);

// The kernels, by family; each handles every op and dtype of its family that
// the registry accepts. run_node looks them up by op name.
Status kernel_unary(const KernelArgs& args, std::vector<HostTensor>* outputs);         // elementwise.cpp
Status kernel_binary(const KernelArgs& args, std::vector<HostTensor>* outputs);        // (arithmetic)
Status kernel_compare(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_predicate(const KernelArgs& args, std::vector<HostTensor>* outputs);     // isnan, isinf, logical_not
Status kernel_clamp(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_where(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_cast(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_matmul(const KernelArgs& args, std::vector<HostTensor>* outputs);        // linalg.cpp
Status kernel_linear(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_conv2d(const KernelArgs& args, std::vector<HostTensor>* outputs);        // conv_pool.cpp
Status kernel_avg_pool2d(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_max_pool2d(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_reduce(const KernelArgs& args, std::vector<HostTensor>* outputs);        // reduce_norm.cpp
Status kernel_arg_reduce(const KernelArgs& args, std::vector<HostTensor>* outputs);    // argmax, argmin
Status kernel_cumsum(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_softmax(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_layer_norm(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_transpose(const KernelArgs& args, std::vector<HostTensor>* outputs);     // shape_ops.cpp
Status kernel_reshape(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_slice(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_concat(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_pad(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_expand(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_flip(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_conv3d(const KernelArgs& args, std::vector<HostTensor>* outputs);        // spatial.cpp
Status kernel_conv_transpose2d(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_avg_pool3d(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_max_pool3d(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_resize(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_gather(const KernelArgs& args, std::vector<HostTensor>* outputs);        // index_ops.cpp
Status kernel_index_select(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_rescale(const KernelArgs& args, std::vector<HostTensor>* outputs);         // int_quant.cpp
Status kernel_conv2d_int(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_matmul_int(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_avg_pool2d_int(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_table_lookup(const KernelArgs& args, std::vector<HostTensor>* outputs);
Status kernel_int_shift(const KernelArgs& args, std::vector<HostTensor>* outputs);  // mul_shift, arithmetic_right_shift

}  // namespace gpuu::cpu
