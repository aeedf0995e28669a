// The attention kernel selector (see attention_select.h).
#include "kernels/attention_select.h"

#include <algorithm>

#include "context/vulkan_coopmat.h"

namespace gpuu::kernels {
namespace {

// attention_coopmat.comp's largest head dim: O's accumulators (Ev / CM_N) and
// Q's fragments (E / CM_K) stay in registers.
constexpr uint32_t kCoopMaxHeadDim = 128;
constexpr uint32_t kRowsPerSubgroup = 16;

// Shared memory of attention_coopmat.comp, in bytes (a mirror of its
// declarations): the K and V blocks, each subgroup's scratch of 16 score rows
// and its exchange slots, and (emulated) Q's own tile.
uint32_t shared_bytes(const AttentionChoice& c) {
  const uint32_t kv = 2 * c.key_block * c.kv_row * 16;
  const uint32_t scratch = c.subgroups * kRowsPerSubgroup * (c.key_block / 4 + 1) * 16;
  const uint32_t exchange = c.subgroups * 32 * 4;
  const uint32_t q_tile =
      c.kernel == AttentionKernel::kCoopMatEmulated ? c.subgroups * kRowsPerSubgroup * c.kv_row * 16 : 0;
  return kv + scratch + exchange + q_tile;
}

// A shape the kernel tiles: f16 x f16 -> f32 in subgroups, 16 rows (one
// subgroup's query rows), N and K of 8 or 16 (whole 16-byte chunks of the
// tiles' rows; 16 divides every head dim it takes and both key blocks).
bool shape_fits(const CooperativeMatrixShape& s) {
  return s.a_type == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b_type == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         s.c_type == VK_COMPONENT_TYPE_FLOAT32_KHR && s.result_type == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         !s.saturating && s.scope == VK_SCOPE_SUBGROUP_KHR && s.m == kRowsPerSubgroup && (s.n == 8 || s.n == 16) &&
         (s.k == 8 || s.k == 16);
}

AttentionChoice vector(std::string why) {
  AttentionChoice c;
  c.why = std::move(why);
  return c;
}

}  // namespace

std::string AttentionChoice::shader() const {
  return kernel == AttentionKernel::kCoopMatEmulated ? "attention_coopmat_emulated_f16" : "attention_coopmat_f16";
}

std::string AttentionChoice::describe() const {
  if (!coopmat()) return "vector (f32 math)";
  return std::string(kernel == AttentionKernel::kCoopMatEmulated ? "emulated coopmat " : "coopmat ") +
         std::to_string(cm_m) + "x" + std::to_string(cm_n) + "x" + std::to_string(cm_k) + ", " +
         std::to_string(subgroups) + " subgroups x 16 rows, " + std::to_string(key_block) + "-key blocks";
}

AttentionChoice select_attention(const SharedGpuContext& ctx, const AttentionProblem& problem,
                                 const AttentionForce& force) {
  const AttentionKernel wanted = force.kernel.value_or(AttentionKernel::kCoopMat);
  if (wanted == AttentionKernel::kVector) return vector("forced");
  if (problem.dtype != graph::DType::kF16) return vector("f32: the matrix-core kernel takes f16");
  if (problem.e == 0 || problem.ev == 0 || problem.e % 16 || problem.ev % 16 || problem.e > kCoopMaxHeadDim ||
      problem.ev > kCoopMaxHeadDim) {
    return vector("head dims " + std::to_string(problem.e) + "/" + std::to_string(problem.ev) +
                  ": the matrix-core kernel takes multiples of 16 up to " + std::to_string(kCoopMaxHeadDim));
  }
  AttentionChoice c;
  c.kernel = wanted;
  c.cm_m = c.cm_n = c.cm_k = 16;  // the emulated products' shape
  if (wanted == AttentionKernel::kCoopMat) {
    if (!ctx.has_feature(kFeatureCooperativeMatrix) || !ctx.has_feature(kFeatureVulkanMemoryModel)) {
      return vector("no VK_KHR_cooperative_matrix on this context");
    }
    if (ctx.subgroup_size() != 32) {
      return vector("subgroups of " + std::to_string(ctx.subgroup_size()) + ": the matrix-core kernel needs 32");
    }
    // The largest shape: fewest loads per multiply-add.
    const CooperativeMatrixShape* best = nullptr;
    for (const CooperativeMatrixShape& s : ctx.cooperative_matrix_shapes()) {
      if (shape_fits(s) && (!best || s.n * s.k > best->n * best->k)) best = &s;
    }
    if (!best) return vector("no f16 cooperative-matrix shape of 16 rows and 8 or 16 columns");
    c.cm_m = best->m;
    c.cm_n = best->n;
    c.cm_k = best->k;
    c.why = "f16 on matrix cores";
  } else {
    c.why = "forced";
  }
  const uint32_t e8 = problem.e / 8, ev8 = problem.ev / 8;
  c.kv_row = std::max(e8, ev8) | 1u;  // odd: rows start on distinct banks

  // Workgroups of 4 subgroups (64 rows), fewer where those leave
  // multiprocessors idle (ViT-B/16's 197 tokens x 12 heads: 48 workgroups of
  // 64 rows for 132 multiprocessors, 156 of 16).
  const uint32_t units = force.compute_units.value_or(ctx.compute_units());
  auto workgroups = [&](uint32_t subgroups) {
    const uint32_t rows = kRowsPerSubgroup * subgroups;
    return problem.heads * ((problem.l + rows - 1) / rows);
  };
  if (force.subgroups && (*force.subgroups == 1 || *force.subgroups == 2 || *force.subgroups == 4)) {
    c.subgroups = *force.subgroups;
  } else {
    c.subgroups = 4;
    while (c.subgroups > 1 && units && workgroups(c.subgroups) < units) c.subgroups /= 2;
    if (c.subgroups < 4) {
      c.why += "; " + std::to_string(workgroups(4)) + " workgroups of 64 rows for " + std::to_string(units) +
               " multiprocessors: " + std::to_string(c.subgroups) + " subgroups make " +
               std::to_string(workgroups(c.subgroups));
    }
  }
  // 64-key blocks, but 32 for one subgroup: the next block's fetch (held in
  // registers) is shared by fewer invocations.
  if (force.key_block && (*force.key_block == 32 || *force.key_block == 64)) {
    c.key_block = *force.key_block;
  } else {
    c.key_block = c.subgroups == 1 ? 32 : 64;
  }
  const uint32_t limit = ctx.properties().limits.maxComputeSharedMemorySize;
  while (shared_bytes(c) > limit) {
    if (c.key_block == 64) {
      c.key_block = 32;
    } else if (c.subgroups > 1) {
      c.subgroups /= 2;
    } else {
      return vector("the matrix-core kernel needs " + std::to_string(shared_bytes(c)) +
                    " bytes of shared memory at head dims " + std::to_string(problem.e) + "/" +
                    std::to_string(problem.ev) + "; the device gives a workgroup " + std::to_string(limit));
    }
  }
  return c;
}

}  // namespace gpuu::kernels
