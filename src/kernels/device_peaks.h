// A device's peak rates for profiles, which Vulkan does not report: measured
// with three short kernels (shaders/peaks.cmake) the first time a profile
// asks, then kept on the context (SharedGpuContext::peaks).
#pragma once

#include "context/shared_gpu_context.h"

namespace gpuu::kernels {

// The context's peaks, measured on the first call: memory bandwidth (a copy
// larger than the caches), f32 FMA throughput (a register-bound loop over
// enough workgroups to fill the device: 16 per multiprocessor where the
// driver names them) and, where the context runs gpuu's cooperative-matrix
// GEMM, f16 matrix throughput (a multiply-add loop on the shape that GEMM
// uses); else (or where the driver refuses that loop) that one stays 0 and
// f16_matrix_unknown_why says why. Each
// kernel runs a few times and its fastest run counts. Well under a second on
// a GPU; on a CPU device (lavapipe) the sizes are tiny. kUnsupported where
// the queue writes no timestamps.
Result<DevicePeaks> device_peaks(const SharedGpuContextPtr& ctx);

}  // namespace gpuu::kernels
