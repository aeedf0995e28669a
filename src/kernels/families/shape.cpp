// Data-movement kernels: transpose, reshape, slice, concat, pad (all modes),
// expand, flip, cast and where, for every dtype. Elements move as 32-bit
// words (shaders/elements.glsl), so no 8- or 16-bit storage feature is
// needed; contiguous moves are copies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "base/half.h"
#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "kernels/fusion.h"
#include "kernels/op_table.h"
#include "kernels/region_plan.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

constexpr uint32_t kConcatInputsPerDispatch = op_codes::kLimitConcatInputs;  // input bindings of concat_inputs.comp

uint32_t element_size(DType dtype) { return static_cast<uint32_t>(graph::dtype_size(dtype)); }

uint32_t numel_u32(const graph::Shape& shape) { return static_cast<uint32_t>(graph::shape_numel(shape)); }

Result<graph::AttrMap> attrs_of(const graph::Node& n) { return graph::resolve_attrs(n); }

// out[i] = x[base + sum_d coord_d(i) * strides[d]] over `shape`. Size-1 dims go
// and neighbours that walk memory as one dim merge, so a contiguous result
// becomes a plain copy and the shader divides less.
Status lower_strided(LoweringContext& lc, const graph::Node& n, const TensorRef& x, const TensorRef& y,
                     const graph::Shape& shape, const std::vector<int64_t>& strides, int64_t base) {
  const MergedDims merged = merge_dims(shape, strides, shape.size());
  const std::vector<int64_t>& dims = merged.dims;
  const std::vector<int64_t>& steps = merged.steps;
  const uint32_t esize = element_size(x.dtype);
  const uint32_t count = numel_u32(shape);
  if (dims.empty() || (dims.size() == 1 && steps[0] == 1)) {
    add_copy(lc, n, x.range, static_cast<VkDeviceSize>(base) * esize, y.range,
             static_cast<VkDeviceSize>(count) * esize);
    return Status::Ok();
  }
  std::vector<uint32_t> d32(dims.begin(), dims.end()), s32(steps.begin(), steps.end());
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(d32.size())).u32(static_cast<uint32_t>(base));
  push.u32_array(d32, kMaxRank).u32_array(s32, kMaxRank);
  KernelKey key{"strided_copy", {static_cast<int32_t>(esize)}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, mover_invocations(count, esize));
}

std::string any_dtype(const graph::Graph&, const graph::Node&) { return ""; }

// What a transpose or slice reads: out[i] = x[base + sum_d coord_d(i) * strides[d]].
struct StridedRead {
  std::vector<int64_t> strides;
  int64_t base = 0;
};
StridedRead strided_read(const graph::Node& n, const graph::AttrMap& attrs, const graph::Shape& x_shape,
                         const graph::Shape& y_shape) {
  StridedRead read;
  if (n.op == "transpose") {  // output dim i walks input dim perm[i]
    std::vector<int64_t> perm = graph::attr_ints(attrs, "perm");
    std::vector<int64_t> in_strides = graph::row_major_strides(x_shape);
    for (int64_t p : perm) read.strides.push_back(in_strides[static_cast<size_t>(p)]);
    return read;
  }
  graph::SliceReads reads = graph::slice_reads(attrs, x_shape, y_shape);
  read.strides = reads.strides;
  read.base = graph::shape_numel(y_shape) == 0 ? 0 : reads.base;  // nothing read: keep the base in range
  return read;
}

Status lower_strided_read(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const StridedRead read = strided_read(n, attrs, x.shape, y.shape);
  return lower_strided(lc, n, x, y, y.shape, read.strides, read.base);
}

// Tensors of any rank (OpKernel::any_rank), as long as the walk
// merges into at most kMaxRank dims (a Swin-3D window partition's rank-8
// transpose moves 5).
std::string strided_read_check(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& x = g.value(n.inputs[0]);
  const graph::Value& y = g.value(n.outputs[0]);
  if (x.shape.size() <= kMaxRank && y.shape.size() <= kMaxRank) return "";
  Result<graph::AttrMap> attrs = attrs_of(n);
  if (!attrs.ok()) return attrs.status().message();
  const StridedRead read = strided_read(n, *attrs, x.shape, y.shape);
  const size_t walked = merge_dims(y.shape, read.strides, y.shape.size()).dims.size();
  if (walked <= kMaxRank) return "";
  return "Vulkan " + n.op + " of '" + x.name + "' walks " + std::to_string(walked) + " separate dims (at most " +
         std::to_string(kMaxRank) + ")";
}

Status lower_reshape(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  // Row-major bytes are already in the new order.
  add_copy(lc, n, x.range, 0, y.range, static_cast<VkDeviceSize>(graph::shape_numel(x.shape)) * element_size(x.dtype));
  return Status::Ok();
}

// One concat_inputs dispatch over at most kConcatInputsPerDispatch inputs.
Status concat_dispatch(LoweringContext& lc, const graph::Node& n, const std::vector<TensorRef>& inputs, size_t axis,
                       const TensorRef& out) {
  uint32_t inner = 1;
  for (size_t d = axis + 1; d < out.shape.size(); ++d) inner *= static_cast<uint32_t>(out.shape[d]);
  std::vector<uint32_t> start{0};
  for (const TensorRef& t : inputs) start.push_back(start.back() + static_cast<uint32_t>(t.shape[axis]));
  const uint32_t esize = element_size(out.dtype);
  const uint32_t count = numel_u32(out.shape);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(out.shape[axis])).u32(inner).u32(static_cast<uint32_t>(inputs.size()));
  for (size_t k = 0; k <= kConcatInputsPerDispatch; ++k) push.u32(start[std::min(k, start.size() - 1)]);
  std::vector<Binding> bindings;
  for (size_t k = 0; k < kConcatInputsPerDispatch; ++k) {
    bindings.push_back({inputs[k < inputs.size() ? k : 0].range, false});
  }
  bindings.push_back({out.range, true});
  KernelKey key{"concat_inputs", {static_cast<int32_t>(esize)}, kConcatInputsPerDispatch + 1, push.size()};
  return add_dispatch(lc, n, key, std::move(bindings), push, mover_invocations(count, esize));
}

// A concat whose output is written over `over`'s memory (slice_scatter of a
// program state updated in place): the parts that are `over`'s own slices
// already lie where they go; each other part is copied to its place, one
// copy region per step of the axes before `axis`.
Status lower_concat_in_place(LoweringContext& lc, const graph::Node& n, size_t axis, graph::ValueId over) {
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const VkDeviceSize esize = element_size(y.dtype);
  VkDeviceSize outer = 1, inner = esize;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<VkDeviceSize>(y.shape[d]);
  for (size_t d = axis + 1; d < y.shape.size(); ++d) inner *= static_cast<VkDeviceSize>(y.shape[d]);
  const auto axis_len = static_cast<VkDeviceSize>(y.shape[axis]);
  VkDeviceSize start = 0;  // where part k begins along the axis
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const TensorRef& part = lc.tensor(n.inputs[k]);
    const auto len = static_cast<VkDeviceSize>(part.shape[axis]);
    if (len * inner * outer > 0 && !concat_part_in_place(lc.graph, n, k, over)) {
      Step step;
      step.kind = Step::Kind::kCopy;
      step.label = n.name;
      step.work.ops = n.op;
      step.copy_src = part.range;
      step.copy_dst = y.range;
      // Rows that follow each other in both are one region.
      const bool whole_rows = len == axis_len || outer == 1;
      for (VkDeviceSize o = 0; o < (whole_rows ? 1 : outer); ++o) {
        step.copy_regions.push_back({o * len * inner, (o * axis_len + start) * inner,
                                     whole_rows ? outer * len * inner : len * inner});
      }
      lc.sequence.add(std::move(step));
    }
    start += len;
  }
  return Status::Ok();
}

Status lower_concat(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, attrs_of(n));
  const TensorRef& y = lc.tensor(n.outputs[0]);
  auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), y.shape.size()));
  if (graph::ValueId over = lc.written_over_of(n.outputs[0]); over != graph::kNone) {
    return lower_concat_in_place(lc, n, axis, over);
  }
  uint32_t max_buffers = lc.ctx.properties().limits.maxPerStageDescriptorStorageBuffers;
  if (max_buffers < kConcatInputsPerDispatch + 1) {
    return err(StatusCode::kUnsupported, "node '", n.name, "' (concat) needs ", kConcatInputsPerDispatch + 1,
               " storage buffers per shader stage; device '", lc.ctx.device_name(), "' allows ", max_buffers);
  }
  std::vector<TensorRef> inputs;
  for (graph::ValueId id : n.inputs) inputs.push_back(lc.tensor(id));
  if (inputs.size() == 1) return lower_reshape(lc, n);  // a copy
  // Concatenation is associative: past 8 inputs, groups of 8 are joined into
  // temporaries first, until one dispatch can take them all.
  while (inputs.size() > kConcatInputsPerDispatch) {
    std::vector<TensorRef> joined;
    for (size_t first = 0; first < inputs.size(); first += kConcatInputsPerDispatch) {
      size_t last = std::min(first + kConcatInputsPerDispatch, inputs.size());
      std::vector<TensorRef> group(inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                   inputs.begin() + static_cast<std::ptrdiff_t>(last));
      if (group.size() == 1) {
        joined.push_back(group[0]);
        continue;
      }
      TensorRef part{BufferRange{}, y.dtype, group[0].shape};
      part.shape[axis] = 0;
      for (const TensorRef& t : group) part.shape[axis] += t.shape[axis];
      VkDeviceSize bytes = static_cast<VkDeviceSize>(graph::shape_numel(part.shape)) * element_size(y.dtype);
      GPUU_ASSIGN_OR_RETURN(part.range, lc.scratch(std::max<VkDeviceSize>((bytes + 3) / 4 * 4, 4), "concat group"));
      GPUU_RETURN_IF_ERROR(concat_dispatch(lc, n, group, axis, part));
      joined.push_back(part);
    }
    inputs = std::move(joined);
  }
  return concat_dispatch(lc, n, inputs, axis, y);
}

// The bits of `value` in `dtype`, converted as the CPU reference's cast does
// (integers truncate toward zero and saturate; bool is value != 0).
uint64_t fill_bits(DType dtype, double value) {
  auto saturate = [value](double lo, double hi) -> int64_t {
    if (std::isnan(value)) return 0;
    if (value >= hi) return static_cast<int64_t>(hi);
    if (value <= lo) return static_cast<int64_t>(lo);
    return static_cast<int64_t>(value);
  };
  switch (dtype) {
    case DType::kF32: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    case DType::kF16: return double_to_half(value);
    case DType::kI32: return static_cast<uint32_t>(static_cast<int32_t>(saturate(-2147483648.0, 2147483647.0)));
    case DType::kI8: return static_cast<uint8_t>(static_cast<int8_t>(saturate(-128.0, 127.0)));
    case DType::kI16: return static_cast<uint16_t>(static_cast<int16_t>(saturate(-32768.0, 32767.0)));
    case DType::kBool: return value != 0.0 ? 1 : 0;
    case DType::kI64: {
      if (std::isnan(value)) return 0;
      if (value >= 9223372036854775807.0) return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      if (value <= -9223372036854775808.0) return static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
      return static_cast<uint64_t>(static_cast<int64_t>(value));
    }
  }
  return 0;
}

Status lower_pad(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  std::vector<int64_t> pads = graph::attr_ints(attrs, "pads");
  std::vector<uint32_t> lead;
  for (size_t d = 0; d < x.shape.size(); ++d) lead.push_back(static_cast<uint32_t>(pads[2 * d]));
  uint64_t fill = fill_bits(y.dtype, graph::attr_float(attrs, "value", 0.0));
  const uint32_t esize = element_size(y.dtype);
  const uint32_t count = numel_u32(y.shape);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(y.shape.size()));
  push.u32(static_cast<uint32_t>(fill)).u32(static_cast<uint32_t>(fill >> 32));
  push.u32_array(to_u32(y.shape), kMaxRank).u32_array(to_u32(x.shape), kMaxRank).u32_array(lead, kMaxRank);
  std::string mode = graph::attr_string(attrs, "mode", "constant");
  static const std::map<std::string, int32_t> modes = op_codes::to_map(op_codes::kPadModeTable);
  auto known = modes.find(mode);
  int32_t mode_id = known == modes.end() ? op_codes::kPadModeConstant : known->second;
  KernelKey key{"pad_constant", {static_cast<int32_t>(esize), mode_id}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, mover_invocations(count, esize));
}

// A zero stride repeats the input along every broadcast dim.
Status lower_expand(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  if (graph::shape_numel(y.shape) == 0) return Status::Ok();
  std::vector<int64_t> in_strides = graph::row_major_strides(x.shape);
  std::vector<int64_t> strides(y.shape.size(), 0);
  size_t lead = y.shape.size() - x.shape.size();
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (x.shape[d] != 1) strides[lead + d] = in_strides[d];
  }
  return lower_strided(lc, n, x, y, y.shape, strides, 0);
}

// A flipped axis starts at its last element with a negative stride (the
// shader's 32-bit arithmetic wraps back into range).
Status lower_flip(LoweringContext& lc, const graph::Node& n) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, attrs_of(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  if (graph::shape_numel(y.shape) == 0) return Status::Ok();
  std::vector<int64_t> strides = graph::row_major_strides(x.shape);
  int64_t base = 0;
  for (int64_t axis : graph::attr_ints(attrs, "axes")) {
    auto d = static_cast<size_t>(graph::normalize_axis(axis, x.shape.size()));
    if (x.shape[d] <= 1) continue;
    base += (x.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return lower_strided(lc, n, x, y, y.shape, strides, base);
}

Status lower_cast(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint32_t count = numel_u32(y.shape);
  if (x.dtype == y.dtype) {
    add_copy(lc, n, x.range, 0, y.range, static_cast<VkDeviceSize>(count) * element_size(x.dtype));
    return Status::Ok();
  }
  const uint32_t esize = element_size(y.dtype);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(x.dtype)).u32(static_cast<uint32_t>(y.dtype)).u32(element_size(x.dtype));
  KernelKey key{"cast_convert", {static_cast<int32_t>(esize)}, 2, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {y.range, true}}, push, mover_invocations(count, esize));
}

Status lower_where(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& cond = lc.tensor(n.inputs[0]);
  const TensorRef& a = lc.tensor(n.inputs[1]);
  const TensorRef& b = lc.tensor(n.inputs[2]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const uint32_t esize = element_size(y.dtype);
  const uint32_t count = numel_u32(y.shape);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(y.shape.size()));
  push.u32_array(to_u32(y.shape), kMaxRank);
  push.u32_array(broadcast_strides(cond.shape, y.shape), kMaxRank);
  push.u32_array(broadcast_strides(a.shape, y.shape), kMaxRank);
  push.u32_array(broadcast_strides(b.shape, y.shape), kMaxRank);
  KernelKey key{"where_select", {static_cast<int32_t>(esize)}, 4, push.size()};
  return add_dispatch(lc, n, key, {{cond.range, false}, {a.range, false}, {b.range, false}, {y.range, true}}, push,
                      mover_invocations(count, esize));
}

std::string where_check(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& cond = g.value(n.inputs[0]);
  if (cond.dtype != DType::kBool) {
    return "Vulkan where takes a bool condition, input '" + cond.name + "' is " + graph::dtype_name(cond.dtype);
  }
  return "";
}

}  // namespace

void add_shape_kernels(std::vector<OpKernel>& table) {
  // int8 and int16 values (a quantized model's, packed four or two to a
  // word) are moved and cast (to and from the float islands between quantized
  // ops) on the GPU too: byte and half-word moves, as for bool.
  // Reshape is a byte copy, transpose and slice walk merged dims: any rank.
  table.push_back(OpKernel{"reshape", kAllDTypes, any_dtype, lower_reshape, 0, nullptr, nullptr, true});
  for (const char* op : {"transpose", "slice"}) {
    table.push_back(OpKernel{op, kAllDTypes, strided_read_check, lower_strided_read, 0, nullptr, nullptr, true});
  }
  add_kernels(table, kAllDTypes, any_dtype, {{"concat", lower_concat}});
  add_kernels(table, kStoredDTypes, any_dtype, {{"pad", lower_pad}, {"expand", lower_expand}, {"flip", lower_flip}});
  // A cast inside a fused chain reads views as the chain's kernel does (a half
  // model's SiLU begins with one, on the gate's columns of a merged GEMM); a
  // cast on its own reads its input as itself (region_plan.cpp).
  table.push_back(OpKernel{"cast", kAllDTypes, any_dtype, lower_cast, 0, takes_elementwise_view});
  // where reads each input at the output element's (broadcast) index.
  table.push_back(OpKernel{"where", kStoredDTypes, where_check, lower_where, 1, nullptr, same_element_operand});
}

}  // namespace gpuu::kernels
