// The GEMM kernel selector (see gemm_select.h).
#include "kernels/gemm_select.h"

#include "context/vulkan_coopmat.h"
#include "kernels/op_codes.h"

namespace gpuu::kernels {
namespace {

// The shaders' shared-memory layouts, for the fit checks (mirrors of their
// declarations). gemm_coopmat.comp: per stage, TILE_M rows of A and TILE_N of
// B, each a slice in uvec4s of 8 halves plus one of padding. gemm.comp: per
// stage, BK rows of A and of B, each tile/4 + 1 vec4s.
uint32_t tiled_shared_bytes(uint32_t tile, uint32_t depth, uint32_t stages) {
  return stages * 2 * depth * (tile / 4 + 1) * 16;
}

struct CoopLayout {
  uint32_t tile_m, tile_n, depth, stages;
  const char* shader;  // after "gemm_" / "conv2d_gemm_"
  uint32_t shared_bytes() const { return stages * (tile_m + tile_n) * (depth / 8 + 1) * 16; }
};
CoopLayout coop_layout(GemmKernel k) {
  switch (k) {
    case GemmKernel::kCoopMat128x256: return {128, 256, 32, 1, "coopmat_s1_f16"};
    case GemmKernel::kCoopMat256x128: return {256, 128, 32, 1, "coopmat_s1_f16"};
    case GemmKernel::kCoopMat128Deep: return {128, 128, 64, 1, "coopmat_s1k64_f16"};
    case GemmKernel::kCoopMat128x256Thin: return {128, 256, 16, 2, "coopmat_k16_f16"};
    case GemmKernel::kCoopMat256x128Thin: return {256, 128, 16, 2, "coopmat_k16_f16"};
    default: return {128, 128, 32, 2, "coopmat_f16"};
  }
}

// A shape gemm_coopmat.comp can tile: 8 subgroups of 32, each 64 rows by
// 32 or more columns, the epilogue's scratch of one accumulator per subgroup
// (<= 256 floats) and whole uvec4 rows in it.
bool coopmat_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR && s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m > 0 && s.n > 0 && s.k > 0 && 64 % s.m == 0 &&
         32 % s.n == 0 && s.n % 8 == 0 && 16 % s.k == 0 && s.k % 8 == 0 && s.m * s.n <= 256;
}

}  // namespace

bool GemmChoice::coopmat() const { return kernel >= GemmKernel::kCoopMat; }

std::string GemmChoice::shader(bool conv, graph::DType dtype) const {
  std::string name = conv ? "conv2d_gemm" : "gemm";
  if (coopmat()) return name + "_" + coop_layout(kernel).shader;
  name += dtype == graph::DType::kF16 ? "_f16" : "_f32";
  switch (kernel) {
    case GemmKernel::kTiled128: return name + "_t8";
    case GemmKernel::kTiled128Deep: return name + "_t8_k16";
    case GemmKernel::kTiled128DeepSingle: return name + "_t8_k16s";
    case GemmKernel::kTiled128Warp: return name + "_t8w";
    default: return name;
  }
}

std::vector<int32_t> GemmChoice::specialization() const {
  if (!coopmat()) return {};
  return {static_cast<int32_t>(cm_m), static_cast<int32_t>(cm_n), static_cast<int32_t>(cm_k),
          static_cast<int32_t>(tile_m), static_cast<int32_t>(tile_n)};
}

std::string GemmChoice::describe() const {
  std::string tile = std::to_string(tile_m) + "x" + std::to_string(tile_n);
  if (!coopmat()) {
    const char* how = kernel == GemmKernel::kTiled128Deep         ? ", 16-deep"
                      : kernel == GemmKernel::kTiled128DeepSingle ? ", 16-deep, one buffer"
                      : kernel == GemmKernel::kTiled128Warp       ? ", subgroup-tiled"
                                                                  : "";
    return "tiled " + tile + how;
  }
  const CoopLayout layout = coop_layout(kernel);
  std::string shape = std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k);
  return "coopmat " + shape + " (" + tile + " tile, " + std::to_string(layout.depth) + "-deep" +
         (layout.stages == 1 ? ", one buffer)" : ")");
}

GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, std::optional<GemmKernel> force) {
  const uint32_t shared_limit = ctx.properties().limits.maxComputeSharedMemorySize;
  GemmChoice choice;
  if (force == GemmKernel::kTiled64) return choice;
  const bool f32 = dtype == graph::DType::kF32;  // the 16-deep variants are built for f32 only
  if (force == GemmKernel::kTiled128 ||
      (f32 && force == GemmKernel::kTiled128Deep &&
       tiled_shared_bytes(op_codes::kLimitGemmTileLarge, 16, 2) <= shared_limit) ||
      (f32 && (force == GemmKernel::kTiled128DeepSingle || force == GemmKernel::kTiled128Warp))) {
    choice.kernel = *force;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    return choice;
  }
  if (dtype == graph::DType::kF16 && ctx.has_feature(kFeatureCooperativeMatrix) &&
      ctx.has_feature(kFeatureVulkanMemoryModel) && ctx.has_feature(kFeatureShaderFloat16) &&
      ctx.has_feature(kFeatureStorageBuffer16Bit) && ctx.subgroup_size() == 32) {
    // The largest shape the kernel can tile: fewest loads per multiply-add.
    const CooperativeMatrixShape* best = nullptr;
    for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
      if (coopmat_fits(s) && (!best || s.m * s.n * s.k > best->m * best->n * best->k)) best = &s;
    }
    GemmKernel kernel = force && GemmChoice{*force}.coopmat() ? *force : GemmKernel::kCoopMat;
    CoopLayout layout = coop_layout(kernel);
    if (best && (layout.shared_bytes() > shared_limit || layout.depth % best->k != 0)) {
      kernel = GemmKernel::kCoopMat;
      layout = coop_layout(kernel);
    }
    if (best && layout.shared_bytes() <= shared_limit) {
      choice.kernel = kernel;
      choice.tile_m = layout.tile_m;
      choice.tile_n = layout.tile_n;
      choice.cm_m = best->m;
      choice.cm_n = best->n;
      choice.cm_k = best->k;
      choice.vector = 8;
      return choice;
    }
  }
  if (ctx.properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU &&
      shared_limit >= tiled_shared_bytes(op_codes::kLimitGemmTileLarge, 8, 2)) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
  } else {
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileSmall;
  }
  return choice;
}

}  // namespace gpuu::kernels
