// Kernel family 'spatial': conv3d, conv_transpose2d, avg/max pool3d, resize
// and grid_sample, f32/f16, as direct kernels (one invocation per output element).
#include <string>
#include <utility>

#include "graph/grid_sample.h"
#include "graph/op_registry.h"
#include "graph/resize_index.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

// An attribute of `n` ints; `fallback` when absent (graphs built by add_op
// store resolved attributes, so this only covers hand-made nodes).
std::vector<uint32_t> ints_attr(const graph::Node& node, const char* name, std::vector<uint32_t> fallback) {
  std::vector<int64_t> v = graph::attr_ints(node.attrs, name);
  if (v.size() != fallback.size()) return fallback;
  return std::vector<uint32_t>(v.begin(), v.end());
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// Input, weight, bias (or the weight again: never read), output.
std::vector<Binding> conv_bindings(LoweringContext& lc, const graph::Node& n, int32_t* has_bias) {
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? &lc.tensor(n.inputs[2]) : nullptr;
  *has_bias = bias ? 1 : 0;
  return {{lc.tensor(n.inputs[0]).range, false}, {w.range, false}, {bias ? bias->range : w.range, false},
          {lc.tensor(n.outputs[0]).range, true}};
}

// The attributes a direct convolution reads, `rank` values each.
struct ConvAttrs {
  std::vector<uint32_t> stride, padding, dilation;
  int64_t groups;
};

// What conv3d and conv_transpose2d share: the bindings, the leading element
// count, the key and the work estimate. `push_shape` writes the rest of the
// push-constant layout of the kernel's own shader.
template <typename PushShape>
Status lower_direct_conv(LoweringContext& lc, const graph::Node& n, const char* kernel, size_t rank, bool transposed,
                         PushShape push_shape) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const std::vector<uint32_t> ones(rank, 1), zeros(rank, 0);
  const ConvAttrs attrs{ints_attr(n, "stride", ones), ints_attr(n, "padding", zeros), ints_attr(n, "dilation", ones),
                        graph::attr_int(n.attrs, "groups", 1)};
  int32_t has_bias = 0;
  std::vector<Binding> bindings = conv_bindings(lc, n, &has_bias);
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push_shape(push, x, w, y, attrs);
  KernelKey key{std::string(kernel) + float_suffix(y.dtype), {has_bias}, 4, push.size()};
  gpu::StepWork work;
  work.flops = conv_flops(transposed ? x : y, w);
  return add_dispatch(lc, n, key, std::move(bindings), push, count, std::move(work));
}

Status lower_conv3d(LoweringContext& lc, const graph::Node& n) {
  return lower_direct_conv(lc, n, "conv3d_direct", 3, false,
                           [](PushConstants& push, const TensorRef& x, const TensorRef& w, const TensorRef& y,
                              const ConvAttrs& a) {
                             for (size_t d = 1; d < 5; ++d) push.u32(u32(x.shape[d]));  // C, D, H, W
                             for (size_t d = 1; d < 5; ++d) push.u32(u32(y.shape[d]));  // O, OD, OH, OW
                             for (size_t d = 2; d < 5; ++d) push.u32(u32(w.shape[d]));
                             for (uint32_t v : a.stride) push.u32(v);
                             for (uint32_t v : a.padding) push.u32(v);
                             for (uint32_t v : a.dilation) push.u32(v);
                             push.u32(u32(w.shape[1])).u32(u32(w.shape[0] / a.groups));
                           });
}

Status lower_conv_transpose2d(LoweringContext& lc, const graph::Node& n) {
  return lower_direct_conv(
      lc, n, "conv_transpose2d", 2, true,
      [](PushConstants& push, const TensorRef& x, const TensorRef& w, const TensorRef& y, const ConvAttrs& a) {
        push.u32(u32(x.shape[1])).u32(u32(x.shape[2])).u32(u32(x.shape[3]));
        push.u32(u32(y.shape[1])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
        push.u32(u32(w.shape[2])).u32(u32(w.shape[3])).u32(a.stride[0]).u32(a.stride[1]);
        push.u32(a.padding[0]).u32(a.padding[1]).u32(a.dilation[0]).u32(a.dilation[1]);
        push.u32(u32(x.shape[1] / a.groups)).u32(u32(w.shape[1]));
      });
}

Status lower_pool3d(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const bool is_max = n.op == "max_pool3d";
  std::vector<uint32_t> kernel = ints_attr(n, "kernel", {1, 1, 1});  // required: the registry checked it is there
  std::vector<uint32_t> stride = ints_attr(n, "stride", kernel);      // torch's default stride is the kernel
  std::vector<uint32_t> padding = ints_attr(n, "padding", {0, 0, 0});
  std::vector<uint32_t> dilation = is_max ? ints_attr(n, "dilation", {1, 1, 1}) : std::vector<uint32_t>{1, 1, 1};
  const int32_t include_pad = graph::attr_int(n.attrs, "count_include_pad", 1) != 0 ? 1 : 0;
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  for (size_t d = 2; d < 5; ++d) push.u32(u32(x.shape[d]));
  for (size_t d = 2; d < 5; ++d) push.u32(u32(y.shape[d]));
  for (const auto* v : {&kernel, &stride, &padding, &dilation}) {
    for (uint32_t e : *v) push.u32(e);
  }
  KernelKey key{std::string("pool3d") + float_suffix(y.dtype), {is_max ? 1 : 0, include_pad}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

Status lower_resize(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  graph::ResizeMode mode = graph::ResizeMode::kNearest;
  graph::parse_resize_mode(graph::attr_string(attrs, "mode", "nearest"), &mode);
  const bool align = graph::attr_int(attrs, "align_corners", 0) != 0;
  std::vector<double> scales = graph::attr_floats(attrs, "scales");
  // The scales are worked out here once, as the CPU kernel does, so both read the same floats.
  float sh = graph::resize_scale(x.shape[2], y.shape[2], align, scales.size() == 2 ? scales[0] : 0.0);
  float sw = graph::resize_scale(x.shape[3], y.shape[3], align, scales.size() == 2 ? scales[1] : 0.0);
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push.u32(u32(x.shape[2])).u32(u32(x.shape[3])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
  push.f32(sh).f32(sw);
  KernelKey key{std::string("resize") + float_suffix(y.dtype), {static_cast<int32_t>(mode), align ? 1 : 0}, 2,
                push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

Status lower_grid_sample(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& grid = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  graph::GridSampleMode mode = graph::GridSampleMode::kBilinear;
  graph::GridSamplePadding padding = graph::GridSamplePadding::kZeros;
  graph::parse_grid_sample_mode(graph::attr_string(attrs, "mode", "bilinear"), &mode);
  graph::parse_grid_sample_padding(graph::attr_string(attrs, "padding_mode", "zeros"), &padding);
  const int32_t align = graph::attr_int(attrs, "align_corners", 0) != 0 ? 1 : 0;
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push.u32(u32(x.shape[1])).u32(u32(x.shape[2])).u32(u32(x.shape[3])).u32(u32(y.shape[2])).u32(u32(y.shape[3]));
  KernelKey key{std::string("grid_sample") + float_suffix(y.dtype),
                {static_cast<int32_t>(mode), static_cast<int32_t>(padding), align}, 3, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {grid.range, false}, {y.range, true}}, push, count);
}

}  // namespace

void add_spatial_kernels(std::vector<OpKernel>& table) {
  add_kernels(table, kFloatDTypes, check_float_inputs,
              {{"conv3d", lower_conv3d}, {"conv_transpose2d", lower_conv_transpose2d}, {"avg_pool3d", lower_pool3d},
               {"max_pool3d", lower_pool3d}, {"resize", lower_resize}, {"grid_sample", lower_grid_sample}});
}

}  // namespace gpuu::kernels
