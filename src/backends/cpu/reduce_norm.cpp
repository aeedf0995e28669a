// Reduction and normalization CPU kernels: reduce_sum/mean/max over any axes,
// softmax along one axis, and layer_norm over trailing dims (biased variance).
#include <cmath>
#include <limits>

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

}  // namespace

Status kernel_reduce(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
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
  if (op == "reduce_max" && count == 0 && n_out > 0) {
    return a.fail("cannot take the max over zero elements (input ", x.type_string(), ")");
  }
  if (is_float(x.dtype)) {
    std::vector<double> v = read_reals(x);
    std::vector<double> r;
    if (op == "reduce_max") {
      // NaN wins, as in torch.
      r.assign(n_out, -std::numeric_limits<double>::infinity());
      for (size_t i = 0; i < v.size(); ++i) {
        double& slot = r[static_cast<size_t>(target[i])];
        if (!std::isnan(slot) && (v[i] > slot || std::isnan(v[i]))) slot = v[i];
      }
    } else {
      r.assign(n_out, 0.0);
      for (size_t i = 0; i < v.size(); ++i) r[static_cast<size_t>(target[i])] += v[i];
      if (op == "reduce_mean") {
        for (double& s : r) s /= static_cast<double>(count);  // 0 / 0 = NaN for an empty mean, as in torch
      }
    }
    outputs->push_back(make_reals(out.dtype, out.shape, r));
    return Status::Ok();
  }
  std::vector<int64_t> v = read_ints(x);
  std::vector<int64_t> r;
  if (op == "reduce_max") {
    r.assign(n_out, std::numeric_limits<int64_t>::min());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t& slot = r[static_cast<size_t>(target[i])];
      if (v[i] > slot) slot = v[i];
    }
  } else {
    // Integer sums wrap in the dtype's width (accumulated on uint64, narrowed on store).
    std::vector<uint64_t> sums(n_out, 0);
    for (size_t i = 0; i < v.size(); ++i) sums[static_cast<size_t>(target[i])] += static_cast<uint64_t>(v[i]);
    r.assign(sums.begin(), sums.end());
  }
  outputs->push_back(make_ints(out.dtype, out.shape, r));
  return Status::Ok();
}

Status kernel_softmax(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(a.attrs, "axis"), x.shape.size()));
  const int64_t outer = dims_product(x.shape, 0, axis), len = x.shape[axis];
  const int64_t inner = dims_product(x.shape, axis + 1, x.shape.size());
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
  outputs->push_back(make_reals(out.dtype, out.shape, v));
  return Status::Ok();
}

Status kernel_layer_norm(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor* weight = a.input(1);
  const HostTensor* bias = a.input(2);
  const graph::Value& out = a.out[0];
  auto nd = static_cast<size_t>(graph::attr_int(a.attrs, "normalized_ndim"));
  const double eps = graph::attr_float(a.attrs, "eps", 1e-5);
  const int64_t rows = dims_product(x.shape, 0, x.shape.size() - nd);
  const int64_t size = dims_product(x.shape, x.shape.size() - nd, x.shape.size());
  std::vector<double> v = read_reals(x);
  std::vector<double> w = weight ? read_reals(*weight) : std::vector<double>(static_cast<size_t>(size), 1.0);
  std::vector<double> b = bias ? read_reals(*bias) : std::vector<double>(static_cast<size_t>(size), 0.0);
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
  outputs->push_back(make_reals(out.dtype, out.shape, v));
  return Status::Ok();
}

}  // namespace gpuu::cpu
