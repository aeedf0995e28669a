// Reduction and normalization CPU kernels: reduce_sum/mean/max over any axes,
// argmax/argmin, topk and cumsum along one axis, softmax along one axis, and
// layer_norm over trailing dims (biased variance).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernel_support.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

namespace {

// Product of shape[begin, end).
int64_t dims_product(const graph::Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

// Input 0 seen as [outer, len, inner] around its "axis" attribute.
struct AxisSplit {
  size_t axis;
  int64_t outer, len, inner;
};
AxisSplit split_at_axis(const KernelArgs& a) {
  const graph::Shape& shape = a.x(0).shape;
  const size_t axis = a.axis_attr();
  return {axis, dims_product(shape, 0, axis), shape[axis], dims_product(shape, axis + 1, shape.size())};
}

Status kernel_reduce(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const std::string& op = a.node.op;
  // The input shape with every reduced dim set to 1: broadcasting that shape back
  // to the input maps each input element to the output element it feeds.
  graph::Shape kept = x.shape;
  int64_t count = 1;  // elements per output
  for (int64_t axis : graph::attr_ints(a.attrs, "axes")) {
    auto d = static_cast<size_t>(graph::normalize_axis(axis, x.shape.size()));
    count *= x.shape[d];
    kept[d] = 1;
  }
  std::vector<int64_t> target = broadcast_offsets(kept, x.shape);
  const auto n_out = static_cast<size_t>(graph::shape_numel(kept));
  if ((op == "reduce_max" || op == "reduce_min") && count == 0 && n_out > 0) {
    return a.fail("cannot take the ", op == "reduce_max" ? "max" : "min", " over zero elements (input ",
                  x.type_string(), ")");
  }
  if (is_float(x.dtype)) {
    std::vector<double> v = read_reals(x);
    std::vector<double> r;
    if (op == "reduce_max" || op == "reduce_min") {
      // NaN wins, as in torch.
      const bool is_max = op == "reduce_max";
      r.assign(n_out, (is_max ? -1 : 1) * std::numeric_limits<double>::infinity());
      for (size_t i = 0; i < v.size(); ++i) {
        double& slot = r[static_cast<size_t>(target[i])];
        if (!std::isnan(slot) && ((is_max ? v[i] > slot : v[i] < slot) || std::isnan(v[i]))) slot = v[i];
      }
    } else if (op == "reduce_prod") {
      r.assign(n_out, 1.0);
      for (size_t i = 0; i < v.size(); ++i) r[static_cast<size_t>(target[i])] *= v[i];
    } else {
      r.assign(n_out, 0.0);
      for (size_t i = 0; i < v.size(); ++i) r[static_cast<size_t>(target[i])] += v[i];
      if (op == "reduce_mean") {
        for (double& s : r) s /= static_cast<double>(count);  // 0 / 0 = NaN for an empty mean, as in torch
      }
    }
    return a.emit_reals(outputs, r);
  }
  std::vector<int64_t> v = read_ints(x);
  std::vector<int64_t> r;
  if (op == "reduce_max") {
    r.assign(n_out, std::numeric_limits<int64_t>::min());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& slot = r[static_cast<size_t>(target[i])];
      if (v[i] > slot) slot = v[i];
    }
  } else if (op == "reduce_min") {
    r.assign(n_out, std::numeric_limits<int64_t>::max());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& slot = r[static_cast<size_t>(target[i])];
      if (v[i] < slot) slot = v[i];
    }
  } else if (op == "reduce_any" || op == "reduce_all") {
    // Over nothing: any is false, all is true (as in torch).
    const bool is_all = op == "reduce_all";
    r.assign(n_out, is_all ? 1 : 0);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& slot = r[static_cast<size_t>(target[i])];
      slot = is_all ? (slot && v[i] != 0) : (slot || v[i] != 0);
    }
  } else if (op == "reduce_prod") {
    // Products wrap in the dtype's width, like sums.
    std::vector<uint64_t> prods(n_out, 1);
    for (size_t i = 0; i < v.size(); ++i) prods[static_cast<size_t>(target[i])] *= static_cast<uint64_t>(v[i]);
    r.assign(prods.begin(), prods.end());
  } else {
    // Integer sums wrap in the dtype's width (accumulated on uint64, narrowed on store).
    std::vector<uint64_t> sums(n_out, 0);
    for (size_t i = 0; i < v.size(); ++i) sums[static_cast<size_t>(target[i])] += static_cast<uint64_t>(v[i]);
    r.assign(sums.begin(), sums.end());
  }
  return a.emit_ints(outputs, r);
}

// argmax / argmin along one axis: the first index of the extreme value; a NaN
// counts as the extreme (its first index wins), as in torch.
Status kernel_arg_reduce(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const bool is_max = a.node.op == "argmax";
  const auto [axis, outer, len, inner] = split_at_axis(a);
  std::vector<int64_t> r(static_cast<size_t>(outer * inner), 0);
  auto scan = [&](const auto& v, auto is_nan) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        int64_t best = 0;
        auto best_v = v[static_cast<size_t>(base)];
        for (int64_t j = 1; j < len && !is_nan(best_v); ++j) {
          auto e = v[static_cast<size_t>(base + j * inner)];
          if (is_nan(e) || (is_max ? e > best_v : e < best_v)) {
            best = j;
            best_v = e;
          }
        }
        r[static_cast<size_t>(o * inner + i)] = best;
      }
    }
  };
  if (is_float(x.dtype)) {
    scan(read_reals(x), [](double e) { return std::isnan(e); });
  } else {
    scan(read_ints(x), [](int64_t) { return false; });
  }
  return a.emit(outputs, make_ints(graph::DType::kI64, a.out[0].shape, r));
}

// topk along one axis: a stable sort of each line's indices by value
// (descending for largest; a NaN counts as the largest, as in torch), the
// first k kept; values are gathered exactly, in the input's dtype.
Status kernel_topk(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const auto [axis, outer, len, inner] = split_at_axis(a);
  const int64_t k = std::get<int64_t>(a.attrs.at("k"));
  const bool largest = std::get<int64_t>(a.attrs.at("largest")) != 0;
  std::vector<int64_t> picked(static_cast<size_t>(outer * k * inner)), source(picked.size());
  auto pick = [&](const auto& v, auto is_nan) {
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        auto at = [&](int64_t j) { return v[static_cast<size_t>(base + j * inner)]; };
        for (int64_t j = 0; j < len; ++j) order[static_cast<size_t>(j)] = j;
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          const bool p_nan = is_nan(at(p)), q_nan = is_nan(at(q));
          if (p_nan || q_nan) return largest ? p_nan && !q_nan : q_nan && !p_nan;
          return largest ? at(p) > at(q) : at(p) < at(q);
        });
        for (int64_t j = 0; j < k; ++j) {
          const size_t out = static_cast<size_t>((o * k + j) * inner + i);
          picked[out] = order[static_cast<size_t>(j)];
          source[out] = base + order[static_cast<size_t>(j)] * inner;
        }
      }
    }
  };
  if (is_float(x.dtype)) {
    pick(read_reals(x), [](double e) { return std::isnan(e); });
  } else {
    pick(read_ints(x), [](int64_t) { return false; });
  }
  HostTensor values = HostTensor::zeros(x.dtype, a.out[0].shape);
  gather_elements(x, source, &values);
  outputs->push_back(std::move(values));
  outputs->push_back(make_ints(graph::DType::kI64, a.out[1].shape, picked));
  return Status::Ok();
}

// Inclusive prefix sums along one axis: floats accumulate in double and round
// each output once; integers wrap in the dtype's width.
Status kernel_cumsum(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const auto [axis, outer, len, inner] = split_at_axis(a);
  auto run = [&](auto v, auto zero) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto acc = zero;
        for (int64_t j = 0; j < len; ++j) {
          auto& e = v[static_cast<size_t>(o * len * inner + j * inner + i)];
          acc += static_cast<decltype(zero)>(e);
          e = static_cast<std::remove_reference_t<decltype(e)>>(acc);
        }
      }
    }
    return v;
  };
  if (is_float(x.dtype)) return a.emit_reals(outputs, run(read_reals(x), 0.0));
  std::vector<int64_t> v = read_ints(x);
  std::vector<uint64_t> u(v.begin(), v.end());
  u = run(std::move(u), uint64_t{0});
  return a.emit_ints(outputs, std::vector<int64_t>(u.begin(), u.end()));
}

Status kernel_softmax(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const auto [axis, outer, len, inner] = split_at_axis(a);
  std::vector<double> v = read_reals(x);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double* base = v.data() + o * len * inner + i;
      // Subtracting the max keeps exp in range; a NaN anywhere makes the row NaN.
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) mx = std::fmax(mx, base[j * inner]);
      double sum = 0.0;
      for (int64_t j = 0; j < len; ++j) {
        base[j * inner] = std::exp(base[j * inner] - mx);
        sum += base[j * inner];
      }
      for (int64_t j = 0; j < len; ++j) base[j * inner] /= sum;
    }
  }
  return a.emit_reals(outputs, v);
}

Status kernel_layer_norm(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  auto nd = static_cast<size_t>(graph::attr_int(a.attrs, "normalized_ndim"));
  const double eps = graph::attr_float(a.attrs, "eps", 1e-5);
  const int64_t rows = dims_product(x.shape, 0, x.shape.size() - nd);
  const int64_t size = dims_product(x.shape, x.shape.size() - nd, x.shape.size());
  std::vector<double> v = read_reals(x);
  std::vector<double> w = a.input_reals_or(1, size, 1.0);
  std::vector<double> b = a.input_reals_or(2, size, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double* row = v.data() + r * size;
    // Two passes (mean, then squared deviations): no cancellation as in E[x^2] - E[x]^2.
    double mean = 0.0;
    for (int64_t i = 0; i < size; ++i) mean += row[i];
    mean /= static_cast<double>(size);
    double var = 0.0;
    for (int64_t i = 0; i < size; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= static_cast<double>(size);  // biased, as torch's layer_norm
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < size; ++i) {
      row[i] = (row[i] - mean) * rstd * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
    }
  }
  return a.emit_reals(outputs, v);
}

}  // namespace

void add_reduce_norm_kernels(std::vector<CpuOpKernel>& table) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
                         "reduce_all"}) {
    table.push_back({op, kernel_reduce});
  }
  table.insert(table.end(), {{"argmax", kernel_arg_reduce}, {"argmin", kernel_arg_reduce}, {"topk", kernel_topk},
                             {"cumsum", kernel_cumsum}, {"softmax", kernel_softmax}, {"layer_norm", kernel_layer_norm}});
}

}  // namespace gpuu::cpu
