// HostTensor construction, checks and element access.
#include "backends/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "base/half.h"

namespace gpuu::backends {

using graph::DType;

std::string type_string(DType dtype, const graph::Shape& shape) {
  return std::string(graph::dtype_name(dtype)) + graph::shape_to_string(shape);
}

std::string HostTensor::type_string() const { return backends::type_string(dtype, shape); }

HostTensor HostTensor::zeros(DType dtype, graph::Shape shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(static_cast<size_t>(t.numel()) * graph::dtype_size(dtype), 0);
  return t;
}

Result<HostTensor> HostTensor::from_bytes(DType dtype, graph::Shape shape, const void* data, size_t size) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  std::string why = graph::shape_problem(t.shape);
  if (!why.empty()) {
    return err(StatusCode::kInvalidArgument, "tensor shape ", graph::shape_to_string(t.shape), " is not valid: ", why);
  }
  size_t expected = static_cast<size_t>(t.numel()) * graph::dtype_size(dtype);
  if (size != expected) {
    return err(StatusCode::kInvalidArgument, "tensor ", t.type_string(), " needs ", expected, " bytes, got ", size);
  }
  const auto* begin = static_cast<const uint8_t*>(data);
  t.bytes.assign(begin, begin + size);
  return t;
}

Result<HostTensor> HostTensor::from_doubles(DType dtype, graph::Shape shape, const std::vector<double>& values) {
  std::string why = graph::shape_problem(shape);
  if (!why.empty()) {
    return err(StatusCode::kInvalidArgument, "tensor shape ", graph::shape_to_string(shape), " is not valid: ", why);
  }
  if (static_cast<int64_t>(values.size()) != graph::shape_numel(shape)) {
    return err(StatusCode::kInvalidArgument, "tensor ", backends::type_string(dtype, shape), " needs ",
               graph::shape_numel(shape), " values, got ", values.size());
  }
  HostTensor t = zeros(dtype, std::move(shape));
  size_t size = t.element_size();
  for (size_t i = 0; i < values.size(); ++i) store_double(dtype, values[i], t.bytes.data() + i * size);
  return t;
}

Status HostTensor::check(const std::string& what) const {
  if (static_cast<int>(dtype) >= graph::kDTypeCount) {
    return err(StatusCode::kInvalidArgument, what, " has an unknown dtype (", static_cast<int>(dtype), ")");
  }
  std::string why = graph::shape_problem(shape);
  if (!why.empty()) {
    return err(StatusCode::kInvalidArgument, what, " has a bad shape ", graph::shape_to_string(shape), ": ", why);
  }
  size_t expected = static_cast<size_t>(numel()) * element_size();
  if (bytes.size() != expected) {
    return err(StatusCode::kInvalidArgument, what, " (", type_string(), ") holds ", bytes.size(), " bytes, but needs ",
               expected);
  }
  return Status::Ok();
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Truncates toward zero and saturates into [lo, hi]; NaN becomes 0. (C++
// leaves out-of-range float->int conversion undefined, so it is never done.)
int64_t saturating_trunc(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  // The bounds convert to doubles exactly (int64's max rounds up to 2^63, itself
  // out of range), so comparing first keeps the conversion below in range.
  if (v >= static_cast<double>(hi)) return hi;
  if (v <= static_cast<double>(lo)) return lo;
  return static_cast<int64_t>(v);  // truncates toward zero
}

}  // namespace

void store_double(DType dtype, double value, uint8_t* out) {
  switch (dtype) {
    case DType::kF32: store<float>(out, static_cast<float>(value)); return;
    case DType::kF16: store<uint16_t>(out, double_to_half(value)); return;
    case DType::kI32:
      store<int32_t>(out, static_cast<int32_t>(saturating_trunc(value, std::numeric_limits<int32_t>::min(),
                                                                std::numeric_limits<int32_t>::max())));
      return;
    case DType::kI64:
      store<int64_t>(out, saturating_trunc(value, std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::max()));
      return;
    case DType::kI8:
      store<int8_t>(out, static_cast<int8_t>(saturating_trunc(value, std::numeric_limits<int8_t>::min(),
                                                              std::numeric_limits<int8_t>::max())));
      return;
    case DType::kI16:
      store<int16_t>(out, static_cast<int16_t>(saturating_trunc(value, std::numeric_limits<int16_t>::min(),
                                                                std::numeric_limits<int16_t>::max())));
      return;
    case DType::kBool: store<uint8_t>(out, value != 0.0 ? 1 : 0); return;  // NaN != 0: true, as in torch
  }
}

double HostTensor::element(int64_t index) const {
  const uint8_t* p = bytes.data() + static_cast<size_t>(index) * element_size();
  switch (dtype) {
    case DType::kF32: return load<float>(p);
    case DType::kF16: return half_to_float(load<uint16_t>(p));
    case DType::kI32: return load<int32_t>(p);
    case DType::kI64: return static_cast<double>(load<int64_t>(p));
    case DType::kI8: return load<int8_t>(p);
    case DType::kI16: return load<int16_t>(p);
    case DType::kBool: return *p != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

std::vector<double> HostTensor::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = element(static_cast<int64_t>(i));
  return out;
}

}  // namespace gpuu::backends
