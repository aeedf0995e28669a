// GpuTimer: two timestamps bracketing the work of one recorded command
// buffer, read back after a submit has completed (GPU time per execute).
#pragma once

#include <string>

#include "base/status.h"
#include "context/shared_gpu_context.h"

namespace gpuu::gpu {

// One recorded step's GPU time in the last run, for profiles: the graph node
// it implements, the kernel (shader) that ran it, and microseconds.
struct TimedStep {
  std::string label;
  std::string kernel;
  double us = 0;
};

class GpuTimer {
 public:
  GpuTimer() = default;
  ~GpuTimer() { reset(); }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Records the first timestamp into `cb`; records nothing where the
  // context's queue family cannot write timestamps. `ctx` must outlive the timer.
  Status begin(const SharedGpuContext& ctx, VkCommandBuffer cb);
  void end(VkCommandBuffer cb) const;
  // Microseconds between the two timestamps of the last completed submit,
  // or -1 where the queue has no timestamps.
  double elapsed_us() const;
  void reset();

 private:
  const SharedGpuContext* ctx_ = nullptr;
  VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace gpuu::gpu
