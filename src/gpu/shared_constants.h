// Device copies of large constants (weights) shared by every user that
// uploads the same bytes to one device: the sessions a program with dims
// keeps for its sizes, two sessions of one program. The bytes are known by
// their address and size in memory that the entry keeps mapped (a program
// file's view), so one address always means one content.
#pragma once

#include <memory>

#include "base/blob.h"
#include "base/status.h"
#include "context/shared_gpu_context.h"
#include "gpu/device_buffer.h"

namespace gpuu::gpu {

// Constants of at least this many bytes are shared; smaller ones are packed
// with their delegate's others (one allocation each would be too many).
constexpr size_t kSharedConstantMinBytes = size_t{64} << 10;

class SharedConstant {
 public:
  SharedConstant(SharedGpuContextPtr ctx, Blob data, DeviceBuffer buffer)
      : ctx_(std::move(ctx)), data_(std::move(data)), buffer_(std::move(buffer)) {}
  BufferRange range() const { return BufferRange{buffer_.buffer(), 0, buffer_.size()}; }

 private:
  SharedGpuContextPtr ctx_;  // outlives the buffer
  Blob data_;                // keeps the bytes' address taken
  DeviceBuffer buffer_;
};

// The device copy of `data` on `ctx`'s device: the one made before while
// anyone holds it, else a new upload through `pool`.
Result<std::shared_ptr<const SharedConstant>> share_constant(const SharedGpuContextPtr& ctx, VkCommandPool pool,
                                                             const Blob& data);

// How many shared constants are held now, on every device (for tests).
size_t shared_constant_count();

}  // namespace gpuu::gpu
