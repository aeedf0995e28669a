// The GEMM kernel selector: which kernel (and tile) matmul, linear and conv2d's
// implicit GEMM run on a given context. f16 goes to the matrix-core kernel
// (gemm_coopmat.comp) where the context has VK_KHR_cooperative_matrix enabled
// and the device reports a shape that kernel can tile; everything else to
// gemm.comp, with a 128x128 tile on GPUs and a 64x64 one on CPU devices
// (lavapipe), where the larger tile only adds wasted work on edges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "context/shared_gpu_context.h"
#include "graph/graph.h"

namespace gpuu::kernels {

// kCoopMat: 8 subgroups of 64x32; kCoopMatWide: 4 subgroups of 64x64 (both
// 128x128 tiles; GPUU_COOP_WIDE in gemm_coopmat.comp).
enum class GemmKernel { kTiled64, kTiled128, kCoopMat, kCoopMatWide };

struct GemmChoice {
  GemmKernel kernel = GemmKernel::kTiled64;
  uint32_t tile_m = 64, tile_n = 64;  // the output tile one workgroup computes
  uint32_t cm_m = 0, cm_n = 0, cm_k = 0;  // kCoopMat: the cooperative-matrix shape
  // Elements per vector read of A / B (gemm.comp 4, gemm_coopmat.comp 8): the
  // contiguous axis must be a multiple of it for vector reads.
  uint32_t vector = 4;

  // The embedded shader: "gemm_f32_t8", "conv2d_gemm_coopmat_f16", ...
  std::string shader(bool conv, graph::DType dtype) const;
  // For logs and benchmarks: "coopmat 16x16x16 (128x128 tile)", "tiled 128x128".
  std::string describe() const;
};

// `force` (tests, benchmarks) picks a gemm.comp tile whatever the device;
// kCoopMat / kCoopMatWide are taken only where the device allows them, else
// the usual choice.
GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype,
                       std::optional<GemmKernel> force = std::nullopt);

}  // namespace gpuu::kernels
