// The kernel library's op table: for each graph op, a check that says whether
// (and why not) a node can run on gpuu's kernels, and a lowering that appends
// its dispatches to a DispatchSequence. The partitioner's Vulkan capability is
// this table: the backend takes exactly what its kernels implement.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kernels/op_codes.h"
#include "kernels/dispatch_sequence.h"
#include "kernels/gemm_select.h"
#include "kernels/kernel_cache.h"

namespace gpuu::kernels {

// Where a graph value lives on the device.
struct TensorRef {
  BufferRange range;
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
};

// A value read in place as a strided view of another: its element at index
// idx is element offset + sum_d idx[d] * strides[d] of `root`'s memory (a
// transposed, sliced, expanded or reshaped view of root, whose movement nodes then need
// not run). KernelGraph finds them for the inputs a kernel takes views of
// (OpKernel::takes_view).
struct StridedView {
  graph::ValueId root = graph::kNone;
  int64_t offset = 0;
  std::vector<int64_t> strides;  // one per dim of the viewed value, in elements
};
// Whether a kernel addresses `view` with 32-bit indices: its offset and every
// stride in [0, 2^31).
bool view_in_32_bits(const StridedView& view);
// The walk over the first `count` dims of `shape` at `strides`, with size-1
// dims dropped and neighbours that walk memory as one dim merged: dims[i]
// elements steps[i] apart, outermost first (empty: one element).
struct MergedDims {
  std::vector<int64_t> dims, steps;
};
MergedDims merge_dims(const graph::Shape& shape, const std::vector<int64_t>& strides, size_t count);
// The same walk for several operands at once (strides[j]: operand j's):
// neighbours merge where every operand walks them as one; steps[j] per operand.
// `apart`: a dim kept, even of size 1, that merges with neither neighbour (a fused concat's axis,
// whose coordinate the kernel folds); `apart_at` is its place in `dims`.
struct MergedWalk {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> steps;
  std::optional<size_t> apart_at;
};
MergedWalk merge_walk(const graph::Shape& shape, const std::vector<std::vector<int64_t>>& strides, size_t count,
                      std::optional<size_t> apart = std::nullopt);
struct GemmEpilogue;  // gemm_dispatch.h
struct RowNorm;       // row_norm.h

// A residual block's int8 add after an int8 GEMM's rescale (fusion.h's
// int_residual units): `a` rescales the GEMM's i8 result to i32, `b` the skip
// connection's i8, `add` sums them and `c` rescales the sum to i8.
struct IntResidual {
  const graph::Node* a = nullptr;
  const graph::Node* b = nullptr;
  const graph::Node* add = nullptr;
  const graph::Node* c = nullptr;
};

struct LoweringContext {
  const SharedGpuContext& ctx;
  KernelCache& kernels;
  DispatchSequence& sequence;
  const graph::Graph& graph;
  std::vector<TensorRef>& tensors;  // indexed by ValueId
  // Device memory for a kernel's temporaries, valid within the dispatches of
  // the unit being lowered: the next unit takes the same memory again
  // (KernelGraph's UnitScratch).
  std::function<Result<BufferRange>(VkDeviceSize bytes, const char* what)> scratch;
  GemmForce gemm_force;  // KernelGraphOptions::gemm_kernel and gemm_splits
  // Indexed by ValueId: the view a value is read through (root kNone where
  // it is read as itself). Empty when nothing is read through a view.
  std::vector<StridedView> views = {};
  // The elementwise chain the node being lowered may fold into its GEMM's
  // store (fusion.h); a GEMM lowering that does sets epilogue_taken.
  const GemmEpilogue* epilogue = nullptr;
  bool epilogue_taken = false;
  // The layer norm of the rows that store writes (fusion.h's norm_after
  // units), which a split-K reduction may apply; one that does sets
  // norm_after_taken.
  const RowNorm* norm_after = nullptr;
  graph::NodeId norm_after_node = graph::kNone;  // its layer_norm (labels)
  bool norm_after_taken = false;
  // The rescale an int8 GEMM (conv2d_int, matmul_int) may apply in its store
  // (fusion.h's int_rescale units); a lowering that does sets int_rescale_taken.
  const graph::Node* int_rescale = nullptr;
  bool int_rescale_taken = false;
  // The second rescale after it (fusion.h's int_rescale_twice: a16w8's
  // convolutions), taken with it by a lowering that sets
  // int_rescale_next_taken.
  const graph::Node* int_rescale_next = nullptr;
  bool int_rescale_next_taken = false;
  // ... and the clamp after them (fusion.h's int_clamp_after), taken with
  // them by a lowering that sets int_clamp_after_taken.
  const graph::Node* int_clamp_after = nullptr;
  bool int_clamp_after_taken = false;
  // The add of a bias along matmul_int's columns before that rescale, taken
  // with it.
  const graph::Node* int_bias_add = nullptr;
  // And the residual add after that rescale the store may apply too (sets
  // int_residual_taken).
  const IntResidual* int_residual = nullptr;
  bool int_residual_taken = false;
  std::optional<uint32_t> attention_splits;  // KernelGraphOptions::attention_splits
  std::optional<bool> attention_coopmat;      // KernelGraphOptions::attention_coopmat
  std::optional<uint32_t> attention_coop_key_split;  // KernelGraphOptions::attention_coop_key_split
  std::optional<uint32_t> attention_keys;            // KernelGraphOptions::attention_keys
  // Indexed by ValueId: the region input whose memory the value is written
  // over (a program state updated in place), else kNone; empty when none is.
  // A lowering that would first copy that input into the value skips the
  // copy: concat skips the parts that are the input's own slices already in
  // place (slice_scatter's untouched parts), index_put its copy of self.
  std::vector<graph::ValueId> written_over = {};

  uint32_t max_groups_x() const { return ctx.properties().limits.maxComputeWorkGroupCount[0]; }
  const TensorRef& tensor(graph::ValueId id) const { return tensors[static_cast<size_t>(id)]; }
  // How to read value `id`: through its view, or as itself (row-major strides).
  StridedView view_of(graph::ValueId id) const;
  // Whether value `id` is read through a view (of another value's memory).
  bool has_view(graph::ValueId id) const;
  // written_over's entry for `id` (kNone where none).
  graph::ValueId written_over_of(graph::ValueId id) const;
};

// A set of dtypes, one bit per graph::DType.
using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(graph::DType d) { return 1u << static_cast<unsigned>(d); }
constexpr DTypeSet kFloatDTypes = dtype_bit(graph::DType::kF32) | dtype_bit(graph::DType::kF16);
constexpr DTypeSet kIntDTypes = dtype_bit(graph::DType::kI32) | dtype_bit(graph::DType::kI64);
constexpr DTypeSet kI32DType = dtype_bit(graph::DType::kI32);
constexpr DTypeSet kI8DType = dtype_bit(graph::DType::kI8);
constexpr DTypeSet kI16DType = dtype_bit(graph::DType::kI16);
constexpr DTypeSet kBoolDType = dtype_bit(graph::DType::kBool);
// Every dtype the kernels store as data (i8 and i16 only where an op says so).
constexpr DTypeSet kStoredDTypes = kFloatDTypes | kIntDTypes | kBoolDType;
constexpr DTypeSet kAllDTypes = kStoredDTypes | kI8DType | kI16DType;

struct OpKernel {
  const char* op;
  // The dtypes the kernels take for the deciding input (the one home of this
  // fact: the Vulkan backend declares it to the partitioner and docs).
  DTypeSet dtypes;
  // "" when the node can run here, else the reason it cannot.
  std::string (*check)(const graph::Graph&, const graph::Node&);
  Status (*lower)(LoweringContext&, const graph::Node&);
  int32_t deciding_input = 0;  // where: the data (input 1), not the condition
  // Whether the kernel reads input `slot` of `node` through `view` (its
  // lowering then reads LoweringContext::view_of); nullptr: every input is
  // read as itself.
  bool (*takes_view)(const graph::Graph&, const graph::Node&, size_t slot, const StridedView& view) = nullptr;
  // Whether the kernel stays right with its output in the memory of input
  // `slot` (a program state updated in place, region_plan.h): it reads that
  // input's elements only for the same output element (elementwise ops:
  // same_element_operand), or it first copies that input into its output
  // and skips the copy where LoweringContext::written_over says the output
  // already lies in the input's memory (index_put's self). nullptr: no input.
  bool (*writes_over)(const graph::Graph&, const graph::Node&, size_t slot) = nullptr;
  // Whether `check` bounds what the kernel walks itself, so that tensors of
  // any rank may come (data movement over merged dims: shape.cpp).
  bool any_rank = false;
};

// writes_over of an elementwise kernel: input `slot` has the output's dtype
// and shape, so the element it reads for output element i is element i.
bool same_element_operand(const graph::Graph& graph, const graph::Node& node, size_t slot);

// Every op the backend implements.
const std::vector<OpKernel>& vulkan_op_kernels();
const OpKernel* find_op_kernel(const std::string& op);

// "" when `node` can run on the Vulkan backend, else why not: the kernel's
// rank/size limits and its own check (the dtypes field is the caller's rule).
std::string vulkan_supports(const graph::Graph& graph, const graph::Node& node);

// Families, each in families/<family>.cpp, append their kernels.
void add_elementwise_kernels(std::vector<OpKernel>& table);  // unary, clamp, binary, comparisons, logic, bitwise
void add_linalg_kernels(std::vector<OpKernel>& table);       // matmul, linear
void add_conv_pool_kernels(std::vector<OpKernel>& table);    // conv2d, avg_pool2d, max_pool2d
void add_spatial_kernels(std::vector<OpKernel>& table);      // conv3d, conv_transpose2d, *_pool3d, resize,
                                                             // grid_sample
void add_reduce_norm_kernels(std::vector<OpKernel>& table);  // reduce_*, argmax/argmin, cumsum, softmax, layer_norm
void add_shape_kernels(std::vector<OpKernel>& table);        // transpose, reshape, slice, concat, pad, expand,
                                                             // flip, cast, where
void add_index_kernels(std::vector<OpKernel>& table);        // gather, index_select, scatter, index_put
void add_custom_kernels(std::vector<OpKernel>& table);       // custom_shader (com.arm.VulkanCustomShader)
void add_quant_kernels(std::vector<OpKernel>& table);        // rescale, conv2d_int, matmul_int, avg_pool2d_int, table
void add_attention_kernels(std::vector<OpKernel>& table);    // scaled_dot_product_attention
// Appends one kernel per (op, lowering) pair, all sharing `dtypes` and `check`.
struct OpLowering {
  const char* op;
  Status (*lower)(LoweringContext&, const graph::Node&);
};
void add_kernels(std::vector<OpKernel>& table, DTypeSet dtypes,
                 std::string (*check)(const graph::Graph&, const graph::Node&),
                 std::initializer_list<OpLowering> ops);
// The UNARY_* code (op_codes.txt) of a float unary node, -1 for another op: its
// op's code, or the variant its attributes choose (gelu, approximate="tanh":
// gelu.tanh). The unary kernel and the fused kernel both read it.
int32_t unary_code(const graph::Node& node);
// max_pool2d on i8/i32 tensors (families/quant.cpp), which conv_pool's max_pool2d hands integers to.
std::string check_int_pool2d(const graph::Graph& graph, const graph::Node& node);
Status lower_int_pool2d(LoweringContext& lc, const graph::Node& node);
// clamp on i8/i16 tensors (families/quant.cpp's rescale kernel, unscaled), which elementwise's clamp hands them to.
Status lower_narrow_int_clamp(LoweringContext& lc, const graph::Node& node);

// Small helpers shared by the families.
// A float's bits, for a float specialization constant (they are passed as int32).
int32_t float_bits(float v);

class PushConstants {
 public:
  PushConstants& u32(uint32_t v);
  PushConstants& f32(float v);
  PushConstants& u32_array(const std::vector<uint32_t>& v, size_t padded_to);
  PushConstants& append(const PushConstants& more);
  std::vector<uint8_t> bytes() const { return bytes_; }
  uint32_t size() const { return static_cast<uint32_t>(bytes_.size()); }

 private:
  std::vector<uint8_t> bytes_;
};

constexpr size_t kMaxRank = op_codes::kLimitMaxRank;  // MAX_RANK in the shaders
constexpr uint32_t kWorkgroupSize = op_codes::kLimitWorkgroupSize;  // GPUU_WG in the shaders

// "_f32" or "_f16" for float dtypes; "" for others.
const char* float_suffix(graph::DType dtype);
bool is_float(graph::DType dtype);
// Strides (in elements) to read an input of `in_shape` broadcast to `out_shape`.
std::vector<uint32_t> broadcast_strides(const graph::Shape& in_shape, const graph::Shape& out_shape);
// The fewest dims over which inputs of `in_shapes` broadcast to `out_shape`:
// size-1 dims dropped, neighbours merged where every input reads both as one
// (all of them whole there, or broadcast there), each input's strides over
// the merged dims (0 where it broadcasts). One dim of 1 when nothing is left.
// mvit's rank-8 relative-position adds walk four.
struct BroadcastWalk {
  std::vector<uint32_t> dims;
  std::vector<std::vector<uint32_t>> strides;  // per input
};
BroadcastWalk broadcast_walk(const std::vector<graph::Shape>& in_shapes, const graph::Shape& out_shape);
std::vector<uint32_t> to_u32(const graph::Shape& shape);
// Invocations of an elements.glsl kernel (the data movers): one per output
// word for 1- and 2-byte elements, else one per element.
uint64_t mover_invocations(uint64_t count, uint32_t esize);
// "" when every input is f32 or f16, else why the float-only kernels refuse it.
std::string check_float_inputs(const graph::Graph& graph, const graph::Node& node);
// The same but for input `skipped` (linear_dequant's integer weight).
std::string check_float_inputs_but(const graph::Graph& graph, const graph::Node& node, size_t skipped);
// kUnsupported naming the node when `dtype` is f16 and the device cannot run
// f16 kernels (shaderFloat16 and storageBuffer16BitAccess).
Status require_f16_support(const LoweringContext& lc, const graph::Node& node, graph::DType dtype);
// kUnsupported naming the node when `dtype` is i64 and the device lacks
// shaderInt64 (the i64 integer kernels compute in 64-bit shader integers).
Status require_int64_support(const LoweringContext& lc, const graph::Node& node, graph::DType dtype);
// kUnsupported naming the node when its `dtype` elements are single bytes
// (bool, i8) that a kernel stores one by one and the device lacks
// storageBuffer8BitAccess.
Status require_byte_storage(const LoweringContext& lc, const graph::Node& node, graph::DType dtype);
// "" when all values fit the kernels' limits (rank, 32-bit element counts).
std::string check_tensor_limits(const graph::Graph& graph, const graph::Node& node);

// Appends one dispatch of `key` over `invocations` threads that implements
// `node`. `work` says what it does, for profiles: its ops default to the
// node's, its bytes to what the bindings read and write (DispatchSequence::add);
// GEMM-like lowerings add their FLOPs (gemm_flops, conv_flops) and choice.
Status add_dispatch(LoweringContext& lc, const graph::Node& node, const KernelKey& key,
                    std::vector<Binding> bindings, const PushConstants& push, uint64_t invocations,
                    gpu::StepWork work = {});
// The same for one dispatch that implements several nodes (a fused group, a
// movement chain), in graph order: labelled "a+b+c", its ops "mul+add+tanh".
Status add_dispatch(LoweringContext& lc, const std::vector<graph::NodeId>& nodes, const KernelKey& key,
                    std::vector<Binding> bindings, const PushConstants& push, uint64_t invocations,
                    gpu::StepWork work = {});

// A buffer-to-buffer copy, for `node`, of `bytes` bytes of `src` from byte
// `src_byte` on to the start of `dst` (nothing when there are none).
void add_copy(LoweringContext& lc, const graph::Node& node, const BufferRange& src, VkDeviceSize src_byte,
              const BufferRange& dst, VkDeviceSize bytes);

// Floating-point operations of `batches` GEMMs of M x K by K x N: 2*M*N*K each.
uint64_t gemm_flops(uint64_t m, uint64_t n, uint64_t k, uint64_t batches = 1);
// ... of a convolution whose weight's first dim is the channels of `side`:
// 2 per weight element per element of `side` per that channel (conv2d and
// conv3d: `side` is the output, weight [O, C/groups, k...]; a transposed
// convolution: the input, weight [C, O/groups, k...]).
uint64_t conv_flops(const TensorRef& side, const TensorRef& weight);

}  // namespace gpuu::kernels
