// The device a kernel benchmark runs on: the first Vulkan device and a
// command pool on it, the pool given back when the benchmark ends.
#pragma once

#include <cstdio>
#include <memory>

#include "context/vulkan_bootstrap.h"

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

}  // namespace gpuu::bench
