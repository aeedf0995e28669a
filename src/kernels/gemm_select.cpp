// The GEMM kernel selector (see gemm_select.h).
#include "kernels/gemm_select.h"

#include "context/vulkan_coopmat.h"
#include "kernels/op_codes.h"

namespace gpuu::kernels {
namespace {

// gemm_coopmat.comp's layouts. Its shared memory (a mirror of its
// declarations, for the fit check): TILE_M rows of A and TILE_N of B, each a
// slice in uvec4s of 8 halves plus one of padding.
struct CoopLayout {
  uint32_t tile_m, tile_n, depth;
  const char* shader;  // after "gemm_" / "conv2d_gemm_"
  uint32_t shared_bytes() const { return (tile_m + tile_n) * (depth / 8 + 1) * 16; }
};
CoopLayout coop_layout(GemmKernel k) {
  if (k == GemmKernel::kCoopMatTall) return {256, 128, 32, "coopmat_tall_f16"};
  return {128, 128, 64, "coopmat_f16"};
}

// gemm.comp's 128 tile: two double-buffered 8-deep slices of 33 vec4s (its
// 64 tile's slices are 16 deep, GemmChoice's default).
constexpr uint32_t kTiled128Depth = 8;
constexpr uint32_t kTiled128SharedBytes = 2 * 2 * kTiled128Depth * 33 * 16;

// A shape gemm_coopmat.comp can tile: 8 subgroups of 32, each 64 rows by 32 or
// more columns, 32-deep slices or more, the epilogue's scratch of one
// accumulator per subgroup (<= 256 floats) and whole uvec4 rows in it.
bool coopmat_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR && s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m > 0 && s.n > 0 && s.k > 0 && 64 % s.m == 0 &&
         32 % s.n == 0 && s.n % 8 == 0 && 32 % s.k == 0 && s.k % 8 == 0 && s.m * s.n <= 256;
}

}  // namespace

bool GemmChoice::coopmat() const { return kernel == GemmKernel::kCoopMat || kernel == GemmKernel::kCoopMatTall; }

std::string GemmChoice::shader(bool conv, graph::DType dtype) const {
  std::string name = conv ? "conv2d_gemm" : "gemm";
  if (coopmat()) return name + "_" + coop_layout(kernel).shader;
  name += dtype == graph::DType::kF16 ? "_f16" : "_f32";
  return kernel == GemmKernel::kTiled128 ? name + "_t8" : name;
}

std::vector<int32_t> GemmChoice::specialization() const {
  if (!coopmat()) return {};
  return {static_cast<int32_t>(cm_m), static_cast<int32_t>(cm_n), static_cast<int32_t>(cm_k),
          static_cast<int32_t>(tile_m), static_cast<int32_t>(tile_n)};
}

std::string GemmChoice::describe() const {
  std::string tile = std::to_string(tile_m) + "x" + std::to_string(tile_n);
  if (!coopmat()) return "tiled " + tile;
  std::string shape = std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k);
  return "coopmat " + shape + " (" + tile + " tile, " + std::to_string(coop_layout(kernel).depth) + "-deep)";
}

GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, std::optional<GemmKernel> force,
                       GemmProblem problem) {
  const uint32_t shared_limit = ctx.properties().limits.maxComputeSharedMemorySize;
  GemmChoice choice;
  if (force == GemmKernel::kTiled64) return choice;
  if (force == GemmKernel::kTiled128) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    choice.depth = kTiled128Depth;
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
    GemmKernel kernel = problem.conv && problem.m >= 256 ? GemmKernel::kCoopMatTall : GemmKernel::kCoopMat;
    if (force == GemmKernel::kCoopMat || force == GemmKernel::kCoopMatTall) kernel = *force;
    // The square tile needs 36 KiB of shared memory, the tall one 30: a device
    // with less than 36 takes the tall one.
    if (coop_layout(kernel).shared_bytes() > shared_limit) kernel = GemmKernel::kCoopMatTall;
    const CoopLayout layout = coop_layout(kernel);
    if (best && layout.shared_bytes() <= shared_limit) {
      choice.kernel = kernel;
      choice.tile_m = layout.tile_m;
      choice.tile_n = layout.tile_n;
      choice.depth = layout.depth;
      choice.cm_m = best->m;
      choice.cm_n = best->n;
      choice.cm_k = best->k;
      choice.vector = 8;
      return choice;
    }
  }
  if (ctx.properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && shared_limit >= kTiled128SharedBytes) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    choice.depth = kTiled128Depth;
  } else {
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileSmall;
  }
  return choice;
}

}  // namespace gpuu::kernels
