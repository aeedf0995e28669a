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
#include <vector>

#include "context/shared_gpu_context.h"
#include "graph/graph.h"

namespace gpuu::kernels {

enum class GemmKernel {
  kTiled64,      // gemm.comp, 64x64 tile (CPU devices)
  kTiled128,     // gemm.comp, 128x128 tile (GPUs)
  kCoopMat,      // gemm_coopmat.comp, 128x128 tile, 64-deep slices
  kCoopMatTall,  // gemm_coopmat.comp, 256x128 tile, 32-deep slices
};

// What a GEMM computes, where that changes the pick: conv2d's implicit GEMM
// gathers B (im2col) element by element, so there a 256-row tile (half the
// gathers per multiply-add) pays once the GEMM has the rows for it (measured
// on the H100, 256 channels: 75 TFLOP/s against 47 for 128x128).
struct GemmProblem {
  bool conv = false;
  uint32_t m = 0;  // rows (conv2d: output channels per group)
};

struct GemmChoice {
  GemmKernel kernel = GemmKernel::kTiled64;
  uint32_t tile_m = 64, tile_n = 64;  // the output tile one workgroup computes
  uint32_t depth = 16;                // K per slice through shared memory
  uint32_t cm_m = 0, cm_n = 0, cm_k = 0;  // coopmat kernels: the cooperative-matrix shape
  // Elements per vector read of A / B (gemm.comp 4, gemm_coopmat.comp 8): the
  // contiguous axis must be a multiple of it for vector reads.
  uint32_t vector = 4;

  bool coopmat() const;
  // Tiles covering `m` rows / `n` columns.
  uint32_t tiles_m(uint32_t m) const { return (m + tile_m - 1) / tile_m; }
  uint32_t tiles_n(uint32_t n) const { return (n + tile_n - 1) / tile_n; }
  // The embedded shader: "gemm_f32_t8", "conv2d_gemm_coopmat_f16", ...
  std::string shader(bool conv, graph::DType dtype) const;
  // The kernel's specialization constants after the five every GEMM form
  // takes (bias, B's layout, vector reads, aligned): coopmat kernels' shape
  // and tile.
  std::vector<int32_t> specialization() const;
  // For logs and benchmarks: "coopmat 16x16x16 (128x128 tile, 64-deep)", "tiled 128x128".
  std::string describe() const;
};

// `force` (tests, benchmarks) picks that kernel where the device allows it
// (the coopmat ones need the extension and their shared memory), else the
// usual choice.
GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, std::optional<GemmKernel> force = std::nullopt,
                       GemmProblem problem = {});

}  // namespace gpuu::kernels
