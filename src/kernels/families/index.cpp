// Index kernels: gather (torch.gather) and index_select over any data dtype,
// with i32 or i64 indices (i64 read as two words: no shaderInt64 needed).
// Constant index tensors are checked here, at lowering, as the CPU reference
// checks every index; runtime ones read nothing out of range (the shader writes 0).
// The scatter-style writes scatter and index_put: their constant indices are
// the registry's to refuse; runtime ones out of range write nothing.
#include <cstring>
#include <map>

#include "graph/index_math.h"
#include "graph/op_registry.h"
#include "kernels/movement.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

using graph::DType;

std::string index_check(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& index = g.value(n.inputs[1]);
  if (index.dtype != DType::kI32 && index.dtype != DType::kI64) {
    return std::string("Vulkan ") + n.op + " takes i32 or i64 indices, input '" + index.name + "' is " +
           graph::dtype_name(index.dtype);
  }
  return "";
}

// A constant index tensor must hold only values in [0, dim): the CPU reference
// refuses anything else, so the delegate does too, before anything runs.
Status check_constant_indices(const LoweringContext& lc, const graph::Node& n, size_t axis) {
  const graph::Value& index = lc.graph.value(n.inputs[1]);
  if (index.constant < 0) return Status::Ok();
  const graph::Value& x = lc.graph.value(n.inputs[0]);
  const int64_t dim = x.shape[axis];
  const Blob& data = lc.graph.constants()[static_cast<size_t>(index.constant)].data;
  const size_t esize = graph::dtype_size(index.dtype);
  const int64_t count = graph::shape_numel(index.shape);
  if (data.size() < static_cast<size_t>(count) * esize) {
    return err(StatusCode::kInvalidArgument, "node '", n.name, "' (", n.op, "): constant index '", index.name,
               "' holds ", data.size(), " bytes, fewer than its ", count, " elements need");
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    if (esize == 8) {
      std::memcpy(&v, data.data() + i * 8, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, data.data() + i * 4, 4);
      v = v32;
    }
    if (v >= 0 && v < dim) continue;
    return err(StatusCode::kInvalidArgument, "node '", n.name, "' (", n.op, "): constant index '", index.name,
               "' holds ", v, " at ", graph::position_string(index.shape, i), ", out of range for axis ", axis,
               " of '", x.name, "' ", graph::dtype_name(x.dtype), graph::shape_to_string(x.shape), " (valid: ",
               dim ? "0.." + std::to_string(dim - 1) : std::string("none, the axis is empty"), ")");
  }
  return Status::Ok();
}

// Output element at coordinates c reads x at c off the axis and at
// index[sum_d c_d * index_strides[d]] on it.
Status lower_indexed(LoweringContext& lc, const graph::Node& n, size_t axis,
                     const std::vector<uint32_t>& index_strides) {
  GPUU_RETURN_IF_ERROR(check_constant_indices(lc, n, axis));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& index = lc.tensor(n.inputs[1]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  const auto esize = static_cast<uint32_t>(graph::dtype_size(y.dtype));
  const auto count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(y.shape.size())).u32(static_cast<uint32_t>(axis));
  push.u32(static_cast<uint32_t>(x.shape[axis]));
  push.u32_array(to_u32(y.shape), kMaxRank);
  push.u32_array(to_u32(graph::row_major_strides(x.shape)), kMaxRank);
  push.u32_array(index_strides, kMaxRank);
  KernelKey key{"index_gather", {static_cast<int32_t>(esize), index.dtype == DType::kI64 ? 1 : 0}, 3, push.size()};
  return add_dispatch(lc, n, key, {{x.range, false}, {index.range, false}, {y.range, true}}, push,
                      mover_invocations(count, esize));
}

Result<size_t> axis_of(const graph::Node& n, size_t rank) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  return static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), rank));
}

Status lower_gather(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  GPUU_ASSIGN_OR_RETURN(size_t axis, axis_of(n, x.shape.size()));
  // The output has the index's shape: output and index coordinates coincide.
  return lower_indexed(lc, n, axis, to_u32(graph::row_major_strides(lc.tensor(n.inputs[1]).shape)));
}

Status lower_index_select(LoweringContext& lc, const graph::Node& n) {
  const TensorRef& x = lc.tensor(n.inputs[0]);
  GPUU_ASSIGN_OR_RETURN(size_t axis, axis_of(n, x.shape.size()));
  // The 1-D index is walked by the axis coordinate alone.
  std::vector<uint32_t> index_strides(x.shape.size(), 0);
  index_strides[axis] = 1;
  return lower_indexed(lc, n, axis, index_strides);
}

// scatter and index_put run as two steps: (1) the input copied into the
// output, (2) one scatter_* dispatch over the updates that writes, or reduces
// into, the output in place. They stay two steps so that an update made in
// place, the output aliasing the input's memory (a KV cache kept as program
// state), runs step 2 alone: step 1 is left out wherever the two ranges are
// one.
Status lower_scatter_into(LoweringContext& lc, const graph::Node& n, bool row_index) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  const TensorRef& x = lc.tensor(n.inputs[0]);
  const TensorRef& index = lc.tensor(n.inputs[1]);
  const TensorRef& updates = lc.tensor(n.inputs[2]);
  const TensorRef& y = lc.tensor(n.outputs[0]);
  // The updates as themselves, or through a view (scatter_takes_view).
  BufferRange updates_range = updates.range;
  int64_t updates_offset = 0;
  std::vector<int64_t> updates_strides = graph::row_major_strides(updates.shape);
  if (lc.has_view(n.inputs[2])) {
    const StridedView view = lc.view_of(n.inputs[2]);
    updates_range = lc.tensor(view.root).range;
    updates_offset = view.offset;
    updates_strides = view.strides;
  }
  const auto axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(attrs, "axis"), x.shape.size()));
  static const std::map<std::string, int32_t> reduces = op_codes::to_map(op_codes::kScatterReduceTable);
  auto reduce = reduces.find(graph::attr_string(attrs, "reduce"));
  if (reduce == reduces.end()) {
    return err(StatusCode::kUnsupported, "node '", n.name, "' (", n.op, "): no kernel for reduce \"",
               graph::attr_string(attrs, "reduce"), "\"");
  }
  const auto esize = static_cast<uint32_t>(graph::dtype_size(y.dtype));
  // Step 1: the base.
  if (x.range.buffer != y.range.buffer || x.range.offset != y.range.offset) {
    add_copy(lc, n, x.range, 0, y.range, static_cast<VkDeviceSize>(graph::shape_numel(x.shape)) * esize);
  }
  // Step 2: the updates land.
  const auto count = static_cast<uint32_t>(graph::shape_numel(updates.shape));
  if (count == 0) return Status::Ok();
  std::string shader = esize == 2 ? "scatter_copy_16" : esize == 1 ? "scatter_copy_8" : "scatter_copy";
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));  // f16: the only 2-byte dtype
  GPUU_RETURN_IF_ERROR(require_byte_storage(lc, n, y.dtype));
  if (reduce->second != op_codes::kScatterReduceNone) {
    GPUU_RETURN_IF_ERROR(require_int64_support(lc, n, y.dtype));
    shader = std::string("scatter_reduce_") + graph::dtype_name(y.dtype);
  }
  uint32_t inner = 1;
  for (size_t d = axis + 1; d < updates.shape.size(); ++d) inner *= static_cast<uint32_t>(updates.shape[d]);
  PushConstants push;
  push.u32(count).u32(static_cast<uint32_t>(y.shape.size())).u32(static_cast<uint32_t>(axis));
  push.u32(static_cast<uint32_t>(y.shape[axis])).u32(inner);
  push.u32_array(to_u32(updates.shape), kMaxRank);
  push.u32_array(to_u32(graph::row_major_strides(y.shape)), kMaxRank);
  push.u32(static_cast<uint32_t>(updates_offset)).u32_array(to_u32(updates_strides), kMaxRank);
  KernelKey key{shader,
                {static_cast<int32_t>(esize), index.dtype == DType::kI64 ? 1 : 0, row_index ? 1 : 0, reduce->second,
                 graph::attr_int(attrs, "include_self") != 0 ? 1 : 0},
                3,
                push.size()};
  return add_dispatch(lc, n, key, {{index.range, false}, {updates_range, false}, {y.range, true}}, push, count);
}

// OpKernel::takes_view: the writing forms (reduce "none") read each update
// once, through strides; a fused projection's v written into its cache needs
// no copy of its columns first. Offsets and strides within 32 bits.
bool scatter_takes_view(const graph::Graph& graph, const graph::Node& node, size_t slot, const StridedView& view) {
  if (slot != 2) return false;
  Result<graph::AttrMap> attrs = graph::resolve_attrs(node);
  if (!attrs.ok() || graph::attr_string(*attrs, "reduce") != "none") return false;
  return view_in_32_bits(view) && view.strides.size() == graph.value(node.inputs[2]).shape.size();
}

// scatter: the index has the updates' shape; index_put: a 1-D index along the axis.
Status lower_scatter(LoweringContext& lc, const graph::Node& n) { return lower_scatter_into(lc, n, false); }
Status lower_index_put(LoweringContext& lc, const graph::Node& n) { return lower_scatter_into(lc, n, true); }

// OpKernel::writes_over: the base (slot 0) may already lie in the output's
// memory (a KV cache kept as program state, updated in place): step 1 above
// is then left out.
bool scatter_base_operand(const graph::Graph&, const graph::Node&, size_t slot) { return slot == 0; }

}  // namespace

void add_index_kernels(std::vector<OpKernel>& table) {
  table.insert(table.end(), {{"gather", kStoredDTypes, index_check, lower_gather},
                             {"index_select", kStoredDTypes, index_check, lower_index_select}});
  table.insert(table.end(), {{"scatter", kStoredDTypes, index_check, lower_scatter, 0, scatter_takes_view,
                              scatter_base_operand},
                             {"index_put", kStoredDTypes, index_check, lower_index_put, 0, scatter_takes_view,
                              scatter_base_operand}});
}

// A movement chain (movement.h) as one index_gather over the flat tensors:
// rank 1, the map as its i32 index.
Status lower_movement_chain(LoweringContext& lc, const MovementChain& chain, const BufferRange& map) {
  const graph::Node& first = lc.graph.node(chain.nodes.front());
  const graph::Node& last = lc.graph.node(chain.nodes.back());
  const TensorRef& x = lc.tensor(first.inputs[0]);
  const TensorRef& y = lc.tensor(last.outputs[0]);
  const auto esize = static_cast<uint32_t>(graph::dtype_size(y.dtype));
  const auto count = static_cast<uint32_t>(graph::shape_numel(y.shape));
  PushConstants push;
  push.u32(count).u32(1).u32(0).u32(static_cast<uint32_t>(graph::shape_numel(x.shape)));
  push.u32_array({count}, kMaxRank);
  push.u32_array({1}, kMaxRank);
  push.u32_array({1}, kMaxRank);
  KernelKey key{"index_gather", {static_cast<int32_t>(esize), 0}, 3, push.size()};
  return add_dispatch(lc, chain.nodes, key, {{x.range, false}, {map, false}, {y.range, true}}, push,
                      mover_invocations(count, esize));
}

}  // namespace gpuu::kernels
