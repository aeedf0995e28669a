// The device a kernel benchmark runs on: the first Vulkan device and a
// command pool on it, the pool given back when the benchmark ends; and its
// outputs read back.
#pragma once

#include <cstdio>
#include <memory>

#include "context/vulkan_bootstrap.h"
#include "gpu/device_buffer.h"
#include "gpu/submission.h"

namespace gpuu::bench {

struct BenchDevice {
  SharedGpuContextPtr ctx;
  VkCommandPool pool = VK_NULL_HANDLE;
  ~BenchDevice() {
    if (ctx && pool != VK_NULL_HANDLE) ctx->destroy_command_pool(pool);
  }
};

// The device for benchmark `name`, or null after printing why ("<name>: ...").
inline std::unique_ptr<BenchDevice> open_bench_device(const char* name) {
  Result<SharedGpuContextPtr> ctx = create_vulkan_context(name, 0, DeviceOptions{});
  if (!ctx.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, ctx.status().message().c_str());
    return nullptr;
  }
  auto device = std::make_unique<BenchDevice>();
  device->ctx = ctx.value();
  if (device->ctx->create_command_pool(&device->pool) != VK_SUCCESS) {
    std::fprintf(stderr, "%s: no command pool on '%s'\n", name, device->ctx->device_name().c_str());
    return nullptr;
  }
  return device;
}

// Copies the whole of `src` (a device-memory output) into `dst` (host
// visible), once, after the timed runs: a kernel that wrote host memory
// directly would time its stores crossing the bus.
inline Status read_back(const SharedGpuContext& ctx, VkCommandPool pool, const gpu::DeviceBuffer& src,
                        const gpu::DeviceBuffer& dst) {
  return gpu::run_once(
      ctx, pool,
      [&](VkCommandBuffer cb) {
        VkBufferCopy region{0, 0, src.size()};
        ctx.vkd().vkCmdCopyBuffer(cb, src.buffer(), dst.buffer(), 1, &region);
        return Status::Ok();
      },
      "reading the output back");
}

}  // namespace gpuu::bench
