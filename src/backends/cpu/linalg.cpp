// Linear-algebra CPU kernels: batched matmul with broadcast batch dims, linear
// (x W^T + b), and scaled_dot_product_attention. Products accumulate in double
// and round once.
#include <cmath>
#include <limits>

#include "backends/cpu/kernel_support.h"
#include "graph/op_registry.h"

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
  return a.emit_reals(outputs, r);
}

Status kernel_linear(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const int64_t k = x.shape.back(), n = w.shape[0];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.shape.size(); ++d) rows *= x.shape[d];
  std::vector<double> vx = read_reals(x), vw = read_reals(w);
  std::vector<double> vb = a.input_reals_or(2, n, 0.0);
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
  return a.emit_reals(outputs, r);
}

// linear with a quantized weight: each weight dequantized (its integer times
// its group's scale), then as kernel_linear.
Status kernel_linear_dequant(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const int64_t k = x.shape.back(), n = a.x(1).shape[0];
  const bool nibbles = graph::attr_int(a.attrs, "bits", 8) == 4;
  const int64_t group_size = graph::attr_int(a.attrs, "group_size", 0);
  const int64_t groups = group_size == 0 ? 1 : k / group_size;
  std::vector<int64_t> q = read_ints(a.x(1));
  std::vector<double> scales = read_reals(a.x(2));
  std::vector<double> w(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) {
      int64_t v = 0;
      if (nibbles) {
        const int64_t byte = q[static_cast<size_t>(j * (k / 2) + p / 2)] & 0xFF;
        v = (p % 2 == 0 ? byte : byte >> 4) & 0xF;
        if (v >= 8) v -= 16;  // a signed nibble
      } else {
        v = q[static_cast<size_t>(j * k + p)];
      }
      const int64_t group = group_size == 0 ? 0 : p / group_size;
      w[static_cast<size_t>(j * k + p)] = static_cast<double>(v) * scales[static_cast<size_t>(j * groups + group)];
    }
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.shape.size(); ++d) rows *= x.shape[d];
  std::vector<double> vx = read_reals(x);
  std::vector<double> vb = a.input_reals_or(3, n, 0.0);
  std::vector<double> r(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += vx[static_cast<size_t>(i * k + p)] * w[static_cast<size_t>(j * k + p)];
      r[static_cast<size_t>(i * n + j)] = acc + vb[static_cast<size_t>(j)];
    }
  }
  return a.emit_reals(outputs, r);
}

// softmax(q k^T * scale + mask) v per (batch, query head), the query head h
// reading kv head h / (Hq / Hkv). A row whose scores are all -inf (every key
// masked) gives 0, as PyTorch's _safe_softmax; a NaN score makes its row NaN.
Status kernel_sdpa(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& q = a.x(0);
  const HostTensor& k = a.x(1);
  const HostTensor& v = a.x(2);
  const HostTensor* mask = a.input(3);
  const graph::Value& out = a.out[0];
  const size_t r = q.shape.size();
  const int64_t hq = q.shape[r - 3], len_l = q.shape[r - 2], e = q.shape[r - 1];
  const int64_t hkv = k.shape[r - 3], len_s = k.shape[r - 2], ev = v.shape[r - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 3 < r; ++d) batch *= q.shape[d];
  const bool causal = graph::attr_int(a.attrs, "is_causal") != 0;
  const double scale = graph::has_attr(a.attrs, "scale") ? graph::attr_float(a.attrs, "scale")
                                                         : 1.0 / std::sqrt(static_cast<double>(e));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> vq = read_reals(q), vk = read_reals(k), vv = read_reals(v);
  // The mask's element for every score, [..., Hq, L, S] row-major.
  graph::Shape scores_shape = out.shape;
  scores_shape.back() = len_s;
  std::vector<int64_t> mask_at;
  std::vector<double> mask_real;
  std::vector<int64_t> mask_bool;
  if (mask) {
    mask_at = broadcast_offsets(mask->shape, scores_shape);
    if (mask->dtype == graph::DType::kBool) {
      mask_bool = read_ints(*mask);
    } else {
      mask_real = read_reals(*mask);
    }
  }
  std::vector<double> result(static_cast<size_t>(graph::shape_numel(out.shape)), 0.0);
  std::vector<double> s(static_cast<size_t>(len_s));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv_head = b * hkv + h / (hq / hkv);
      const double* kh = vk.data() + kv_head * len_s * e;
      const double* vh = vv.data() + kv_head * len_s * ev;
      for (int64_t i = 0; i < len_l; ++i) {
        const double* qi = vq.data() + ((b * hq + h) * len_l + i) * e;
        const int64_t score_row = ((b * hq + h) * len_l + i) * len_s;
        double mx = neg_inf;
        for (int64_t j = 0; j < len_s; ++j) {
          double dot = 0.0;
          for (int64_t p = 0; p < e; ++p) dot += qi[p] * kh[j * e + p];
          double sj = dot * scale;
          if (causal && j > i) sj = neg_inf;
          if (mask) {
            auto at = static_cast<size_t>(mask_at[static_cast<size_t>(score_row + j)]);
            if (mask_bool.empty()) {
              sj += mask_real[at];
            } else if (!mask_bool[at]) {
              sj = neg_inf;
            }
          }
          s[static_cast<size_t>(j)] = sj;
          mx = std::isnan(sj) || std::isnan(mx) ? std::numeric_limits<double>::quiet_NaN() : std::max(mx, sj);
        }
        if (mx == neg_inf) continue;  // every key masked (or none): the row stays 0
        double sum = 0.0;
        for (double& sj : s) {
          sj = std::exp(sj - mx);
          sum += sj;
        }
        double* row = result.data() + ((b * hq + h) * len_l + i) * ev;
        for (int64_t j = 0; j < len_s; ++j) {
          const double pj = s[static_cast<size_t>(j)] / sum;
          for (int64_t c = 0; c < ev; ++c) row[c] += pj * vh[j * ev + c];
        }
      }
    }
  }
  return a.emit_reals(outputs, result);
}

}  // namespace

void add_linalg_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"matmul", kernel_matmul}, {"linear", kernel_linear},
                             {"linear_dequant", kernel_linear_dequant},
                             {"scaled_dot_product_attention", kernel_sdpa}});
}

}  // namespace gpuu::cpu
