// Linear-algebra CPU kernels: batched matmul with broadcast batch dims, and
// linear (x W^T + b). Products accumulate in double and round once.
#include "backends/cpu/kernel_support.h"

namespace gpuu::cpu {

namespace {

Status kernel_matmul(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& y = a.x(1);
  const graph::Value& out = a.out[0];
  const size_t rx = x.shape.size(), ry = y.shape.size();
  const int64_t m = x.shape[rx - 2], k = x.shape[rx - 1], n = y.shape[ry - 1];
  graph::Shape batch_x(x.shape.begin(), x.shape.end() - 2);
  graph::Shape batch_y(y.shape.begin(), y.shape.end() - 2);
  graph::Shape batch(out.shape.begin(), out.shape.end() - 2);
  // Which [M,K] / [K,N] matrix of each input every output batch reads.
  std::vector<int64_t> bx = broadcast_offsets(batch_x, batch);
  std::vector<int64_t> by = broadcast_offsets(batch_y, batch);
  std::vector<double> vx = read_reals(x), vy = read_reals(y);
  std::vector<double> r(static_cast<size_t>(graph::shape_numel(out.shape)), 0.0);
  for (size_t b = 0; b < bx.size(); ++b) {
    const double* mx = vx.data() + bx[b] * m * k;
    const double* my = vy.data() + by[b] * k * n;
    double* mr = r.data() + static_cast<int64_t>(b) * m * n;
    // i-k-j order: the inner loop walks rows of y and of the result contiguously.
    for (int64_t i = 0; i < m; ++i) {
      double* row = mr + i * n;
      for (int64_t p = 0; p < k; ++p) {
        double xip = mx[i * k + p];
        const double* yrow = my + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] += xip * yrow[j];
      }
    }
  }
  outputs->push_back(make_reals(out.dtype, out.shape, r));
  return Status::Ok();
}

Status kernel_linear(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const HostTensor* bias = a.input(2);
  const graph::Value& out = a.out[0];
  const int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.shape.size(); ++d) rows *= x.shape[d];
  std::vector<double> vx = read_reals(x), vw = read_reals(w);
  std::vector<double> vb = bias ? read_reals(*bias) : std::vector<double>(static_cast<size_t>(n), 0.0);
  std::vector<double> r(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i) {
    const double* xrow = vx.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const double* wrow = vw.data() + j * k;  // y[i,j] = <x[i,:], W[j,:]> + b[j]
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += xrow[p] * wrow[p];
      r[static_cast<size_t>(i * n + j)] = acc + vb[static_cast<size_t>(j)];
    }
  }
  outputs->push_back(make_reals(out.dtype, out.shape, r));
  return Status::Ok();
}

}  // namespace

void add_linalg_kernels(std::vector<CpuOpKernel>& table) {
  table.push_back({"matmul", kernel_matmul});
  table.push_back({"linear", kernel_linear});
}

}  // namespace gpuu::cpu
