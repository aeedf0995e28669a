// Typed reads/writes of HostTensors and the index arithmetic the CPU kernels share.
#include "backends/cpu/kernel_support.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "base/half.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

using graph::DType;

// Results are computed in double and narrowed with static_cast<float>: with
// IEEE floats that rounds to nearest even and overflows to +-inf.
static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the CPU kernels assume IEEE 754 float and double");

namespace {

template <typename T>
void load_all(const HostTensor& t, std::vector<T>* out) {
  out->resize(static_cast<size_t>(t.numel()));
  if (!out->empty()) std::memcpy(out->data(), t.bytes.data(), out->size() * sizeof(T));
}

template <typename From, typename To>
std::vector<To> load_converted(const HostTensor& t) {
  std::vector<From> raw;
  load_all(t, &raw);
  return std::vector<To>(raw.begin(), raw.end());
}

template <typename T>
void store_all(const std::vector<T>& values, HostTensor* t) {
  if (!values.empty()) std::memcpy(t->bytes.data(), values.data(), values.size() * sizeof(T));
}

// Narrowing by way of the unsigned type: modular, never signed overflow.
template <typename T>
T wrap_to(int64_t v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<uint64_t>(v)));
}

template <size_t kSize>
void gather_fixed(const uint8_t* in, const std::vector<int64_t>& src, uint8_t* out) {
  for (size_t i = 0; i < src.size(); ++i) {
    std::memcpy(out + i * kSize, in + static_cast<size_t>(src[i]) * kSize, kSize);
  }
}

}  // namespace

std::vector<double> read_reals(const HostTensor& t) {
  if (t.dtype == DType::kF32) return load_converted<float, double>(t);
  std::vector<uint16_t> bits;
  load_all(t, &bits);
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = half_to_float(bits[i]);
  return out;
}

std::vector<int64_t> read_ints(const HostTensor& t) {
  switch (t.dtype) {
    case DType::kI32: return load_converted<int32_t, int64_t>(t);
    case DType::kI64: return load_converted<int64_t, int64_t>(t);
    case DType::kI8: return load_converted<int8_t, int64_t>(t);
    case DType::kI16: return load_converted<int16_t, int64_t>(t);
    default: {  // bool: any non-zero byte is true
      std::vector<int64_t> out(t.bytes.size());
      for (size_t i = 0; i < out.size(); ++i) out[i] = t.bytes[i] != 0;
      return out;
    }
  }
}

HostTensor make_reals(DType dtype, const graph::Shape& shape, const std::vector<double>& values) {
  HostTensor t = HostTensor::zeros(dtype, shape);
  if (dtype == DType::kF32) {
    store_all(std::vector<float>(values.begin(), values.end()), &t);
  } else {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = double_to_half(values[i]);
    store_all(bits, &t);
  }
  return t;
}

int64_t wrap_int(DType dtype, int64_t v) {
  switch (dtype) {
    case DType::kI32: return wrap_to<int32_t>(v);
    case DType::kI8: return wrap_to<int8_t>(v);
    case DType::kI16: return wrap_to<int16_t>(v);
    case DType::kBool: return v != 0;
    default: return v;
  }
}

HostTensor make_ints(DType dtype, const graph::Shape& shape, const std::vector<int64_t>& values) {
  HostTensor t = HostTensor::zeros(dtype, shape);
  switch (dtype) {
    case DType::kI32: {
      std::vector<int32_t> v(values.size());
      for (size_t i = 0; i < v.size(); ++i) v[i] = wrap_to<int32_t>(values[i]);
      store_all(v, &t);
      break;
    }
    case DType::kI8: {
      std::vector<int8_t> v(values.size());
      for (size_t i = 0; i < v.size(); ++i) v[i] = wrap_to<int8_t>(values[i]);
      store_all(v, &t);
      break;
    }
    case DType::kI16: {
      std::vector<int16_t> v(values.size());
      for (size_t i = 0; i < v.size(); ++i) v[i] = wrap_to<int16_t>(values[i]);
      store_all(v, &t);
      break;
    }
    case DType::kI64: store_all(values, &t); break;
    default:  // bool
      for (size_t i = 0; i < values.size(); ++i) t.bytes[i] = values[i] != 0;
      break;
  }
  return t;
}

std::vector<int64_t> strided_offsets(const graph::Shape& shape, const std::vector<int64_t>& strides, int64_t base) {
  std::vector<int64_t> out(static_cast<size_t>(graph::shape_numel(shape)));
  if (out.empty()) return out;
  // An odometer over the index; the offset is updated incrementally.
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = base;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = offset;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> broadcast_offsets(const graph::Shape& in, const graph::Shape& out) {
  // Align trailing dims; a dim of 1 (or a missing leading dim) repeats: stride 0.
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) strides[lead + d] = in_strides[d];
  }
  return strided_offsets(out, strides);
}

void gather_elements(const HostTensor& in, const std::vector<int64_t>& src, HostTensor* out) {
  const uint8_t* from = in.bytes.data();
  uint8_t* to = out->bytes.data();
  switch (in.element_size()) {
    case 1: gather_fixed<1>(from, src, to); break;
    case 2: gather_fixed<2>(from, src, to); break;
    case 4: gather_fixed<4>(from, src, to); break;
    default: gather_fixed<8>(from, src, to); break;
  }
}

std::vector<double> KernelArgs::input_reals_or(size_t i, int64_t count, double fill) const {
  return input(i) ? read_reals(*input(i)) : std::vector<double>(static_cast<size_t>(count), fill);
}

std::vector<int64_t> KernelArgs::input_ints_or(size_t i, int64_t count, int64_t fill) const {
  return input(i) ? read_ints(*input(i)) : std::vector<int64_t>(static_cast<size_t>(count), fill);
}

std::vector<int64_t> KernelArgs::broadcast_input(size_t i) const { return broadcast_offsets(x(i).shape, out[0].shape); }

size_t KernelArgs::axis_attr() const {
  return static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x(0).shape.size()));
}

HostTensor KernelArgs::zeroed_output() const { return HostTensor::zeros(out[0].dtype, out[0].shape); }

Status KernelArgs::emit(std::vector<HostTensor>* outputs, HostTensor result) const {
  outputs->push_back(std::move(result));
  return Status::Ok();
}

Status KernelArgs::emit_reals(std::vector<HostTensor>* outputs, const std::vector<double>& values) const {
  return emit(outputs, make_reals(out[0].dtype, out[0].shape, values));
}

Status KernelArgs::emit_ints(std::vector<HostTensor>* outputs, const std::vector<int64_t>& values) const {
  return emit(outputs, make_ints(out[0].dtype, out[0].shape, values));
}

}  // namespace gpuu::cpu
