// The GEMM kernel selector: which kernel (and tile) matmul, linear and conv2d's
// implicit GEMM run on a given context. f16 goes to the matrix-core kernel
// (gemm_coopmat.comp) where the context has VK_KHR_cooperative_matrix enabled
// and the device reports a shape that kernel can tile; everything else to
// gemm.comp, with a 128x128 tile on GPUs and a 64x64 one on CPU devices
// (lavapipe), where the larger tile only adds wasted work on edges. A GEMM of
// at most 4 rows or columns goes to gemv.comp on every device.
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
  kCoopMatSmall, // gemm_coopmat.comp, 64x64 tile on 4 subgroups, 64-deep slices
  // gemm_coopmat2.comp: workgroup-scope matrices with tensor addressing
  // (VK_NV_cooperative_matrix2), the driver staging and pipelining the tiles'
  // reads; 32-deep slices. Matmul and linear only, and only where forced:
  // half gemm_coopmat.comp's speed or less on the H100 and H200.
  kCoopMat2,      // 128x128 tile
  kCoopMat2Tall,  // 256x128 tile
  kGemv,         // gemv.comp: <= 4 rows or columns, dot products along K
};

// The int8 GEMM kernels of conv2d_int and matmul_int (select_int_gemm below).
enum class IntGemmKernel {
  kDirect,    // conv2d_int.comp / matmul_int.comp: one output per invocation
  kTiled,     // int8_gemm.comp, multiply-adds
  kTiledDot,  // int8_gemm.comp, OpSDot (needs kFeatureShaderIntegerDotProduct)
  kCoopMat,   // int8_gemm_coopmat.comp: matrix cores (i8 x i8 -> i32 cooperative matrices)
};

// "direct", "tiled", "tiled_dot", "coopmat": for tests and benchmarks.
const char* int_gemm_kernel_name(IntGemmKernel kernel);

// What a GEMM computes, where that changes the pick: its size (to fill the
// GPU: a GEMM of fewer tiles than the GPU has multiprocessors takes smaller
// tiles or splits K) and whether it is conv2d's implicit GEMM, which gathers B
// (im2col) element by element, so there a 256-row tile (half the gathers per
// multiply-add) pays once the GEMM has the rows for it (measured on the H100,
// 256 channels: 75 TFLOP/s against 47 for 128x128).
struct GemmProblem {
  bool conv = false;
  uint32_t m = 0;        // rows (conv2d: output channels per group)
  uint32_t n = 0;        // columns (conv2d: batch x output pixels); 0: unknown, no occupancy choice
  uint32_t k = 0;        // depth
  uint32_t batches = 1;  // GEMMs of this size in the dispatch (matmul's batch, conv2d's groups)
  bool b_k_contiguous = false;  // B's contiguous axis is K (linear's weight)
  // linear_dequant: B's integers are this wide (8 or 4), dequantized as read;
  // 0: B is float. Quantized weights stay off the matrix-core kernels.
  uint32_t weight_bits = 0;
  // conv2d_int: input channels per group (0: not given).
  uint32_t conv_channels = 0;
  // Matmul and linear: A's and B's rows start on 16 bytes and are whole
  // 8-element chunks (the matrix-core kernels' vector reads), and the
  // result is stored row-major (not through a channels-first epilogue):
  // what gemm_coopmat2.comp's tensor loads and stores need.
  bool tensor_addressable = false;
};

// GemmProblem::tensor_addressable for a matmul or linear of depth `k` and
// `n` columns whose B has unit stride `b_unit` (1 where its elements along a
// row are adjacent) and `b_row` elements between rows, where every operand's
// and the stored result's binding starts on 16 bytes (`aligned_starts`) and
// the result is stored row-major (`row_major_store`).
bool tensor_addressable(uint32_t k, uint32_t n, uint32_t b_unit, uint32_t b_row, bool aligned_starts,
                        bool row_major_store);

struct GemmChoice {
  GemmKernel kernel = GemmKernel::kTiled64;
  uint32_t tile_m = 64, tile_n = 64;  // the output tile one workgroup computes
  uint32_t depth = 16;                // K per slice through shared memory
  uint32_t cm_m = 0, cm_n = 0, cm_k = 0;  // coopmat kernels: the cooperative-matrix shape
  bool lines_are_columns = true;          // gemv: a line (a workgroup's eighth) is an output column, else a row
  bool subgroup_lines = false;            // gemv: a line is one subgroup, summed by subgroupAdd
  // Elements per vector read of A / B (gemm.comp 4, gemm_coopmat.comp 8): the
  // contiguous axis must be a multiple of it for vector reads.
  uint32_t vector = 4;
  // Split-K: `splits` workgroups share each output tile, each summing
  // `k_split` of K (a multiple of `depth`) into an f32 partial; a second
  // dispatch (gemm_split_reduce.comp) adds the partials, the bias, and writes
  // the output. 1: no split.
  uint32_t splits = 1, k_split = 0;
  // Under split-K, the rows of tiles (across batches, in dispatch order)
  // computed whole before the split ones: whole rounds of the GPU, the split
  // shares of the remaining tiles filling the last round. 0: every tile split.
  uint32_t whole_tile_rows = 0;
  // Why this kernel, tile and split, for profiles and gpuu-inspect.
  std::string why;

  bool coopmat() const;   // on matrix cores: any gemm_coopmat.comp or gemm_coopmat2.comp tile
  bool coopmat2() const;  // gemm_coopmat2.comp
  // Tiles covering `m` rows / `n` columns.
  uint32_t tiles_m(uint32_t m) const { return (m + tile_m - 1) / tile_m; }
  uint32_t tiles_n(uint32_t n) const { return (n + tile_n - 1) / tile_n; }
  // The embedded shader: "gemm_f32_t8", "conv2d_gemm_coopmat_f16",
  // "gemv_qw4_f16" (weight_bits 4), ...
  std::string shader(bool conv, graph::DType dtype, uint32_t weight_bits = 0) const;
  // The kernel's specialization constants after the five every GEMM form
  // takes (bias, B's layout, vector reads, aligned): coopmat kernels' shape
  // and tile, gemv's line orientation and reduction.
  std::vector<int32_t> specialization() const;
  // For logs and benchmarks: "coopmat 16x16x16 (128x128 tile, 64-deep)",
  // "tiled 128x128, split-K 4 x 512", "tiled 128x128, split-K 4 x 192 after
  // 14 whole rows of tiles".
  std::string describe() const;
};

// What tests and benchmarks may force (KernelGraphOptions): a kernel, taken
// where the device allows it (the coopmat ones need the extension and their
// shared memory), else the usual choice; a split-K count, capped by K's slices.
// And, for tests of the selection policy, a multiprocessor count in place of
// the device's (lavapipe reports none) and a GPU's policy on a CPU device.
// The im2col view of a convolution that gathers it is materialized before
// its GEMM (im2col.comp) where it takes at most this much scratch: gathered
// in the tiles, each element costs index arithmetic in a kernel of few
// workgroups (H100, resnet50 at batch 8: f16 convolutions ran at 8-19
// TFLOP/s, slower than in f32; int8 ones at 9-15 TOPS).
constexpr uint64_t kIm2colMaxBytes = uint64_t{64} << 20;

struct GemmForce {
  GemmForce() = default;
  GemmForce(std::nullopt_t) {}                     // NOLINT: forces nothing, as before GemmForce
  GemmForce(GemmKernel kernel) : kernel(kernel) {}  // NOLINT: a kernel alone, as before GemmForce
  GemmForce(std::optional<GemmKernel> kernel, std::optional<uint32_t> splits = std::nullopt)
      : kernel(kernel), splits(splits) {}
  std::optional<GemmKernel> kernel;
  std::optional<uint32_t> splits;
  std::optional<uint32_t> whole_tile_rows;  // with splits: GemmChoice::whole_tile_rows
  std::optional<uint32_t> compute_units;
  bool as_gpu = false;  // choose as for a GPU whatever the device type (lavapipe's tests)
  std::optional<IntGemmKernel> int_kernel;  // conv2d_int and matmul_int (select_int_gemm)
  // conv2d and conv2d_int: materialize the im2col view before the GEMM
  // (true) or gather it in the tiles (false), where the convolution gathers
  // it at all (up to kIm2colMaxBytes).
  std::optional<bool> conv_im2col;
  // f16 matmul and linear on gemm_coopmat2.comp wherever it can take them
  // (KernelGraphOptions::gemm_coopmat2), every other choice as usual.
  bool coopmat2 = false;
};

GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, const GemmForce& force = {},
                       GemmProblem problem = {});

// Whether the device runs gpuu's f16 matrix-core kernels (cooperative
// matrices, the Vulkan memory model, f16 math and storage, subgroups of 32);
// f16_matrix_cores_2: and gemm_coopmat2.comp's workgroup-scope matrices
// (built in, and a workgroup shape of 256 invocations that tiles them);
// and whether it multiplies f16 16 x 16 x 16 matrices into f32 ones among
// them (the shape attention_coopmat.comp takes).
bool f16_matrix_cores(const SharedGpuContext& ctx);
bool f16_matrix_cores_2(const SharedGpuContext& ctx);
bool f16_matrix_shape_16(const SharedGpuContext& ctx);

// The int8 GEMMs of conv2d_int and matmul_int (i8 x i8 with zero points, i32
// sums): the direct kernels (conv2d_int.comp, matmul_int.comp: one output per
// invocation, every operand read from memory), the tiled one
// (int8_gemm.comp), its operands staged in shared memory as words of 4 i8,
// multiplied with dot-product instructions where the context has
// shaderIntegerDotProduct enabled, else with multiply-adds, or the
// matrix-core one (int8_gemm_coopmat.comp) where the device multiplies i8
// cooperative matrices into i32 ones.
struct IntGemmChoice {
  IntGemmKernel kernel = IntGemmKernel::kDirect;
  uint32_t tile = 64;  // tiled and coopmat kernels: the square output tile one workgroup computes
  uint32_t cm_m = 0, cm_n = 0, cm_k = 0;  // kCoopMat: the cooperative-matrix shape
  // kCoopMat: `splits` workgroups share each tile, each summing `k_split` of
  // K into i32 partials that int8_gemm_split_reduce.comp adds. 1: no split.
  uint32_t splits = 1, k_split = 0;
  std::string why;
  bool tiled() const { return kernel != IntGemmKernel::kDirect; }
  uint32_t tiles(uint32_t extent) const { return (extent + tile - 1) / tile; }
  // The embedded shader: "conv2d_int" (direct), "matmul_int_tiled_dot_t8",
  // "conv2d_int_coopmat_small", ...
  std::string shader(bool conv) const;
  // "direct", "tiled int8 64x64, dot products", "coopmat int8 16x16x32 (128x128 tile), split-K 4 x 256", ...
  std::string describe() const;
};

// The pick for `problem` (m, n, k, batches: conv2d_int's output channels per
// group, batch x output pixels, C/groups x kH x kW, groups). What `force`
// says (tests, benchmarks) is taken where the device allows it: its
// int_kernel (KernelGraphOptions::int_gemm_kernel; kTiledDot without the
// feature falls back to kTiled, kCoopMat without the device's support to
// kTiledDot and on), a tiled kernel's tile from its kernel kTiled64 /
// kTiled128 (KernelGraphOptions::gemm_kernel) and a split-K count.
IntGemmChoice select_int_gemm(const SharedGpuContext& ctx, const GemmProblem& problem, const GemmForce& force = {});

}  // namespace gpuu::kernels
