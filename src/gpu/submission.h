// Getting recorded work onto the shared queue: the ordering a submit follows
// (RFC sync modes), the submit itself, and a one-off upload for data set up
// once. Any user of a shared context (either GPU backend, the runtime's
// hand-off copies, the kernel library) submits through here.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "context/shared_gpu_context.h"
#include "gpu/device_buffer.h"

namespace gpuu::gpu {

// Recorded work gathered for one queue submission on one context. The
// runtime gives each execute one per context, so delegates that share a queue
// go in one vkQueueSubmit: their command buffers run in submission order, and
// each one's recorded entry barrier orders its reads after earlier writes, so
// the timeline chain needs no semaphore between them. flush() submits what
// was gathered as the sync mode says (timeline: one signal for all).
class SubmitBatch {
 public:
  SubmitBatch(const SharedGpuContext& ctx, SyncMode sync_mode, uint64_t* signaled_value)
      : ctx_(&ctx), sync_mode_(sync_mode), signaled_value_(signaled_value) {}
  void add(VkCommandBuffer command_buffer) { command_buffers_.push_back(command_buffer); }
  // Recorded work every flush ends with (the runtime's one barrier that makes
  // the batch's writes visible to the host, instead of one per delegate).
  void set_tail(VkCommandBuffer command_buffer) { tail_ = command_buffer; }
  bool empty() const { return command_buffers_.empty(); }
  // One submit of everything gathered (nothing when empty); never blocks.
  // `submitted` counts the queue submissions made.
  Status flush(uint32_t* submitted = nullptr);

 private:
  const SharedGpuContext* ctx_;
  SyncMode sync_mode_;
  uint64_t* signaled_value_;  // set to what the timeline submit signals
  std::vector<VkCommandBuffer> command_buffers_;
  VkCommandBuffer tail_ = VK_NULL_HANDLE;
};

// How one submit is ordered with the others. A submit never waits: every
// host wait is the caller's (the runtime's) job.
struct SubmitArgs {
  SyncMode sync_mode = SyncMode::kTimeline;
  VkFence fence = VK_NULL_HANDLE;  // signalled when the submit completes (may be null)
  // timeline: set to the value the submit signals on the context's semaphore
  // (it waits for the context's previous timeline submit first).
  uint64_t* signaled_value = nullptr;
  // When set, submit_recorded gathers the work here and its owner submits it
  // (SubmitBatch::flush) before any host wait; a backend that reads device
  // memory on the host must flush it first.
  SubmitBatch* batch = nullptr;
};

// Submits `command_buffer` on the context's queue as `args` says (timeline:
// chained on the context's semaphore). It never blocks.
Status submit_recorded(const SharedGpuContext& ctx, VkCommandBuffer command_buffer, const SubmitArgs& args);

// Records `record` into a one-off command buffer from `pool`, submits it and
// waits for it: work done once (uploads, measurements). `what` names it in errors.
Status run_once(const SharedGpuContext& ctx, VkCommandPool pool, const std::function<Status(VkCommandBuffer)>& record,
                const char* what);

// The most host memory an upload stages at once: loading a program holds
// this much beyond its own, however large its weights.
constexpr VkDeviceSize kUploadStagingBytes = VkDeviceSize{16} << 20;

// Copies `bytes` into `dst` at `offset`, waiting until it is done: directly
// where the host may write `dst` (unified memory), else upload_staged with
// pieces of kUploadStagingBytes. For data set up once (constants).
Status upload_once(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                   const void* bytes, VkDeviceSize size);

// The same through one staging buffer of at most `piece` bytes, refilled for
// each piece, each piece a one-off submit on `pool` that is waited for.
Status upload_staged(const SharedGpuContext& ctx, VkCommandPool pool, const DeviceBuffer& dst, VkDeviceSize offset,
                     const void* bytes, VkDeviceSize size, VkDeviceSize piece);

}  // namespace gpuu::gpu
