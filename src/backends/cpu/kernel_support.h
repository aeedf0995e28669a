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

#include "backends/cpu/cpu_kernels.h"
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
  // Optional input i read exactly, or `count` copies of `fill` where it is absent
  // (a bias of zeros, a layer_norm weight of ones).
  std::vector<double> input_reals_or(size_t i, int64_t count, double fill) const;
  std::vector<int64_t> input_ints_or(size_t i, int64_t count, int64_t fill) const;
  // For each element of out[0], the flat index input i reads there, broadcast (numpy rules).
  std::vector<int64_t> broadcast_input(size_t i) const;
  // The "axis" attribute made non-negative against input 0's rank.
  size_t axis_attr() const;
  // out[0] as a tensor of zeros, for a kernel that fills it in place.
  HostTensor zeroed_output() const;

  // kInvalidArgument "node '<name>' (<op>): <parts>", as the registry words errors.
  template <typename... Parts>
  Status fail(const Parts&... parts) const {
    return err(StatusCode::kInvalidArgument, "node '", node.name, "' (", node.op, "): ", parts...);
  }

  // A single-output kernel's last step: its result appended to `outputs`, then Ok.
  // emit_reals/emit_ints first make it at out[0]'s inferred dtype and shape.
  Status emit(std::vector<HostTensor>* outputs, HostTensor result) const;
  Status emit_reals(std::vector<HostTensor>* outputs, const std::vector<double>& values) const;
  Status emit_ints(std::vector<HostTensor>* outputs, const std::vector<int64_t>& values) const;
};


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

// The families: each file registers the ops it implements beside their
// kernels, so adding a kernel touches that file alone; cpu_op_kernels()
// (cpu_kernels.cpp) gathers them.
void add_elementwise_kernels(std::vector<CpuOpKernel>& table);  // elementwise.cpp
void add_linalg_kernels(std::vector<CpuOpKernel>& table);       // linalg.cpp
void add_conv_pool_kernels(std::vector<CpuOpKernel>& table);    // conv_pool.cpp
void add_spatial_kernels(std::vector<CpuOpKernel>& table);      // spatial.cpp
void add_reduce_norm_kernels(std::vector<CpuOpKernel>& table);  // reduce_norm.cpp
void add_shape_kernels(std::vector<CpuOpKernel>& table);        // shape_ops.cpp
void add_index_kernels(std::vector<CpuOpKernel>& table);        // index_ops.cpp
void add_int_quant_kernels(std::vector<CpuOpKernel>& table);    // int_quant.cpp

}  // namespace gpuu::cpu
