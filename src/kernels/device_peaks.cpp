// Measuring a device's peak rates (see device_peaks.h).
#include "kernels/device_peaks.h"

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "gpu/submission.h"
#include "kernels/dispatch_sequence.h"
#include "kernels/gemm_select.h"
#include "kernels/op_codes.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {
namespace {

// One measurement's dispatch: a kernel over `groups` workgroups, timed alone.
struct Probe {
  KernelKey key;
  std::vector<Binding> bindings;
  PushConstants push;
  uint64_t groups = 1;
};

// Sizes: enough work to fill a GPU for a fraction of a millisecond per run,
// next to nothing on a CPU device.
struct Sizes {
  VkDeviceSize copy_bytes;  // each of the copy's two buffers
  uint64_t fma_groups;
  uint32_t fma_iterations;
  uint64_t coopmat_groups;
  uint32_t coopmat_iterations;
  int runs;
};

Sizes sizes_for(const SharedGpuContext& ctx) {
  if (ctx.is_cpu_device()) return Sizes{4u << 20, 16, 32, 1, 4, 3};
  // Larger than any GPU's last-level cache (50 MB on the H100), within what a
  // storage buffer may span.
  const VkDeviceSize copy = std::min<VkDeviceSize>(VkDeviceSize{128} << 20,
                                                   ctx.properties().limits.maxStorageBufferRange / 16 * 16);
  // One row of workgroups (the shaders index by workgroup along x).
  const uint64_t max_groups = ctx.properties().limits.maxComputeWorkGroupCount[0];
  const uint64_t units = ctx.compute_units();
  return Sizes{copy, std::min<uint64_t>(units ? units * 16 : 4096, max_groups), 512,
               std::min<uint64_t>(units ? units * 8 : 2048, max_groups), 1024, 4};
}

class Calibration {
 public:
  explicit Calibration(SharedGpuContextPtr ctx) : ctx_(std::move(ctx)), kernels_(*ctx_) {}
  ~Calibration() {
    if (pool_) ctx_->destroy_command_pool(pool_);
  }
  Calibration(const Calibration&) = delete;
  Calibration& operator=(const Calibration&) = delete;

  Result<BufferRange> buffer(VkDeviceSize bytes, const char* what) {
    GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::DeviceBuffer::create(*ctx_, bytes, MemoryKind::kDevice, what));
    buffers_.push_back(std::move(b));
    return buffers_.back().whole_range();
  }

  // The least GPU time in seconds of `runs` runs of `probe`, recorded back to
  // back (each after a barrier: they write the same memory) in one submit.
  Result<double> best_seconds(const Probe& probe, int runs) {
    if (!pool_) GPUU_VK_RETURN_IF_ERROR(ctx_->create_command_pool(&pool_), "vkCreateCommandPool");
    GPUU_ASSIGN_OR_RETURN(const Kernel* kernel, kernels_.get(probe.key));
    DispatchSequence sequence(ctx_, DispatchSequence::Options{true, true});
    for (int r = 0; r < runs; ++r) {
      Step step;
      step.label = probe.key.shader;
      step.kernel = kernel;
      step.bindings = probe.bindings;
      step.push_constants = probe.push.bytes();
      dispatch_groups(probe.groups * kWorkgroupSize, kWorkgroupSize,
                      ctx_->properties().limits.maxComputeWorkGroupCount[0], step.groups);
      sequence.add(std::move(step));
    }
    GPUU_RETURN_IF_ERROR(gpu::run_once(
        *ctx_, pool_, [&](VkCommandBuffer cb) { return sequence.record(cb); }, "measuring the device's peaks"));
    double best = 0;
    for (const gpu::TimedStep& t : sequence.step_times()) {
      if (t.us > 0 && (best == 0 || t.us < best)) best = t.us;
    }
    return best * 1e-6;
  }

 private:
  SharedGpuContextPtr ctx_;
  KernelCache kernels_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<gpu::DeviceBuffer> buffers_;
};

// A rate from `amount` done in `seconds`, 0 where no time was measured.
double rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }

Result<DevicePeaks> measure(const SharedGpuContextPtr& ctx) {
  if (!gpu::queue_has_timestamps(*ctx)) {
    return err(StatusCode::kUnsupported, "its queue family ", ctx->queue_family_index(),
               " writes no timestamps, which profiles need");
  }
  const auto start = std::chrono::steady_clock::now();
  const Sizes sizes = sizes_for(*ctx);
  Calibration c(ctx);
  DevicePeaks peaks;

  Probe copy;
  const auto words = static_cast<uint32_t>(sizes.copy_bytes / 16);
  GPUU_ASSIGN_OR_RETURN(BufferRange src, c.buffer(sizes.copy_bytes, "peak bandwidth source"));
  GPUU_ASSIGN_OR_RETURN(BufferRange dst, c.buffer(sizes.copy_bytes, "peak bandwidth destination"));
  copy.push.u32(words);
  copy.key = KernelKey{"peak_copy", {}, 2, copy.push.size()};
  copy.bindings = {{src, false}, {dst, true}};
  copy.groups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
  GPUU_ASSIGN_OR_RETURN(double copy_s, c.best_seconds(copy, sizes.runs));
  peaks.bytes_per_s = rate(2.0 * static_cast<double>(words) * 16, copy_s);

  Probe fma;
  GPUU_ASSIGN_OR_RETURN(BufferRange sums, c.buffer(sizes.fma_groups * kWorkgroupSize * 4, "peak FMA results"));
  fma.push.u32(sizes.fma_iterations).f32(0.999f);
  fma.key = KernelKey{"peak_fma", {}, 1, fma.push.size()};
  fma.bindings = {{sums, true}};
  fma.groups = sizes.fma_groups;
  GPUU_ASSIGN_OR_RETURN(double fma_s, c.best_seconds(fma, sizes.runs));
  peaks.f32_flops_per_s = rate(2.0 * op_codes::kLimitPeakFmaPerIteration * sizes.fma_iterations *
                                   static_cast<double>(sizes.fma_groups * kWorkgroupSize),
                               fma_s);

  // The shape, and the features, of gpuu's own f16 GEMM on matrix cores.
  const GemmChoice coop = select_gemm(*ctx, graph::DType::kF16, GemmForce{GemmKernel::kCoopMat});
  if (!coop.coopmat()) {
    peaks.f16_matrix_unknown_why = ctx->has_feature(kFeatureCooperativeMatrix)
                                       ? "no cooperative-matrix shape that gpuu's f16 GEMM runs"
                                       : "no VK_KHR_cooperative_matrix on this context";
  } else {
    Probe mma;
    const uint64_t subgroups = sizes.coopmat_groups * (kWorkgroupSize / ctx->subgroup_size());
    const uint64_t chains = op_codes::kLimitPeakCoopmatChains;
    GPUU_ASSIGN_OR_RETURN(BufferRange fragments,
                          c.buffer((coop.cm_m * coop.cm_k + coop.cm_k * coop.cm_n) * 2, "peak f16 fragments"));
    GPUU_ASSIGN_OR_RETURN(BufferRange products,
                          c.buffer(subgroups * chains * coop.cm_m * coop.cm_n * 4, "peak f16 results"));
    mma.push.u32(sizes.coopmat_iterations);
    mma.key = KernelKey{"peak_coopmat_f16",
                        {0, 0, 0, 0, 0, static_cast<int32_t>(coop.cm_m), static_cast<int32_t>(coop.cm_n),
                         static_cast<int32_t>(coop.cm_k)},
                        2,
                        mma.push.size()};
    mma.bindings = {{fragments, false}, {products, true}};
    mma.groups = sizes.coopmat_groups;
    // The matrix-core loop is the one probe a driver may refuse (its
    // pipeline, its shape): then that peak is unknown, and the profile says
    // why, rather than no profile at all.
    Result<double> mma_s = c.best_seconds(mma, sizes.runs);
    if (mma_s.ok()) {
      peaks.f16_matrix_flops_per_s = rate(2.0 * coop.cm_m * coop.cm_n * coop.cm_k * static_cast<double>(chains) *
                                              sizes.coopmat_iterations * static_cast<double>(subgroups),
                                          mma_s.value());
    } else {
      peaks.f16_matrix_unknown_why = "measuring it failed: " + mma_s.status().message();
      log(LogLevel::kWarn, "profile", "device '", ctx->device_name(), "': the f16 matrix peak is unknown, ",
          peaks.f16_matrix_unknown_why);
    }
  }
  peaks.measure_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return peaks;
}

}  // namespace

Result<DevicePeaks> device_peaks(const SharedGpuContextPtr& ctx) {
  return ctx->peaks([&] { return measure(ctx); });
}

}  // namespace gpuu::kernels
