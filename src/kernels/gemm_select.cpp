// The GEMM kernel selector (see gemm_select.h).
#include "kernels/gemm_select.h"

#include "context/vulkan_coopmat.h"
#include "kernels/op_codes.h"

namespace gpuu::kernels {
namespace {

// gemm_coopmat.comp's layout: 8 subgroups of 32, each a 64x32 block of the
// tile, 32-deep slices staged in 8-half chunks, the epilogue's scratch of one
// accumulator per subgroup (<= 256 floats) inside the A slices.
constexpr uint32_t kCoopSubgroup = 32, kCoopWarpM = 64, kCoopWarpN = 32, kCoopSliceK = 32;
// Shared memory the kernels declare: gemm_coopmat.comp's two double-buffered
// 128-row slices of 5 uvec4s; gemm.comp's 128 tile, two double-buffered 8-deep
// slices of 33 vec4s.
constexpr uint32_t kCoopSharedBytes = 2 * 2 * 128 * 5 * 16, kTiled128SharedBytes = 2 * 2 * 8 * 33 * 16;

bool coopmat_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR && s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m > 0 && s.n > 0 && s.k > 0 &&
         kCoopWarpM % s.m == 0 && kCoopWarpN % s.n == 0 && s.n % 8 == 0 && kCoopSliceK % s.k == 0 &&
         s.k % 8 == 0 && s.m * s.n <= 256;
}

}  // namespace

std::string GemmChoice::shader(bool conv, graph::DType dtype) const {
  std::string name = conv ? "conv2d_gemm" : "gemm";
  if (kernel == GemmKernel::kCoopMat) return name + "_coopmat_f16";
  if (kernel == GemmKernel::kCoopMatWide) return name + "_coopmat_wide_f16";
  name += dtype == graph::DType::kF16 ? "_f16" : "_f32";
  return kernel == GemmKernel::kTiled128 ? name + "_t8" : name;
}

std::string GemmChoice::describe() const {
  std::string tile = std::to_string(tile_m) + "x" + std::to_string(tile_n);
  if (kernel != GemmKernel::kCoopMat && kernel != GemmKernel::kCoopMatWide) return "tiled " + tile;
  std::string shape = std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k);
  return (kernel == GemmKernel::kCoopMatWide ? "coopmat wide " : "coopmat ") + shape + " (" + tile + " tile)";
}

GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, std::optional<GemmKernel> force) {
  GemmChoice choice;
  if (force == GemmKernel::kTiled64) return choice;
  if (force == GemmKernel::kTiled128) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    return choice;
  }
  if (dtype == graph::DType::kF16 && ctx.has_feature(kFeatureCooperativeMatrix) &&
      ctx.has_feature(kFeatureVulkanMemoryModel) && ctx.has_feature(kFeatureShaderFloat16) &&
      ctx.has_feature(kFeatureStorageBuffer16Bit) && ctx.subgroup_size() == kCoopSubgroup &&
      ctx.properties().limits.maxComputeSharedMemorySize >= kCoopSharedBytes) {
    // The largest shape the kernel can tile: fewest loads per multiply-add.
    const CooperativeMatrixShape* best = nullptr;
    for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
      if (coopmat_fits(s) && (!best || s.m * s.n * s.k > best->m * best->n * best->k)) best = &s;
    }
    if (best) {
      choice.kernel = force == GemmKernel::kCoopMatWide ? GemmKernel::kCoopMatWide : GemmKernel::kCoopMat;
      choice.tile_m = choice.tile_n = op_codes::kLimitGemmCoopmatTile;
      choice.cm_m = best->m;
      choice.cm_n = best->n;
      choice.cm_k = best->k;
      choice.vector = 8;
      return choice;
    }
  }
  if (ctx.properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU &&
      ctx.properties().limits.maxComputeSharedMemorySize >= kTiled128SharedBytes) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
  } else {
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileSmall;
  }
  return choice;
}

}  // namespace gpuu::kernels
