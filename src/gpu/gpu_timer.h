// GpuTimer: two timestamps bracketing the work of one recorded command
// buffer, read back after a submit has completed (GPU time per execute).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "context/shared_gpu_context.h"

namespace gpuu::gpu {

// What one recorded step does, set where it is lowered, for profiles.
struct StepWork {
  std::string ops;  // the gpuu op(s) it implements: "matmul"; a fused group's "mul+add+tanh"
  // The lowering's pick where it made one (GEMMs, convolutions), and why:
  // "tiled 64x64, split-K 4 x 512", "8 tiles for 132 multiprocessors: ...".
  std::string choice, why;
  // Floating-point operations where arithmetic is the work (2*M*N*K per GEMM);
  // 0 for memory-bound kernels.
  uint64_t flops = 0;
  bool matrix_cores = false;  // the flops run on cooperative matrices (f16), not vector FMAs
  // Bytes read plus bytes written, from the sizes of the tensors it binds.
  uint64_t bytes = 0;
};

// One recorded step's GPU time in the last run, for profiles: the graph
// node(s) it implements ("a+b+c" for a fused group), the kernel (shader, or
// "copy") that ran it, microseconds, and what it did.
struct TimedStep {
  std::string label;
  std::string kernel;
  double us = 0;
  StepWork work;
};

// Whether the context's queue family writes timestamps (timestampValidBits > 0).
bool queue_has_timestamps(const SharedGpuContext& ctx);

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
