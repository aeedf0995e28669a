// HostTensor: a dense tensor in host memory (dtype, shape, contiguous row-major
// little-endian bytes), the currency of host execution: the runtime's host
// copies of tensors, the host executor's inputs and outputs (host_executor.h),
// the CPU reference kernels and their tests.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::backends {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "HostTensor keeps native bytes, which must be little-endian");

// The dtype a C++ element type stores as (f16 has no C++ type: use uint16_t
// bit patterns through from_halves, or from_doubles).
template <typename T>
constexpr graph::DType host_dtype_of() {
  if constexpr (std::is_same_v<T, float>) return graph::DType::kF32;
  if constexpr (std::is_same_v<T, int32_t>) return graph::DType::kI32;
  if constexpr (std::is_same_v<T, int64_t>) return graph::DType::kI64;
  if constexpr (std::is_same_v<T, int16_t>) return graph::DType::kI16;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                    std::is_same_v<T, int16_t> || std::is_same_v<T, int8_t>,
                "no dtype stores this C++ type");
  return graph::DType::kI8;
}
template <typename T>
struct DTypeOf {
  static constexpr graph::DType value = host_dtype_of<T>();
};

struct HostTensor {
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
  std::vector<uint8_t> bytes;  // numel * dtype_size(dtype); bool is one byte, 0 or 1

  // All-zero tensor (false for bool). The caller guarantees a valid shape
  // (graph::shape_problem(shape) is empty), as every inferred shape is.
  static HostTensor zeros(graph::DType dtype, graph::Shape shape);
  // All-zero tensor of a graph value's dtype and shape.
  static HostTensor like(const graph::Value& value) { return zeros(value.dtype, value.shape); }

  // Copies raw little-endian bytes; fails unless size == numel * dtype_size.
  static Result<HostTensor> from_bytes(graph::DType dtype, graph::Shape shape, const void* data, size_t size);
  static Result<HostTensor> from_blob(graph::DType dtype, graph::Shape shape, const Blob& blob) {
    return from_bytes(dtype, std::move(shape), blob.data(), blob.size());
  }
  // Typed data: float -> f32, int32_t -> i32, int64_t -> i64, int8_t -> i8.
  template <typename T>
  static Result<HostTensor> from_data(graph::Shape shape, const std::vector<T>& data) {
    static_assert(std::is_arithmetic_v<T>, "from_data takes float, int32_t, int64_t or int8_t");
    return from_bytes(DTypeOf<T>::value, std::move(shape), data.data(), data.size() * sizeof(T));
  }
  // f16 from raw IEEE half bit patterns.
  static Result<HostTensor> from_halves(graph::Shape shape, const std::vector<uint16_t>& bits) {
    return from_bytes(graph::DType::kF16, std::move(shape), bits.data(), bits.size() * sizeof(uint16_t));
  }
  // Any dtype from doubles, converted as the cast op converts: f16 rounds to
  // nearest even, integers truncate toward zero and saturate (NaN -> 0), bool is v != 0.
  static Result<HostTensor> from_doubles(graph::DType dtype, graph::Shape shape, const std::vector<double>& values);

  int64_t numel() const { return graph::shape_numel(shape); }
  size_t element_size() const { return graph::dtype_size(dtype); }
  // Ok when the shape is within the graph limits and bytes hold exactly numel
  // elements; otherwise an error that starts with `what` ("input 0 'x'").
  Status check(const std::string& what) const;
  // Same dtype and shape as `value`.
  bool matches(const graph::Value& value) const { return dtype == value.dtype && shape == value.shape; }
  // "f32[1,3,8,8]", for messages.
  std::string type_string() const;

  // Element `index` (row-major) as a double: f16 decoded, bool 0/1. i64
  // beyond 2^53 loses precision; meant for tests and messages.
  double element(int64_t index) const;
  std::vector<double> to_doubles() const;

  Blob to_blob() const { return Blob::copy_of(bytes.data(), bytes.size()); }
};

// "f32[2,3]" style description of a dtype and shape.
std::string type_string(graph::DType dtype, const graph::Shape& shape);

// Conversion of one double to dtype `dtype`'s little-endian bytes at `out`,
// with the rules of from_doubles (and of the cast op from a float source).
void store_double(graph::DType dtype, double value, uint8_t* out);

}  // namespace gpuu::backends
