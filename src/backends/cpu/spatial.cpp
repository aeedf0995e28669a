// CPU kernels for conv3d, conv_transpose2d, the 3-D pools (NCDHW), resize and
// grid_sample, with PyTorch's semantics; output sizes come from the registry's
// inference.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/kernel_support.h"
#include "graph/grid_sample.h"
#include "graph/op_registry.h"
#include "graph/resize_index.h"

namespace gpuu::cpu {

namespace {

// A per-spatial-dim attribute, or `fallback` (of the right length) when absent.
std::vector<int64_t> ints_or(const graph::AttrMap& attrs, const char* name, std::vector<int64_t> fallback) {
  std::vector<int64_t> v = graph::attr_ints(attrs, name);
  return v.size() == fallback.size() ? v : fallback;
}

size_t at(int64_t i) { return static_cast<size_t>(i); }

// Calls visit(k, i) for each tap k of one axis whose coordinate
// i = pos * stride - pad + k * dilation lies inside [0, extent): the walk
// conv3d gathers with and conv_transpose2d scatters with.
template <typename Visit>
void for_each_tap(int64_t pos, int64_t stride, int64_t pad, int64_t dilation, int64_t taps, int64_t extent,
                  Visit visit) {
  for (int64_t k = 0; k < taps; ++k) {
    const int64_t i = pos * stride - pad + k * dilation;
    if (i >= 0 && i < extent) visit(k, i);
  }
}

// Max (NaN wins) or average over each 3-D window, as the 2-D pools do.
template <typename T>
std::vector<T> pool3d(const std::vector<T>& x, const graph::Shape& in, const graph::Shape& out, const graph::AttrMap& attrs,
                      bool is_max) {
  std::vector<int64_t> k = graph::attr_ints(attrs, "kernel");
  std::vector<int64_t> s = ints_or(attrs, "stride", k), p = ints_or(attrs, "padding", {0, 0, 0});
  std::vector<int64_t> dil = is_max ? ints_or(attrs, "dilation", {1, 1, 1}) : std::vector<int64_t>{1, 1, 1};
  const bool include_pad = graph::attr_int(attrs, "count_include_pad", 1) != 0;
  const int64_t planes = in[0] * in[1], id = in[2], ih = in[3], iw = in[4];
  const int64_t od = out[2], oh = out[3], ow = out[4];
  std::vector<T> r(at(planes * od * oh * ow));
  size_t o = 0;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* plane = x.data() + pl * id * ih * iw;
    for (int64_t z = 0; z < od; ++z) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo, ++o) {
          int64_t start[3] = {z * s[0] - p[0], y * s[1] - p[1], xo * s[2] - p[2]};
          const int64_t dims[3] = {id, ih, iw};
          if (is_max) {
            T best = std::numeric_limits<T>::lowest();
            if constexpr (std::numeric_limits<T>::has_infinity) best = -std::numeric_limits<T>::infinity();
            bool nan = false;
            for (int64_t a = 0; a < k[0]; ++a) {
              int64_t zi = start[0] + a * dil[0];
              if (zi < 0 || zi >= id) continue;
              for (int64_t b = 0; b < k[1]; ++b) {
                int64_t yi = start[1] + b * dil[1];
                if (yi < 0 || yi >= ih) continue;
                for (int64_t c = 0; c < k[2]; ++c) {
                  int64_t xi = start[2] + c * dil[2];
                  if (xi < 0 || xi >= iw) continue;
                  T v = plane[(zi * ih + yi) * iw + xi];
                  if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
                    if (std::isnan(v)) nan = true;
                  }
                  if (v > best) best = v;
                }
              }
            }
            if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
              if (nan) best = std::numeric_limits<T>::quiet_NaN();
            }
            r[o] = best;
            continue;
          }
          // avg: the window clipped to the padded input (the count_include_pad
          // divisor), then to the input.
          int64_t lo[3], hi[3], padded = 1, real = 1;
          for (int d = 0; d < 3; ++d) {
            int64_t end = std::min(start[d] + k[at(d)], dims[d] + p[at(d)]);
            padded *= end - start[d];
            lo[d] = std::max<int64_t>(start[d], 0);
            hi[d] = std::min(end, dims[d]);
            real *= hi[d] - lo[d];
          }
          double sum = 0.0;
          for (int64_t zi = lo[0]; zi < hi[0]; ++zi) {
            for (int64_t yi = lo[1]; yi < hi[1]; ++yi) {
              for (int64_t xi = lo[2]; xi < hi[2]; ++xi) sum += static_cast<double>(plane[(zi * ih + yi) * iw + xi]);
            }
          }
          r[o] = static_cast<T>(sum / static_cast<double>(include_pad ? padded : real));
        }
      }
    }
  }
  return r;
}

Status kernel_conv3d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> s = ints_or(a.attrs, "stride", {1, 1, 1}), p = ints_or(a.attrs, "padding", {0, 0, 0}),
                       dil = ints_or(a.attrs, "dilation", {1, 1, 1});
  const int64_t groups = graph::attr_int(a.attrs, "groups", 1);
  const int64_t batch = x.shape[0], channels = x.shape[1], id = x.shape[2], ih = x.shape[3], iw = x.shape[4];
  const int64_t oc = w.shape[0], cg = w.shape[1], kd = w.shape[2], kh = w.shape[3], kw = w.shape[4];
  const int64_t od = out.shape[2], oh = out.shape[3], ow = out.shape[4];
  const int64_t og = oc / groups;
  std::vector<double> vx = read_reals(x), vw = read_reals(w);
  std::vector<double> vb = a.input_reals_or(2, oc, 0.0);
  std::vector<double> r(at(graph::shape_numel(out.shape)));
  // The loop nest has the shape of conv2d_int's (int_quant.cpp), kept apart:
  // a 3-d gather in doubles here, TOSA's wrapping 2-d int32 sum there.
  size_t o = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t f = 0; f < oc; ++f) {
      const int64_t first = (f / og) * cg;
      for (int64_t z = 0; z < od; ++z) {
        for (int64_t y = 0; y < oh; ++y) {
          for (int64_t xo = 0; xo < ow; ++xo, ++o) {
            double acc = vb[at(f)];
            for (int64_t c = 0; c < cg; ++c) {
              const double* vol = vx.data() + (n * channels + first + c) * id * ih * iw;
              const double* taps = vw.data() + (f * cg + c) * kd * kh * kw;
              for_each_tap(z, s[0], p[0], dil[0], kd, id, [&](int64_t t, int64_t zi) {
                for_each_tap(y, s[1], p[1], dil[1], kh, ih, [&](int64_t u, int64_t yi) {
                  for_each_tap(xo, s[2], p[2], dil[2], kw, iw, [&](int64_t v, int64_t xi) {
                    acc += vol[(zi * ih + yi) * iw + xi] * taps[(t * kh + u) * kw + v];
                  });
                });
              });
            }
            r[o] = acc;
          }
        }
      }
    }
  }
  return a.emit_reals(outputs, r);
}

// Scatter form, as the definition reads: input pixel (ih, iw) adds
// x * w[c, o, kh, kw] at (ih*stride - pad + kh*dilation, ...).
Status kernel_conv_transpose2d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> s = ints_or(a.attrs, "stride", {1, 1}), p = ints_or(a.attrs, "padding", {0, 0}),
                       dil = ints_or(a.attrs, "dilation", {1, 1});
  const int64_t groups = graph::attr_int(a.attrs, "groups", 1);
  const int64_t batch = x.shape[0], channels = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  const int64_t og = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t oc = out.shape[1], oh = out.shape[2], ow = out.shape[3];
  const int64_t cg = channels / groups;
  std::vector<double> vx = read_reals(x), vw = read_reals(w);
  std::vector<double> vb = a.input_reals_or(2, oc, 0.0);
  std::vector<double> r(at(graph::shape_numel(out.shape)));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t f = 0; f < oc; ++f) {
      double* plane = r.data() + (n * oc + f) * oh * ow;
      std::fill(plane, plane + oh * ow, vb[at(f)]);
      const int64_t g = f / og, fo = f % og;
      for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
        const double* in = vx.data() + (n * channels + c) * ih * iw;
        const double* taps = vw.data() + (c * og + fo) * kh * kw;
        for (int64_t y = 0; y < ih; ++y) {
          for (int64_t xi = 0; xi < iw; ++xi) {
            double v = in[y * iw + xi];
            for_each_tap(y, s[0], p[0], dil[0], kh, oh, [&](int64_t u, int64_t yo) {
              for_each_tap(xi, s[1], p[1], dil[1], kw, ow, [&](int64_t t, int64_t xo) {
                plane[yo * ow + xo] += v * taps[u * kw + t];
              });
            });
          }
        }
      }
    }
  }
  return a.emit_reals(outputs, r);
}

Status kernel_avg_pool3d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const graph::Value& out = a.out[0];
  return a.emit_reals(outputs, pool3d(read_reals(a.x(0)), a.x(0).shape, out.shape, a.attrs, false));
}

Status kernel_max_pool3d(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  if (is_float(x.dtype)) return a.emit_reals(outputs, pool3d(read_reals(x), x.shape, out.shape, a.attrs, true));
  return a.emit_ints(outputs, pool3d(read_ints(x), x.shape, out.shape, a.attrs, true));
}

Status kernel_resize(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  graph::ResizeMode mode = graph::ResizeMode::kNearest;
  graph::parse_resize_mode(graph::attr_string(a.attrs, "mode", "nearest"), &mode);
  const bool align = graph::attr_int(a.attrs, "align_corners", 0) != 0;
  std::vector<double> scales = graph::attr_floats(a.attrs, "scales");
  const int64_t planes = x.shape[0] * x.shape[1], ih = x.shape[2], iw = x.shape[3], oh = out.shape[2], ow = out.shape[3];
  float sh = graph::resize_scale(ih, oh, align, scales.size() == 2 ? scales[0] : 0.0);
  float sw = graph::resize_scale(iw, ow, align, scales.size() == 2 ? scales[1] : 0.0);
  std::vector<graph::ResizeTap> rows, cols;
  for (int64_t y = 0; y < oh; ++y) rows.push_back(graph::resize_tap(mode, align, ih, oh, sh, y));
  for (int64_t xo = 0; xo < ow; ++xo) cols.push_back(graph::resize_tap(mode, align, iw, ow, sw, xo));
  std::vector<double> vx = read_reals(x);
  std::vector<double> r(at(graph::shape_numel(out.shape)));
  size_t o = 0;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const double* plane = vx.data() + pl * ih * iw;
    for (const graph::ResizeTap& ry : rows) {
      for (const graph::ResizeTap& rx : cols) {
        if (mode != graph::ResizeMode::kBilinear) {
          r[o++] = plane[ry.i0 * iw + rx.i0];
          continue;
        }
        // torch's blend: h0 * (w0 * v00 + w1 * v01) + h1 * (w0 * v10 + w1 * v11).
        // The weights are torch's floats (lambda0 = 1 - lambda1 rounded to float).
        double h1 = ry.frac, h0 = 1.0f - ry.frac, w1 = rx.frac, w0 = 1.0f - rx.frac;
        r[o++] = h0 * (w0 * plane[ry.i0 * iw + rx.i0] + w1 * plane[ry.i0 * iw + rx.i1]) +
                 h1 * (w0 * plane[ry.i1 * iw + rx.i0] + w1 * plane[ry.i1 * iw + rx.i1]);
      }
    }
  }
  return a.emit_reals(outputs, r);
}

// Each output point reads x at grid (x, y) mapped to pixels; torch's f32
// coordinates and weights (graph/grid_sample.h), the sums in double.
Status kernel_grid_sample(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  graph::GridSampleMode mode = graph::GridSampleMode::kBilinear;
  graph::GridSamplePadding padding = graph::GridSamplePadding::kZeros;
  graph::parse_grid_sample_mode(graph::attr_string(a.attrs, "mode", "bilinear"), &mode);
  graph::parse_grid_sample_padding(graph::attr_string(a.attrs, "padding_mode", "zeros"), &padding);
  const bool align = graph::attr_int(a.attrs, "align_corners", 0) != 0;
  const int64_t batch = x.shape[0], channels = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  const int64_t oh = out.shape[2], ow = out.shape[3];
  const graph::GridSampleAxis along_w(iw, align, padding), along_h(ih, align, padding);
  std::vector<double> vx = read_reals(x), vg = read_reals(a.x(1));
  std::vector<double> r(at(graph::shape_numel(out.shape)));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < oh * ow; ++p) {
      const float gx = static_cast<float>(vg[at((n * oh * ow + p) * 2)]);
      const float gy = static_cast<float>(vg[at((n * oh * ow + p) * 2 + 1)]);
      for (int64_t c = 0; c < channels; ++c) {
        const double* plane = vx.data() + (n * channels + c) * ih * iw;
        // 0 outside the input (only zeros padding gets there).
        auto pixel = [&](int64_t yi, int64_t xi) { return yi < 0 || xi < 0 ? 0.0 : plane[yi * iw + xi]; };
        double v = 0.0;
        if (mode == graph::GridSampleMode::kNearest) {
          v = pixel(along_h.index(std::nearbyint(along_h.source(gy))), along_w.index(std::nearbyint(along_w.source(gx))));
        } else if (mode == graph::GridSampleMode::kBilinear) {
          const float sx = along_w.source(gx), sy = along_h.source(gy);
          const float x0 = std::floor(sx), y0 = std::floor(sy);
          const float e = sx - x0, s = sy - y0;  // the weights of the east and south taps
          const int64_t xw = along_w.index(x0), xe = along_w.index(x0 + 1.0f);
          const int64_t yn = along_h.index(y0), ys = along_h.index(y0 + 1.0f);
          v = pixel(yn, xw) * ((1.0f - s) * (1.0f - e)) + pixel(yn, xe) * ((1.0f - s) * e) +
              pixel(ys, xw) * (s * (1.0f - e)) + pixel(ys, xe) * (s * e);
        } else {
          // Bicubic: 4x4 taps around the unpadded point, each tap padded on its own.
          const float sx = along_w.unnormalize(gx), sy = along_h.unnormalize(gy);
          const float x0 = std::floor(sx), y0 = std::floor(sy);
          float wx[4], wy[4];
          graph::grid_sample_cubic_weights(sx - x0, wx);
          graph::grid_sample_cubic_weights(sy - y0, wy);
          for (int j = 0; j < 4; ++j) {
            const int64_t yi = along_h.index(along_h.pad(y0 + static_cast<float>(j - 1)));
            double row = 0.0;
            for (int i = 0; i < 4; ++i) {
              row += wx[i] * pixel(yi, along_w.index(along_w.pad(x0 + static_cast<float>(i - 1))));
            }
            v += wy[j] * row;
          }
        }
        r[at(((n * channels + c) * oh * ow) + p)] = v;
      }
    }
  }
  return a.emit_reals(outputs, r);
}

}  // namespace

void add_spatial_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"conv3d", kernel_conv3d}, {"conv_transpose2d", kernel_conv_transpose2d},
                             {"avg_pool3d", kernel_avg_pool3d}, {"max_pool3d", kernel_max_pool3d},
                             {"resize", kernel_resize}, {"grid_sample", kernel_grid_sample}});
}

}  // namespace gpuu::cpu
