// Building a VulkanDelegate: memory layout, constant upload, lowering, recording.
#include "backends/vulkan/vulkan_delegate.h"

#include <cstring>

#include "backends/vulkan/vulkan_ops.h"
#include "base/log.h"

namespace gpuu::vulkan {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

VkDeviceSize tensor_bytes(const graph::Value& v) {
  VkDeviceSize bytes = static_cast<VkDeviceSize>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype);
  return align_up(bytes == 0 ? 4 : bytes, 4);  // shaders address 32-bit words
}

}  // namespace

Status upload_once(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                   const void* bytes, VkDeviceSize size) {
  if (size == 0) return Status::Ok();
  const auto& vk = ctx.vkd();
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer staging, DeviceBuffer::create(ctx, size, MemoryKind::kUpload, "staging"));
  std::memcpy(staging.mapped(), bytes, size);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  GPUU_VK_RETURN_IF_ERROR(vk.vkAllocateCommandBuffers(ctx.device(), &alloc, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  Status status = Status::Ok();
  VkResult r = vk.vkBeginCommandBuffer(cb, &begin);
  if (r == VK_SUCCESS) {
    VkBufferCopy region{0, offset, size};
    vk.vkCmdCopyBuffer(cb, staging.buffer(), dst.buffer(), 1, &region);
    r = vk.vkEndCommandBuffer(cb);
  }
  if (r == VK_SUCCESS) r = vk.vkCreateFence(ctx.device(), &fence_info, nullptr, &fence);
  if (r == VK_SUCCESS) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    r = ctx.submit(1, &submit, fence);
  }
  if (r == VK_SUCCESS) r = vk.vkWaitForFences(ctx.device(), 1, &fence, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS) status = vk::vk_status(r, "uploading constants");
  if (fence) vk.vkDestroyFence(ctx.device(), fence, nullptr);
  vk.vkFreeCommandBuffers(ctx.device(), pool, 1, &cb);
  return status;
}

Result<std::unique_ptr<VulkanDelegate>> VulkanDelegate::create(SharedGpuContextPtr ctx, const graph::Graph& region,
                                                               const std::vector<BufferRange>& inputs,
                                                               const std::vector<BufferRange>& outputs) {
  if (!ctx || !ctx->is_valid()) return err(StatusCode::kInvalidArgument, "Vulkan delegate: no valid context");
  if (inputs.size() != region.inputs().size() || outputs.size() != region.outputs().size()) {
    return err(StatusCode::kInvalidArgument, "Vulkan delegate: region has ", region.inputs().size(), " inputs and ",
               region.outputs().size(), " outputs but ", inputs.size(), " and ", outputs.size(), " buffers were bound");
  }
  std::unique_ptr<VulkanDelegate> d(new VulkanDelegate(std::move(ctx)));
  GPUU_RETURN_IF_ERROR(d->build(region, inputs, outputs));
  return d;
}

Status VulkanDelegate::build(const graph::Graph& region, const std::vector<BufferRange>& inputs,
                             const std::vector<BufferRange>& outputs) {
  const SharedGpuContext& ctx = *ctx_;
  GPUU_VK_RETURN_IF_ERROR(ctx.create_command_pool(&pool_), "vkCreateCommandPool");
  kernels_ = std::make_unique<KernelCache>(ctx_);
  sequence_ = std::make_unique<DispatchSequence>(ctx_);

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
  VkDeviceSize constant_bytes = 0, arena_bytes = 0;
  std::vector<VkDeviceSize> offset(region.values().size(), 0);
  for (size_t i = 0; i < region.values().size(); ++i) {
    if (placed[i]) continue;
    VkDeviceSize& total = region.values()[i].constant >= 0 ? constant_bytes : arena_bytes;
    offset[i] = total;
    total = align_up(total + tensor_bytes(region.values()[i]), align);
  }
  if (constant_bytes) {
    GPUU_ASSIGN_OR_RETURN(constants_, DeviceBuffer::create(ctx, constant_bytes, MemoryKind::kDevice, "constants"));
  }
  if (arena_bytes) {
    GPUU_ASSIGN_OR_RETURN(arena_, DeviceBuffer::create(ctx, arena_bytes, MemoryKind::kDevice, "intermediates"));
  }
  for (size_t i = 0; i < region.values().size(); ++i) {
    if (placed[i]) continue;
    const DeviceBuffer& home = region.values()[i].constant >= 0 ? constants_ : arena_;
    tensors[i].range = BufferRange{home.buffer(), offset[i], tensor_bytes(region.values()[i])};
  }
  for (const graph::Constant& c : region.constants()) {
    const TensorRef& t = tensors[static_cast<size_t>(c.value)];
    GPUU_RETURN_IF_ERROR(upload_once(ctx, pool_, constants_, t.range.offset, c.data.data(), c.data.size()));
  }

  LoweringContext lc{ctx, *kernels_, *sequence_, region, tensors,
                     [this](VkDeviceSize bytes, const char* what) -> Result<BufferRange> {
                       GPUU_ASSIGN_OR_RETURN(DeviceBuffer b,
                                             DeviceBuffer::create(*ctx_, bytes, MemoryKind::kDevice, what));
                       BufferRange r{b.buffer(), 0, b.size()};
                       scratch_.push_back(std::move(b));
                       return r;
                     }};
  for (const graph::Node& node : region.nodes()) {
    Status lowered = find_op_kernel(node.op)->lower(lc, node);
    if (!lowered.ok()) {
      return err(lowered.code(), "Vulkan delegate: lowering node '", node.name, "' (", node.op,
                 "): ", lowered.message());
    }
  }

  const auto& vk = ctx.vkd();
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  GPUU_VK_RETURN_IF_ERROR(vk.vkAllocateCommandBuffers(ctx.device(), &alloc, &command_buffer_),
                          "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  GPUU_VK_RETURN_IF_ERROR(vk.vkBeginCommandBuffer(command_buffer_, &begin), "vkBeginCommandBuffer");
  GPUU_RETURN_IF_ERROR(sequence_->record(command_buffer_));
  GPUU_VK_RETURN_IF_ERROR(vk.vkEndCommandBuffer(command_buffer_), "vkEndCommandBuffer");
  log(LogLevel::kDebug, "Vulkan", "recorded ", sequence_->dispatch_count(), " dispatches, ",
      sequence_->barrier_count(), " barriers, ", kernels_->size(), " pipelines");
  return Status::Ok();
}

VulkanDelegate::~VulkanDelegate() {
  // Pipelines, descriptor sets and buffers go before the pool and the context.
  sequence_.reset();
  kernels_.reset();
  scratch_.clear();
  constants_.reset();
  arena_.reset();
  if (pool_) ctx_->destroy_command_pool(pool_);  // frees the command buffer too
}

}  // namespace gpuu::vulkan
