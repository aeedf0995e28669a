// Getting recorded work onto the shared queue: the ordering a submit follows
// (RFC sync modes), the submit itself, and a one-off upload for data set up
// once. Any user of a shared context (either GPU backend, the runtime's
// hand-off copies, the kernel library) submits through here.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "context/shared_gpu_context.h"
#include "gpu/device_buffer.h"

namespace gpuu::gpu {

// How one submit is ordered with the others. A submit never waits: every
// host wait is the caller's (the runtime's) job.
struct SubmitArgs {
  SyncMode sync_mode = SyncMode::kTimeline;
  VkFence fence = VK_NULL_HANDLE;  // signalled when the submit completes (may be null)
  // timeline: set to the value the submit signals on the context's semaphore
  // (it waits for the context's previous timeline submit first).
  uint64_t* signaled_value = nullptr;
};

// Submits `command_buffer` on the context's queue as `args` says (timeline:
// chained on the context's semaphore). It never blocks.
Status submit_recorded(const SharedGpuContext& ctx, VkCommandBuffer command_buffer, const SubmitArgs& args);

// Copies `bytes` into `dst` at `offset` through a staging buffer and a one-off
// submit on `pool`, waiting for it. For data set up once (constants).
Status upload_once(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                   const void* bytes, VkDeviceSize size);

}  // namespace gpuu::gpu
