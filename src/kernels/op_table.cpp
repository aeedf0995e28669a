// The op table and the helpers that kernel families share.
#include "kernels/op_table.h"

#include <algorithm>
#include <cstring>

#include "graph/grid_sample.h"
#include "graph/resize_index.h"

namespace gpuu::kernels {

// The shaders read dtypes, resize and grid_sample modes as the codes of op_codes.txt,
// which the kernels pass on straight from the graph's enums.
static_assert(static_cast<int32_t>(graph::DType::kF32) == op_codes::kDtypeF32 &&
              static_cast<int32_t>(graph::DType::kF16) == op_codes::kDtypeF16 &&
              static_cast<int32_t>(graph::DType::kI32) == op_codes::kDtypeI32 &&
              static_cast<int32_t>(graph::DType::kI64) == op_codes::kDtypeI64 &&
              static_cast<int32_t>(graph::DType::kI8) == op_codes::kDtypeI8 &&
              static_cast<int32_t>(graph::DType::kBool) == op_codes::kDtypeBool);
static_assert(static_cast<int32_t>(graph::ResizeMode::kNearest) == op_codes::kResizeModeNearest &&
              static_cast<int32_t>(graph::ResizeMode::kNearestExact) == op_codes::kResizeModeNearestExact &&
              static_cast<int32_t>(graph::ResizeMode::kBilinear) == op_codes::kResizeModeBilinear);
static_assert(static_cast<int32_t>(graph::GridSampleMode::kBilinear) == op_codes::kGridSampleModeBilinear &&
              static_cast<int32_t>(graph::GridSampleMode::kNearest) == op_codes::kGridSampleModeNearest &&
              static_cast<int32_t>(graph::GridSampleMode::kBicubic) == op_codes::kGridSampleModeBicubic &&
              static_cast<int32_t>(graph::GridSamplePadding::kZeros) == op_codes::kGridSamplePaddingZeros &&
              static_cast<int32_t>(graph::GridSamplePadding::kBorder) == op_codes::kGridSamplePaddingBorder &&
              static_cast<int32_t>(graph::GridSamplePadding::kReflection) == op_codes::kGridSamplePaddingReflection);

void add_kernels(std::vector<OpKernel>& table, DTypeSet dtypes,
                 std::string (*check)(const graph::Graph&, const graph::Node&),
                 std::initializer_list<OpLowering> ops) {
  for (const OpLowering& o : ops) table.push_back(OpKernel{o.op, dtypes, check, o.lower});
}

const std::vector<OpKernel>& vulkan_op_kernels() {
  static const std::vector<OpKernel> table = [] {
    std::vector<OpKernel> t;
    for (auto add_family : {add_elementwise_kernels, add_linalg_kernels, add_conv_pool_kernels, add_spatial_kernels,
                            add_reduce_norm_kernels, add_shape_kernels, add_index_kernels, add_custom_kernels,
                            add_quant_kernels, add_attention_kernels}) {
      add_family(t);
    }
    return t;
  }();
  return table;
}

const OpKernel* find_op_kernel(const std::string& op) {
  for (const OpKernel& k : vulkan_op_kernels()) {
    if (op == k.op) return &k;
  }
  return nullptr;
}

std::string vulkan_supports(const graph::Graph& graph, const graph::Node& node) {
  const OpKernel* kernel = find_op_kernel(node.op);
  if (!kernel) return "no Vulkan kernel for op '" + node.op + "'";
  std::string limits = check_tensor_limits(graph, node);
  if (!limits.empty()) return limits;
  return kernel->check(graph, node);
}

graph::ValueId LoweringContext::written_over_of(graph::ValueId id) const {
  return static_cast<size_t>(id) < written_over.size() ? written_over[static_cast<size_t>(id)] : graph::kNone;
}

bool same_element_operand(const graph::Graph& graph, const graph::Node& node, size_t slot) {
  if (slot >= node.inputs.size() || node.inputs[slot] < 0 || node.outputs.size() != 1) return false;
  const graph::Value& in = graph.value(node.inputs[slot]);
  const graph::Value& out = graph.value(node.outputs[0]);
  return in.dtype == out.dtype && in.shape == out.shape;
}

StridedView LoweringContext::view_of(graph::ValueId id) const {
  if (static_cast<size_t>(id) < views.size() && views[static_cast<size_t>(id)].root != graph::kNone) {
    return views[static_cast<size_t>(id)];
  }
  return StridedView{id, 0, graph::row_major_strides(graph.value(id).shape)};
}

bool LoweringContext::has_view(graph::ValueId id) const {
  return id >= 0 && static_cast<size_t>(id) < views.size() && views[static_cast<size_t>(id)].root != graph::kNone;
}

PushConstants& PushConstants::u32(uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  bytes_.insert(bytes_.end(), b, b + 4);
  return *this;
}

PushConstants& PushConstants::append(const PushConstants& more) {
  bytes_.insert(bytes_.end(), more.bytes_.begin(), more.bytes_.end());
  return *this;
}

int32_t float_bits(float v) {
  int32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

PushConstants& PushConstants::f32(float v) { return u32(static_cast<uint32_t>(float_bits(v))); }

PushConstants& PushConstants::u32_array(const std::vector<uint32_t>& v, size_t padded_to) {
  for (size_t i = 0; i < padded_to; ++i) u32(i < v.size() ? v[i] : 1u);
  return *this;
}

const char* float_suffix(graph::DType dtype) {
  if (dtype == graph::DType::kF32) return "_f32";
  if (dtype == graph::DType::kF16) return "_f16";
  return "";
}

bool is_float(graph::DType dtype) { return dtype == graph::DType::kF32 || dtype == graph::DType::kF16; }

std::vector<uint32_t> broadcast_strides(const graph::Shape& in_shape, const graph::Shape& out_shape) {
  std::vector<uint32_t> strides(out_shape.size(), 0);
  uint32_t stride = 1;
  for (size_t k = 0; k < in_shape.size(); ++k) {
    size_t in_axis = in_shape.size() - 1 - k;
    size_t out_axis = out_shape.size() - 1 - k;
    int64_t dim = in_shape[in_axis];
    strides[out_axis] = dim == 1 ? 0u : stride;
    stride *= static_cast<uint32_t>(dim);
  }
  return strides;
}

BroadcastWalk broadcast_walk(const std::vector<graph::Shape>& in_shapes, const graph::Shape& out_shape) {
  std::vector<std::vector<int64_t>> full;
  for (const graph::Shape& in : in_shapes) {
    const std::vector<uint32_t> strides = broadcast_strides(in, out_shape);
    full.emplace_back(strides.begin(), strides.end());
  }
  const MergedWalk merged = merge_walk(out_shape, full, out_shape.size());
  BroadcastWalk walk;
  walk.dims = to_u32(merged.dims);
  for (const std::vector<int64_t>& steps : merged.steps) walk.strides.push_back(to_u32(steps));
  if (walk.dims.empty()) {  // one element
    walk.dims.push_back(1);
    for (std::vector<uint32_t>& s : walk.strides) s.push_back(0);
  }
  return walk;
}

std::vector<uint32_t> to_u32(const graph::Shape& shape) {
  std::vector<uint32_t> out;
  for (int64_t d : shape) out.push_back(static_cast<uint32_t>(d));
  return out;
}

uint64_t mover_invocations(uint64_t count, uint32_t esize) {
  if (esize >= 4) return count;
  uint64_t per_word = 4 / esize;
  return (count + per_word - 1) / per_word;
}

std::string check_float_inputs(const graph::Graph& graph, const graph::Node& node) {
  return check_float_inputs_but(graph, node, node.inputs.size());
}

std::string check_float_inputs_but(const graph::Graph& graph, const graph::Node& node, size_t skipped) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const graph::ValueId in = node.inputs[i];
    if (i != skipped && in >= 0 && !is_float(graph.value(in).dtype)) {
      return std::string("Vulkan ") + node.op + " kernels take f32/f16 tensors, input '" + graph.value(in).name +
             "' is " + graph::dtype_name(graph.value(in).dtype);
    }
  }
  return "";
}

Status require_f16_support(const LoweringContext& lc, const graph::Node& node, graph::DType dtype) {
  if (dtype != graph::DType::kF16) return Status::Ok();
  if (lc.ctx.has_feature(kFeatureShaderFloat16) && lc.ctx.has_feature(kFeatureStorageBuffer16Bit)) {
    return Status::Ok();
  }
  return err(StatusCode::kUnsupported, "node '", node.name, "' (", node.op, ") is f16 but device '",
             lc.ctx.device_name(), "' lacks shaderFloat16 / storageBuffer16BitAccess");
}

Status require_int64_support(const LoweringContext& lc, const graph::Node& node, graph::DType dtype) {
  if (dtype != graph::DType::kI64 || lc.ctx.has_feature(kFeatureShaderInt64)) return Status::Ok();
  return err(StatusCode::kUnsupported, "node '", node.name, "' (", node.op, ") is i64 but device '",
             lc.ctx.device_name(), "' lacks shaderInt64");
}

Status require_byte_storage(const LoweringContext& lc, const graph::Node& node, graph::DType dtype) {
  if (graph::dtype_size(dtype) != 1 || lc.ctx.has_feature(kFeatureStorageBuffer8Bit)) return Status::Ok();
  return err(StatusCode::kUnsupported, "node '", node.name, "' (", node.op, ") is ", graph::dtype_name(dtype),
             " but device '", lc.ctx.device_name(), "' lacks storageBuffer8BitAccess");
}

std::string check_tensor_limits(const graph::Graph& graph, const graph::Node& node) {
  const OpKernel* kernel = find_op_kernel(node.op);
  const bool any_rank = kernel && kernel->any_rank;
  auto check = [&](graph::ValueId id) -> std::string {
    if (id < 0) return "";
    const graph::Value& v = graph.value(id);
    if (v.shape.size() > kMaxRank && !any_rank) {
      return "tensor '" + v.name + "' has rank " + std::to_string(v.shape.size()) + " > " + std::to_string(kMaxRank);
    }
    if (graph::shape_numel(v.shape) > (int64_t{1} << 31)) {
      return "tensor '" + v.name + "' has more than 2^31 elements";
    }
    return "";
  };
  for (graph::ValueId id : node.inputs) {
    std::string why = check(id);
    if (!why.empty()) return why;
  }
  for (graph::ValueId id : node.outputs) {
    std::string why = check(id);
    if (!why.empty()) return why;
  }
  return "";
}

namespace {

Status append_dispatch(LoweringContext& lc, std::string label, const KernelKey& key, std::vector<Binding> bindings,
                       const PushConstants& push, uint64_t invocations, gpu::StepWork work) {
  GPUU_ASSIGN_OR_RETURN(const Kernel* kernel, lc.kernels.get(key));
  Step step;
  step.kind = Step::Kind::kDispatch;
  step.label = std::move(label);
  step.work = std::move(work);
  step.kernel = kernel;
  step.bindings = std::move(bindings);
  step.push_constants = push.bytes();
  dispatch_groups(invocations, kWorkgroupSize, lc.max_groups_x(), step.groups);
  lc.sequence.add(std::move(step));
  return Status::Ok();
}

}  // namespace

Status add_dispatch(LoweringContext& lc, const graph::Node& node, const KernelKey& key, std::vector<Binding> bindings,
                    const PushConstants& push, uint64_t invocations, gpu::StepWork work) {
  if (work.ops.empty()) work.ops = node.op;
  return append_dispatch(lc, node.name, key, std::move(bindings), push, invocations, std::move(work));
}

Status add_dispatch(LoweringContext& lc, const std::vector<graph::NodeId>& nodes, const KernelKey& key,
                    std::vector<Binding> bindings, const PushConstants& push, uint64_t invocations,
                    gpu::StepWork work) {
  std::string label, ops;
  for (graph::NodeId id : nodes) {
    label += (label.empty() ? "" : "+") + lc.graph.node(id).name;
    ops += (ops.empty() ? "" : "+") + lc.graph.node(id).op;
  }
  if (work.ops.empty()) work.ops = std::move(ops);
  return append_dispatch(lc, std::move(label), key, std::move(bindings), push, invocations, std::move(work));
}

void add_copy(LoweringContext& lc, const graph::Node& n, const BufferRange& src, VkDeviceSize src_byte,
              const BufferRange& dst, VkDeviceSize bytes) {
  if (bytes == 0) return;
  Step step;
  step.kind = Step::Kind::kCopy;
  step.label = n.name;
  step.work.ops = n.op;
  step.copy_src = BufferRange{src.buffer, src.offset + src_byte, bytes};
  step.copy_dst = BufferRange{dst.buffer, dst.offset, bytes};
  lc.sequence.add(std::move(step));
}

uint64_t gemm_flops(uint64_t m, uint64_t n, uint64_t k, uint64_t batches) { return 2 * m * n * k * batches; }

uint64_t conv_flops(const TensorRef& side, const TensorRef& weight) {
  if (weight.shape.empty() || weight.shape[0] == 0) return 0;
  const auto per_channel = static_cast<uint64_t>(graph::shape_numel(weight.shape) / weight.shape[0]);
  return 2 * static_cast<uint64_t>(graph::shape_numel(side.shape)) * per_channel;
}

MergedWalk merge_walk(const graph::Shape& shape, const std::vector<std::vector<int64_t>>& strides, size_t count,
                      std::optional<size_t> apart) {
  MergedWalk m;
  m.steps.resize(strides.size());
  for (size_t d = 0; d < count; ++d) {
    if (shape[d] == 1 && d != apart) continue;
    const bool back_is_apart = m.apart_at && *m.apart_at + 1 == m.dims.size();
    if (d == apart) m.apart_at = m.dims.size();
    bool merges = !m.dims.empty() && d != apart && !back_is_apart;
    for (size_t j = 0; j < strides.size() && merges; ++j) merges = m.steps[j].back() == strides[j][d] * shape[d];
    if (merges) {
      m.dims.back() *= shape[d];
      for (size_t j = 0; j < strides.size(); ++j) m.steps[j].back() = strides[j][d];
    } else {
      m.dims.push_back(shape[d]);
      for (size_t j = 0; j < strides.size(); ++j) m.steps[j].push_back(strides[j][d]);
    }
  }
  return m;
}

MergedDims merge_dims(const graph::Shape& shape, const std::vector<int64_t>& strides, size_t count) {
  MergedWalk walk = merge_walk(shape, {strides}, count);
  return MergedDims{std::move(walk.dims), std::move(walk.steps[0])};
}

bool view_in_32_bits(const StridedView& view) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  return view.offset >= 0 && view.offset < kLimit &&
         std::all_of(view.strides.begin(), view.strides.end(), [](int64_t s) { return s >= 0 && s < kLimit; });
}

}  // namespace gpuu::kernels
