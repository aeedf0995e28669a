// DeviceBuffer: one VkBuffer with its own memory on a shared context. Device
// buffers hold tensors between dispatches; host-visible ones stage inputs and
// outputs (on unified-memory devices such as lavapipe they are the same).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "context/shared_gpu_context.h"

namespace gpuu::gpu {

enum class MemoryKind {
  kDevice,    // fastest for the GPU; host access not required
  kUpload,    // host writes, GPU reads: HOST_VISIBLE | HOST_COHERENT
  kReadback,  // GPU writes, host reads: HOST_VISIBLE | HOST_COHERENT, cached if offered
  kShared,    // both: HOST_VISIBLE | HOST_COHERENT, device-local if offered (resizable BAR, unified memory)
};

// A range of a buffer that a dispatch binds.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  // The memory the buffer is bound to and where, when the range's owner says
  // (hand-off buffers do): resources that alias the buffer bind there.
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize memory_offset = 0;
  VkDeviceSize memory_size = 0;  // bytes of `memory` usable from memory_offset on
  // Where the host sees `offset`, when the owner keeps the memory mapped
  // (session homes do): host plugins read and write there.
  void* host = nullptr;
};

// True when the two ranges share bytes of one buffer.
inline bool overlaps(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

class DeviceBuffer {
 public:
  // `size` is rounded up to 4 bytes (shaders address words; fills need it).
  static Result<DeviceBuffer> create(const SharedGpuContext& ctx, VkDeviceSize size, MemoryKind kind,
                                     const char* what);

  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The buffer's own allocation (bound at offset 0): what another resource
  // aliasing the buffer binds to (the VGF backend's tensors).
  VkDeviceMemory memory() const { return memory_; }
  VkDeviceSize allocation_size() const { return allocation_size_; }
  // Non-null for host-visible memory (persistently mapped).
  void* mapped() const { return mapped_; }
  // Mapped and host-cached: the host reads it at memory speed (unified
  // memory, readback buffers). Device memory seen through the PCIe BAR is
  // uncached: the host reads it through a staging copy instead.
  bool host_readable() const { return mapped_ && host_cached_; }
  // Mapped and coherent: the host may write it directly, no flush (device
  // memory on unified-memory devices such as lavapipe, upload buffers).
  bool host_writable() const { return mapped_ && host_coherent_; }
  bool valid() const { return buffer_ != VK_NULL_HANDLE; }
  // The whole buffer with its memory: how a hand-off buffer is handed to a
  // delegate (one that aliases it, as the VGF native path does, binds there).
  BufferRange whole_range() const { return BufferRange{buffer_, 0, size_, memory_, 0, allocation_size_, mapped_}; }
  void reset();

 private:
  const SharedGpuContext* ctx_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  VkDeviceSize allocation_size_ = 0;
  void* mapped_ = nullptr;
  bool host_cached_ = false;
  bool host_coherent_ = false;
};

}  // namespace gpuu::gpu
