// Building a KernelGraph: memory layout, constant upload, lowering, recording.
#include "kernels/kernel_graph.h"

#include <algorithm>
#include <numeric>

#include "base/log.h"
#include "gpu/submission.h"
#include "kernels/fusion.h"
#include "kernels/movement.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

VkDeviceSize tensor_bytes(const graph::Value& v) {
  VkDeviceSize bytes = static_cast<VkDeviceSize>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
  return align_up(bytes == 0 ? 4 : bytes, 4);  // shaders address 32-bit words
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
  GPUU_RETURN_IF_ERROR(d->build(region, inputs, outputs, options));
  return d;
}

Status KernelGraph::build(const graph::Graph& region, const std::vector<BufferRange>& inputs,
                          const std::vector<BufferRange>& outputs, const KernelGraphOptions& options) {
  const SharedGpuContext& ctx = *ctx_;
  GPUU_VK_RETURN_IF_ERROR(ctx.create_command_pool(&pool_), "vkCreateCommandPool");
  kernels_ = std::make_unique<KernelCache>(ctx_);
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
  std::vector<int> placed(region.values().size(), 0);
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
  // Views: a reshape's result is its input's bytes in the same order, so it
  // shares its input's memory and lowers to nothing, instead of a copy. Where
  // the result is a region output and the input is made inside the region,
  // the input is made in the output's memory instead. alias[v]: the value
  // whose memory v uses (v itself when none).
  std::vector<graph::ValueId> alias(region.values().size());
  for (size_t i = 0; i < alias.size(); ++i) alias[i] = static_cast<graph::ValueId>(i);
  auto root_of = [&](graph::ValueId v) {
    while (alias[static_cast<size_t>(v)] != v) v = alias[static_cast<size_t>(v)];
    return v;
  };
  std::vector<char> is_input(region.values().size(), 0);
  for (graph::ValueId in : region.inputs()) is_input[static_cast<size_t>(in)] = 1;
  ViewPlan views;
  if (options.strided_views) views = plan_views(region);
  auto skipped = [&](size_t node) { return !views.skipped.empty() && views.skipped[node]; };
  std::vector<MovementChain> chains;
  if (options.compose_movement) chains = find_movement_chains(region);
  // A chain with a node skipped for a view, or making a view's root, is
  // lowered node by node instead: the view needs that root in memory.
  chains.erase(std::remove_if(chains.begin(), chains.end(),
                              [&](const MovementChain& c) {
                                for (graph::NodeId id : c.nodes) {
                                  if (skipped(static_cast<size_t>(id))) return true;
                                  for (const StridedView& v : views.views) {
                                    if (v.root == region.node(id).outputs[0]) return true;
                                  }
                                }
                                return false;
                              }),
               chains.end());
  std::vector<int> chain_of(region.nodes().size(), -1);
  for (size_t c = 0; c < chains.size(); ++c) {
    for (graph::NodeId id : chains[c].nodes) chain_of[static_cast<size_t>(id)] = static_cast<int>(c);
  }
  std::vector<char> viewed(region.nodes().size(), 0);
  for (size_t n = 0; n < region.nodes().size(); ++n) {
    const graph::Node& node = region.nodes()[n];
    if (chain_of[n] >= 0 || skipped(n) || node.op != "reshape" || node.inputs.empty() || node.inputs[0] < 0 ||
        node.outputs.size() != 1) {
      continue;
    }
    graph::ValueId x = root_of(node.inputs[0]), y = node.outputs[0];
    if (!placed[static_cast<size_t>(y)]) {
      alias[static_cast<size_t>(y)] = x;
    } else if (!placed[static_cast<size_t>(x)] && !is_input[static_cast<size_t>(x)] && region.value(x).constant < 0) {
      alias[static_cast<size_t>(x)] = y;  // made straight into the output
      tensors[static_cast<size_t>(x)].range = tensors[static_cast<size_t>(y)].range;
      placed[static_cast<size_t>(x)] = 1;
    } else {
      continue;  // both have memory of their own: a copy
    }
    viewed[n] = 1;
  }
  // What to lower, in order; values inside fused groups never touch memory.
  std::vector<LoweringUnit> units = plan_lowering(region, options.fuse_elementwise);
  units.erase(std::remove_if(units.begin(), units.end(),
                             [&](const LoweringUnit& u) {
                               auto first_node = static_cast<size_t>(u.nodes[0]);
                               return !u.fused() && (viewed[first_node] || skipped(first_node));
                             }),
              units.end());
  // A movement chain is one unit where its last node stood.
  {
    std::vector<LoweringUnit> merged;
    for (LoweringUnit& u : units) {
      int c = u.fused() ? -1 : chain_of[static_cast<size_t>(u.nodes[0])];
      if (c < 0) {
        merged.push_back(std::move(u));
      } else if (u.nodes[0] == chains[static_cast<size_t>(c)].nodes.back()) {
        merged.push_back(LoweringUnit{chains[static_cast<size_t>(c)].nodes, c});
      }
    }
    units = std::move(merged);
  }
  std::vector<int> materialized(region.values().size(), 0);
  for (size_t u = 0; u < units.size(); ++u) {
    const graph::Node& last = region.node(units[u].nodes.back());
    for (graph::ValueId v : last.outputs) materialized[static_cast<size_t>(v)] = 1;
    // The GEMM's own output, for when its lowering leaves the chain to run
    // after it (it lives only within the unit, so its memory is soon reused).
    if (units[u].gemm_epilogue) {
      for (graph::ValueId v : region.node(units[u].nodes[0]).outputs) materialized[static_cast<size_t>(v)] = 1;
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
        graph::ValueId root = views.views.empty() ? graph::kNone : views.views[static_cast<size_t>(in)].root;
        if (root != graph::kNone) last_use[static_cast<size_t>(root)] = static_cast<int>(u);
      }
      for (graph::ValueId out : region.node(id).outputs) first[static_cast<size_t>(out)] = static_cast<int>(u);
    }
  }
  // A view's readers keep its root's memory alive.
  for (size_t i = 0; i < alias.size(); ++i) {
    auto r = static_cast<size_t>(root_of(static_cast<graph::ValueId>(i)));
    if (r != i) last_use[r] = std::max(last_use[r], last_use[i]);
  }

  VkDeviceSize constant_bytes = 0, arena_bytes = 0;
  std::vector<VkDeviceSize> offset(region.values().size(), 0);
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
      offset[i] = constant_bytes;
      constant_bytes += bytes;
      continue;
    }
    if (!materialized[i]) continue;
    // First fit among the gaps left by values that are dead by now.
    int now = first[i];
    if (options.reuse_memory) {
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
  std::vector<VkDeviceSize> map_offset(chains.size());  // each chain's map, after the graph's constants
  for (size_t c = 0; c < chains.size(); ++c) {
    map_offset[c] = constant_bytes;
    constant_bytes += align_up(chains[c].map.size() * sizeof(int32_t), align);
  }
  if (constant_bytes) {
    GPUU_ASSIGN_OR_RETURN(constants_, DeviceBuffer::create(ctx, constant_bytes, MemoryKind::kDevice, "constants"));
  }
  if (arena_bytes) {
    GPUU_ASSIGN_OR_RETURN(arena_, DeviceBuffer::create(ctx, arena_bytes, MemoryKind::kDevice, "intermediates"));
  }
  for (size_t i = 0; i < region.values().size(); ++i) {
    if (placed[i] || (region.values()[i].constant < 0 && !materialized[i])) continue;
    if (root_of(static_cast<graph::ValueId>(i)) != static_cast<graph::ValueId>(i)) continue;
    const DeviceBuffer& home = region.values()[i].constant >= 0 ? constants_ : arena_;
    tensors[i].range = BufferRange{home.buffer(), offset[i], tensor_bytes(region.values()[i])};
  }
  for (size_t i = 0; i < region.values().size(); ++i) {
    auto r = static_cast<size_t>(root_of(static_cast<graph::ValueId>(i)));
    if (r != i && !placed[i]) tensors[i].range = tensors[r].range;
  }
  for (const graph::Constant& c : region.constants()) {
    const TensorRef& t = tensors[static_cast<size_t>(c.value)];
    GPUU_RETURN_IF_ERROR(gpu::upload_once(ctx, pool_, constants_, t.range.offset, c.data.data(), c.data.size()));
  }
  for (size_t c = 0; c < chains.size(); ++c) {
    GPUU_RETURN_IF_ERROR(gpu::upload_once(ctx, pool_, constants_, map_offset[c], chains[c].map.data(),
                                          chains[c].map.size() * sizeof(int32_t)));
  }

  LoweringContext lc{ctx, *kernels_, *sequence_, region, tensors,
                     [this](VkDeviceSize bytes, const char* what) -> Result<BufferRange> {
                       GPUU_ASSIGN_OR_RETURN(DeviceBuffer b,
                                             DeviceBuffer::create(*ctx_, bytes, MemoryKind::kDevice, what));
                       BufferRange r{b.buffer(), 0, b.size()};
                       scratch_.push_back(std::move(b));
                       return r;
                     },
                     GemmForce{options.gemm_kernel, options.gemm_splits}, std::move(views.views)};
  for (const LoweringUnit& unit : units) {
    const graph::Node& node = region.node(unit.nodes.back());
    Status lowered = Status::Ok();
    if (unit.movement_chain >= 0) {
      const MovementChain& chain = chains[static_cast<size_t>(unit.movement_chain)];
      lowered = lower_movement_chain(lc, chain,
                                     BufferRange{constants_.buffer(), map_offset[static_cast<size_t>(unit.movement_chain)],
                                                 align_up(chain.map.size() * sizeof(int32_t), 4)});
    } else {
      lowered = unit.gemm_epilogue ? lower_gemm_with_epilogue(lc, unit)
                : unit.fused()       ? lower_fused_group(lc, unit)
                                     : find_op_kernel(node.op)->lower(lc, node);
    }
    if (!lowered.ok()) {
      return err(lowered.code(), "Vulkan delegate: lowering node '", node.name, "' (", node.op,
                 "): ", lowered.message());
    }
  }

  inputs_ = inputs;
  outputs_ = outputs;
  gpu_timing_ = options.gpu_timing;
  GPUU_VK_RETURN_IF_ERROR(ctx.allocate_command_buffer(pool_, &command_buffer_), "vkAllocateCommandBuffers");
  return record();
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
      sequence_->barrier_count(), " barriers, ", kernels_->size(), " pipelines");
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
