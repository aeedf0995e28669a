// Elementwise CPU kernels: unary math, broadcasting binary arithmetic and
// comparisons, clamp, where and cast.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backends/cpu/kernel_support.h"
#include "base/half.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

using graph::DType;

namespace {

using RealFn = double (*)(double);

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  const double k = 0.79788456080286535588;  // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// The real-valued function of a unary op; nullptr when the op is not unary.
RealFn real_unary(const std::string& op, const graph::AttrMap& attrs) {
  if (op == "abs") return [](double x) { return std::fabs(x); };
  if (op == "neg") return [](double x) { return -x; };
  if (op == "exp") return [](double x) { return std::exp(x); };
  if (op == "log") return [](double x) { return std::log(x); };
  if (op == "sqrt") return [](double x) { return std::sqrt(x); };
  if (op == "rsqrt") return [](double x) { return 1.0 / std::sqrt(x); };
  if (op == "reciprocal") return [](double x) { return 1.0 / x; };
  if (op == "sin") return [](double x) { return std::sin(x); };
  if (op == "cos") return [](double x) { return std::cos(x); };
  if (op == "tanh") return [](double x) { return std::tanh(x); };
  if (op == "sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (op == "relu") return [](double x) { return x < 0.0 ? 0.0 : x; };  // NaN passes through, as in torch
  if (op == "erf") return [](double x) { return std::erf(x); };
  if (op == "floor") return [](double x) { return std::floor(x); };
  if (op == "ceil") return [](double x) { return std::ceil(x); };
  if (op == "tan") return [](double x) { return std::tan(x); };
  if (op == "asin") return [](double x) { return std::asin(x); };
  if (op == "acos") return [](double x) { return std::acos(x); };
  if (op == "atan") return [](double x) { return std::atan(x); };
  if (op == "sinh") return [](double x) { return std::sinh(x); };
  if (op == "cosh") return [](double x) { return std::cosh(x); };
  if (op == "asinh") return [](double x) { return std::asinh(x); };
  if (op == "acosh") return [](double x) { return std::acosh(x); };
  if (op == "atanh") return [](double x) { return std::atanh(x); };
  if (op == "expm1") return [](double x) { return std::expm1(x); };
  if (op == "log1p") return [](double x) { return std::log1p(x); };
  // The default rounding mode is to nearest, ties to even: torch.round's rule.
  if (op == "round") return [](double x) { return std::nearbyint(x); };
  if (op == "trunc") return [](double x) { return std::trunc(x); };
  // NaN stays NaN and zeros give +0, as in torch.
  if (op == "sign") return [](double x) { return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0)); };
  if (op == "gelu") return graph::attr_string(attrs, "approximate", "none") == "tanh" ? gelu_tanh : gelu_exact;
  return nullptr;
}

using IntFn = int64_t (*)(int64_t);

// Integer unaries (i32/i8 in the registry). Results wrap on store, so abs and
// neg of the most negative value give that value back, as in torch.
IntFn int_unary(const std::string& op) {
  if (op == "abs") return [](int64_t x) { return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x; };
  if (op == "neg") return [](int64_t x) { return static_cast<int64_t>(0 - static_cast<uint64_t>(x)); };
  if (op == "relu") return [](int64_t x) { return x < 0 ? int64_t{0} : x; };
  if (op == "sign") return [](int64_t x) { return static_cast<int64_t>((x > 0) - (x < 0)); };
  if (op == "bitwise_not") return [](int64_t x) { return ~x; };  // bool: kernel_unary handles it
  return nullptr;
}

int64_t wrapping(uint64_t v) { return static_cast<int64_t>(v); }

// Python's %: the result takes the divisor's sign.
double float_remainder(double p, double q) {
  double r = std::fmod(p, q);
  if (r != 0.0 && (r < 0.0) != (q < 0.0)) r += q;
  return r;
}

// Integer remainder / fmod / floor_divide. A zero divisor gives 0 (torch
// raises; a GPU kernel cannot, so gpuu defines it). INT_MIN / -1 wraps to
// INT_MIN (its remainders are 0); i32 operands never reach that case here,
// their quotient 2^31 wraps on store.
int64_t int_division(const std::string& op, int64_t p, int64_t q) {
  if (q == 0) return 0;
  if (q == -1) return op == "floor_divide" ? wrapping(0 - static_cast<uint64_t>(p)) : 0;
  int64_t quot = p / q, rem = p % q;  // C: truncation, remainder has p's sign
  bool adjust = rem != 0 && ((rem < 0) != (q < 0));
  if (op == "fmod") return rem;
  if (op == "remainder") return adjust ? rem + q : rem;
  return adjust ? quot - 1 : quot;
}

}  // namespace

Status kernel_unary(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  if (is_float(x.dtype)) {
    RealFn fn = real_unary(a.node.op, a.attrs);
    if (!fn) return a.fail("no CPU kernel for this op");
    std::vector<double> v = read_reals(x);
    for (double& e : v) e = fn(e);
    outputs->push_back(make_reals(out.dtype, out.shape, v));
    return Status::Ok();
  }
  IntFn fn = int_unary(a.node.op);
  if (!fn) return a.fail("no CPU kernel for ", graph::dtype_name(x.dtype), " inputs");
  std::vector<int64_t> v = read_ints(x);
  if (x.dtype == DType::kBool && a.node.op == "bitwise_not") fn = [](int64_t b) { return static_cast<int64_t>(b == 0); };
  for (int64_t& e : v) e = fn(e);
  outputs->push_back(make_ints(out.dtype, out.shape, v));
  return Status::Ok();
}

Status kernel_binary(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& y = a.x(1);
  const graph::Value& out = a.out[0];
  const std::string& op = a.node.op;
  std::vector<int64_t> ix = broadcast_offsets(x.shape, out.shape);
  std::vector<int64_t> iy = broadcast_offsets(y.shape, out.shape);
  size_t n = ix.size();
  if (is_float(x.dtype)) {
    std::vector<double> vx = read_reals(x), vy = read_reals(y), r(n);
    auto apply = [&](auto fn) {
      for (size_t i = 0; i < n; ++i) r[i] = fn(vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]);
    };
    if (op == "add") {
      apply([](double p, double q) { return p + q; });
    } else if (op == "sub") {
      apply([](double p, double q) { return p - q; });
    } else if (op == "mul") {
      apply([](double p, double q) { return p * q; });
    } else if (op == "div") {
      apply([](double p, double q) { return p / q; });
    } else if (op == "pow") {
      apply([](double p, double q) { return std::pow(p, q); });
    } else if (op == "maximum") {  // NaN in either input gives NaN, as in torch
      apply([](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : (p > q ? p : q); });
    } else if (op == "minimum") {
      apply([](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : (p < q ? p : q); });
    } else if (op == "atan2") {
      apply([](double p, double q) { return std::atan2(p, q); });
    } else if (op == "fmod") {
      apply([](double p, double q) { return std::fmod(p, q); });
    } else if (op == "remainder") {
      apply([](double p, double q) { return float_remainder(p, q); });
    } else if (op == "floor_divide") {
      apply([](double p, double q) { return std::floor(p / q); });
    } else {
      return a.fail("no CPU kernel for this op");
    }
    outputs->push_back(make_reals(out.dtype, out.shape, r));
    return Status::Ok();
  }
  // Integers: add/sub/mul wrap (computed on uint64, then narrowed on store).
  std::vector<int64_t> vx = read_ints(x), vy = read_ints(y), r(n);
  auto apply = [&](auto fn) {
    for (size_t i = 0; i < n; ++i) r[i] = fn(vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]);
  };
  if (op == "add") {
    apply([](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) + static_cast<uint64_t>(q)); });
  } else if (op == "sub") {
    apply([](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) - static_cast<uint64_t>(q)); });
  } else if (op == "mul") {
    apply([](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); });
  } else if (op == "maximum") {
    apply([](int64_t p, int64_t q) { return p > q ? p : q; });
  } else if (op == "minimum") {
    apply([](int64_t p, int64_t q) { return p < q ? p : q; });
  } else if (op == "remainder" || op == "fmod" || op == "floor_divide") {
    for (size_t i = 0; i < n; ++i) {
      r[i] = int_division(op, vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]);
    }
  } else if (op == "bitwise_and") {
    apply([](int64_t p, int64_t q) { return p & q; });
  } else if (op == "bitwise_or") {
    apply([](int64_t p, int64_t q) { return p | q; });
  } else if (op == "bitwise_xor") {
    apply([](int64_t p, int64_t q) { return p ^ q; });
  } else if (op == "div") {
    // Integer division truncates toward zero, as in C. The registry admits div
    // only for f32/f16 today; this keeps the oracle ready should that widen.
    for (size_t i = 0; i < n; ++i) {
      int64_t p = vx[static_cast<size_t>(ix[i])], q = vy[static_cast<size_t>(iy[i])];
      if (q == 0) return a.fail("integer division by zero at output element ", i);
      // INT64_MIN / -1 is the one quotient that overflows; it wraps like the others.
      r[i] = (p == std::numeric_limits<int64_t>::min() && q == -1) ? p : p / q;
    }
  } else {
    return a.fail("no CPU kernel for ", graph::dtype_name(x.dtype), " inputs");
  }
  outputs->push_back(make_ints(out.dtype, out.shape, r));
  return Status::Ok();
}

Status kernel_compare(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& y = a.x(1);
  const graph::Value& out = a.out[0];
  const std::string& op = a.node.op;
  std::vector<int64_t> ix = broadcast_offsets(x.shape, out.shape);
  std::vector<int64_t> iy = broadcast_offsets(y.shape, out.shape);
  HostTensor result = HostTensor::zeros(DType::kBool, out.shape);
  // Both dtypes read exactly: floats as doubles (NaN compares unequal to all), integers as int64.
  auto run = [&](const auto& vx, const auto& vy) -> Status {
    auto compare = [&](auto fn) {
      for (size_t i = 0; i < ix.size(); ++i) {
        result.bytes[i] = fn(vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]) ? 1 : 0;
      }
    };
    if (op == "equal") {
      compare([](auto p, auto q) { return p == q; });
    } else if (op == "not_equal") {
      compare([](auto p, auto q) { return p != q; });
    } else if (op == "less") {
      compare([](auto p, auto q) { return p < q; });
    } else if (op == "less_equal") {
      compare([](auto p, auto q) { return p <= q; });
    } else if (op == "greater") {
      compare([](auto p, auto q) { return p > q; });
    } else if (op == "greater_equal") {
      compare([](auto p, auto q) { return p >= q; });
    } else if (op == "logical_and") {  // nonzero is true (NaN included)
      compare([](auto p, auto q) { return p != 0 && q != 0; });
    } else if (op == "logical_or") {
      compare([](auto p, auto q) { return p != 0 || q != 0; });
    } else if (op == "logical_xor") {
      compare([](auto p, auto q) { return (p != 0) != (q != 0); });
    } else {
      return a.fail("no CPU kernel for this op");
    }
    return Status::Ok();
  };
  if (is_float(x.dtype)) {
    GPUU_RETURN_IF_ERROR(run(read_reals(x), read_reals(y)));
  } else {
    GPUU_RETURN_IF_ERROR(run(read_ints(x), read_ints(y)));
  }
  outputs->push_back(std::move(result));
  return Status::Ok();
}

Status kernel_predicate(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const std::string& op = a.node.op;
  HostTensor result = HostTensor::zeros(DType::kBool, a.out[0].shape);
  if (is_float(x.dtype)) {
    std::vector<double> v = read_reals(x);
    for (size_t i = 0; i < v.size(); ++i) {
      bool r = op == "isnan" ? std::isnan(v[i]) : op == "isinf" ? std::isinf(v[i]) : v[i] == 0.0;
      result.bytes[i] = r ? 1 : 0;
    }
  } else {
    if (op != "logical_not") return a.fail("no CPU kernel for ", graph::dtype_name(x.dtype), " inputs");
    std::vector<int64_t> v = read_ints(x);
    for (size_t i = 0; i < v.size(); ++i) result.bytes[i] = v[i] == 0 ? 1 : 0;
  }
  outputs->push_back(std::move(result));
  return Status::Ok();
}

Status kernel_clamp(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  bool has_min = graph::has_attr(a.attrs, "min"), has_max = graph::has_attr(a.attrs, "max");
  double lo = graph::attr_float(a.attrs, "min"), hi = graph::attr_float(a.attrs, "max");
  if (is_float(x.dtype)) {
    // Comparisons with NaN are false, so NaN passes through, as in torch.
    std::vector<double> v = read_reals(x);
    for (double& e : v) {
      if (has_min && e < lo) e = lo;
      if (has_max && e > hi) e = hi;
    }
    outputs->push_back(make_reals(out.dtype, out.shape, v));
    return Status::Ok();
  }
  // Integers clamp to the integers inside [min, max]: ceil(min) and floor(max),
  // saturated to int64 (the result then fits the dtype, since x does).
  auto to_int = [](double b) {
    if (b >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (b <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(b);
  };
  int64_t ilo = to_int(std::ceil(lo)), ihi = to_int(std::floor(hi));
  std::vector<int64_t> v = read_ints(x);
  for (int64_t& e : v) {
    if (has_min && e < ilo) e = ilo;
    if (has_max && e > ihi) e = ihi;
  }
  outputs->push_back(make_ints(out.dtype, out.shape, v));
  return Status::Ok();
}

Status kernel_where(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& cond = a.x(0);
  const HostTensor& x = a.x(1);
  const HostTensor& y = a.x(2);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> ic = broadcast_offsets(cond.shape, out.shape);
  std::vector<int64_t> ix = broadcast_offsets(x.shape, out.shape);
  std::vector<int64_t> iy = broadcast_offsets(y.shape, out.shape);
  HostTensor result = HostTensor::zeros(out.dtype, out.shape);
  size_t size = result.element_size();
  for (size_t i = 0; i < ic.size(); ++i) {
    bool take_x = cond.bytes[static_cast<size_t>(ic[i])] != 0;
    const HostTensor& from = take_x ? x : y;
    size_t at = static_cast<size_t>(take_x ? ix[i] : iy[i]);
    std::memcpy(result.bytes.data() + i * size, from.bytes.data() + at * size, size);
  }
  outputs->push_back(std::move(result));
  return Status::Ok();
}

// Conversion rules (documented in cpu_kernels.h): float -> float rounds to
// nearest even; float -> integer truncates toward zero and saturates, NaN -> 0;
// integer -> narrower integer wraps; anything -> bool is x != 0; bool -> 0/1.
Status kernel_cast(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  if (x.dtype == out.dtype) {
    outputs->push_back(x);
    return Status::Ok();
  }
  if (is_float(x.dtype)) {
    std::vector<double> v = read_reals(x);
    if (is_float(out.dtype)) {
      outputs->push_back(make_reals(out.dtype, out.shape, v));
      return Status::Ok();
    }
    HostTensor result = HostTensor::zeros(out.dtype, out.shape);
    size_t size = result.element_size();
    for (size_t i = 0; i < v.size(); ++i) store_double(out.dtype, v[i], result.bytes.data() + i * size);
    outputs->push_back(std::move(result));
    return Status::Ok();
  }
  std::vector<int64_t> v = read_ints(x);
  if (!is_float(out.dtype)) {
    outputs->push_back(make_ints(out.dtype, out.shape, v));
    return Status::Ok();
  }
  HostTensor result = HostTensor::zeros(out.dtype, out.shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (out.dtype == DType::kF32) {
      auto f = static_cast<float>(v[i]);  // one rounding, straight from int64
      std::memcpy(result.bytes.data() + i * 4, &f, 4);
    } else {
      // Integers beyond 2^53 round in double, but they overflow half to inf either way.
      uint16_t h = double_to_half(static_cast<double>(v[i]));
      std::memcpy(result.bytes.data() + i * 2, &h, 2);
    }
  }
  outputs->push_back(std::move(result));
  return Status::Ok();
}

}  // namespace gpuu::cpu
