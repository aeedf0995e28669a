// GEMM dispatches and split-K reductions (see gemm_dispatch.h).
#include "kernels/gemm_dispatch.h"

#include "kernels/row_norm.h"

namespace gpuu::kernels {

void add_epilogue(const GemmEpilogue* epi, const BufferRange& any, std::vector<int32_t>* spec,
                  std::vector<Binding>* bindings) {
  int32_t modes = 0;
  for (size_t i = 0; epi && i < epi->modes.size(); ++i) modes |= epi->modes[i] << (2 * i);
  spec->push_back(epi ? static_cast<int32_t>(epi->instructions.size()) : 0);
  spec->push_back(epi ? static_cast<int32_t>(epi->inputs.size()) : 0);
  spec->push_back(modes);
  for (size_t k = 0; k < GemmEpilogue::kMaxInstructions; ++k) {
    spec->push_back(epi && k < epi->instructions.size() ? epi->instructions[k] : 0);
  }
  for (size_t j = 0; j < GemmEpilogue::kMaxImmediates; ++j) {
    spec->push_back(epi && j < epi->immediates.size() ? float_bits(epi->immediates[j]) : 0);
  }
  spec->push_back(epi ? static_cast<int32_t>(epi->plane) : 0);
  for (size_t i = 0; i < GemmEpilogue::kMaxInputs; ++i) {
    bindings->push_back({epi && i < epi->inputs.size() ? epi->inputs[i]->range : any, false});
  }
}

namespace {

// gemm_split_reduce_norm.comp's elements per invocation, at most.
constexpr uint64_t kReduceNormMaxPer = 16;

// Whether the split-K reduction of `gemm` can apply `norm` as it stores `y`:
// the norm's x is y itself, row-major, a row per GEMM row (not conv2d's
// channels-first output), short enough for the kernel's registers, and a
// plain layer norm (no RMS, no chains).
bool reduces_with_norm(const RowNorm& norm, const GemmDispatch& gemm, const GemmOutput& out, const TensorRef& y,
                       const GemmEpilogue* epi) {
  return !out.conv && (!epi || epi->plane == 0) && norm.x == &y && !norm.x_layout && !norm.rms &&
         norm.before.empty() && norm.after.empty() && is_float(y.dtype) && norm.size == gemm.n &&
         norm.rows == uint64_t{gemm.m} * gemm.batches && gemm.n <= kWorkgroupSize * kReduceNormMaxPer;
}

// The reduction of `splits` shares of partials into `y` (bias, epilogue)
// with `norm` of each row after it: a workgroup per row.
Status add_split_reduce_norm(LoweringContext& lc, const graph::Node& labelled, const RowNorm& norm,
                             const GemmDispatch& gemm, uint32_t splits, const BufferRange& partial,
                             const BufferRange& bias, const GemmOutput& out, const TensorRef& y,
                             const GemmEpilogue* epi, gpu::StepWork work) {
  const uint64_t rows = norm.rows;
  PushConstants push;
  push.u32(static_cast<uint32_t>(rows * gemm.n)).u32(static_cast<uint32_t>(rows)).u32(gemm.m).u32(gemm.n);
  push.f32(norm.eps).u32(norm.weight_offset).u32(norm.weight_stride);
  const auto per = static_cast<int32_t>((gemm.n + kWorkgroupSize - 1) / kWorkgroupSize);
  std::vector<int32_t> spec = {out.bias ? 1 : 0, per};
  std::vector<Binding> bindings = {{partial, false}, {bias, false}, {y.range, true}};
  add_epilogue(epi, partial, &spec, &bindings);
  spec.push_back(norm.weight ? 1 : 0);
  spec.push_back(norm.bias ? 1 : 0);
  spec.push_back(lc.ctx.subgroup_arithmetic() ? 1 : 0);
  spec.push_back(static_cast<int32_t>(splits));
  // An absent weight or bias binds y's range in its place; never read.
  bindings.push_back({norm.weight.value_or(y.range), false});
  bindings.push_back({norm.bias.value_or(y.range), false});
  bindings.push_back({norm.y->range, true});
  KernelKey key{std::string("gemm_split_reduce_norm") + float_suffix(y.dtype), spec,
                static_cast<uint32_t>(bindings.size()), push.size()};
  graph::Node node = labelled;
  node.name += "+" + lc.graph.node(lc.norm_after_node).name;
  work.ops += "+layer_norm";
  work.bytes += norm.y->range.size;
  lc.norm_after_taken = true;
  return add_dispatch(lc, node, key, std::move(bindings), push, rows * kWorkgroupSize, std::move(work));
}

}  // namespace

Status add_gemm_dispatch(LoweringContext& lc, const graph::Node& node, const GemmChoice& choice,
                         const GemmDispatch& gemm, const BufferRange& a, const BufferRange& b, const GemmOutput& out) {
  // The chain folded into the store, if the kernel graph offered one: its
  // output is written in place of the GEMM's.
  const GemmEpilogue* epi = lc.epilogue;
  lc.epilogue_taken = epi != nullptr;
  const TensorRef& y = epi ? *epi->output : *out.y;
  graph::Node labelled = node;
  if (epi) labelled.name += "+" + epi->label;
  const bool split = choice.splits > 1;
  const uint32_t tiles_m = choice.tiles_m(gemm.m), tiles_n = choice.tiles_n(gemm.n);
  // Under split-K, the rows of tiles computed whole first (the choice's, where
  // they leave tiles to split) and the first row the split ones cover.
  const uint64_t tile_rows = uint64_t{tiles_m} * gemm.batches;
  const uint64_t whole_rows = split && choice.whole_tile_rows < tile_rows ? choice.whole_tile_rows : 0;
  const uint64_t whole = whole_rows * tiles_n;
  const uint64_t row0 = whole_rows / tiles_m * gemm.m + whole_rows % tiles_m * choice.tile_m;
  // <= numel(y) x splits <= 2^31 x 16 would not fit; check_tensor_limits caps
  // numel(y), and the selector splits only GEMMs of few tiles.
  const uint64_t tiles = whole + (tile_rows * tiles_n - whole) * choice.splits;
  const uint64_t outputs = uint64_t{gemm.m} * gemm.n * gemm.batches;
  const uint64_t split_outputs = outputs - row0 * gemm.n;
  BufferRange partial = y.range;
  if (split) {
    GPUU_ASSIGN_OR_RETURN(partial, lc.scratch(split_outputs * choice.splits * sizeof(float), "split-K partials"));
  }
  PushConstants push;
  push.u32(gemm.m).u32(gemm.n).u32(gemm.k).u32(tiles_n).u32(tiles_m).u32(static_cast<uint32_t>(tiles));
  push.append(gemm.push);
  push.u32(choice.k_split).u32(gemm.batches);
  push.u32(static_cast<uint32_t>(whole)).u32(static_cast<uint32_t>(row0));
  std::vector<int32_t> spec = {out.bias ? 1 : 0, gemm.b_k_contiguous, gemm.a_vec, gemm.b_vec, gemm.aligned};
  const std::vector<int32_t> kernel_spec = choice.specialization();
  spec.insert(spec.end(), kernel_spec.begin(), kernel_spec.end());
  spec.resize(10, 0);  // constant ids 5..9 are gemm_coopmat.comp's and gemv.comp's (unused by gemm.comp)
  const bool qw_wide = choice.kernel == GemmKernel::kGemv && gemm.qw_wide;
  if (qw_wide) spec[7] = 1;  // gemv.comp's QW_WIDE
  spec.push_back(split ? 1 : 0);
  spec.push_back(gemm.conv_b);
  // Without a bias, binding 2 still needs a buffer: A's, which the shader never reads there.
  const BufferRange bias = out.bias ? out.bias->range : a;
  // Where every tile is split the output binding takes the partials too: the
  // GEMM pass writes nothing else, and the reduction reads them after it (and
  // applies the epilogue). Whole tiles store their results (and epilogue).
  std::vector<Binding> bindings = {
      {a, false}, {b, false}, {bias, false}, {split && !whole ? partial : y.range, true}, {partial, true}};
  add_epilogue(split && !whole ? nullptr : epi, a, &spec, &bindings);
  if (gemm.weight_bits) {
    spec.push_back(static_cast<int32_t>(gemm.weight_group));  // QW_GROUP, constant 28
    bindings.push_back({gemm.scales, false});                   // binding 8
  }
  KernelKey key{choice.shader(out.conv, y.dtype, gemm.weight_bits), spec, static_cast<uint32_t>(bindings.size()),
                push.size()};
  gpu::StepWork work;
  work.ops = epi ? node.op + "+" + epi->ops : node.op;
  work.choice = choice.describe() + (qw_wide ? ", quantized weights read a uvec4 at a time" : "") +
                (gemm.conv_b == GemmDispatch::kPatches  ? ", patches read along k"
                 : gemm.conv_b == GemmDispatch::kIm2col ? ", im2col view materialized"
                                                        : "");
  work.why = choice.why;
  work.flops = gemm_flops(gemm.m, gemm.n, gemm.k, gemm.batches);
  work.matrix_cores = choice.coopmat();
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, labelled, key, std::move(bindings), push, tiles * kWorkgroupSize, work));
  if (!split) return Status::Ok();
  // The reduction moves the partials, the bias where there is one, and the output.
  work.flops = 0;
  work.matrix_cores = false;
  work.bytes = partial.size + (out.bias ? bias.size : 0) + split_outputs * graph::dtype_size(y.dtype);
  // The norm of every row follows a reduction of every row only.
  if (const RowNorm* norm = lc.norm_after; norm && !whole && reduces_with_norm(*norm, gemm, out, y, epi)) {
    return add_split_reduce_norm(lc, labelled, *norm, gemm, choice.splits, partial, bias, out, y, epi, std::move(work));
  }
  PushConstants reduce;
  reduce.u32(static_cast<uint32_t>(split_outputs)).u32(gemm.m).u32(gemm.n);
  reduce.u32(out.pixels).u32(out.out_channels).u32(static_cast<uint32_t>(row0));
  std::vector<int32_t> reduce_spec = {out.bias ? 1 : 0, out.conv ? 1 : 0};
  std::vector<Binding> reduce_bindings = {{partial, false}, {bias, false}, {y.range, true}};
  add_epilogue(epi, a, &reduce_spec, &reduce_bindings);
  reduce_spec.push_back(static_cast<int32_t>(choice.splits));  // SPLITS, constant 18
  KernelKey reduce_key{std::string("gemm_split_reduce") + float_suffix(y.dtype), reduce_spec,
                       static_cast<uint32_t>(reduce_bindings.size()), reduce.size()};
  return add_dispatch(lc, labelled, reduce_key, std::move(reduce_bindings), reduce, split_outputs, std::move(work));
}

}  // namespace gpuu::kernels
