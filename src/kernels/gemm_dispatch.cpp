// GEMM dispatches and split-K reductions (see gemm_dispatch.h).
#include "kernels/gemm_dispatch.h"

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
  // <= numel(y) x splits <= 2^31 x 16 would not fit; check_tensor_limits caps
  // numel(y), and the selector splits only GEMMs of few tiles.
  const uint64_t tiles = uint64_t{tiles_m} * tiles_n * gemm.batches * choice.splits;
  const uint64_t outputs = uint64_t{gemm.m} * gemm.n * gemm.batches;
  BufferRange partial = y.range;
  if (split) {
    GPUU_ASSIGN_OR_RETURN(partial, lc.scratch(outputs * choice.splits * sizeof(float), "split-K partials"));
  }
  PushConstants push;
  push.u32(gemm.m).u32(gemm.n).u32(gemm.k).u32(tiles_n).u32(tiles_m).u32(static_cast<uint32_t>(tiles));
  push.append(gemm.push);
  push.u32(choice.k_split).u32(gemm.batches);
  std::vector<int32_t> spec = {out.bias ? 1 : 0, gemm.b_k_contiguous, gemm.a_vec, gemm.b_vec, gemm.aligned};
  const std::vector<int32_t> kernel_spec = choice.specialization();
  spec.insert(spec.end(), kernel_spec.begin(), kernel_spec.end());
  spec.resize(10, 0);  // constant ids 5..9 are gemm_coopmat.comp's and gemv.comp's (unused by gemm.comp)
  const bool qw_wide = choice.kernel == GemmKernel::kGemv && gemm.qw_wide;
  if (qw_wide) spec[7] = 1;  // gemv.comp's QW_WIDE
  spec.push_back(split ? 1 : 0);
  spec.push_back(gemm.pointwise);
  // Without a bias, binding 2 still needs a buffer: A's, which the shader never reads there.
  const BufferRange bias = out.bias ? out.bias->range : a;
  // Under split-K the output binding takes the partials too: the GEMM pass
  // writes nothing else, and the reduction reads them after it (and applies
  // the epilogue).
  std::vector<Binding> bindings = {{a, false}, {b, false}, {bias, false}, {partial, true}, {partial, true}};
  add_epilogue(split ? nullptr : epi, a, &spec, &bindings);
  if (gemm.weight_bits) {
    spec.push_back(static_cast<int32_t>(gemm.weight_group));  // QW_GROUP, constant 28
    bindings.push_back({gemm.scales, false});                   // binding 8
  }
  KernelKey key{choice.shader(out.conv, y.dtype, gemm.weight_bits), spec, static_cast<uint32_t>(bindings.size()),
                push.size()};
  gpu::StepWork work;
  work.ops = epi ? node.op + "+" + epi->ops : node.op;
  work.choice = choice.describe() + (qw_wide ? ", quantized weights read a uvec4 at a time" : "");
  work.why = choice.why;
  work.flops = gemm_flops(gemm.m, gemm.n, gemm.k, gemm.batches);
  work.matrix_cores = choice.coopmat();
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, labelled, key, std::move(bindings), push, tiles * kWorkgroupSize, work));
  if (!split) return Status::Ok();
  // The reduction moves the partials, the bias where there is one, and the output.
  work.flops = 0;
  work.matrix_cores = false;
  work.bytes = partial.size + (out.bias ? bias.size : 0) + y.range.size;
  PushConstants reduce;
  reduce.u32(static_cast<uint32_t>(outputs)).u32(gemm.m).u32(gemm.n).u32(choice.splits);
  reduce.u32(out.pixels).u32(out.out_channels);
  std::vector<int32_t> reduce_spec = {out.bias ? 1 : 0, out.conv ? 1 : 0};
  std::vector<Binding> reduce_bindings = {{partial, false}, {bias, false}, {y.range, true}};
  add_epilogue(epi, a, &reduce_spec, &reduce_bindings);
  KernelKey reduce_key{std::string("gemm_split_reduce") + float_suffix(y.dtype), reduce_spec,
                       static_cast<uint32_t>(reduce_bindings.size()), reduce.size()};
  return add_dispatch(lc, labelled, reduce_key, std::move(reduce_bindings), reduce, outputs, std::move(work));
}

}  // namespace gpuu::kernels
