// Building a KernelGraph: memory layout, constant upload, lowering, recording.
#include "kernels/kernel_graph.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>

#include "base/log.h"
#include "gpu/submission.h"
#include "kernels/attention.h"
#include "kernels/fusion.h"
#include "kernels/movement.h"
#include "kernels/op_table.h"
#include "kernels/region_plan.h"
#include "kernels/sibling_linears.h"

namespace gpuu::kernels {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

VkDeviceSize tensor_bytes(const graph::Value& v) {
  VkDeviceSize bytes = static_cast<VkDeviceSize>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
  return align_up(bytes == 0 ? 4 : bytes, 4);  // shaders address 32-bit words
}

// Whether `value` is a constant large enough to be a shared weight.
bool shared_constant(const graph::Graph& region, graph::ValueId value) {
  const int32_t c = region.value(value).constant;
  return c >= 0 && region.constants()[static_cast<size_t>(c)].data.size() >= gpu::kSharedConstantMinBytes;
}

// Where a region's values live, decided before any buffer exists: bound
// inputs and outputs aside, the small constants packed (with the movement
// chains' maps after them), weights of their own, and intermediates in one
// arena, first fit by lifetime. KernelGraph::build places values by it and
// KernelGraph::plan_memory reports it: one code, so a plan is what is made.
struct MemoryLayout {
  std::vector<int> materialized;  // by value: written by a unit
  std::vector<VkDeviceSize> offset;  // by value: in the constants buffer or the arena
  std::vector<VkDeviceSize> map_offset;  // by movement chain: its map in the constants buffer
  std::vector<graph::ValueId> weights;  // constants shared per device (gpu/shared_constants.h)
  VkDeviceSize constant_bytes = 0;
  VkDeviceSize arena_bytes = 0;
};

MemoryLayout layout_memory(const graph::Graph& region, const RegionPlan& plan, VkDeviceSize align, bool reuse) {
  std::vector<char> placed(region.values().size(), 0);
  for (graph::ValueId v : region.inputs()) placed[static_cast<size_t>(v)] = 1;
  for (graph::ValueId v : region.outputs()) placed[static_cast<size_t>(v)] = 1;
  auto root_of = [&plan](graph::ValueId v) { return plan.root_of(v); };
  const std::vector<LoweringUnit>& units = plan.units;
  const std::vector<MovementChain>& chains = plan.chains;
  MemoryLayout layout;
  std::vector<int>& materialized = layout.materialized;
  materialized.assign(region.values().size(), 0);
  for (size_t u = 0; u < units.size(); ++u) {
    const graph::Node& last = region.node(units[u].nodes.back());
    for (graph::ValueId v : last.outputs) materialized[static_cast<size_t>(v)] = 1;
    // The GEMM's own output, for when its lowering leaves the chain (or the
    // rescale) to run after it (it lives only within the unit, so its memory
    // is soon reused).
    if (units[u].gemm_epilogue) {
      for (graph::ValueId v : region.node(units[u].nodes[0]).outputs) materialized[static_cast<size_t>(v)] = 1;
    }
    // A norm_after unit stores the chain's result too (the residual stream).
    if (units[u].norm_after) {
      const graph::Node& before_norm = region.node(units[u].nodes[units[u].nodes.size() - 2]);
      for (graph::ValueId v : before_norm.outputs) materialized[static_cast<size_t>(v)] = 1;
    }
    // Likewise each step of an int8 GEMM's requantizing unit, where the store leaves them.
    if (units[u].int_rescale) {
      for (graph::NodeId id : units[u].nodes) {
        for (graph::ValueId v : region.node(id).outputs) materialized[static_cast<size_t>(v)] = 1;
      }
    }
  }
  // Lifetimes of arena values, in units: produced at `first`, last read at `last`.
  std::vector<int> first(region.values().size(), 0), last_use(region.values().size(), -1);
  for (size_t u = 0; u < units.size(); ++u) {
    for (graph::NodeId id : units[u].nodes) {
      for (graph::ValueId in : region.node(id).inputs) {
        if (in < 0) continue;
        last_use[static_cast<size_t>(in)] = static_cast<int>(u);
        // Read through a view: the view's root is what is read.
        graph::ValueId root = plan.views.views.empty() ? graph::kNone : plan.views.views[static_cast<size_t>(in)].root;
        if (root != graph::kNone) last_use[static_cast<size_t>(root)] = static_cast<int>(u);
      }
      for (graph::ValueId out : region.node(id).outputs) first[static_cast<size_t>(out)] = static_cast<int>(u);
    }
  }
  // A view's readers keep its root's memory alive.
  for (size_t i = 0; i < region.values().size(); ++i) {
    auto r = static_cast<size_t>(root_of(static_cast<graph::ValueId>(i)));
    if (r != i) last_use[r] = std::max(last_use[r], last_use[i]);
  }

  VkDeviceSize& constant_bytes = layout.constant_bytes;
  VkDeviceSize& arena_bytes = layout.arena_bytes;
  std::vector<VkDeviceSize>& offset = layout.offset;
  offset.assign(region.values().size(), 0);
  struct Block {
    VkDeviceSize offset, size;
    int last;
  };
  std::vector<Block> live;  // arena blocks in use, by offset
  // Values in the order they are made: lowering may run a unit later than its
  // nodes stand in the graph (a GEMM whose epilogue reads a later value), and
  // first fit frees the blocks dead by `now`, so a value made earlier but
  // placed after must not find a live value's block freed.
  std::vector<size_t> by_first(region.values().size());
  std::iota(by_first.begin(), by_first.end(), size_t{0});
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  for (size_t i : by_first) {
    if (placed[i] || root_of(static_cast<graph::ValueId>(i)) != static_cast<graph::ValueId>(i)) continue;
    VkDeviceSize bytes = align_up(tensor_bytes(region.values()[i]), align);
    if (region.values()[i].constant >= 0) {
      if (shared_constant(region, static_cast<graph::ValueId>(i))) {
        layout.weights.push_back(static_cast<graph::ValueId>(i));  // a weight of its own
        continue;
      }
      offset[i] = constant_bytes;
      constant_bytes += bytes;
      continue;
    }
    if (!materialized[i]) continue;
    // First fit among the gaps left by values that are dead by now.
    int now = first[i];
    if (reuse) {
      live.erase(std::remove_if(live.begin(), live.end(), [&](const Block& b) { return b.last < now; }), live.end());
    }
    std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
    VkDeviceSize at = 0;
    for (const Block& b : live) {
      if (b.offset >= at + bytes) break;
      at = std::max(at, b.offset + b.size);
    }
    offset[i] = at;
    live.push_back(Block{at, bytes, std::max(last_use[i], now)});
    arena_bytes = std::max(arena_bytes, at + bytes);
  }
  std::vector<VkDeviceSize>& map_offset = layout.map_offset;
  map_offset.resize(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    map_offset[c] = constant_bytes;
    constant_bytes += align_up(chains[c].map.size() * sizeof(int32_t), align);
  }
  return layout;
}

}  // namespace

Result<std::unique_ptr<KernelGraph>> KernelGraph::create(SharedGpuContextPtr ctx, const graph::Graph& region,
                                                         const std::vector<BufferRange>& inputs,
                                                         const std::vector<BufferRange>& outputs,
                                                         const KernelGraphOptions& options) {
  if (!ctx || !ctx->is_valid()) return err(StatusCode::kInvalidArgument, "Vulkan delegate: no valid context");
  if (inputs.size() != region.inputs().size() || outputs.size() != region.outputs().size()) {
    return err(StatusCode::kInvalidArgument, "Vulkan delegate: region has ", region.inputs().size(), " inputs and ",
               region.outputs().size(), " outputs but ", inputs.size(), " and ", outputs.size(), " buffers were bound");
  }
  std::unique_ptr<KernelGraph> d(new KernelGraph(std::move(ctx)));
  if (options.merge_sibling_linears) {
    // Same inputs and outputs in the same order: the bound buffers still fit.
    GPUU_RETURN_IF_ERROR(d->build(merge_sibling_linears(region), inputs, outputs, options));
    return d;
  }
  GPUU_RETURN_IF_ERROR(d->build(region, inputs, outputs, options));
  return d;
}

Status KernelGraph::build(const graph::Graph& region, const std::vector<BufferRange>& inputs,
                          const std::vector<BufferRange>& outputs, const KernelGraphOptions& options) {
  const SharedGpuContext& ctx = *ctx_;
  GPUU_VK_RETURN_IF_ERROR(ctx.create_command_pool(&pool_), "vkCreateCommandPool");
  kernels_ = KernelCache::shared(ctx_);
  sequence_ = std::make_unique<DispatchSequence>(
      ctx_, DispatchSequence::Options{options.host_visible_results, options.profile_steps});

  for (const graph::Node& node : region.nodes()) {
    std::string why = vulkan_supports(region, node);
    if (!why.empty()) {
      return err(StatusCode::kUnsupported, "Vulkan delegate: node '", node.name, "' (", node.op, "): ", why);
    }
  }

  // Where every value lives: bound inputs/outputs, constants, or the arena.
  const VkDeviceSize align =
      std::max<VkDeviceSize>(ctx.properties().limits.minStorageBufferOffsetAlignment, 16);
  std::vector<TensorRef> tensors(region.values().size());
  std::vector<char> placed(region.values().size(), 0);
  for (size_t i = 0; i < region.values().size(); ++i) {
    tensors[i].dtype = region.values()[i].dtype;
    tensors[i].shape = region.values()[i].shape;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    tensors[static_cast<size_t>(region.inputs()[i])].range = inputs[i];
    placed[static_cast<size_t>(region.inputs()[i])] = 1;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    graph::ValueId out = region.outputs()[i];
    if (placed[static_cast<size_t>(out)]) {
      return err(StatusCode::kUnsupported, "Vulkan delegate: output '", region.value(out).name,
                 "' is also an input or another output of the region");
    }
    tensors[static_cast<size_t>(out)].range = outputs[i];
    placed[static_cast<size_t>(out)] = 1;
  }
  // Outputs given an input's buffer are written over it (a program state
  // updated in place: the backend checked can_update_in_place first).
  std::vector<graph::ValueId> written_over;
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (outputs[o].buffer != inputs[i].buffer || outputs[o].offset != inputs[i].offset) continue;
      written_over.resize(region.values().size(), graph::kNone);
      written_over[static_cast<size_t>(region.outputs()[o])] = region.inputs()[i];
    }
  }
  // Where building at a new size spends its time (a program with dims builds here per size).
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  const Clock::time_point started = Clock::now();
  RegionPlan plan = plan_region(region, options, std::move(written_over));
  const double plan_ms = ms_since(started);
  auto root_of = [&plan](graph::ValueId v) { return plan.root_of(v); };
  const std::vector<LoweringUnit>& units = plan.units;
  const std::vector<MovementChain>& chains = plan.chains;
  const MemoryLayout layout = layout_memory(region, plan, align, options.reuse_memory);
  const std::vector<int>& materialized = layout.materialized;
  const std::vector<VkDeviceSize>& offset = layout.offset;
  const std::vector<VkDeviceSize>& map_offset = layout.map_offset;
  const VkDeviceSize constant_bytes = layout.constant_bytes, arena_bytes = layout.arena_bytes;
  if (constant_bytes) {
    GPUU_ASSIGN_OR_RETURN(constants_, DeviceBuffer::create(ctx, constant_bytes, MemoryKind::kDevice, "constants"));
  }
  arena_bytes_ = arena_bytes;
  BufferRange arena;
  if (arena_bytes && options.arena) {
    GPUU_ASSIGN_OR_RETURN(arena, options.arena(arena_bytes));
    if (arena.size < arena_bytes || arena.offset % align) {
      return err(StatusCode::kInternal, "Vulkan delegate: the arena given has ", arena.size, " bytes at offset ",
                 arena.offset, ", the plan needs ", arena_bytes, " at a multiple of ", align);
    }
  } else if (arena_bytes) {
    GPUU_ASSIGN_OR_RETURN(arena_, DeviceBuffer::create(ctx, arena_bytes, MemoryKind::kDevice, "intermediates"));
    arena = arena_.whole_range();
  }
  for (size_t i = 0; i < region.values().size(); ++i) {
    if (placed[i] || (region.values()[i].constant < 0 && !materialized[i])) continue;
    if (root_of(static_cast<graph::ValueId>(i)) != static_cast<graph::ValueId>(i)) continue;
    if (shared_constant(region, static_cast<graph::ValueId>(i))) {
      // Weights live once per device, whoever else uploads the same bytes (gpu/shared_constants.h).
      const graph::Constant& c = region.constants()[static_cast<size_t>(region.values()[i].constant)];
      GPUU_ASSIGN_OR_RETURN(std::shared_ptr<const gpu::SharedConstant> weight,
                            gpu::share_constant(ctx_, pool_, c.data));
      tensors[i].range = weight->range();
      shared_constants_.push_back(std::move(weight));
      continue;
    }
    const bool constant = region.values()[i].constant >= 0;
    tensors[i].range = BufferRange{constant ? constants_.buffer() : arena.buffer,
                                   offset[i] + (constant ? 0 : arena.offset), tensor_bytes(region.values()[i])};
  }
  for (size_t i = 0; i < region.values().size(); ++i) {
    auto r = static_cast<size_t>(root_of(static_cast<graph::ValueId>(i)));
    if (r != i && !placed[i]) tensors[i].range = tensors[r].range;
  }
  // The small constants and the chains' maps in one upload: each upload is
  // a submit and a wait (a GPT-2 layer has a dozen such constants).
  std::vector<uint8_t> packed(static_cast<size_t>(constant_bytes), 0);
  for (const graph::Constant& c : region.constants()) {
    if (shared_constant(region, c.value) || c.data.empty()) continue;
    const TensorRef& t = tensors[static_cast<size_t>(c.value)];
    if (t.range.buffer != constants_.buffer()) continue;  // no home of its own here (unread)
    c.data.write_to(packed.data() + t.range.offset);
    c.data.drop_file_pages();
  }
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].map.empty()) continue;
    std::memcpy(packed.data() + map_offset[c], chains[c].map.data(), chains[c].map.size() * sizeof(int32_t));
  }
  GPUU_RETURN_IF_ERROR(gpu::upload_once(ctx, pool_, constants_, 0, packed.data(), packed.size()));

  const double memory_ms = ms_since(started) - plan_ms;
  const Clock::time_point lowering_started = Clock::now();
  const size_t pipelines_before = KernelCache::pipelines_created();
  LoweringContext lc{ctx, *kernels_, *sequence_, region, tensors,
                     [this, align](VkDeviceSize bytes, const char* what) {
                       return scratch_.take(*ctx_, bytes, align, what);
                     },
                     GemmForce{options.gemm_kernel, options.gemm_splits}, std::move(plan.views.views)};
  lc.written_over = std::move(plan.written_over);
  lc.gemm_force.int_kernel = options.int_gemm_kernel;
  lc.gemm_force.conv_im2col = options.conv_im2col;
  lc.gemm_force.coopmat2 = options.gemm_coopmat2;
  lc.gemm_force.whole_tile_rows = options.gemm_whole_tile_rows;
  lc.attention_splits = options.attention_splits;
  lc.attention_coopmat = options.attention_coopmat;
  lc.attention_coop_key_split = options.attention_coop_key_split;
  lc.attention_keys = options.attention_keys;
  for (const LoweringUnit& unit : units) {
    const graph::Node& node = region.node(unit.nodes.back());
    scratch_.next_unit();
    Status lowered = Status::Ok();
    if (unit.movement_chain >= 0) {
      const MovementChain& chain = chains[static_cast<size_t>(unit.movement_chain)];
      lowered = lower_movement_chain(lc, chain,
                                     BufferRange{constants_.buffer(), map_offset[static_cast<size_t>(unit.movement_chain)],
                                                 align_up(chain.map.size() * sizeof(int32_t), 4)});
    } else {
      const OpKernel* kernel = find_op_kernel(node.op);
      const bool elementwise_view = kernel->takes_view == &takes_elementwise_view && reads_a_view(lc, node);
      lowered = unit.gemm_epilogue                  ? lower_gemm_with_epilogue(lc, unit)
                : unit.int_rescale                  ? lower_int_gemm_with_rescale(lc, unit)
                : unit.rms_norm                     ? lower_rms_norm(lc, unit)
                : unit.norm_chains                  ? lower_norm_with_chains(lc, unit)
                : unit.attention_heads_inner
                    ? lower_attention_heads_inner(lc, region.node(unit.nodes[0]), region.node(unit.nodes[1]))
                : unit.fused() || elementwise_view ? lower_fused_group(lc, unit)
                                                   : kernel->lower(lc, node);
    }
    if (!lowered.ok()) {
      return err(lowered.code(), "Vulkan delegate: lowering node '", node.name, "' (", node.op,
                 "): ", lowered.message());
    }
  }

  const double lowering_ms = ms_since(lowering_started);
  inputs_ = inputs;
  outputs_ = outputs;
  gpu_timing_ = options.gpu_timing;
  GPUU_VK_RETURN_IF_ERROR(ctx.allocate_command_buffer(pool_, &command_buffer_), "vkAllocateCommandBuffers");
  const Clock::time_point recording_started = Clock::now();
  GPUU_RETURN_IF_ERROR(record());
  // Init, not the first execute, pays for drivers that finish compiling a
  // pipeline at its first dispatch (lavapipe: 3-5x a warm execute otherwise).
  const Clock::time_point warm_up_started = Clock::now();
  GPUU_RETURN_IF_ERROR(gpu::run_once(
      ctx, pool_,
      [this](VkCommandBuffer cb) {
        sequence_->record_warm_up(cb);
        return Status::Ok();
      },
      "warming up the pipelines"));
  const double warm_up_ms = ms_since(warm_up_started);
  log(LogLevel::kDebug, "Vulkan", "built ", region.nodes().size(), " nodes in ", ms_since(started), " ms: plan ",
      plan_ms, ", memory and constants ", memory_ms, ", lowering ", lowering_ms, " (",
      KernelCache::pipelines_created() - pipelines_before, " pipelines made), recording ",
      ms_since(recording_started) - warm_up_ms, ", warm-up ", warm_up_ms);
  return Status::Ok();
}

Status KernelGraph::record() {
  const auto& vk = ctx_->vkd();
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(command_buffer_, &begin), "vkBeginCommandBuffer");
  if (gpu_timing_) GPUU_RETURN_IF_ERROR(timer_.begin(*ctx_, command_buffer_));
  GPUU_RETURN_IF_ERROR(sequence_->record(command_buffer_));
  timer_.end(command_buffer_);  // records nothing without a begin
  GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(command_buffer_), "vkEndCommandBuffer");
  log(LogLevel::kDebug, "Vulkan", "recorded ", sequence_->dispatch_count(), " dispatches, ",
      sequence_->barrier_count(), " barriers, ", pipeline_count(), " pipelines");
  return Status::Ok();
}

Status KernelGraph::rebind(const std::vector<BufferRange>& inputs, const std::vector<BufferRange>& outputs) {
  if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size()) {
    return err(StatusCode::kInvalidArgument, "Vulkan delegate: rebind with ", inputs.size(), " inputs and ",
               outputs.size(), " outputs, the region has ", inputs_.size(), " and ", outputs_.size());
  }
  const VkDeviceSize align = ctx_->properties().limits.minStorageBufferOffsetAlignment;
  bool changed = false;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<BufferRange>& to = pass == 0 ? inputs : outputs;
    const std::vector<BufferRange>& now = pass == 0 ? inputs_ : outputs_;
    for (size_t i = 0; i < to.size(); ++i) {
      if (!to[i].buffer || (align && to[i].offset % align) || to[i].size < now[i].size - now[i].size % 4) {
        return err(StatusCode::kInvalidArgument, "Vulkan delegate: ", pass == 0 ? "input " : "output ", i,
                   ": a bound range needs a buffer, an offset that is a multiple of ", align, " and ",
                   now[i].size, " bytes");
      }
      changed |= to[i].buffer != now[i].buffer || to[i].offset != now[i].offset;
    }
  }
  if (!changed) return Status::Ok();
  std::vector<std::pair<BufferRange, BufferRange>> moves;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<BufferRange>& to = pass == 0 ? inputs : outputs;
    std::vector<BufferRange>& now = pass == 0 ? inputs_ : outputs_;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i].buffer != now[i].buffer || to[i].offset != now[i].offset) moves.emplace_back(now[i], to[i]);
      now[i] = to[i];
    }
  }
  sequence_->repoint(moves);
  GPUU_VK_RETURN_IF_ERROR(ctx_->vkd().vkResetCommandBuffer(command_buffer_, 0), "vkResetCommandBuffer");
  return record();
}

KernelGraphMemory KernelGraph::plan_memory(const graph::Graph& region, const KernelGraphOptions& options,
                                           VkDeviceSize align) {
  if (options.merge_sibling_linears) {
    KernelGraphOptions plain = options;
    plain.merge_sibling_linears = false;
    return plan_memory(merge_sibling_linears(region), plain, align);
  }
  const MemoryLayout layout = layout_memory(region, plan_region(region, options), std::max<VkDeviceSize>(align, 16),
                                            options.reuse_memory);
  KernelGraphMemory m;
  for (graph::ValueId w : layout.weights) {
    m.weights.push_back(region.constants()[static_cast<size_t>(region.value(w).constant)].data);
  }
  m.constant_bytes = align_up(layout.constant_bytes, 4);  // DeviceBuffer's rounding
  m.arena_bytes = layout.arena_bytes;
  return m;
}

KernelGraphMemory KernelGraph::memory() const {
  KernelGraphMemory m;
  for (const auto& w : shared_constants_) m.weights.push_back(w->data());
  m.constant_bytes = constants_.size();
  m.arena_bytes = arena_.size();
  m.scratch_bytes = scratch_.bytes();
  return m;
}

size_t KernelGraph::pipeline_count() const {
  std::set<const Kernel*> used;
  for (const Step& step : sequence_->steps()) {
    if (step.kernel) used.insert(step.kernel);
  }
  return used.size();
}

bool KernelGraph::can_update_in_place(const graph::Graph& region, graph::ValueId input, graph::ValueId output,
                                      const KernelGraphOptions& options) {
  bool is_input = std::count(region.inputs().begin(), region.inputs().end(), input) > 0;
  bool is_output = std::count(region.outputs().begin(), region.outputs().end(), output) > 0;
  return is_input && is_output && can_write_over(region, plan_region(region, options), input, output);
}

void KernelGraph::UnitScratch::next_unit() {
  if (took_) side_ ^= 1;
  took_ = false;
  block_ = 0;
  used_ = 0;
}

Result<BufferRange> KernelGraph::UnitScratch::take(const SharedGpuContext& ctx, VkDeviceSize bytes,
                                                   VkDeviceSize align, const char* what) {
  // Blocks of a few MiB rather than an allocation each (dozens of split GEMMs
  // per model, each a vkAllocateMemory when a size is built).
  constexpr VkDeviceSize kBlock = VkDeviceSize{4} << 20;
  std::vector<DeviceBuffer>& blocks = blocks_[side_];
  bytes = align_up(bytes, 4);
  while (block_ < blocks.size() && used_ + bytes > blocks[block_].size()) {
    ++block_;
    used_ = 0;
  }
  if (block_ == blocks.size()) {
    GPUU_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::create(ctx, std::max(bytes, kBlock), MemoryKind::kDevice, what));
    blocks.push_back(std::move(b));
    used_ = 0;
  }
  BufferRange r{blocks[block_].buffer(), used_, bytes};
  used_ = align_up(used_ + bytes, align);
  took_ = true;
  return r;
}

VkDeviceSize KernelGraph::UnitScratch::bytes() const {
  VkDeviceSize sum = 0;
  for (const auto& side : blocks_) {
    for (const DeviceBuffer& b : side) sum += b.size();
  }
  return sum;
}

void KernelGraph::UnitScratch::clear() {
  for (auto& side : blocks_) side.clear();
}

KernelGraph::~KernelGraph() {
  // Pipelines, descriptor sets and buffers go before the pool and the context.
  sequence_.reset();
  kernels_.reset();
  scratch_.clear();
  constants_.reset();
  arena_.reset();
  timer_.reset();
  if (pool_) ctx_->destroy_command_pool(pool_);  // frees the command buffer too
}

}  // namespace gpuu::kernels
