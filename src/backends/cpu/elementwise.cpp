// Elementwise CPU kernels: unary math, broadcasting binary arithmetic and
// comparisons, clamp, where and cast.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "backends/cpu/kernel_support.h"
#include "base/half.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

using graph::DType;

namespace {

// An op's function, for the families of ops that are a function per element.
template <typename Fn>
struct NamedFn {
  const char* op;
  Fn fn;
};

template <typename Fn, size_t N>
Fn find_fn(const NamedFn<Fn> (&table)[N], const std::string& op) {
  for (const NamedFn<Fn>& entry : table) {
    if (op == entry.op) return entry.fn;
  }
  return nullptr;
}

using RealFn = double (*)(double);

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  const double k = 0.79788456080286535588;  // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// Float unary ops (f32/f16 inputs, computed in double).
const NamedFn<RealFn> kRealUnary[] = {
    {"abs", [](double x) { return std::fabs(x); }},
    {"neg", [](double x) { return -x; }},
    {"exp", [](double x) { return std::exp(x); }},
    {"log", [](double x) { return std::log(x); }},
    {"sqrt", [](double x) { return std::sqrt(x); }},
    {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
    {"reciprocal", [](double x) { return 1.0 / x; }},
    {"sin", [](double x) { return std::sin(x); }},
    {"cos", [](double x) { return std::cos(x); }},
    {"tanh", [](double x) { return std::tanh(x); }},
    {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
    {"relu", [](double x) { return x < 0.0 ? 0.0 : x; }},  // NaN passes through, as in torch
    {"erf", [](double x) { return std::erf(x); }},
    {"floor", [](double x) { return std::floor(x); }},
    {"ceil", [](double x) { return std::ceil(x); }},
    {"tan", [](double x) { return std::tan(x); }},
    {"asin", [](double x) { return std::asin(x); }},
    {"acos", [](double x) { return std::acos(x); }},
    {"atan", [](double x) { return std::atan(x); }},
    {"sinh", [](double x) { return std::sinh(x); }},
    {"cosh", [](double x) { return std::cosh(x); }},
    {"asinh", [](double x) { return std::asinh(x); }},
    {"acosh", [](double x) { return std::acosh(x); }},
    {"atanh", [](double x) { return std::atanh(x); }},
    {"expm1", [](double x) { return std::expm1(x); }},
    {"log1p", [](double x) { return std::log1p(x); }},
    // The default rounding mode is to nearest, ties to even: torch.round's rule.
    {"round", [](double x) { return std::nearbyint(x); }},
    {"trunc", [](double x) { return std::trunc(x); }},
    // NaN stays NaN and zeros give +0, as in torch.
    {"sign", [](double x) { return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0)); }},
    {"gelu", gelu_exact},  // approximate="tanh": gelu_tanh (real_unary)
};

// The real-valued function of a unary op; nullptr when the op is not unary.
RealFn real_unary(const std::string& op, const graph::AttrMap& attrs) {
  if (op == "gelu" && graph::attr_string(attrs, "approximate", "none") == "tanh") return gelu_tanh;
  return find_fn(kRealUnary, op);
}

using IntFn = int64_t (*)(int64_t);

int64_t wrapping(uint64_t v) { return static_cast<int64_t>(v); }

// Integer unaries (i32/i8 in the registry). Results wrap on store, so abs and
// neg of the most negative value give that value back, as in torch.
const NamedFn<IntFn> kIntUnary[] = {
    {"abs", [](int64_t x) { return x < 0 ? wrapping(0 - static_cast<uint64_t>(x)) : x; }},
    {"neg", [](int64_t x) { return wrapping(0 - static_cast<uint64_t>(x)); }},
    {"relu", [](int64_t x) { return x < 0 ? int64_t{0} : x; }},
    {"sign", [](int64_t x) { return static_cast<int64_t>((x > 0) - (x < 0)); }},
    {"bitwise_not", [](int64_t x) { return ~x; }},  // bool: kernel_unary handles it
};

using RealBinaryFn = double (*)(double, double);

// Python's %: the result takes the divisor's sign.
double float_remainder(double p, double q) {
  double r = std::fmod(p, q);
  if (r != 0.0 && (r < 0.0) != (q < 0.0)) r += q;
  return r;
}

// Float binary ops (f32/f16 operands, computed in double).
const NamedFn<RealBinaryFn> kRealBinary[] = {
    {"add", [](double p, double q) { return p + q; }},
    {"sub", [](double p, double q) { return p - q; }},
    {"mul", [](double p, double q) { return p * q; }},
    {"div", [](double p, double q) { return p / q; }},
    {"pow", [](double p, double q) { return std::pow(p, q); }},
    // NaN in either input gives NaN, as in torch.
    {"maximum", [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : (p > q ? p : q); }},
    {"minimum", [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : (p < q ? p : q); }},
    {"atan2", [](double p, double q) { return std::atan2(p, q); }},
    {"fmod", [](double p, double q) { return std::fmod(p, q); }},
    {"remainder", float_remainder},
    {"floor_divide", [](double p, double q) { return std::floor(p / q); }},
    // log(e^p + e^q) without overflow; equal infinities give themselves, as in torch.
    {"logaddexp", [](double p, double q) {
       return p == q ? p + 0.69314718055994530942 : std::fmax(p, q) + std::log1p(std::exp(-std::fabs(p - q)));
     }},
};

using IntBinaryFn = int64_t (*)(int64_t, int64_t);

enum class IntDivision { kRemainder, kFmod, kFloorDivide };

// Integer remainder / fmod / floor_divide. A zero divisor gives 0 (torch
// raises; a GPU kernel cannot, so gpuu defines it). INT_MIN / -1 wraps to
// INT_MIN (its remainders are 0); i32 operands never reach that case here,
// their quotient 2^31 wraps on store.
template <IntDivision kind>
int64_t int_division(int64_t p, int64_t q) {
  if (q == 0) return 0;
  if (q == -1) return kind == IntDivision::kFloorDivide ? wrapping(0 - static_cast<uint64_t>(p)) : 0;
  int64_t quot = p / q, rem = p % q;  // C: truncation, remainder has p's sign
  bool adjust = rem != 0 && ((rem < 0) != (q < 0));
  if (kind == IntDivision::kFmod) return rem;
  if (kind == IntDivision::kRemainder) return adjust ? rem + q : rem;
  return adjust ? quot - 1 : quot;
}

// Integer binary ops: add/sub/mul wrap (computed on uint64, then narrowed on
// store). Integer div, which can fail, is kernel_binary's own case.
const NamedFn<IntBinaryFn> kIntBinary[] = {
    {"add", [](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) + static_cast<uint64_t>(q)); }},
    {"sub", [](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) - static_cast<uint64_t>(q)); }},
    {"mul", [](int64_t p, int64_t q) { return wrapping(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); }},
    {"maximum", [](int64_t p, int64_t q) { return p > q ? p : q; }},
    {"minimum", [](int64_t p, int64_t q) { return p < q ? p : q; }},
    {"remainder", int_division<IntDivision::kRemainder>},
    {"fmod", int_division<IntDivision::kFmod>},
    {"floor_divide", int_division<IntDivision::kFloorDivide>},
    {"bitwise_and", [](int64_t p, int64_t q) { return p & q; }},
    {"bitwise_or", [](int64_t p, int64_t q) { return p | q; }},
    {"bitwise_xor", [](int64_t p, int64_t q) { return p ^ q; }},
};

Status kernel_unary(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  if (is_float(x.dtype)) {
    RealFn fn = real_unary(a.node.op, a.attrs);
    if (!fn) return a.fail("no CPU kernel for this op");
    std::vector<double> v = read_reals(x);
    for (double& e : v) e = fn(e);
    return a.emit_reals(outputs, v);
  }
  IntFn fn = find_fn(kIntUnary, a.node.op);
  if (!fn) return a.fail("no CPU kernel for ", graph::dtype_name(x.dtype), " inputs");
  std::vector<int64_t> v = read_ints(x);
  if (x.dtype == DType::kBool && a.node.op == "bitwise_not") fn = [](int64_t b) { return static_cast<int64_t>(b == 0); };
  for (int64_t& e : v) e = fn(e);
  return a.emit_ints(outputs, v);
}

Status kernel_binary(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& y = a.x(1);
  std::vector<int64_t> ix = a.broadcast_input(0), iy = a.broadcast_input(1);
  size_t n = ix.size();
  if (is_float(x.dtype)) {
    RealBinaryFn fn = find_fn(kRealBinary, a.node.op);
    if (!fn) return a.fail("no CPU kernel for this op");
    std::vector<double> vx = read_reals(x), vy = read_reals(y), r(n);
    for (size_t i = 0; i < n; ++i) r[i] = fn(vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]);
    return a.emit_reals(outputs, r);
  }
  std::vector<int64_t> vx = read_ints(x), vy = read_ints(y), r(n);
  if (a.node.op == "div") {
    // Integer division truncates toward zero, as in C. The registry admits div
    // only for f32/f16 today; this keeps the oracle ready should that widen.
    for (size_t i = 0; i < n; ++i) {
      int64_t p = vx[static_cast<size_t>(ix[i])], q = vy[static_cast<size_t>(iy[i])];
      if (q == 0) return a.fail("integer division by zero at output element ", i);
      // INT64_MIN / -1 is the one quotient that overflows; it wraps like the others.
      r[i] = (p == std::numeric_limits<int64_t>::min() && q == -1) ? p : p / q;
    }
  } else {
    IntBinaryFn fn = find_fn(kIntBinary, a.node.op);
    if (!fn) return a.fail("no CPU kernel for ", graph::dtype_name(x.dtype), " inputs");
    for (size_t i = 0; i < n; ++i) r[i] = fn(vx[static_cast<size_t>(ix[i])], vy[static_cast<size_t>(iy[i])]);
  }
  return a.emit_ints(outputs, r);
}

Status kernel_compare(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& y = a.x(1);
  const std::string& op = a.node.op;
  std::vector<int64_t> ix = a.broadcast_input(0), iy = a.broadcast_input(1);
  HostTensor result = HostTensor::zeros(DType::kBool, a.out[0].shape);
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
  return a.emit(outputs, std::move(result));
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
  return a.emit(outputs, std::move(result));
}

Status kernel_clamp(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  bool has_min = graph::has_attr(a.attrs, "min"), has_max = graph::has_attr(a.attrs, "max");
  double lo = graph::attr_float(a.attrs, "min"), hi = graph::attr_float(a.attrs, "max");
  if (is_float(x.dtype)) {
    // Comparisons with NaN are false, so NaN passes through, as in torch.
    std::vector<double> v = read_reals(x);
    for (double& e : v) {
      if (has_min && e < lo) e = lo;
      if (has_max && e > hi) e = hi;
    }
    return a.emit_reals(outputs, v);
  }
  // Integers clamp to the integers inside [min, max]: ceil(min) and floor(max),
  // saturated to the dtype's range (as the Vulkan kernels do: a bound beyond
  // it, min 40000 on i16 say, clamps to the type's end, never wraps).
  const int bits = static_cast<int>(graph::dtype_size(x.dtype)) * 8;
  const double type_lo = -std::ldexp(1.0, bits - 1), type_hi = std::ldexp(1.0, bits - 1);  // hi excluded
  auto to_int = [&](double b) {
    if (b >= type_hi) return bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(type_hi) - 1;
    if (b <= type_lo) return bits == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(type_lo);
    return static_cast<int64_t>(b);
  };
  int64_t ilo = to_int(std::ceil(lo)), ihi = to_int(std::floor(hi));
  std::vector<int64_t> v = read_ints(x);
  for (int64_t& e : v) {
    if (has_min && e < ilo) e = ilo;
    if (has_max && e > ihi) e = ihi;
  }
  return a.emit_ints(outputs, v);
}

Status kernel_where(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& cond = a.x(0);
  const HostTensor& x = a.x(1);
  const HostTensor& y = a.x(2);
  std::vector<int64_t> ic = a.broadcast_input(0), ix = a.broadcast_input(1), iy = a.broadcast_input(2);
  HostTensor result = a.zeroed_output();
  size_t size = result.element_size();
  for (size_t i = 0; i < ic.size(); ++i) {
    bool take_x = cond.bytes[static_cast<size_t>(ic[i])] != 0;
    const HostTensor& from = take_x ? x : y;
    size_t at = static_cast<size_t>(take_x ? ix[i] : iy[i]);
    std::memcpy(result.bytes.data() + i * size, from.bytes.data() + at * size, size);
  }
  return a.emit(outputs, std::move(result));
}

// Conversion rules (documented in cpu_kernels.h): float -> float rounds to
// nearest even; float -> integer truncates toward zero and saturates, NaN -> 0;
// integer -> narrower integer wraps; anything -> bool is x != 0; bool -> 0/1.
Status kernel_cast(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  if (x.dtype == out.dtype) {
    return a.emit(outputs, x);
  }
  if (is_float(x.dtype)) {
    std::vector<double> v = read_reals(x);
    if (is_float(out.dtype)) {
      return a.emit_reals(outputs, v);
    }
    HostTensor result = a.zeroed_output();
    size_t size = result.element_size();
    for (size_t i = 0; i < v.size(); ++i) store_double(out.dtype, v[i], result.bytes.data() + i * size);
    return a.emit(outputs, std::move(result));
  }
  std::vector<int64_t> v = read_ints(x);
  if (!is_float(out.dtype)) {
    return a.emit_ints(outputs, v);
  }
  HostTensor result = a.zeroed_output();
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
  return a.emit(outputs, std::move(result));
}

}  // namespace

void add_elementwise_kernels(std::vector<CpuOpKernel>& table) {
  // An op with a float and an integer form is one entry.
  auto add = [&table](const char* op, Kernel run) {
    for (const CpuOpKernel& k : table) {
      if (std::string_view(k.op) == op && k.run == run) return;
    }
    table.push_back({op, run});
  };
  for (const auto& entry : kRealUnary) add(entry.op, kernel_unary);
  for (const auto& entry : kIntUnary) add(entry.op, kernel_unary);
  for (const char* op : {"isnan", "isinf", "logical_not"}) add(op, kernel_predicate);
  for (const auto& entry : kRealBinary) add(entry.op, kernel_binary);
  for (const auto& entry : kIntBinary) add(entry.op, kernel_binary);
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
                         "logical_or", "logical_xor"}) {
    add(op, kernel_compare);
  }
  add("clamp", kernel_clamp);
  add("where", kernel_where);
  add("cast", kernel_cast);
}

}  // namespace gpuu::cpu
