// DispatchSequence: the steps of one delegate (compute dispatches and buffer
// copies), recorded once into a reusable command buffer with a barrier only
// where a step touches what an earlier step since the last barrier wrote (or
// writes what it read), so independent dispatches may overlap on the GPU.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device_buffer.h"
#include "gpu/gpu_timer.h"
#include "kernels/kernel_cache.h"

namespace gpuu::kernels {

// The kernel library places tensors in the GPU layer's buffers.
using gpu::BufferRange;
using gpu::DeviceBuffer;
using gpu::MemoryKind;

struct Binding {
  BufferRange range;
  bool written = false;
};

struct Step {
  enum class Kind { kDispatch, kCopy } kind = Kind::kDispatch;
  std::string label;  // the graph node(s) it implements, for logs and profiles
  // What it does, for profiles; add() sets bytes from the bindings where the
  // lowering left them 0.
  gpu::StepWork work;
  // kDispatch
  const Kernel* kernel = nullptr;
  std::vector<Binding> bindings;  // binding i of set 0
  std::vector<uint8_t> push_constants;
  uint32_t groups[3] = {1, 1, 1};
  // kCopy: copy_src to copy_dst, or, where copy_regions is not empty, those
  // regions (offsets from copy_src's and copy_dst's), which lie within them.
  BufferRange copy_src, copy_dst;
  std::vector<VkBufferCopy> copy_regions;
};

// Workgroup counts for `invocations` threads of `group_size` each, spread over
// x and y so no dimension passes the device's limit.
void dispatch_groups(uint64_t invocations, uint32_t group_size, uint32_t max_groups_x, uint32_t out[3]);

class DispatchSequence {
 public:
  struct Options {
    // End with a barrier that makes the writes visible to the host; a runtime
    // that puts one after all of a submit's work says no.
    bool host_visible_exit = true;
    // A timestamp after every step (step_times()): a profile, not a fast run,
    // since each one waits for all earlier work.
    bool profile_steps = false;
  };
  explicit DispatchSequence(SharedGpuContextPtr ctx) : ctx_(std::move(ctx)) {}
  DispatchSequence(SharedGpuContextPtr ctx, const Options& options) : ctx_(std::move(ctx)), options_(options) {}
  ~DispatchSequence();
  DispatchSequence(const DispatchSequence&) = delete;
  DispatchSequence& operator=(const DispatchSequence&) = delete;

  void add(Step step);
  const std::vector<Step>& steps() const { return steps_; }

  // Allocates every descriptor set from one pool and records all steps into
  // `cb` (which must be in the recording state). Called again after
  // repoint(), into a reset command buffer, it makes its sets afresh.
  Status record(VkCommandBuffer cb);
  // Binding slots: for each (from, to) move, every range the steps take
  // inside `from` now lies at the same place inside `to` (an application's
  // buffer instead of the one the sequence was built on). All moves apply at
  // once, so slots may swap buffers. Takes effect at the next record().
  void repoint(const std::vector<std::pair<BufferRange, BufferRange>>& moves);
  // Records into `cb` an empty dispatch (no workgroups: nothing read or
  // written) of each pipeline the steps use, bound as its first step binds
  // it: drivers that compile a pipeline's code at its first dispatch
  // (lavapipe) do it when this runs instead of in the first real run. Only
  // after record().
  void record_warm_up(VkCommandBuffer cb) const;
  size_t barrier_count() const { return barriers_; }
  // Each step's GPU time in the last completed run and its work (profile_steps), else empty.
  std::vector<gpu::TimedStep> step_times() const;
  size_t dispatch_count() const;

 private:
  SharedGpuContextPtr ctx_;
  std::vector<Step> steps_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> set_of_step_;  // from pool_, VK_NULL_HANDLE for copies
  size_t barriers_ = 0;
  Options options_;
  VkQueryPool profile_pool_ = VK_NULL_HANDLE;  // steps + 1 timestamps
};

}  // namespace gpuu::kernels
