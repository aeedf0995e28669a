// KernelGraph: one graph region lowered to gpuu's kernels on a shared
// context. At creation it uploads constants once, places intermediates in one
// device arena, takes its pipelines from its device's KernelCache and records
// one reusable command buffer from its own command pool; running it is one
// submit, whatever the number of operators.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "gpu/device_buffer.h"
#include "gpu/gpu_timer.h"
#include "gpu/shared_constants.h"
#include "graph/graph.h"
#include "kernels/dispatch_sequence.h"
#include "kernels/gemm_select.h"
#include "kernels/kernel_cache.h"

namespace gpuu::kernels {

// A plain options struct; it shares only its layout of defaulted fields with SharedGpuCompileSpec.
struct KernelGraphOptions {
  // Merge chains of elementwise ops into single dispatches (fusion.h).
  bool fuse_elementwise = true;
  // Let intermediates whose lifetimes do not overlap share arena memory.
  bool reuse_memory = true;
  // Compose chains of static data movement into one gather (movement.h).
  bool compose_movement = true;
  // Let kernels that read inputs through strides (attention) read transposed,
  // sliced or reshaped values in place, the movement ops skipped (movement.h).
  bool strided_views = true;
  // Bracket each run with timestamps (last_gpu_time_us). They are not free:
  // on NVIDIA each pair costs several microseconds of serialised GPU time, as
  // much as a small region's work, so a runtime asks for them only to profile.
  bool gpu_timing = true;
  // End the recorded work with a barrier making its writes visible to the
  // host. A runtime that ends each submit with one of its own turns it off.
  bool host_visible_results = true;
  // A timestamp after every dispatch (step_times()), for profiles.
  bool profile_steps = false;
  // Run linears that read one input as one linear over their weights side by
  // side, the results read back as views (sibling_linears.h).
  bool merge_sibling_linears = true;
  // Forces the GEMM kernel of matmul, linear and conv2d (tests, benchmarks):
  // see select_gemm.
  std::optional<GemmKernel> gemm_kernel;
  // f16 matmul and linear on workgroup-scope matrices (gemm_coopmat2.comp)
  // wherever the device and the GEMM allow, the rest as picked (the Vulkan
  // backend's gemm_kernel=coopmat2 option).
  bool gemm_coopmat2 = false;
  // Forces split-K into this many shares of K (tests, benchmarks), where K has the slices.
  std::optional<uint32_t> gemm_splits;
  // With gemm_splits: this many rows of tiles computed whole before the split
  // ones (GemmChoice::whole_tile_rows; tests).
  std::optional<uint32_t> gemm_whole_tile_rows;
  // Forces the int8 GEMM kernel of conv2d_int and matmul_int (tests,
  // benchmarks): see select_int_gemm.
  std::optional<IntGemmKernel> int_gemm_kernel;
  // Forces a conv2d whose im2col view is gathered to materialize it first
  // (true) or to gather it in the GEMM's tiles (false) (tests, benchmarks).
  std::optional<bool> conv_im2col;
  // Forces attention to split its keys into this many shares (flash-decoding;
  // tests, benchmarks), capped by the key blocks; 1 keeps one pass.
  std::optional<uint32_t> attention_splits;
  // Forces f16 attention onto the matrix-core kernel (true, where the device
  // and head dims allow it) or off it (tests, benchmarks).
  std::optional<bool> attention_coopmat;
  // Forces the matrix-core attention's subgroups sharing each key block (1,
  // 2 or 4; tests, benchmarks): choose_coop_attention_key_split otherwise.
  std::optional<uint32_t> attention_coop_key_split;
  // Forces the shader-core attention's key blocks to 16 keys (1; tests,
  // benchmarks): 32 (2) is the pick wherever the device's shared memory
  // holds them.
  std::optional<uint32_t> attention_keys;
  // Where the intermediates' arena lives: `bytes` of device memory that its
  // giver owns for as long as the graph lives (a runtime's workspace, shared
  // with graphs that never run at the same time). Unset: a buffer of the
  // graph's own.
  std::function<Result<BufferRange>(VkDeviceSize bytes)> arena;
};

// Device memory of a KernelGraph: what plan_memory says it would take, or
// what memory() says a built one holds.
struct KernelGraphMemory {
  std::vector<Blob> weights;  // constants kept once per device (gpu/shared_constants.h)
  VkDeviceSize constant_bytes = 0;  // the small constants and movement maps, packed: the graph's own
  // The intermediates' arena: the plan's size (plan_memory), or the buffer
  // the graph made itself (memory(); 0 where KernelGraphOptions::arena gave it).
  VkDeviceSize arena_bytes = 0;
  // Units' scratch (split-K partials, convolutions' im2col views: up to 64 MiB
  // each): known once lowered, so memory() only.
  VkDeviceSize scratch_bytes = 0;
};

class KernelGraph {
 public:
  // `region` holds the nodes (and constants) to run; its graph inputs read
  // `inputs[i]` and its graph outputs are written to `outputs[i]`: buffers the
  // caller owns and keeps alive while the delegate lives. An output may share
  // an input's range only where can_update_in_place allows it.
  static Result<std::unique_ptr<KernelGraph>> create(SharedGpuContextPtr ctx, const graph::Graph& region,
                                                     const std::vector<BufferRange>& inputs,
                                                     const std::vector<BufferRange>& outputs,
                                                     const KernelGraphOptions& options = {});
  // Whether `region` can run with its output `output` bound to the same
  // buffer as its input `input` (a program state and its update, of one
  // dtype and shape): region_plan.h's can_write_over. Buffers given to
  // create() that are the same for such a pair make the update in place, and
  // the lowerings that would copy the input first skip the copy.
  static bool can_update_in_place(const graph::Graph& region, graph::ValueId input, graph::ValueId output,
                                  const KernelGraphOptions& options = {});
  // What create() would allocate for `region`, without a device: weights,
  // packed constants and the arena, laid out by the same code at a storage
  // offset alignment of `align` (create() uses the device's, at least 16).
  // States written in place may need a little less. Unit scratch is left
  // out: how much a GEMM splits, and whether a convolution materializes its
  // im2col view, depend on the device.
  static KernelGraphMemory plan_memory(const graph::Graph& region, const KernelGraphOptions& options = {},
                                       VkDeviceSize align = 16);
  KernelGraphMemory memory() const;
  ~KernelGraph();
  KernelGraph(const KernelGraph&) = delete;
  KernelGraph& operator=(const KernelGraph&) = delete;

  // Binding slots: from now on read inputs[i] and write outputs[i] in place
  // of the buffers given at creation (or the last rebind): the recorded work
  // is re-pointed and recorded again now, never per run. Each range must
  // start at the device's storage-buffer offset alignment. Call only while
  // no run is in flight.
  Status rebind(const std::vector<BufferRange>& inputs, const std::vector<BufferRange>& outputs);

  VkCommandBuffer command_buffer() const { return command_buffer_; }
  const SharedGpuContextPtr& context() const { return ctx_; }
  VkCommandPool command_pool() const { return pool_; }
  size_t dispatch_count() const { return sequence_->dispatch_count(); }
  size_t barrier_count() const { return sequence_->barrier_count(); }
  // Each dispatch's GPU time in the last completed run (profile_steps).
  std::vector<gpu::TimedStep> step_times() const { return sequence_->step_times(); }
  // Distinct pipelines its dispatches use.
  size_t pipeline_count() const;
  // Bytes of device memory the intermediates use (after any reuse).
  VkDeviceSize arena_bytes() const { return arena_bytes_; }
  // Bytes of device memory the units' scratch (split-K partials, ...) uses.
  VkDeviceSize scratch_bytes() const { return scratch_.bytes(); }
  // GPU time of the last completed run, from timestamps written at the start
  // and end of the command buffer; -1 where the queue has no timestamps or
  // the options asked for none.
  // Call only after the submit has completed.
  double last_gpu_time_us() const { return timer_.elapsed_us(); }

 private:
  explicit KernelGraph(SharedGpuContextPtr ctx) : ctx_(std::move(ctx)) {}
  Status build(const graph::Graph& region, const std::vector<BufferRange>& inputs,
               const std::vector<BufferRange>& outputs, const KernelGraphOptions& options);
  Status record();

  SharedGpuContextPtr ctx_;  // keeps the device alive for everything below
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  std::shared_ptr<KernelCache> kernels_;  // the device's, shared by every delegate on it
  std::unique_ptr<DispatchSequence> sequence_;
  DeviceBuffer constants_;  // the small constants, packed
  std::vector<std::shared_ptr<const gpu::SharedConstant>> shared_constants_;  // the weights
  DeviceBuffer arena_;  // where KernelGraphOptions::arena gives none
  VkDeviceSize arena_bytes_ = 0;
  // LoweringContext::scratch: memory that lives within one unit's dispatches
  // (split-K partials and their reduction, a convolution's im2col view and
  // its GEMM, ...). Each unit takes it from the
  // start of the same blocks again, so the memory is the largest unit's, not
  // the sum; units that take some alternate between two sets of blocks, so
  // that one does not wait for the one before it to be read (barriers follow
  // the ranges' hazards).
  class UnitScratch {
   public:
    void next_unit();
    Result<BufferRange> take(const SharedGpuContext& ctx, VkDeviceSize bytes, VkDeviceSize align, const char* what);
    VkDeviceSize bytes() const;
    void clear();

   private:
    std::vector<DeviceBuffer> blocks_[2];
    int side_ = 0;
    size_t block_ = 0;       // the block of side_ the unit takes from, and how far
    VkDeviceSize used_ = 0;
    bool took_ = false;      // the unit being lowered took some
  };
  UnitScratch scratch_;
  gpu::GpuTimer timer_;
  std::vector<BufferRange> inputs_, outputs_;  // what the slots are bound to now
  bool gpu_timing_ = true;
};

}  // namespace gpuu::kernels
