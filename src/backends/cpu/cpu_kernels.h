// The CPU fallback: reference kernels for every registered op (except
// custom_shader), used at run time for undelegated nodes and as the numerical
// oracle every GPU kernel is tested against. Clarity and exactness over speed.
//
// Numerics, for anyone comparing against these kernels:
//  - f32 and f16 are computed in double and rounded once to the output dtype
//    (f16: IEEE half, round-to-nearest-even). Sums (matmul, linear, conv2d,
//    reductions, softmax, layer_norm, attention) accumulate in double, so results are at
//    least as accurate as PyTorch's float kernels; NaN propagates through
//    maximum/minimum, max_pool2d, reduce_max, clamp, relu and softmax as in torch.
//  - Integer add/sub/mul, neg, abs, reduce_sum and narrowing casts wrap to the
//    dtype's width (two's complement), as torch does. Integer div (the registry
//    allows div only for f32/f16 today) truncates toward zero like C; a zero
//    divisor is an error.
//  - cast: float -> integer truncates toward zero and saturates to the dtype's
//    range, NaN -> 0 (PyTorch leaves out-of-range values unspecified);
//    float -> float rounds to nearest even; anything -> bool is x != 0 (NaN is
//    true); bool -> number is 0/1. pad's `value` converts by the same rules.
//  - clamp on integers clamps to ceil(min) and floor(max).
//  - remainder takes the divisor's sign (Python), fmod the dividend's (C),
//    floor_divide rounds the exact quotient down. On integers a zero divisor
//    gives 0 for all three (torch raises; GPU kernels cannot), and MIN / -1
//    wraps to MIN (remainders 0). reduce_prod wraps like reduce_sum.
//  - round is half to even; sign(NaN) is NaN; logical ops read nonzero as
//    true (NaN too, -0 not); reduce_any/all over nothing: false/true.
//  - scaled_dot_product_attention: a row whose scores are all -inf (every key
//    masked, or no keys) gives 0, as PyTorch's _safe_softmax; a NaN score makes
//    its row NaN.
//  - argmax/argmin return the first index of the extreme; a NaN is the extreme
//    for both, as in torch. cumsum accumulates floats in double.
//  - gather/index_select: an index outside [0, dim) (negative ones included) is
//    an error naming the node, the index value and its position.
//  - scatter/index_put: the same index rule (the GPU kernels skip such an
//    update instead). Reductions combine in update order (floats in double,
//    rounded once; integers wrap; an integer mean floors, as torch); reduce
//    "none" keeps the last of updates to one place (torch: undefined).
//  - TOSA's INT profile (int_quant.cpp): rescale, conv2d_int, matmul_int,
//    avg_pool2d_int, table, mul_shift, arithmetic_right_shift follow TOSA 1.0
//    bit for bit; int32 accumulators and 64-bit rounding sums wrap where TOSA
//    requires no overflow, and shifts outside TOSA's range are defined there.
#pragma once

#include <string_view>
#include <vector>

#include "backends/cpu/host_tensor.h"
#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::cpu {

// Runs one node of `graph`. `inputs` has one entry per node.inputs entry:
// nullptr exactly where node.inputs holds kNone (an absent optional input),
// and otherwise a tensor of the dtype and shape the graph declares for that
// value. The node is checked by the op registry (graph::infer) first; on
// success `outputs` is replaced by one tensor per inferred output.
// Errors: kInvalidArgument naming the node and the input, attribute or index
// at fault; kUnsupported for custom_shader (GPU only).
Status run_node(const graph::Graph& graph, const graph::Node& node, const std::vector<const HostTensor*>& inputs,
                std::vector<HostTensor>* outputs);

// Runs a whole graph in node order: `inputs` matches graph.inputs() one to one
// (dtype and shape), constants come from the graph, and the result holds one
// tensor per graph output. The graph must pass graph::verify(). Intermediate
// tensors are freed after their last use. Errors name the graph input or the
// node at fault.
Result<std::vector<HostTensor>> run_graph(const graph::Graph& graph, const std::vector<HostTensor>& inputs);

// Whether run_node has a kernel for `op` (every registered op but custom_shader).
bool cpu_supports_op(std::string_view op);

struct KernelArgs;  // kernel_support.h: one node's checked inputs, attributes and inferred outputs
using Kernel = Status (*)(const KernelArgs& args, std::vector<HostTensor>* outputs);

// One op the CPU fallback implements and the kernel that runs it.
struct CpuOpKernel {
  const char* op;
  Kernel run;
};

// Every op the CPU fallback implements, as the family files (elementwise.cpp,
// linalg.cpp, ...) register them beside their kernels; run_node and
// cpu_supports_op read this list. Each op appears once.
const std::vector<CpuOpKernel>& cpu_op_kernels();

}  // namespace gpuu::cpu
