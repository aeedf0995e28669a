// Device copies of large constants (weights) shared by every user that
// uploads the same bytes to one device: the sessions a program with dims
// keeps for its sizes, two sessions of one program. The bytes are known by
// their Blob::name(): their address and size in memory that the entry keeps
// mapped (a program file's view), or how they are made from such bytes (a
// weight rearranged, siblings end to end), so one name means one content.
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
  const Blob& data() const { return data_; }  // what it was made from: its name, with the device, is its key
  VkDeviceSize device_bytes() const { return buffer_.size(); }

 private:
  SharedGpuContextPtr ctx_;  // outlives the buffer
  Blob data_;                // keeps the bytes' name taken (no host bytes made from it)
  DeviceBuffer buffer_;
};

// The device copy of `data` on `ctx`'s device: the one made before while
// anyone holds it, else a new upload through `pool` (a derived blob's bytes
// are made into the upload, not kept on the host).
Result<std::shared_ptr<const SharedConstant>> share_constant(const SharedGpuContextPtr& ctx, VkCommandPool pool,
                                                             const Blob& data);

// How many shared constants are held now, on every device (for tests).
size_t shared_constant_count();

// Whether a device copy of `data` is held now, on any device: a session's
// memory plan counts the weights it would upload before it knows its device.
bool shared_constant_held(const Blob& data);

// The device bytes of a shared copy of `data` (DeviceBuffer rounds to words).
inline uint64_t shared_constant_bytes(const Blob& data) { return (uint64_t{data.size()} + 3) / 4 * 4; }

}  // namespace gpuu::gpu
