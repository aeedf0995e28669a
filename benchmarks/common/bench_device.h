// The device a kernel benchmark runs on: the first Vulkan device and a
// command pool on it, the pool given back when the benchmark ends; and its
// outputs read back.
#pragma once

#include <chrono>
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

// Submits `cb` alone on the context's queue and waits for the queue to idle:
// one timed run. The wall time in microseconds, submit to idle.
inline Result<double> submit_and_wait(const SharedGpuContext& ctx, VkCommandBuffer cb) {
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  const auto start = std::chrono::steady_clock::now();
  GPUU_VK_RETURN_IF_ERROR(ctx.submit(1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
  GPUU_VK_RETURN_IF_ERROR(ctx.queue_wait_idle(), "vkQueueWaitIdle");
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// Submits `cb` again and again for `seconds`: a GPU left idle (between
// cases, while pipelines compile) clocks low and takes a while to come back,
// and a count of warm-up runs of a 20-us kernel is over before it does.
inline Status warm_up(const SharedGpuContext& ctx, VkCommandBuffer cb, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) GPUU_RETURN_IF_ERROR(submit_and_wait(ctx, cb).status());
  return Status::Ok();
}

}  // namespace gpuu::bench
