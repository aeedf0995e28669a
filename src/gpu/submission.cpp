// Submits of recorded work and the one-off upload, on a shared context's queue.
#include "gpu/submission.h"

#include <algorithm>
#include <cstring>

namespace gpuu::gpu {

Status SubmitBatch::flush(uint32_t* submitted) {
  if (command_buffers_.empty()) return Status::Ok();
  if (tail_) command_buffers_.push_back(tail_);
  const auto count = static_cast<uint32_t>(command_buffers_.size());
  if (sync_mode_ == SyncMode::kTimeline) {
    Result<uint64_t> value = ctx_->submit_timeline(count, command_buffers_.data(), VK_NULL_HANDLE);
    if (!value.ok()) {
      command_buffers_.clear();
      return err(value.status().code(), "sync mode timeline: ", value.status().message(), " (use queue_wait_idle)");
    }
    if (signaled_value_) *signaled_value_ = value.value();
  } else {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = count;
    submit.pCommandBuffers = command_buffers_.data();
    VkResult r = ctx_->submit(1, &submit, VK_NULL_HANDLE);
    if (r != VK_SUCCESS) {
      command_buffers_.clear();
      return vk::vk_status(r, "vkQueueSubmit");
    }
  }
  command_buffers_.clear();
  if (submitted) ++*submitted;
  return Status::Ok();
}

Status submit_recorded(const SharedGpuContext& ctx, VkCommandBuffer command_buffer, const SubmitArgs& args) {
  if (args.batch) {
    args.batch->add(command_buffer);
    return Status::Ok();
  }
  if (args.sync_mode == SyncMode::kTimeline) {
    Result<uint64_t> value = ctx.submit_timeline(command_buffer, args.fence);
    if (!value.ok()) {
      return err(value.status().code(), "sync mode timeline: ", value.status().message(), " (use queue_wait_idle)");
    }
    if (args.signaled_value) *args.signaled_value = value.value();
    return Status::Ok();
  }
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer;
  GPUU_VK_RETURN_IF_ERROR(ctx.submit(1, &submit, args.fence), "vkQueueSubmit");
  return Status::Ok();
}

Status run_once(const SharedGpuContext& ctx, VkCommandPool pool, const std::function<Status(VkCommandBuffer)>& record,
                const char* what) {
  const auto& vk = ctx.vkd();
  VkCommandBuffer cb = VK_NULL_HANDLE;
  GPUU_VK_RETURN_IF_ERROR(ctx.allocate_command_buffer(pool, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  Status status = Status::Ok();
  VkResult r = vk.vkBeginCommandBuffer(cb, &begin);
  if (r == VK_SUCCESS) {
    status = record(cb);
    r = vk.vkEndCommandBuffer(cb);
  }
  if (status.ok() && r == VK_SUCCESS) r = vk.vkCreateFence(ctx.device(), &fence_info, nullptr, &fence);
  if (status.ok() && r == VK_SUCCESS) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    r = ctx.submit(1, &submit, fence);
  }
  if (status.ok() && r == VK_SUCCESS) r = vk.vkWaitForFences(ctx.device(), 1, &fence, VK_TRUE, UINT64_MAX);
  if (status.ok() && r != VK_SUCCESS) status = vk::vk_status(r, what);
  if (fence) vk.vkDestroyFence(ctx.device(), fence, nullptr);
  vk.vkFreeCommandBuffers(ctx.device(), pool, 1, &cb);
  return status;
}

Status upload_once(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                   const void* bytes, VkDeviceSize size) {
  if (size == 0) return Status::Ok();
  if (dst.host_writable()) {
    // Unified memory: written in place, no staging copy (a submit makes host
    // writes visible to the device).
    std::memcpy(static_cast<uint8_t*>(dst.mapped()) + offset, bytes, size);
    return Status::Ok();
  }
  return upload_staged(ctx, pool, dst, offset, bytes, size, kUploadStagingBytes);
}

Status upload_staged(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                     const void* bytes, VkDeviceSize size, VkDeviceSize piece) {
  if (size == 0) return Status::Ok();
  piece = std::min(size, piece);
  GPUU_ASSIGN_OR_RETURN(DeviceBuffer staging, DeviceBuffer::create(ctx, piece, MemoryKind::kUpload, "staging"));
  const auto* src = static_cast<const uint8_t*>(bytes);
  for (VkDeviceSize done = 0; done < size; done += piece) {
    const VkDeviceSize n = std::min(piece, size - done);
    std::memcpy(staging.mapped(), src + done, n);
    GPUU_RETURN_IF_ERROR(run_once(
        ctx, pool,
        [&](VkCommandBuffer cb) {
          VkBufferCopy region{0, offset + done, n};
          ctx.vkd().vkCmdCopyBuffer(cb, staging.buffer(), dst.buffer(), 1, &region);
          return Status::Ok();
        },
        "uploading constants"));
  }
  return Status::Ok();
}

}  // namespace gpuu::gpu
