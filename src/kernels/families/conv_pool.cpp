// Kernel family 'conv_pool': conv2d (tiled implicit GEMM, or direct where
// there are few output channels per group) and avg/max pool2d over NCHW, f32/f16
// (max_pool2d on i8/i32 goes to families/quant.cpp).
#include <utility>

#include "graph/op_registry.h"
#include "kernels/gemm_dispatch.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

// Fewer output channels per group than this would leave over 3/4 of each
// (at least) 64-row GEMM tile idle; the direct kernel serves those (depthwise included).
constexpr int64_t kMinGemmChannelsPerGroup = 16;
// Outputs per invocation of conv2d_depthwise.comp, along a row.
constexpr uint64_t kDepthwiseStrip = op_codes::kLimitDepthwiseStrip;

// A (height, width) attribute pair; `fallback` when absent (graphs built by
// add_op store resolved attributes, so this only covers hand-made nodes).
std::vector<uint32_t> pair_attr(const graph::Node& n, const char* name, std::vector<uint32_t> fallback) {
  std::vector<int64_t> v = graph::attr_ints(n.attrs, name);
  if (v.size() != 2) return fallback;
  return {static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
}

// Appends the dispatch that writes the im2col view of `x` for GEMM `d` (its
// conv form's push constants), `view_bytes` of scratch, and points `d` at it.
Status add_im2col(LoweringContext& lc, const graph::Node& n, const TensorRef& x, const GemmChoice& choice,
                  uint64_t view_bytes, GemmDispatch* d, BufferRange* b) {
  // im2col.comp's pixels an invocation: 16 bytes of the element type.
  const uint32_t pixels = 16 / static_cast<uint32_t>(graph::dtype_size(x.dtype));
  const uint32_t rows = d->batches * d->k, chunks = (d->n + pixels - 1) / pixels;
  GPUU_ASSIGN_OR_RETURN(BufferRange view, lc.scratch(view_bytes, "im2col view"));
  PushConstants push;
  push.u32(rows * chunks).u32(chunks).u32(d->n).u32(d->k);
  push.append(d->push);
  const bool aligned = view.offset % 16 == 0;
  KernelKey key{std::string("im2col") + float_suffix(x.dtype), {d->n % pixels == 0 && aligned ? 1 : 0}, 2,
                push.size()};
  gpu::StepWork work;
  work.ops = n.op;
  work.choice = "im2col view " + std::to_string(rows) + " x " + std::to_string(d->n);
  work.bytes = x.range.size + view.size;
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, n, key, {{x.range, false}, {view, true}}, push, uint64_t{rows} * chunks,
                                    std::move(work)));
  d->conv_b = GemmDispatch::kIm2col;
  d->b_vec = d->n % choice.vector == 0 && aligned ? 1 : 0;
  *b = view;
  return Status::Ok();
}

Status lower_conv2d(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& w = lc.tensor(n.inputs[1]);
  const TensorRef* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? &lc.tensor(n.inputs[2]) : nullptr;
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  std::vector<uint32_t> stride = pair_attr(n, "stride", {1, 1});
  std::vector<uint32_t> padding = pair_attr(n, "padding", {0, 0});
  std::vector<uint32_t> dilation = pair_attr(n, "dilation", {1, 1});
  const int64_t groups = graph::attr_int(n.attrs, "groups", 1);
  const uint32_t batch = static_cast<uint32_t>(x.shape[0]), channels = static_cast<uint32_t>(x.shape[1]);
  const uint32_t height = static_cast<uint32_t>(x.shape[2]), width = static_cast<uint32_t>(x.shape[3]);
  const uint32_t out_channels = static_cast<uint32_t>(w.shape[0]), group_channels = static_cast<uint32_t>(w.shape[1]);
  const uint32_t kh = static_cast<uint32_t>(w.shape[2]), kw = static_cast<uint32_t>(w.shape[3]);
  const uint32_t oh = static_cast<uint32_t>(y.shape[2]), ow = static_cast<uint32_t>(y.shape[3]);
  const uint32_t out_per_group = out_channels / static_cast<uint32_t>(groups);
  // Without a bias, binding 2 still needs a buffer: the weight's, never read there.
  BufferRange bias_range = bias ? bias->range : w.range;
  std::vector<Binding> bindings = {{w.range, false}, {x.range, false}, {bias_range, false}, {y.range, true}};
  const int32_t has_bias = bias ? 1 : 0;

  // On a CPU device (lavapipe) a workgroup runs on one core: a GEMM tile mostly
  // idle (fewer pixels or channels than the tile) costs the whole tile's
  // serial work, so there the direct kernel takes every conv without a full
  // tile (H100-sized tiles made resnet's small convs 5x slower on lavapipe).
  const bool cpu_device = lc.ctx.is_cpu_device();
  const uint32_t cpu_tile = op_codes::kLimitGemmTileSmall;
  const bool gemm_fills_a_tile = out_per_group >= cpu_tile && uint64_t{batch} * oh * ow >= cpu_tile;
  // At most 4 output pixels (a squeeze-excite block's 1x1 convolutions on a
  // pooled pixel) is a GEMV (gemv.comp) on every device, however few its
  // output channels: the direct kernel walks each output's window serially
  // in one invocation (efficientnet_b0's squeeze of 240 channels to 10 took
  // 47 us on the H100 for 2,400 multiply-adds).
  const bool gemv_shaped = uint64_t{batch} * oh * ow <= 4;
  // (A GEMM kernel forced by the options, for tests, is used regardless.)
  if (gemv_shaped ||
      (out_per_group >= kMinGemmChannelsPerGroup && (!cpu_device || gemm_fills_a_tile || lc.gemm_force.kernel))) {
    // Per group: [O/groups, C/groups*kH*kW] weight rows x the im2col view
    // [C/groups*kH*kW, batch*OH*OW] of the input.
    GemmDispatch d;
    d.m = out_per_group;
    d.n = batch * oh * ow;
    d.k = group_channels * kh * kw;
    d.batches = static_cast<uint32_t>(groups);
    // Output tile: BM rows = output channels, BN columns = pixels.
    const GemmChoice choice = select_gemm(lc.ctx, y.dtype, lc.gemm_force, GemmProblem{true, d.m, d.n, d.k, d.batches});
    d.push.u32(channels).u32(height).u32(width).u32(out_channels).u32(oh).u32(ow);
    d.push.u32(kh).u32(kw).u32(stride[0]).u32(stride[1]).u32(padding[0]).u32(padding[1]).u32(dilation[0]).u32(dilation[1]);
    d.push.u32(group_channels);
    // The weight rows are read in vectors where whole. The im2col view is
    // gathered, except in a pointwise convolution (1x1, stride 1, no padding),
    // where it is the input itself: read in vectors where a chunk of pixels
    // never straddles two images; and in a patch convolution (stride =
    // kernel, no padding or dilation), read along k in vectors of a tap row
    // where kw and W are whole vectors.
    d.a_vec = d.k % choice.vector == 0 && w.range.offset % 16 == 0 ? 1 : 0;
    const bool unpadded = padding[0] == 0 && padding[1] == 0;
    const bool x_aligned = x.range.offset % 16 == 0;
    if (kh == 1 && kw == 1 && stride[0] == 1 && stride[1] == 1 && unpadded) {
      d.conv_b = GemmDispatch::kPointwise;
      d.b_vec = (oh * ow) % choice.vector == 0 && x_aligned ? 1 : 0;
    } else if (stride[0] == kh && stride[1] == kw && unpadded && dilation[0] == 1 && dilation[1] == 1 &&
               kw % choice.vector == 0 && width % choice.vector == 0 && x_aligned) {
      d.conv_b = GemmDispatch::kPatches;
      d.b_k_contiguous = 1;
      d.b_vec = 1;
    }
    // The view materialized (on GPUs, up to kIm2colMaxBytes): a gathered
    // one; or a pointwise one whose pixel runs are not whole vectors (each
    // element read alone, its image and pixel divided out) where the view's
    // rows, all images' pixels, are.
    BufferRange b = x.range;
    const uint64_t view_bytes = uint64_t{d.batches} * d.k * d.n * graph::dtype_size(x.dtype);
    const bool materialize = d.conv_b == GemmDispatch::kGathered ||
                             (d.conv_b == GemmDispatch::kPointwise && !d.b_vec && d.n % choice.vector == 0);
    if (materialize && choice.kernel != GemmKernel::kGemv && view_bytes <= kIm2colMaxBytes &&
        lc.gemm_force.conv_im2col.value_or(!cpu_device)) {
      GPUU_RETURN_IF_ERROR(add_im2col(lc, n, x, choice, view_bytes, &d, &b));
    }
    // Never aligned: the im2col view has edges (and a pointwise one ragged pixel counts).
    return add_gemm_dispatch(lc, n, choice, d, w.range, b, GemmOutput{&y, bias, true, oh * ow, out_channels});
  }

  // One input channel per group (depthwise): conv2d_depthwise.comp, its
  // window compiled in and a strip of outputs per invocation.
  const bool depthwise = group_channels == 1;
  // Both kernels' push constants start with their invocations and the shapes;
  // the direct one takes its window there too, the depthwise one has it compiled in.
  const uint64_t invocations = depthwise ? count / ow * ((ow + kDepthwiseStrip - 1) / kDepthwiseStrip) : count;
  PushConstants push;
  push.u32(static_cast<uint32_t>(invocations));
  push.u32(channels).u32(height).u32(width).u32(out_channels).u32(oh).u32(ow);
  if (depthwise) {
    push.u32(padding[0]).u32(padding[1]).u32(out_per_group);
  } else {
    push.u32(kh).u32(kw).u32(stride[0]).u32(stride[1]).u32(padding[0]).u32(padding[1]).u32(dilation[0]).u32(dilation[1]);
    push.u32(group_channels).u32(out_per_group);
  }
  // The direct kernels take the input at binding 0 and the weight at 1, and
  // store through the chain the kernel graph offers (its output instead of y).
  std::swap(bindings[0], bindings[1]);
  const GemmEpilogue* epi = lc.epilogue;
  lc.epilogue_taken = epi != nullptr;
  if (epi) bindings[3] = {epi->output->range, true};
  std::vector<int32_t> spec = {has_bias};
  add_epilogue(epi, w.range, &spec, &bindings);
  if (depthwise) {  // constants 17..22: KH, KW, SH, SW, DH, DW
    for (uint32_t v : {kh, kw, stride[0], stride[1], dilation[0], dilation[1]}) spec.push_back(static_cast<int32_t>(v));
  }
  KernelKey key{std::string(depthwise ? "conv2d_depthwise" : "conv2d_direct") + float_suffix(y.dtype), spec,
                static_cast<uint32_t>(bindings.size()), push.size()};
  gpu::StepWork work;
  work.ops = epi ? n.op + "+" + epi->ops : n.op;
  work.choice = depthwise ? "depthwise, " + std::to_string(kh) + "x" + std::to_string(kw) + " window compiled in"
                          : "direct";
  work.why = out_per_group < kMinGemmChannelsPerGroup
                 ? std::to_string(out_per_group) + " output channels per group leave most of a GEMM tile idle"
                 : "a CPU device, and the GEMM would not fill a " + std::to_string(cpu_tile) + "x" +
                       std::to_string(cpu_tile) + " tile";
  work.flops = conv_flops(y, w);
  graph::Node labelled = n;
  if (epi) labelled.name += "+" + epi->label;
  return add_dispatch(lc, labelled, key, std::move(bindings), push, invocations, std::move(work));
}

std::string check_pool2d(const graph::Graph& g, const graph::Node& n) {
  if (n.op == "max_pool2d" && !n.inputs.empty() && n.inputs[0] >= 0 && !is_float(g.value(n.inputs[0]).dtype)) {
    return check_int_pool2d(g, n);  // i8/i16/i32: families/quant.cpp
  }
  return check_float_inputs(g, n);
}

Status lower_pool2d(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  if (!is_float(x.dtype)) return lower_int_pool2d(lc, n);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  const uint64_t count = static_cast<uint64_t>(graph::shape_numel(y.shape));
  if (count == 0) return Status::Ok();
  const bool is_max = n.op == "max_pool2d";
  std::vector<uint32_t> kernel = pair_attr(n, "kernel", {1, 1});  // required: the registry checked it is there
  std::vector<uint32_t> stride = pair_attr(n, "stride", kernel);   // torch's default stride is the kernel
  std::vector<uint32_t> padding = pair_attr(n, "padding", {0, 0});
  std::vector<uint32_t> dilation = is_max ? pair_attr(n, "dilation", {1, 1}) : std::vector<uint32_t>{1, 1};
  const int32_t include_pad = graph::attr_int(n.attrs, "count_include_pad", 1) != 0 ? 1 : 0;
  // ceil_mode needs nothing here: it only adds output positions (y's shape),
  // whose windows the shader clips like any other.
  PushConstants push;
  push.u32(static_cast<uint32_t>(count));
  push.u32(static_cast<uint32_t>(x.shape[2])).u32(static_cast<uint32_t>(x.shape[3]));
  push.u32(static_cast<uint32_t>(y.shape[2])).u32(static_cast<uint32_t>(y.shape[3]));
  push.u32(kernel[0]).u32(kernel[1]).u32(stride[0]).u32(stride[1]).u32(padding[0]).u32(padding[1]);
  push.u32(dilation[0]).u32(dilation[1]);
  KernelKey key{std::string("pool2d") + float_suffix(y.dtype), {is_max ? 1 : 0, include_pad}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, count);
}

}  // namespace

void add_conv_pool_kernels(std::vector<OpKernel>& table) {
  table.insert(table.end(), {{"conv2d", kFloatDTypes, check_float_inputs, lower_conv2d},
                             {"avg_pool2d", kFloatDTypes, check_pool2d, lower_pool2d},
                             {"max_pool2d", kFloatDTypes | kI8DType | kI16DType | kI32DType, check_pool2d, lower_pool2d}});
}

}  // namespace gpuu::kernels
