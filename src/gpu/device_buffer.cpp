// Memory-type choice and the lifetime of DeviceBuffer.
#include "gpu/device_buffer.h"

#include <algorithm>
#include <vector>

namespace gpuu::gpu {
namespace {

// Memory types allowed by `bits` with all of `required`: those that also
// have `preferred` first, each group in the driver's order.
std::vector<uint32_t> memory_type_candidates(const VkPhysicalDeviceMemoryProperties& props, uint32_t bits,
                                             VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  std::vector<uint32_t> first, rest;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    ((flags & preferred) == preferred ? first : rest).push_back(i);
  }
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

}  // namespace

Result<DeviceBuffer> DeviceBuffer::create(const SharedGpuContext& ctx, VkDeviceSize size, MemoryKind kind,
                                          const char* what) {
  const auto& vk = ctx.vkd();
  VkDeviceSize rounded = (size + 3) & ~VkDeviceSize(3);
  if (rounded == 0) rounded = 4;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = rounded;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  DeviceBuffer out;
  out.ctx_ = &ctx;
  out.size_ = rounded;
  GPUU_VK_RETURN_IF_ERROR(vk.vkCreateBuffer(ctx.device(), &info, nullptr, &out.buffer_), "vkCreateBuffer");
  VkMemoryRequirements req;
  vk.vkGetBufferMemoryRequirements(ctx.device(), out.buffer_, &req);

  VkMemoryPropertyFlags required = 0, preferred = 0;
  switch (kind) {
    case MemoryKind::kDevice:
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case MemoryKind::kUpload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryKind::kShared:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case MemoryKind::kReadback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
  // Try the preferred memory types first, then any allowed one: a small
  // device-local host-visible heap (a 256 MiB BAR) may run out, and plain
  // host-visible memory, read by the GPU over the bus, still works.
  std::vector<uint32_t> candidates = memory_type_candidates(ctx.memory_properties(), req.memoryTypeBits, required,
                                                            preferred);
  if (candidates.empty()) {
    return err(StatusCode::kUnsupported, "no memory type for ", what, " (", rounded, " bytes) on '",
               ctx.device_name(), "'");
  }
  VkResult r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  uint32_t type = candidates.front();
  // A little slack past the buffer: a tensor aliasing it (the VGF native
  // path) may need its size rounded up further than a buffer does (NVIDIA:
  // to 16 bytes); 64 covers the granularities seen.
  out.allocation_size_ = std::max<VkDeviceSize>(req.size, (rounded + 63) & ~VkDeviceSize(63));
  for (uint32_t candidate : candidates) {
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = out.allocation_size_;
    alloc.memoryTypeIndex = candidate;
    r = vk.vkAllocateMemory(ctx.device(), &alloc, nullptr, &out.memory_);
    type = candidate;
    if (r == VK_SUCCESS) break;
  }
  if (r != VK_SUCCESS) {
    return err(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? StatusCode::kOutOfMemory
                                                                                       : StatusCode::kVulkan,
               "allocating ", out.allocation_size_, " bytes for ", what, " failed: ", vk::vk_result_name(r));
  }
  GPUU_VK_RETURN_IF_ERROR(vk.vkBindBufferMemory(ctx.device(), out.buffer_, out.memory_, 0), "vkBindBufferMemory");
  VkMemoryPropertyFlags flags = ctx.memory_properties().memoryTypes[type].propertyFlags;
  out.host_cached_ = (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
  out.host_coherent_ = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    GPUU_VK_RETURN_IF_ERROR(vk.vkMapMemory(ctx.device(), out.memory_, 0, VK_WHOLE_SIZE, 0, &out.mapped_),
                            "vkMapMemory");
  }
  return out;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    ctx_ = other.ctx_;
    buffer_ = other.buffer_;
    memory_ = other.memory_;
    size_ = other.size_;
    allocation_size_ = other.allocation_size_;
    mapped_ = other.mapped_;
    host_cached_ = other.host_cached_;
    host_coherent_ = other.host_coherent_;
    other.buffer_ = VK_NULL_HANDLE;
    other.memory_ = VK_NULL_HANDLE;
    other.mapped_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (!ctx_) return;
  const auto& vk = ctx_->vkd();
  if (buffer_) vk.vkDestroyBuffer(ctx_->device(), buffer_, nullptr);
  if (memory_) vk.vkFreeMemory(ctx_->device(), memory_, nullptr);  // unmaps implicitly
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
}

}  // namespace gpuu::gpu
