// Elementwise kernels: unary math (and clamp), broadcasting binary arithmetic
// and comparisons, for f32 and f16 tensors.
#include <cmath>
#include <limits>
#include <map>

#include "backends/vulkan/vulkan_ops.h"

namespace gpuu::vulkan {
namespace {

using graph::DType;

// Values of the OP specialization constant in shaders/unary.comp.
const std::map<std::string, int32_t>& unary_ops() {
  static const std::map<std::string, int32_t> ops = {
      {"abs", 0},   {"neg", 1},      {"exp", 2},      {"log", 3},    {"sqrt", 4},   {"rsqrt", 5},
      {"reciprocal", 6}, {"sin", 7}, {"cos", 8},      {"tanh", 9},   {"sigmoid", 10}, {"relu", 11},
      {"gelu", 12}, {"erf", 14},     {"floor", 15},   {"ceil", 16},  {"clamp", 17}};
  return ops;
}
constexpr int32_t kGeluTanh = 13;

// shaders/binary.comp: arithmetic OP values, then comparison OP values (GPUU_COMPARE).
const std::map<std::string, int32_t>& arithmetic_ops() {
  static const std::map<std::string, int32_t> ops = {{"add", 0}, {"sub", 1},     {"mul", 2},    {"div", 3},
                                                     {"pow", 4}, {"maximum", 5}, {"minimum", 6}};
  return ops;
}
const std::map<std::string, int32_t>& comparison_ops() {
  static const std::map<std::string, int32_t> ops = {{"equal", 0},   {"not_equal", 1}, {"less", 2},
                                                     {"less_equal", 3}, {"greater", 4}, {"greater_equal", 5}};
  return ops;
}

double attr_float(const graph::Node& n, const char* name, double fallback) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return fallback;
  if (const double* d = std::get_if<double>(&it->second)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return fallback;
}

Status lower_unary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, x.dtype));
  int32_t op = unary_ops().at(n.op);
  if (n.op == "gelu") {
    auto it = n.attrs.find("approximate");
    if (it != n.attrs.end() && std::get<std::string>(it->second) == "tanh") op = kGeluTanh;
  }
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push;
  push.u32(count)
      .f32(static_cast<float>(attr_float(n, "min", -std::numeric_limits<double>::infinity())))
      .f32(static_cast<float>(attr_float(n, "max", std::numeric_limits<double>::infinity())));
  KernelKey key{std::string("unary") + float_suffix(x.dtype), {op}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

Status lower_binary(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& a = lc.tensor(n.inputs[0]);
  const TensorRef& b = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, a.dtype));
  bool compare = comparison_ops().count(n.op) > 0;
  int32_t op = compare ? comparison_ops().at(n.op) : arithmetic_ops().at(n.op);
  uint32_t count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(y.shape.size()));
  push.u32_array(to_u32(y.shape), kMaxRank);
  push.u32_array(broadcast_strides(a.shape, y.shape), kMaxRank);
  push.u32_array(broadcast_strides(b.shape, y.shape), kMaxRank);
  KernelKey key{std::string(compare ? "compare" : "binary") + float_suffix(a.dtype), {op}, 3, push.size()};
  // A comparison packs four bool bytes per invocation.
  uint64_t invocations = compare ? (count + 3) / 4 : count;
  return add_dispatch(lc, n, key, {{a.range, false}, {b.range, false}, {y.range, true}}, push, invocations);
}

}  // namespace

void add_elementwise_kernels(std::vector<OpKernel>& table) {
  for (const auto& entry : unary_ops()) table.push_back(OpKernel{entry.first.c_str(), check_float_inputs, lower_unary});
  for (const auto& entry : arithmetic_ops()) {
    table.push_back(OpKernel{entry.first.c_str(), check_float_inputs, lower_binary});
  }
  for (const auto& entry : comparison_ops()) {
    table.push_back(OpKernel{entry.first.c_str(), check_float_inputs, lower_binary});
  }
}

}  // namespace gpuu::vulkan
