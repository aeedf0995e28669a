// The GEMM kernel selector (see gemm_select.h).
#include "kernels/gemm_select.h"

#include <algorithm>
#include <optional>

#include "context/vulkan_coopmat.h"
#include "kernels/op_codes.h"
#include "kernels/shader_library.h"

namespace gpuu::kernels {
namespace {

// gemm_coopmat.comp's layouts. Its shared memory (a mirror of its
// declarations, for the fit check): for each of its groups of subgroups
// (GPUU_COOP_KGROUPS, each walking every groups-th slice: the convolutions'
// small tile, conv_pool.cmake), TILE_M rows of A and TILE_N of B, each a
// slice in uvec4s of 8 halves plus one of padding.
// gemm_coopmat2.comp has none of its own (groups 0): the driver stages its
// tiles in what it reserves.
struct CoopLayout {
  uint32_t tile_m, tile_n, depth, groups;
  const char* shader;  // after "gemm_" / "conv2d_gemm_"
  uint32_t shared_bytes() const { return groups * (tile_m + tile_n) * (depth / 8 + 1) * 16; }
};
CoopLayout coop_layout(GemmKernel k, bool conv) {
  if (k == GemmKernel::kCoopMat2) return {128, 128, 32, 0, "coopmat2_f16"};
  if (k == GemmKernel::kCoopMat2Tall) return {256, 128, 32, 0, "coopmat2_tall_f16"};
  if (k == GemmKernel::kCoopMatTall) return {256, 128, 32, 1, "coopmat_tall_f16"};
  if (k == GemmKernel::kCoopMatSmall) return {64, 64, 64, conv ? 2u : 1u, "coopmat_small_f16"};
  return {128, 128, 64, 1, "coopmat_f16"};
}

// gemm.comp's 128 tile: two double-buffered 8-deep slices of 33 vec4s (its
// 64 tile's slices are 16 deep, GemmChoice's default).
constexpr uint32_t kTiled128Depth = 8;
constexpr uint32_t kTiled128SharedBytes = 2 * 2 * kTiled128Depth * 33 * 16;

// A shape gemm_coopmat.comp can tile: 8 subgroups of 32, each 64 rows by 32 or
// more columns, 32-deep slices or more, the epilogue's scratch of one
// accumulator per subgroup (<= 256 floats) with rows of whole 8-float runs.
bool coopmat_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR && s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m > 0 && s.n > 0 && s.k > 0 && 64 % s.m == 0 &&
         32 % s.n == 0 && s.n % 8 == 0 && 32 % s.k == 0 && s.k % 8 == 0 && s.m * s.n <= 256;
}

}  // namespace

bool tensor_addressable(uint32_t k, uint32_t n, uint32_t b_unit, uint32_t b_row, bool aligned_starts,
                        bool row_major_store) {
  constexpr uint32_t kChunk = 8;  // halves in 16 bytes
  return k % kChunk == 0 && n % kChunk == 0 && b_unit == 1 && b_row % kChunk == 0 && aligned_starts &&
         row_major_store;
}

bool f16_matrix_cores(const SharedGpuContext& ctx) {
  return ctx.has_feature(kFeatureCooperativeMatrix) && ctx.has_feature(kFeatureVulkanMemoryModel) &&
         ctx.has_feature(kFeatureShaderFloat16) && ctx.has_feature(kFeatureStorageBuffer16Bit) &&
         ctx.subgroup_size() == 32;
}

bool f16_matrix_cores_2(const SharedGpuContext& ctx) {
  if (!f16_matrix_cores(ctx) || !ctx.has_feature(kFeatureCooperativeMatrixWorkgroup)) return false;
  if (!find_shader("gemm_coopmat2_f16") || !find_shader("gemm_coopmat2_tall_f16")) return false;
  const CooperativeMatrixWorkgroupLimits& wg = ctx.cooperative_matrix_workgroup();
  const uint32_t invocations = op_codes::kLimitWorkgroupSize;
  if (wg.max_workgroup_size < invocations || wg.max_dimension < 256) return false;
  for (const CooperativeMatrixShape& s : wg.shapes) {
    if (s.scope == VK_SCOPE_WORKGROUP_KHR && s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
        s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
        s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR && !s.saturating &&
        (s.workgroup_invocations == 0 || s.workgroup_invocations == invocations) && s.m && s.n && s.k &&
        128 % s.m == 0 && 128 % s.n == 0 && 32 % s.k == 0) {
      return true;
    }
  }
  return false;
}

bool f16_matrix_shape_16(const SharedGpuContext& ctx) {
  if (!f16_matrix_cores(ctx)) return false;
  for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
    if (coopmat_fits(s) && s.m == 16 && s.n == 16 && s.k == 16) return true;
  }
  return false;
}

bool GemmChoice::coopmat() const {
  return kernel == GemmKernel::kCoopMat || kernel == GemmKernel::kCoopMatTall || kernel == GemmKernel::kCoopMatSmall ||
         coopmat2();
}

bool GemmChoice::coopmat2() const { return kernel == GemmKernel::kCoopMat2 || kernel == GemmKernel::kCoopMat2Tall; }

std::string GemmChoice::shader(bool conv, graph::DType dtype, uint32_t weight_bits) const {
  std::string suffix = weight_bits ? "_qw" + std::to_string(weight_bits) : "";
  suffix += dtype == graph::DType::kF16 ? "_f16" : "_f32";
  if (kernel == GemmKernel::kGemv) return std::string(conv ? "conv2d_gemv" : "gemv") + suffix;
  std::string name = conv ? "conv2d_gemm" : "gemm";
  if (coopmat()) return name + "_" + coop_layout(kernel, conv).shader;
  name += suffix;
  return kernel == GemmKernel::kTiled128 ? name + "_t8" : name;
}

std::vector<int32_t> GemmChoice::specialization() const {
  if (kernel == GemmKernel::kGemv) return {lines_are_columns ? 1 : 0, subgroup_lines ? 1 : 0};
  if (!coopmat()) return {};
  return {static_cast<int32_t>(cm_m), static_cast<int32_t>(cm_n), static_cast<int32_t>(cm_k),
          static_cast<int32_t>(tile_m), static_cast<int32_t>(tile_n)};
}

std::string GemmChoice::describe() const {
  std::string tile = std::to_string(tile_m) + "x" + std::to_string(tile_n);
  std::string split = splits > 1 ? ", split-K " + std::to_string(splits) + " x " + std::to_string(k_split) : "";
  if (splits > 1 && whole_tile_rows) split += " after " + std::to_string(whole_tile_rows) + " whole rows of tiles";
  if (kernel == GemmKernel::kGemv) {
    // tile_n x tile_m: the workgroup's lines (columns or rows) by the outputs across each.
    return "gemv, " + (lines_are_columns ? std::to_string(tile_n) + " columns x " + std::to_string(tile_m) + " rows"
                                         : std::to_string(tile_m) + " rows x " + std::to_string(tile_n) + " columns") +
           " per workgroup" + (subgroup_lines ? ", subgroup sums" : "") + split;
  }
  if (!coopmat()) return "tiled " + tile + split;
  if (coopmat2()) return "coopmat2 workgroup matrices (" + tile + " tile, 32-deep)" + split;
  std::string shape = std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k);
  const uint32_t depth = coop_layout(kernel, false).depth;
  return "coopmat " + shape + " (" + tile + " tile, " + std::to_string(depth) + "-deep)" + split;
}

namespace {

// gemv.comp's tile: a workgroup's lines of LIMIT_GEMV_LINE_WIDTH invocations,
// each line up to LIMIT_GEMV_ACROSS outputs across; K walked in 4-element
// chunks by a line's invocations.
constexpr uint32_t kGemvLines = op_codes::kLimitWorkgroupSize / op_codes::kLimitGemvLineWidth;
constexpr uint32_t kGemvAcross = op_codes::kLimitGemvAcross;
constexpr uint32_t kGemvDepth = 4 * op_codes::kLimitGemvLineWidth;

// The GEMV form of `problem`, where it has one: lines along its long axis,
// read along K. A column line reads B's column, which must be contiguous in K
// to be read in neighbouring chunks; a row line reads A's row, always is
// (conv2d takes row lines only: its B is gathered).
std::optional<GemmChoice> gemv_choice(const SharedGpuContext& ctx, const GemmProblem& problem, bool forced) {
  const bool columns = !problem.conv && problem.m <= kGemvAcross && problem.b_k_contiguous &&
                       (problem.m <= problem.n || problem.n > kGemvAcross);
  const bool rows = problem.n <= kGemvAcross && problem.n > 0;
  if (!forced && !columns && !rows) return std::nullopt;
  GemmChoice choice;
  choice.kernel = GemmKernel::kGemv;
  choice.lines_are_columns = forced ? !problem.conv && problem.m <= problem.n : columns;
  choice.tile_m = choice.lines_are_columns ? kGemvAcross : kGemvLines;
  choice.tile_n = choice.lines_are_columns ? kGemvLines : kGemvAcross;
  choice.depth = kGemvDepth;
  choice.vector = 4;
  choice.subgroup_lines = ctx.subgroup_arithmetic() && ctx.subgroup_size() == op_codes::kLimitGemvLineWidth;
  choice.why = forced ? "forced"
                      : std::string("at most ") + std::to_string(kGemvAcross) +
                            (columns ? " rows: dot products down B's columns"
                                     : " columns: dot products along A's rows") +
                            " (a tile would idle)";
  return choice;
}

// The kernel and tile, before any occupancy concern.
GemmChoice select_kernel(const SharedGpuContext& ctx, graph::DType dtype, std::optional<GemmKernel> force,
                         const GemmProblem& problem, bool as_gpu, bool prefer_coopmat2) {
  const uint32_t shared_limit = ctx.properties().limits.maxComputeSharedMemorySize;
  GemmChoice choice;
  if (force == GemmKernel::kTiled64) {
    choice.why = "forced";
    return choice;
  }
  if (force == GemmKernel::kTiled128) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    choice.depth = kTiled128Depth;
    choice.why = "forced";
    return choice;
  }
  if (dtype == graph::DType::kF16 && problem.weight_bits == 0 && f16_matrix_cores(ctx)) {
    // The largest shape the kernel can tile: fewest loads per multiply-add.
    const CooperativeMatrixShape* best = nullptr;
    for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
      if (coopmat_fits(s) && (!best || s.m * s.n * s.k > best->m * best->n * best->k)) best = &s;
    }
    GemmKernel kernel = problem.conv && problem.m >= 256 ? GemmKernel::kCoopMatTall : GemmKernel::kCoopMat;
    choice.why = problem.conv && problem.m >= 256 ? "f16 on matrix cores; a convolution with >= 256 rows takes the "
                                                    "tall tile (half the im2col gathers)"
                                                  : "f16 on matrix cores";
    if (force == GemmKernel::kCoopMat || force == GemmKernel::kCoopMatTall || force == GemmKernel::kCoopMatSmall) {
      kernel = *force;
      choice.why = "forced";
    }
    // Workgroup-scope matrices, where the device has them and the GEMM's
    // operands and result suit tensor addressing (else the usual pick). Only
    // where forced or preferred (tests, benchmarks, the Vulkan backend's
    // gemm_kernel option): on the H100 and H200 it ran at half
    // gemm_coopmat.comp's speed or less (gemm-coopmat2-*.json).
    const bool forced_2 = force == GemmKernel::kCoopMat2 || force == GemmKernel::kCoopMat2Tall;
    if ((forced_2 || (!force && prefer_coopmat2)) && !problem.conv && problem.weight_bits == 0 &&
        problem.tensor_addressable && f16_matrix_cores_2(ctx)) {
      kernel = forced_2 ? *force : GemmKernel::kCoopMat2;
      choice.why = forced_2 ? "forced" : "f16 on matrix cores, workgroup-scope matrices (preferred by option)";
    }
    // The square tile needs 36 KiB of shared memory, the tall one 30: a device
    // with less than 36 takes the tall one.
    if (coop_layout(kernel, problem.conv).shared_bytes() > shared_limit) kernel = GemmKernel::kCoopMatTall;
    const CoopLayout layout = coop_layout(kernel, problem.conv);
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
  const bool gpu = as_gpu || !ctx.is_cpu_device();
  if (gpu && shared_limit >= kTiled128SharedBytes) {
    choice.kernel = GemmKernel::kTiled128;
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileLarge;
    choice.depth = kTiled128Depth;
    choice.why = "a GPU: the 128x128 tile reads shared memory half as often per multiply-add";
  } else {
    choice.tile_m = choice.tile_n = op_codes::kLimitGemmTileSmall;
    choice.why = ctx.is_cpu_device()
                     ? "a CPU device: wide tiles only add wasted work on edges"
                     : "too little shared memory for the 128x128 tile";
  }
  return choice;
}

// A split-K share of K is at least this deep: shallower shares spend more on
// their partials' traffic and the reduction than they gain.
constexpr uint32_t kMinSplitDepth = 128;
// The matrix cores split K only where their tiles fill under half of the
// multiprocessors: they go through K fast enough that two shares lose to the
// reduction (H100, f16, 128 rows x 2304, K = 768: 72 tiles of 64x64, 14.7 us
// whole against 17.1 in two shares), more win (128 x 768, K = 3072: 24 tiles,
// 17.9 us in four shares against 30.6 whole; resnet50's 7x7 3x3 convolution,
// 8 tiles, 36.9 us in fifteen against 90 in four).
constexpr uint32_t kCoopSplitBelowUnitsOver = 2;
// A GEMV splits only where its workgroups fill less than this share of the
// multiprocessors: the reduction's dispatch costs more than the fuller GPU
// gains above it (H100: 1024 x 1024 in 128 workgroups, 10.5 us whole, 12.6
// in two shares; 960 -> 240 in 30, 14.9 whole, 13.4 in four).
constexpr uint32_t kGemvSplitBelowUnitsOver = 4;
// More shares than this leave the reduction dominating.
constexpr uint32_t kMaxSplits = 16;
// The tiled kernels (f32) of a linear or matmul: a 128x128 grid whose rounds
// of tiles leave more than a fifth of the GPU idle over the whole GEMM splits
// its last round (split_last_round below) or, where K is too shallow to
// split, takes the 64x64 tile, whose rounds are a quarter as long (H100, 2048 x 768 ->
// 2304: 288 tiles of 128x128 in 3 rounds for 2.2 rounds' work, 304 us;
// 64x64, 252 us; 2048 x 768 -> 3072, 2.9 rounds: 311 against 333; 4096^3, 7.8
// rounds in 8, stays).
constexpr double kTiledMinRoundsFull = 0.8;
// ... and they split K until the shares make about three workgroups a
// multiprocessor, where their tiles alone make fewer than 1.25 (H100, 64x64:
// ViT-B/16's 197 x 3072 -> 768, 48 tiles, 87.7 us in the 3 shares that fill
// the GPU once, 56.1 in 8; 197 x 768 -> 2304, 144 tiles, 61.0 whole, 52.6 in
// 3; GPT-2's 128 x 768 -> 2304, 72 tiles, 40.0 in 2, 33.5 in 6; 197 x 768 ->
// 3072, 192 tiles, 62.8 whole and 61.2 in 3: left whole). Convolutions keep
// the rule above (not measured this way).
constexpr uint32_t kTiledSplitWorkgroupsPerUnit = 3;
constexpr double kTiledSplitBelowUnits = 1.25;
constexpr uint32_t kTiledMaxSplits = 8;

// `splits` shares of K, each a whole number of slices: the share depth and the count that covers K with it.
void split_k(GemmChoice& choice, uint32_t k, uint32_t splits) {
  const uint32_t slices = (k + choice.depth - 1) / choice.depth;
  splits = std::max(1u, std::min(splits, slices));
  const uint32_t share = (slices + splits - 1) / splits * choice.depth;
  choice.k_split = share;
  choice.splits = (k + share - 1) / share;
  if (choice.splits <= 1) {
    choice.splits = 1;
    choice.k_split = 0;
  }
}

// The tiles `choice` covers `problem` with, over its batches.
uint64_t grid_tiles(const GemmChoice& choice, const GemmProblem& problem) {
  return uint64_t{choice.tiles_m(problem.m)} * choice.tiles_n(problem.n) * std::max(1u, problem.batches);
}

// Rounds of `tiles` workgroups on `units` multiprocessors, one each at a time,
// and how full those rounds are (1: no multiprocessor idles).
uint64_t rounds_of(uint64_t tiles, uint32_t units) { return (tiles + units - 1) / units; }
double rounds_full(uint64_t tiles, uint32_t units) {
  return static_cast<double>(tiles) / static_cast<double>(rounds_of(tiles, units) * units);
}

// gemm.comp's 128x128 tile runs one workgroup a multiprocessor (H100: 182
// registers an invocation of 256 reading one slice ahead, more two ahead).
// Where a linear's or matmul's grid of them would leave more than a fifth of
// the GPU idle in its last round (kTiledMinRoundsFull), it computes whole
// tiles for its whole rounds and splits K of the rest into the shares that
// fill one more round. H100, f32, GPT-2's 2048 x 768 -> 2304 (288 tiles on
// 132 multiprocessors: 252 whole, 36 in 4 shares): 259-262 us on the 64x64
// tile before, 190-193 + 6.6 for the reduction. On the matrix cores
// (gemm_coopmat.comp) the same split was slower (51.8 -> 58.9 + 6.0 us), and
// convolutions are not measured: both keep their whole tiles.
bool split_last_round(GemmChoice& choice, const GemmProblem& problem, uint32_t units) {
  const uint64_t tiles_n = choice.tiles_n(problem.n);
  const uint64_t tiles = grid_tiles(choice, problem), rounds = tiles / units;
  if (rounds == 0 || problem.k < 2 * kMinSplitDepth) return false;
  const double full = rounds_full(tiles, units);
  if (full >= kTiledMinRoundsFull) return false;
  const uint64_t whole_rows = rounds * units / tiles_n;
  const uint64_t rest = tiles - whole_rows * tiles_n, idle = rounds * units - whole_rows * tiles_n;
  const uint64_t wanted = (units + idle + rest / 2) / rest;
  if (whole_rows == 0 || wanted < 2) return false;
  GemmChoice split = choice;
  split_k(split, problem.k, static_cast<uint32_t>(std::min<uint64_t>({wanted, kMaxSplits, problem.k / kMinSplitDepth})));
  if (split.splits < 2) return false;
  split.whole_tile_rows = static_cast<uint32_t>(whole_rows);
  split.why += "; " + std::to_string(tiles) + " tiles in " + std::to_string(rounds + 1) + " rounds on " +
               std::to_string(units) + " multiprocessors, " + std::to_string(static_cast<int>(full * 100)) +
               " % full: " + std::to_string(whole_rows * tiles_n) + " whole, the last " + std::to_string(rest) +
               " in " + std::to_string(split.splits) + " shares of K";
  choice = split;
  return true;
}

// A linear of half a round to one round of 128x128 tiles (fewer than the
// multiprocessors) with a deep K splits it into the shares that make the most
// of whole rounds, each at least kLargeTileMinShare deep. H100, f32, GPT-2's
// 2048 x 3072 -> 768 (96 tiles): 4 shares of 768, 252 us + 17 for the
// reduction with the layer norm after it, against 357 + 7 on the 64x64 tile
// unsplit; its 2048 x 768 -> 768 in 4 shares of 192 was no faster (84 + 17
// against 97 + 7), hence the depth. A convolution takes it from fewer tiles
// too, as long as its shares make half a round or more: resnet50's batch-8
// 3x3 convolutions made 16, 26 and 49 tiles of 128x128 and ran on the 64x64
// tile at 14-19 TFLOP/s (H100, c7cf3a9), where the 128x128 tile runs GPT-2's
// linears at 35-39; split there, resnet50 at batch 8 f32 went 4.28 -> 4.11
// ms of GPU time (H100, same call, `real-conv-split-*-2026-12-08.json`).
// (Linears of under half a round keep the 64x64 tile's split, measured for
// ViT's and GPT-2's 128-197 rows.)
constexpr uint32_t kLargeTileMinShare = 512;
bool split_few_large_tiles(GemmChoice& choice, const GemmProblem& problem, uint32_t units) {
  const uint64_t tiles = grid_tiles(choice, problem);
  if (tiles >= units || (!problem.conv && 2 * tiles < units)) return false;
  uint32_t best = 1;
  double best_rounds = 1.0;  // in rounds of whole-K tiles
  for (uint32_t s = 2; s <= std::min(kTiledMaxSplits, problem.k / kLargeTileMinShare); ++s) {
    const double rounds = static_cast<double>(rounds_of(tiles * s, units)) / s;
    if (rounds < best_rounds - 1e-9) {
      best = s;
      best_rounds = rounds;
    }
  }
  if (best_rounds > kTiledMinRoundsFull || 2 * tiles * best < units) return false;
  split_k(choice, problem.k, best);
  if (choice.splits < 2) return false;
  choice.why += "; " + std::to_string(tiles) + " tiles for " + std::to_string(units) + " multiprocessors: K in " +
                std::to_string(choice.splits) + " shares (" + std::to_string(static_cast<int>(best_rounds * 100)) +
                " % of a round's time)";
  return true;
}

}  // namespace

GemmChoice select_gemm(const SharedGpuContext& ctx, graph::DType dtype, const GemmForce& force, GemmProblem problem) {
  const bool force_gemv = force.kernel == GemmKernel::kGemv;
  std::optional<GemmChoice> gemv = (!force.kernel || force_gemv) && problem.m && problem.n
                                       ? gemv_choice(ctx, problem, force_gemv)
                                       : std::nullopt;
  GemmChoice choice = gemv ? *gemv : select_kernel(ctx, dtype, force.kernel, problem, force.as_gpu, force.coopmat2);
  if (force.splits) {
    if (problem.k) split_k(choice, problem.k, *force.splits);
    if (choice.splits > 1 && !choice.coopmat2()) choice.whole_tile_rows = force.whole_tile_rows.value_or(0);
    return choice;
  }
  // Occupancy, where the driver names its multiprocessors: a GEMM of fewer
  // tiles than the GPU has multiprocessors leaves the rest idle (resnet50's
  // late layers, batch 1, made 4 to 16 tiles of 128x128 on a 132-SM GPU).
  const uint32_t units = force.compute_units.value_or(ctx.compute_units());
  if (!units || !problem.n || !problem.m || force.kernel) return choice;
  auto tiles = [&](const GemmChoice& c) { return grid_tiles(c, problem); };
  // The same on matrix cores: 64x64 tiles on 4 subgroups, where the picked
  // shape divides their 16 columns per subgroup (a split's partials and their
  // reduction cost f16 GEMMs of 128 rows a third of their time on the H100).
  const CoopLayout small = coop_layout(GemmKernel::kCoopMatSmall, problem.conv);
  if ((choice.kernel == GemmKernel::kCoopMat || choice.kernel == GemmKernel::kCoopMatTall || choice.coopmat2()) &&
      tiles(choice) < units &&
      small.shared_bytes() <= ctx.properties().limits.maxComputeSharedMemorySize && 16 % choice.cm_n == 0) {
    const uint64_t large = tiles(choice);
    const std::string from = std::to_string(choice.tile_m) + "x" + std::to_string(choice.tile_n);
    choice.kernel = GemmKernel::kCoopMatSmall;
    choice.tile_m = small.tile_m;
    choice.tile_n = small.tile_n;
    choice.depth = small.depth;
    choice.why += "; " + std::to_string(large) + " tiles of " + from + " for " + std::to_string(units) +
                  " multiprocessors: the 64x64 tile makes " + std::to_string(tiles(choice));
  }
  // A side that one 64x64 tile spans leaves half of every 128x128 tile idle
  // (resnet50's 64-channel convolutions at batch 8: 181 us in 128x128 tiles,
  // 10 TFLOP/s of useful work, on the H200).
  const uint32_t small_side = op_codes::kLimitGemmTileSmall;
  if (choice.kernel == GemmKernel::kTiled128 && (problem.m <= small_side || problem.n <= small_side)) {
    choice.kernel = GemmKernel::kTiled64;
    choice.tile_m = choice.tile_n = small_side;
    choice.depth = GemmChoice{}.depth;
    choice.why = std::string(problem.m <= small_side ? "rows" : "columns") + " within one 64x64 tile: a 128x128 tile "
                 "would compute half of it in vain";
  }
  // f32 GEMMs of fewer 128x128 tiles than a round with a deep K (split_few_large_tiles).
  if (choice.kernel == GemmKernel::kTiled128 && split_few_large_tiles(choice, problem, units)) {
    return choice;
  }
  if (choice.kernel == GemmKernel::kTiled128 && tiles(choice) < units) {
    const uint64_t large = tiles(choice);
    choice.kernel = GemmKernel::kTiled64;
    choice.tile_m = choice.tile_n = small_side;
    choice.depth = GemmChoice{}.depth;
    choice.why = std::to_string(large) + " tiles of 128x128 for " + std::to_string(units) +
                 " multiprocessors: the 64x64 tile makes " + std::to_string(tiles(choice));
  }
  if (choice.kernel == GemmKernel::kTiled128 && !problem.conv && split_last_round(choice, problem, units)) {
    return choice;
  }
  const bool tiled_gemm = !problem.conv && (choice.kernel == GemmKernel::kTiled64 || choice.kernel == GemmKernel::kTiled128);
  if (tiled_gemm && choice.kernel == GemmKernel::kTiled128) {
    const uint64_t large = tiles(choice), rounds = rounds_of(large, units);
    const double full = rounds_full(large, units);
    if (full < kTiledMinRoundsFull) {
      choice.kernel = GemmKernel::kTiled64;
      choice.tile_m = choice.tile_n = small_side;
      choice.depth = GemmChoice{}.depth;
      choice.why = std::to_string(large) + " tiles of 128x128 in " + std::to_string(rounds) + " rounds on " +
                   std::to_string(units) + " multiprocessors, " + std::to_string(static_cast<int>(full * 100)) +
                   " % full: the 64x64 tile";
    }
  }
  const uint64_t made = tiles(choice);
  const bool fills_enough = (choice.kernel == GemmKernel::kGemv && made * kGemvSplitBelowUnitsOver >= units) ||
                            (choice.coopmat() && made * kCoopSplitBelowUnitsOver >= units);
  if (tiled_gemm && static_cast<double>(made) < kTiledSplitBelowUnits * units && problem.k >= 2 * kMinSplitDepth) {
    const uint32_t wanted = static_cast<uint32_t>((kTiledSplitWorkgroupsPerUnit * units + made - 1) / made);
    split_k(choice, problem.k, std::min({wanted, kTiledMaxSplits, problem.k / kMinSplitDepth}));
    if (choice.splits > 1) {
      choice.why += (choice.why.empty() ? "" : "; ") + std::to_string(made) + " tiles for " + std::to_string(units) +
                    " multiprocessors: K in " + std::to_string(choice.splits) + " shares (about " +
                    std::to_string(kTiledSplitWorkgroupsPerUnit) + " workgroups each)";
    }
  } else if (made < units && !fills_enough && problem.k >= 2 * kMinSplitDepth) {
    const uint32_t wanted = static_cast<uint32_t>((units + made - 1) / made);
    split_k(choice, problem.k, std::min({wanted, kMaxSplits, problem.k / kMinSplitDepth}));
    if (choice.splits > 1) {
      choice.why += (choice.why.empty() ? "" : "; ") + std::to_string(made) + " tiles for " + std::to_string(units) +
                    " multiprocessors: K in " + std::to_string(choice.splits) + " shares";
    }
  }
  return choice;
}

}  // namespace gpuu::kernels

namespace gpuu::kernels {

const char* int_gemm_kernel_name(IntGemmKernel kernel) {
  switch (kernel) {
    case IntGemmKernel::kDirect: return "direct";
    case IntGemmKernel::kTiled: return "tiled";
    case IntGemmKernel::kTiledDot: return "tiled_dot";
    case IntGemmKernel::kCoopMat: return "coopmat";
  }
  return "?";
}

std::string IntGemmChoice::shader(bool conv) const {
  std::string name = conv ? "conv2d_int" : "matmul_int";
  if (!tiled()) return name;
  if (kernel == IntGemmKernel::kCoopMat) {
    return name + (tile == static_cast<uint32_t>(op_codes::kLimitGemmTileSmall) ? "_coopmat_small" : "_coopmat");
  }
  name += kernel == IntGemmKernel::kTiledDot ? "_tiled_dot" : "_tiled";
  return tile == static_cast<uint32_t>(op_codes::kLimitGemmTileLarge) ? name + "_t8" : name;
}

std::string IntGemmChoice::describe() const {
  if (!tiled()) return "direct";
  const std::string square = std::to_string(tile) + "x" + std::to_string(tile);
  if (kernel == IntGemmKernel::kCoopMat) {
    return "coopmat int8 " + std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k) + " (" +
           square + " tile)" +
           (splits > 1 ? ", split-K " + std::to_string(splits) + " x " + std::to_string(k_split) : "");
  }
  return "tiled int8 " + square + (kernel == IntGemmKernel::kTiledDot ? ", dot products" : ", multiply-adds");
}

namespace {

// Below this many rows (output channels per group) or columns (pixels), or
// this depth, most of a tile's work is wasted or its staging is not repaid:
// the direct kernel serves those (depthwise and small grouped convolutions,
// a GEMM of a few rows). The matrix cores keep GEMMs of few rows (a batch-1
// classifier: 1 row x 1000 x 2048), whose tiles still read B once, in
// coalesced runs, where the direct kernel walks K serially per output.
constexpr uint32_t kIntTiledMinSide = 16;
constexpr uint32_t kIntTiledMinDepth = 16;
// int8_gemm.comp's shared memory with its 128x128 tile (a mirror of its
// declarations): two buffers of 8 K-words by 33 uvec4s for A and for B, the
// chunks' zero-point sums (2 x 128 x 8 ints) and the tile's (2 x 128).
constexpr uint32_t kIntTiled128SharedBytes = 2 * 2 * 8 * 33 * 16 + 2 * 128 * 8 * 4 + 2 * 128 * 4;
// int8_gemm_coopmat.comp's (a mirror of its declarations, 64-deep slices):
// A [tile][64 + 16 bytes], B [64][tile + 16 bytes], A's chunk sums (tile x 4
// ints), the row and column sums.
constexpr uint32_t kIntCoopDepth = 64;
constexpr uint32_t int_coop_shared_bytes(uint32_t tile) {
  return tile * (kIntCoopDepth + 16) + kIntCoopDepth * (tile + 16) + tile * 4 * 4 + 2 * tile * 4;
}
// The matrix cores split K where a GEMM's tiles fill under half of the
// multiprocessors, into shares of at least this depth, at most kMaxIntSplits.
constexpr uint32_t kIntCoopMinSplitDepth = 128;
constexpr uint32_t kMaxIntSplits = 16;
// Below these, a convolution stays off the matrix cores (select_int_gemm).
constexpr uint32_t kIntCoopMinGroupRows = 64;
constexpr uint32_t kIntCoopMinChannels = 16;

// An i8 x i8 -> i32 shape int8_gemm_coopmat.comp can tile: each subgroup's 64
// rows by 16 columns or more in whole accumulators, B's fragments starting on
// the 16-byte chunks it stages, 64-deep slices in whole steps, an
// accumulator's rows whole uvec4s of the epilogue's scratch (<= 256 ints).
bool int_coopmat_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_SINT8_KHR && s.b_type == VK_COMPONENT_TYPE_SINT8_KHR &&
         s.c_type == VK_COMPONENT_TYPE_SINT32_KHR && s.result_type == VK_COMPONENT_TYPE_SINT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m > 0 && 64 % s.m == 0 && s.n == 16 && s.k > 0 &&
         kIntCoopDepth % s.k == 0 && s.k % 16 == 0 && s.m * s.n <= 256;
}

// The matrix-core shape for int8, where the context can run the kernel.
const CooperativeMatrixShape* int_coopmat_shape(const SharedGpuContext& ctx) {
  const uint32_t needed = kFeatureCooperativeMatrix | kFeatureVulkanMemoryModel | kFeatureShaderInt8 |
                          kFeatureShaderIntegerDotProduct;
  if ((ctx.enabled_features() & needed) != needed || ctx.subgroup_size() != 32 ||
      ctx.properties().limits.maxComputeSharedMemorySize < int_coop_shared_bytes(op_codes::kLimitGemmTileLarge)) {
    return nullptr;
  }
  const CooperativeMatrixShape* best = nullptr;
  for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
    if (int_coopmat_fits(s) && (!best || s.m * s.k > best->m * best->k)) best = &s;
  }
  return best;
}

// The coopmat choice for `problem`: the 128x128 tile where its tiles fill the
// multiprocessors (or the driver names none), else the 64x64 one; K in shares
// where even those fill under half of them (resnet50's last stage at batch 1:
// 8 tiles of 64x64 for 132 multiprocessors).
IntGemmChoice int_coopmat_choice(const SharedGpuContext& ctx, const CooperativeMatrixShape& shape,
                                 const GemmProblem& problem, const GemmForce& forced) {
  IntGemmChoice choice;
  choice.kernel = IntGemmKernel::kCoopMat;
  choice.cm_m = shape.m;
  choice.cm_n = shape.n;
  choice.cm_k = shape.k;
  choice.why = "int8 on matrix cores";
  const uint32_t units = forced.compute_units.value_or(ctx.compute_units());
  auto tiles = [&](uint32_t tile) {
    return uint64_t{(problem.m + tile - 1) / tile} * ((problem.n + tile - 1) / tile) * std::max(1u, problem.batches);
  };
  const uint32_t large = op_codes::kLimitGemmTileLarge, small = op_codes::kLimitGemmTileSmall;
  choice.tile = !units || tiles(large) >= units ? large : small;
  if (forced.kernel == GemmKernel::kTiled128 || forced.kernel == GemmKernel::kTiled64) {
    choice.tile = forced.kernel == GemmKernel::kTiled128 ? large : small;
    choice.why += "; tile forced";
  } else if (choice.tile == small) {
    choice.why += "; " + std::to_string(tiles(large)) + " tiles of 128x128 for " + std::to_string(units) +
                  " multiprocessors: the 64x64 tile makes " + std::to_string(tiles(small));
  }
  const uint64_t made = tiles(choice.tile);
  const uint32_t slices = (problem.k + kIntCoopDepth - 1) / kIntCoopDepth;
  uint32_t splits = 1;
  if (forced.splits) {
    splits = *forced.splits;
  } else if (units && made * 2 < units && problem.k >= 2 * kIntCoopMinSplitDepth) {
    splits = std::min({static_cast<uint32_t>((units + made - 1) / made), kMaxIntSplits,
                       problem.k / kIntCoopMinSplitDepth});
  }
  splits = std::max(1u, std::min(splits, slices));
  const uint32_t share = (slices + splits - 1) / splits * kIntCoopDepth;
  if (splits > 1 && (problem.k + share - 1) / share > 1) {
    choice.k_split = share;
    choice.splits = (problem.k + share - 1) / share;
    choice.why += forced.splits ? "; split forced"
                                : "; " + std::to_string(made) + " tiles for " + std::to_string(units) +
                                      " multiprocessors: K in " + std::to_string(choice.splits) + " shares";
  }
  return choice;
}

}  // namespace

IntGemmChoice select_int_gemm(const SharedGpuContext& ctx, const GemmProblem& problem, const GemmForce& forced) {
  std::optional<IntGemmKernel> force = forced.int_kernel;
  IntGemmChoice choice;
  const bool dot = ctx.has_feature(kFeatureShaderIntegerDotProduct);
  const bool cpu = ctx.is_cpu_device();
  if (force == IntGemmKernel::kDirect) {
    choice.why = "forced";
    return choice;
  }
  const CooperativeMatrixShape* shape = int_coopmat_shape(ctx);
  // Convolutions the matrix cores serve worse than the tiled kernel (H200,
  // bench_int8_gemm, 2026-12-05): groups of few rows, which leave most of
  // each 64-row block idle (32 groups of 8: 124.6 us against 52.8), and a
  // stem over a few input channels, whose gathers the 4-subgroup tile hides
  // worse (3 channels, 7x7 stride 2 at 224: 58.2 against 23.5).
  const bool conv_off_matrix = problem.conv && ((problem.batches > 1 && problem.m < kIntCoopMinGroupRows) ||
                                                (problem.conv_channels && problem.conv_channels < kIntCoopMinChannels));
  if (shape && (force == IntGemmKernel::kCoopMat ||
                (!force && problem.k >= kIntTiledMinDepth && !conv_off_matrix))) {
    IntGemmChoice coop = int_coopmat_choice(ctx, *shape, problem, forced);
    if (force) coop.why = "forced; " + coop.why;
    return coop;
  }
  std::string refused;
  if (force == IntGemmKernel::kCoopMat) {
    force = IntGemmKernel::kTiledDot;
    refused = "forced matrix cores, but the device multiplies no i8 cooperative matrices; ";
  }
  if (force) {
    choice.why = refused + "forced";
    choice.kernel = *force;
    if (choice.kernel == IntGemmKernel::kTiledDot && !dot) {
      choice.kernel = IntGemmKernel::kTiled;
      choice.why = refused + "forced dot products, but the device lacks shaderIntegerDotProduct: multiply-adds";
    }
  } else if (problem.m < kIntTiledMinSide || problem.n < kIntTiledMinSide || problem.k < kIntTiledMinDepth) {
    choice.why = std::to_string(problem.m) + " rows x " + std::to_string(problem.n) + " columns x " +
                 std::to_string(problem.k) + " deep: under " + std::to_string(kIntTiledMinSide) +
                 " a tile would mostly idle";
    return choice;
  } else {
    choice.kernel = dot ? IntGemmKernel::kTiledDot : IntGemmKernel::kTiled;
    choice.why = dot ? "operands shared through a tile; packed dot products (shaderIntegerDotProduct)"
                     : "operands shared through a tile; multiply-adds (no shaderIntegerDotProduct)";
  }
  // The 128x128 tile on GPUs, as for float GEMMs: where both sides span
  // more than one 64x64 tile, the shared memory holds it and the larger
  // tiles still fill the multiprocessors (where the driver names them).
  choice.tile = static_cast<uint32_t>(op_codes::kLimitGemmTileSmall);
  const uint32_t large = static_cast<uint32_t>(op_codes::kLimitGemmTileLarge);
  if (forced.kernel == GemmKernel::kTiled128 || forced.kernel == GemmKernel::kTiled64) {
    if (forced.kernel == GemmKernel::kTiled128) choice.tile = large;
    choice.why += "; tile forced";
    return choice;
  }
  if (!cpu && problem.m > choice.tile && problem.n > choice.tile &&
      ctx.properties().limits.maxComputeSharedMemorySize >= kIntTiled128SharedBytes) {
    const uint64_t tiles = uint64_t{(problem.m + large - 1) / large} * ((problem.n + large - 1) / large) *
                           std::max(1u, problem.batches);
    const uint32_t units = ctx.compute_units();
    if (!units || tiles >= units) choice.tile = large;
  }
  return choice;
}

}  // namespace gpuu::kernels
