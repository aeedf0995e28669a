// The attention kernel selector: which kernel scaled_dot_product_attention runs
// on a given context. f16 whose head dims are multiples of 16 up to 128 goes
// to the matrix-core kernel (attention_coopmat.comp) where the context has
// VK_KHR_cooperative_matrix enabled with an f16 x f16 -> f32 subgroup shape of
// 16 rows (the kernel's rows per subgroup) and subgroups of 32; everything
// else to attention.comp on the shader cores. The matrix-core kernel's
// workgroups take fewer subgroups (query rows) where the grid would leave
// multiprocessors idle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "context/shared_gpu_context.h"
#include "graph/graph.h"

namespace gpuu::kernels {

enum class AttentionKernel {
  kVector,           // attention.comp: f32 math on the shader cores, f32 and f16
  kCoopMat,          // attention_coopmat.comp on matrix cores (f16)
  // attention_coopmat.comp with its matrix products emulated in plain shader
  // code (16x16x16): for tests of the kernel on devices without matrix cores.
  kCoopMatEmulated,
};

struct AttentionProblem {
  graph::DType dtype = graph::DType::kF32;
  uint32_t e = 0, ev = 0;  // head dims of q/k and v
  uint64_t heads = 0;      // batch x query heads: the grid's (batch, head) pairs
  uint32_t l = 0;          // query rows per head
};

struct AttentionChoice {
  AttentionKernel kernel = AttentionKernel::kVector;
  // Matrix-core kernels: subgroups of 32 per workgroup (16 query rows each),
  // keys per block through shared memory, the cooperative-matrix shape, and
  // the shared row stride of the q/k/v tiles in 8-half chunks.
  uint32_t subgroups = 0, key_block = 0;
  uint32_t cm_m = 0, cm_n = 0, cm_k = 0;
  uint32_t kv_row = 0;
  std::string why;  // for profiles and benchmarks

  bool coopmat() const { return kernel != AttentionKernel::kVector; }
  uint32_t query_rows() const { return 16 * subgroups; }
  // The matrix-core kernels' embedded shader.
  std::string shader() const;
  // "coopmat 16x16x16, 4 subgroups x 16 rows, 64-key blocks", "vector (f32 math)".
  std::string describe() const;
};

// What tests and benchmarks may force (KernelGraphOptions): a kernel, taken
// where the device and the problem allow it, else the usual choice; a
// workgroup's subgroups and a key block, where they fit the device's shared
// memory; and a multiprocessor count in place of the device's.
struct AttentionForce {
  std::optional<AttentionKernel> kernel;
  std::optional<uint32_t> subgroups, key_block;
  std::optional<uint32_t> compute_units;
};

AttentionChoice select_attention(const SharedGpuContext& ctx, const AttentionProblem& problem,
                                 const AttentionForce& force = {});

}  // namespace gpuu::kernels
