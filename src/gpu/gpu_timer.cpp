// Timestamp queries around recorded work.
#include "gpu/gpu_timer.h"

#include <vector>

namespace gpuu::gpu {

bool queue_has_timestamps(const SharedGpuContext& ctx) {
  uint32_t family_count = 0;
  ctx.vki().vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical_device(), &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  ctx.vki().vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical_device(), &family_count, families.data());
  return ctx.queue_family_index() < family_count && families[ctx.queue_family_index()].timestampValidBits > 0;
}

Status GpuTimer::begin(const SharedGpuContext& ctx, VkCommandBuffer cb) {
  reset();
  ctx_ = &ctx;
  if (!queue_has_timestamps(ctx)) return Status::Ok();
  const auto& vk = ctx.vkd();
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = 2;
  GPUU_VK_RETURN_IF_ERROR(vk.vkCreateQueryPool(ctx.device(), &query_info, nullptr, &pool_), "vkCreateQueryPool");
  vk.vkCmdResetQueryPool(cb, pool_, 0, 2);
  vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool_, 0);
  return Status::Ok();
}

void GpuTimer::end(VkCommandBuffer cb) const {
  if (pool_) ctx_->vkd().vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 1);
}

double GpuTimer::elapsed_us() const {
  if (!pool_) return -1;
  uint64_t ticks[2] = {0, 0};
  VkResult r = ctx_->vkd().vkGetQueryPoolResults(ctx_->device(), pool_, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                                 VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return -1;
  return static_cast<double>(ticks[1] - ticks[0]) * ctx_->properties().limits.timestampPeriod / 1000.0;
}

void GpuTimer::reset() {
  if (pool_) ctx_->vkd().vkDestroyQueryPool(ctx_->device(), pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
}

}  // namespace gpuu::gpu
