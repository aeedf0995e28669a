// The VGF backend's native path: each GRAPH segment of a VGF file becomes a
// VK_ARM_data_graph pipeline built from the file's SPIR-V module, with its
// constants from the file's constant section, a pipeline session with its
// memory bound, and VK_ARM_tensors tensors that alias the delegate's hand-off
// buffers (no copy at a delegate boundary). One command buffer, recorded
// once, dispatches every segment in sequence order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "context/shared_gpu_context.h"
#include "gpu/device_buffer.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// "" when the native path can run `file` on `ctx`, else why not (the device
// lacks the extensions, the file has COMPUTE segments or dynamic shapes...).
std::string data_graph_refusal(const SharedGpuContext& ctx, const VgfFile& file);

class DataGraphExecutor {
 public:
  // `inputs` / `outputs`: the hand-off buffers of the file's sequence inputs
  // and outputs, in order, each with its memory.
  static Result<std::unique_ptr<DataGraphExecutor>> create(SharedGpuContextPtr ctx, const VgfFile& file,
                                                           const std::vector<gpu::BufferRange>& inputs,
                                                           const std::vector<gpu::BufferRange>& outputs,
                                                           bool gpu_timing = true);
  ~DataGraphExecutor();
  DataGraphExecutor(const DataGraphExecutor&) = delete;
  DataGraphExecutor& operator=(const DataGraphExecutor&) = delete;

  const SharedGpuContextPtr& context() const;
  VkCommandPool command_pool() const;
  VkCommandBuffer command_buffer() const;
  size_t dispatch_count() const;  // data-graph dispatches per execute (one per GRAPH segment)
  // GPU time of the last completed execute (timestamps around the dispatches), or -1.
  double last_gpu_time_us() const;
  // Device memory it allocated itself: intermediate tensors and the
  // pipeline sessions' memory (inputs and outputs alias the hand-off
  // buffers; constants go to the driver with the pipelines, uncounted).
  uint64_t memory_bytes() const;

  struct Impl;

 private:
  explicit DataGraphExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuu::vgf
