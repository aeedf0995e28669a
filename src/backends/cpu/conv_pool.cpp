// Convolution and pooling CPU kernels over NCHW tensors, with PyTorch's
// semantics for groups, dilation, padding, ceil_mode and avg-pool divisors.
// Output sizes come from the registry's inference (shared with every backend).
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernel_support.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

namespace {

// The per-dimension (height, width) window parameters of a conv or pool node.
struct Window2d {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2];
};

// Attributes were range-checked by the registry's inference before any kernel runs.
Window2d window_attrs(const graph::AttrMap& attrs, int64_t kh, int64_t kw) {
  Window2d w{{kh, kw}, {1, 1}, {0, 0}, {1, 1}};
  auto read = [&](const char* name, int64_t* dst) {
    std::vector<int64_t> v = graph::attr_ints(attrs, name);
    if (v.size() == 2) {
      dst[0] = v[0];
      dst[1] = v[1];
    }
  };
  read("stride", w.stride);
  read("padding", w.padding);
  read("dilation", w.dilation);
  return w;
}

// A pool's window: its size from the "kernel" attribute, the rest as for conv2d.
Window2d pool_window(const graph::AttrMap& attrs) {
  std::vector<int64_t> kernel = graph::attr_ints(attrs, "kernel");
  return window_attrs(attrs, kernel[0], kernel[1]);
}

// One window position: the input rows [h0, h1) and columns [w0, w1) a pool
// window covers once clipped to the input, plus the unclipped size torch uses
// as the count_include_pad divisor (clipped to the padded input only).
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t padded_size;
};

PoolWindow avg_window(const Window2d& p, int64_t oh, int64_t ow, int64_t height, int64_t width) {
  int64_t hs = oh * p.stride[0] - p.padding[0], ws = ow * p.stride[1] - p.padding[1];
  // A ceil_mode window may run past the right padding: that part counts for nothing.
  int64_t he = std::min(hs + p.kernel[0], height + p.padding[0]);
  int64_t we = std::min(ws + p.kernel[1], width + p.padding[1]);
  PoolWindow w;
  w.padded_size = (he - hs) * (we - ws);
  w.h0 = std::max<int64_t>(hs, 0);
  w.w0 = std::max<int64_t>(ws, 0);
  w.h1 = std::min(he, height);
  w.w1 = std::min(we, width);
  return w;
}

// Max over each (dilated) window, skipping positions in the implicit -inf
// padding. NaN wins, as in torch. T is double (floats) or int64_t.
template <typename T>
std::vector<T> max_pool(const std::vector<T>& x, const graph::Shape& in, const graph::Shape& out, const Window2d& p) {
  const int64_t planes = in[0] * in[1], height = in[2], width = in[3], oh_n = out[2], ow_n = out[3];
  std::vector<T> r(static_cast<size_t>(planes * oh_n * ow_n));
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* plane = x.data() + pl * height * width;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        // The registry keeps padding <= half the window, so each window holds at
        // least one input element and the lowest value is always replaced.
        T best = std::numeric_limits<T>::lowest();
        if constexpr (std::numeric_limits<T>::has_infinity) best = -std::numeric_limits<T>::infinity();
        bool seen_nan = false;
        for (int64_t kh = 0; kh < p.kernel[0]; ++kh) {
          int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
          if (ih < 0 || ih >= height) continue;
          for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
            int64_t iw = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
            if (iw < 0 || iw >= width) continue;
            T v = plane[ih * width + iw];
            if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
              if (std::isnan(v)) seen_nan = true;
            }
            if (v > best) best = v;
          }
        }
        if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
          if (seen_nan) best = std::numeric_limits<T>::quiet_NaN();
        }
        r[static_cast<size_t>((pl * oh_n + oh) * ow_n + ow)] = best;
      }
    }
  }
  return r;
}

Status kernel_conv2d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const graph::Value& out = a.out[0];
  const int64_t batch = x.shape[0], channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  const int64_t out_channels = w.shape[0], group_channels = w.shape[1], kh_n = w.shape[2], kw_n = w.shape[3];
  const int64_t groups = graph::attr_int(a.attrs, "groups", 1);
  const int64_t out_per_group = out_channels / groups;
  const int64_t oh_n = out.shape[2], ow_n = out.shape[3];
  Window2d p = window_attrs(a.attrs, kh_n, kw_n);
  std::vector<double> vx = read_reals(x), vw = read_reals(w);
  std::vector<double> vb = a.input_reals_or(2, out_channels, 0.0);
  std::vector<double> r(static_cast<size_t>(graph::shape_numel(out.shape)));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      const int64_t first_in = (o / out_per_group) * group_channels;  // the input channels o's group sees
      const double* filter = vw.data() + o * group_channels * kh_n * kw_n;
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double acc = vb[static_cast<size_t>(o)];
          for (int64_t c = 0; c < group_channels; ++c) {
            const double* plane = vx.data() + ((n * channels) + first_in + c) * height * width;
            const double* taps = filter + c * kh_n * kw_n;
            for (int64_t kh = 0; kh < kh_n; ++kh) {
              int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
              if (ih < 0 || ih >= height) continue;  // zero padding
              for (int64_t kw = 0; kw < kw_n; ++kw) {
                int64_t iw = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
                if (iw < 0 || iw >= width) continue;
                acc += plane[ih * width + iw] * taps[kh * kw_n + kw];
              }
            }
          }
          r[static_cast<size_t>(((n * out_channels + o) * oh_n + oh) * ow_n + ow)] = acc;
        }
      }
    }
  }
  return a.emit_reals(outputs, r);
}

Status kernel_avg_pool2d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  Window2d p = pool_window(a.attrs);
  const bool include_pad = graph::attr_int(a.attrs, "count_include_pad", 1) != 0;
  const int64_t planes = x.shape[0] * x.shape[1], height = x.shape[2], width = x.shape[3];
  const int64_t oh_n = out.shape[2], ow_n = out.shape[3];
  std::vector<double> vx = read_reals(x);
  std::vector<double> r(static_cast<size_t>(graph::shape_numel(out.shape)));
  for (int64_t pl = 0; pl < planes; ++pl) {
    const double* plane = vx.data() + pl * height * width;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        PoolWindow win = avg_window(p, oh, ow, height, width);
        double sum = 0.0;
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += plane[ih * width + iw];
        }
        // count_include_pad counts padding cells (not cells past the padding);
        // otherwise only input cells count. Windows are never empty: the registry
        // bounds padding by half the kernel and drops windows that start in the
        // right padding.
        int64_t divisor = include_pad ? win.padded_size : (win.h1 - win.h0) * (win.w1 - win.w0);
        r[static_cast<size_t>((pl * oh_n + oh) * ow_n + ow)] = sum / static_cast<double>(divisor);
      }
    }
  }
  return a.emit_reals(outputs, r);
}

Status kernel_max_pool2d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  Window2d p = pool_window(a.attrs);
  if (is_float(x.dtype)) return a.emit_reals(outputs, max_pool(read_reals(x), x.shape, out.shape, p));
  return a.emit_ints(outputs, max_pool(read_ints(x), x.shape, out.shape, p));
}

}  // namespace

void add_conv_pool_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"conv2d", kernel_conv2d}, {"avg_pool2d", kernel_avg_pool2d},
                             {"max_pool2d", kernel_max_pool2d}});
}

}  // namespace gpuu::cpu
