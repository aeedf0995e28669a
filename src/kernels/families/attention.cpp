// Kernel family 'attention': scaled_dot_product_attention as one
// flash-attention dispatch (shaders/attention.comp): a workgroup per 32 query
// rows of one (batch, head), keys and values streamed through shared memory,
// the score matrix never stored. q, k and v are read through strides, so the
// usual view + transpose (or a slice of a fused qkv projection) in front of
// the op needs no copy: KernelGraph hands such inputs over as views. Where
// those workgroups are too few for the GPU, the keys are split among more
// (attention.h) and a second dispatch combines them.
#include <algorithm>
#include <cmath>
#include <optional>

#include "graph/op_registry.h"
#include "kernels/attention.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {

// Twice the multiprocessors: a split's workgroup is one block of keys deep at
// the least, short enough that a second wave on each costs less than the
// longer walk it saves.
constexpr uint64_t kSplitWavesPerUnit = 2;

AttentionSplit choose_attention_split(uint64_t workgroups, uint32_t key_blocks, uint32_t compute_units,
                                      std::optional<uint32_t> force, bool causal_square) {
  AttentionSplit split;
  split.blocks_per_split = key_blocks;
  uint64_t want = 1;
  if (force) {
    want = *force;
    split.why = "forced";
  } else if (causal_square) {
    // Row block r walks r + 1 blocks: a split's later shares find nothing
    // left of the diagonal for most row blocks, and the combine is a second
    // dispatch (H100, GPT-2's 12 heads: one pass 28.7 against 33.4 us at 256
    // rows in f16, 19.0 against 21.8 at 128 in f32, 19.2 against 18.6 at 128
    // in f16; attention-*-70ebb71.json).
    return AttentionSplit{1, key_blocks, ""};
  } else if (compute_units && workgroups && workgroups < compute_units) {
    want = (kSplitWavesPerUnit * compute_units + workgroups - 1) / workgroups;
    split.why = std::to_string(workgroups) + " workgroups for " + std::to_string(compute_units) + " multiprocessors";
  }
  want = std::min<uint64_t>(want, key_blocks);
  if (want < 2) return AttentionSplit{1, key_blocks, ""};
  split.blocks_per_split = static_cast<uint32_t>((key_blocks + want - 1) / want);
  split.splits = (key_blocks + split.blocks_per_split - 1) / split.blocks_per_split;
  split.why += ": keys split " + std::to_string(split.splits) + " ways, " + std::to_string(split.blocks_per_split) +
               " key block(s) each";
  return split;
}

// attention_coopmat.comp's query rows per workgroup with no key split (64 /
// KEY_SPLIT with one).
constexpr uint32_t kCoopQueryRows = 64;

uint32_t choose_coop_attention_key_split(uint64_t heads, uint32_t rows, uint32_t compute_units,
                                         std::optional<uint32_t> force) {
  if (force && (*force == 1 || *force == 2 || *force == 4)) return *force;
  if (compute_units == 0) return 1;
  for (uint32_t split : {1u, 2u}) {
    const uint32_t rows_per_group = kCoopQueryRows / split;
    if (heads * ((rows + rows_per_group - 1) / rows_per_group) >= compute_units) return split;
  }
  return 4;
}

namespace {

using graph::DType;

constexpr uint32_t kQueryRows = 32;  // BQ: query rows per workgroup
constexpr uint32_t kRowGroup = 16;   // GROUP: invocations sharing rows (and keys per block per key column)
constexpr uint32_t kMaxChunks = 2;   // MAX_NC: output chunks (vec4s) per invocation
// q/k's E and v's Ev: 4 * kRowGroup * kMaxChunks output columns per row.
constexpr int64_t kMaxHeadDim = 4 * kRowGroup * kMaxChunks;

// Shared memory of attention.comp, in bytes, for `row_stride` vec4s per tile
// row and `keys` key columns per invocation (16 * keys keys per block): the
// q tile, the k/v tile, the probabilities and the row partials.
uint32_t shared_bytes(uint32_t row_stride, uint32_t keys) {
  const uint32_t block = kRowGroup * keys;
  return 16 * (kQueryRows * row_stride + block * row_stride + kQueryRows * (block / 4 + 1) + kQueryRows * 4);
}

// One stride for dims [0, n) of a strided tensor flattened into one index, or
// nullopt where they do not flatten (mixed broadcast, or permuted batch dims).
std::optional<int64_t> flat_batch_stride(const graph::Shape& shape, const std::vector<int64_t>& strides, size_t n) {
  const MergedDims merged = merge_dims(shape, strides, n);
  if (merged.dims.size() > 1) return std::nullopt;
  return merged.steps.empty() ? 0 : merged.steps[0];
}

// How the kernel reads q, k or v: element (batch b, head h, row i, column e)
// at off + b * sb + h * sh + i * sl + e.
struct Operand {
  int64_t off = 0, sb = 0, sh = 0, sl = 0;
};

std::optional<Operand> operand_layout(const graph::Shape& shape, const StridedView& view) {
  const size_t r = shape.size();
  if (view.strides.size() != r || view.strides[r - 1] != 1 || !view_in_32_bits(view)) return std::nullopt;
  std::optional<int64_t> sb = flat_batch_stride(shape, view.strides, r - 3);
  if (!sb) return std::nullopt;
  return Operand{view.offset, *sb, view.strides[r - 3], view.strides[r - 2]};
}

// The mask's strides broadcast to the scores [..., Hq, L, S].
std::vector<int64_t> mask_strides(const graph::Graph& g, const graph::Node& n) {
  graph::Shape scores = g.value(n.outputs[0]).shape;
  scores.back() = g.value(n.inputs[1]).shape[scores.size() - 2];
  std::vector<uint32_t> s = broadcast_strides(g.value(n.inputs[3]).shape, scores);
  return std::vector<int64_t>(s.begin(), s.end());
}

bool has_mask(const graph::Node& n) { return n.inputs.size() > 3 && n.inputs[3] != graph::kNone; }

std::string check_attention(const graph::Graph& g, const graph::Node& n) {
  const graph::Value& q = g.value(n.inputs[0]);
  const graph::Value& v = g.value(n.inputs[2]);
  const int64_t e = q.shape.back(), ev = v.shape.back();
  if (!is_float(q.dtype)) {
    return std::string("Vulkan attention kernels take f32/f16 q, k and v; '") + q.name + "' is " +
           graph::dtype_name(q.dtype);
  }
  if (e > kMaxHeadDim || ev > kMaxHeadDim) {
    return "the Vulkan attention kernel takes head dims up to " + std::to_string(kMaxHeadDim) + ", q/k have " +
           std::to_string(e) + " and v " + std::to_string(ev);
  }
  if (has_mask(n)) {
    const graph::Value& mask = g.value(n.inputs[3]);
    const graph::Shape& out = g.value(n.outputs[0]).shape;
    if (!flat_batch_stride(out, mask_strides(g, n), out.size() - 3)) {
      return "the Vulkan attention kernel reads the mask's batch dims as one; mask '" + mask.name + "' " +
             graph::shape_to_string(mask.shape) + " broadcasts over some of them only";
    }
  }
  return "";
}

bool takes_operand_view(const graph::Graph& g, const graph::Node& n, size_t slot, const StridedView& view) {
  return slot < 3 && operand_layout(g.value(n.inputs[slot]).shape, view).has_value();
}

// attention_coopmat.comp's largest head dims (it also shuffles within
// subgroups: a row's two invocations share sums).
constexpr uint32_t kMaxCoopHeadDim = 64;
constexpr uint32_t kCoopSharedBytes = 45056;  // its tiles (see the shader)

// The matrix-core attention of `n` into `y` (see lower_attention_to): `push`
// holds the constants it shares with attention.comp up to the key split,
// its row blocks counted in `rows` (64 / key_split).
Status lower_coop_attention(LoweringContext& lc, const graph::Node& n, const TensorRef& y, bool heads_inner,
                            PushConstants push, uint32_t key_split, const BufferRange (&ranges)[3],
                            const BufferRange& mask_range, int32_t mask_kind, bool causal, bool vec8_reads,
                            bool vec_writes, uint64_t heads) {
  const graph::Shape& q_shape = lc.graph.value(n.inputs[0]).shape;
  const size_t r = q_shape.size();
  const auto len_l = static_cast<uint32_t>(q_shape[r - 2]), e = static_cast<uint32_t>(q_shape[r - 1]);
  const auto ev = static_cast<uint32_t>(y.shape[r - 1]);
  const uint32_t rows = kCoopQueryRows / key_split;
  const uint32_t q_blocks = (len_l + rows - 1) / rows;
  push.u32(1).u32(0);  // one dispatch (splits, split_blocks: unused)
  KernelKey key{"attention_coopmat_f16",
                {static_cast<int32_t>(e / 4), static_cast<int32_t>(ev / 4), 0, 0, mask_kind, 16, 16, 16, causal ? 1 : 0,
                 vec_writes ? 1 : 0, heads_inner ? 1 : 0, vec8_reads ? 1 : 0, static_cast<int32_t>(key_split)},
                6,
                push.size()};
  gpu::StepWork work;
  work.choice = "matrix cores, " + std::to_string(rows) + " rows x 64 keys per block";
  work.why = "f16 with head dims of at most 64 and 16 x 16 x 16 f16 cooperative matrices";
  if (key_split > 1) {
    work.choice += ", each block's keys shared by " + std::to_string(key_split) + " subgroups";
    work.why += "; " + std::to_string(heads * ((len_l + kCoopQueryRows - 1) / kCoopQueryRows)) +
                " workgroups of 64 rows for " + std::to_string(lc.ctx.compute_units()) + " multiprocessors";
  }
  return add_dispatch(lc, n, key,
                      {{ranges[0], false}, {ranges[1], false}, {ranges[2], false}, {mask_range, false},
                       {y.range, true}, {y.range, true}},
                      push, heads * q_blocks * kWorkgroupSize, std::move(work));
}

// The attention of `n` into `y`: its own result [..., Hq, L, Ev], or with
// `heads_inner` the transpose of that, [..., L, Hq, Ev].
Status lower_attention_to(LoweringContext& lc, const graph::Node& n, const TensorRef& y, bool heads_inner) {
  GPUU_ASSIGN_OR_RETURN(graph::AttrMap attrs, graph::resolve_attrs(n));
  GPUU_RETURN_IF_ERROR(require_f16_support(lc, n, y.dtype));
  if (graph::shape_numel(y.shape) == 0) return Status::Ok();  // nothing to write
  const graph::Shape& q_shape = lc.graph.value(n.inputs[0]).shape;
  const graph::Shape& k_shape = lc.graph.value(n.inputs[1]).shape;
  const size_t r = q_shape.size();
  const auto len_l = static_cast<uint32_t>(q_shape[r - 2]), len_s = static_cast<uint32_t>(k_shape[r - 2]);
  const auto e = static_cast<uint32_t>(q_shape[r - 1]), ev = static_cast<uint32_t>(y.shape[r - 1]);
  const auto hq = static_cast<uint32_t>(q_shape[r - 3]), hkv = static_cast<uint32_t>(k_shape[r - 3]);
  uint64_t batch = 1;
  for (size_t d = 0; d + 3 < r; ++d) batch *= static_cast<uint64_t>(q_shape[d]);

  Operand operands[3];
  BufferRange ranges[3];
  bool vec_reads = e % 4 == 0 && ev % 4 == 0, vec8_reads = true;
  for (size_t i = 0; i < 3; ++i) {
    StridedView view = lc.view_of(n.inputs[i]);
    std::optional<Operand> layout = operand_layout(lc.graph.value(n.inputs[i]).shape, view);
    if (!layout) {
      return err(StatusCode::kInternal, "node '", n.name, "' (", n.op, "): input ", i, " has a layout the kernel cannot read");
    }
    operands[i] = *layout;
    ranges[i] = lc.tensor(view.root).range;
    vec_reads = vec_reads && ranges[i].offset % 16 == 0 &&
                (layout->off | layout->sb | layout->sh | layout->sl) % 4 == 0;
    // The matrix-core kernel reads 8-half chunks: every row and head starts on one.
    vec8_reads = vec8_reads && ranges[i].offset % 16 == 0 &&
                 (layout->off | layout->sb | layout->sh | layout->sl) % 8 == 0;
  }
  int32_t mask_kind = 0;
  std::vector<int64_t> ms(r, 0);
  BufferRange mask_range = ranges[0];  // bound, never read, without a mask
  if (has_mask(n)) {
    const TensorRef& mask = lc.tensor(n.inputs[3]);
    mask_kind = mask.dtype == DType::kBool ? 1 : 2;
    ms = mask_strides(lc.graph, n);
    mask_range = mask.range;
  }
  const int64_t mask_sb = flat_batch_stride(y.shape, ms, r - 3).value_or(0);  // check_attention saw it flatten

  const double scale = graph::has_attr(attrs, "scale") ? graph::attr_float(attrs, "scale")
                                                       : 1.0 / std::sqrt(static_cast<double>(e));
  // The push constants both kernels share, up to the key split, for row
  // blocks of `rows`.
  auto shared_push = [&](uint32_t rows) {
    PushConstants push;
    push.u32(len_l).u32(len_s).u32(e).u32(ev).u32(hq).u32(hq / hkv).u32((len_l + rows - 1) / rows);
    push.f32(static_cast<float>(scale * 1.4426950408889634));  // scores in base 2: exp2 in the kernel
    for (const Operand& o : operands) {
      push.u32(static_cast<uint32_t>(o.off)).u32(static_cast<uint32_t>(o.sb)).u32(static_cast<uint32_t>(o.sh));
      push.u32(static_cast<uint32_t>(o.sl));
    }
    push.u32(static_cast<uint32_t>(mask_sb)).u32(static_cast<uint32_t>(ms[r - 3])).u32(static_cast<uint32_t>(ms[r - 2]));
    push.u32(static_cast<uint32_t>(ms[r - 1]));
    return push;
  };
  const uint32_t q_blocks = (len_l + kQueryRows - 1) / kQueryRows;
  const uint32_t e4 = (e + 3) / 4, ev4 = (ev + 3) / 4;
  const uint32_t row_stride = std::max(e4, ev4) | 1u;  // odd: rows start on distinct banks
  const auto chunks = static_cast<int32_t>((ev4 + kRowGroup - 1) / kRowGroup);
  // 32-key blocks where they fit the device's shared memory, else 16 (or as
  // forced). 64 (4 keys an invocation) measured no faster on the H100:
  // GPT-2's heads at 512 rows 54-57 us against 55-57 at batch 1, 111 against
  // 106 at batch 4 (`attention-keys-prefetch-*-2026-12-08.json`).
  const uint32_t shared_limit = lc.ctx.properties().limits.maxComputeSharedMemorySize;
  uint32_t keys = shared_bytes(row_stride, 2) <= shared_limit ? 2 : 1;
  if (lc.attention_keys == 1u) keys = 1;
  if (shared_bytes(row_stride, keys) > shared_limit) {
    return err(StatusCode::kUnsupported, "node '", n.name, "' (", n.op, "): the attention kernel needs ",
               shared_bytes(row_stride, keys), " bytes of shared memory at head dims ", e, "/", ev, "; device '",
               lc.ctx.device_name(), "' gives a workgroup ", shared_limit);
  }
  const bool vec_writes = ev % 4 == 0 && y.range.offset % 16 == 0;
  // Key blocks a row block may see (under a causal mask the last row block's,
  // where L <= S; the kernel skips the blocks past each one's diagonal).
  const uint32_t block_keys = kRowGroup * keys;
  const uint32_t key_blocks = (len_s + block_keys - 1) / block_keys;
  const uint64_t row_blocks = batch * hq * q_blocks;
  const bool causal = graph::attr_int(attrs, "is_causal") != 0;
  const AttentionSplit split = choose_attention_split(row_blocks, key_blocks, lc.ctx.compute_units(),
                                                      lc.attention_splits, causal && len_l == len_s);
  // f16 on matrix cores (attention_coopmat.comp) where the head dims fit it,
  // the keys are not forced into splits and there are rows for one of its
  // 64-row blocks at least: it walks the keys in one pass, so a decode
  // step's few rows stay on the split kernel. (H100, in the models' profiles:
  // GPT-2's 128-row prefill 9.5 us a layer against 14 split, 512 rows at
  // batch 4 37 against 108, vit_b_16's 197 rows 13.5 against 21.)
  const bool coop_fits = y.dtype == DType::kF16 && e % 16 == 0 && ev % 16 == 0 && e <= kMaxCoopHeadDim &&
                         ev <= kMaxCoopHeadDim && lc.attention_splits.value_or(1) <= 1 &&
                         shared_limit >= kCoopSharedBytes && lc.ctx.subgroup_shuffle() && f16_matrix_shape_16(lc.ctx);
  if (coop_fits && lc.attention_coopmat.value_or(split.splits == 1 || len_l >= kCoopQueryRows)) {
    const uint32_t key_split =
        choose_coop_attention_key_split(batch * hq, len_l, lc.ctx.compute_units(), lc.attention_coop_key_split);
    return lower_coop_attention(lc, n, y, heads_inner, shared_push(kCoopQueryRows / key_split), key_split, ranges,
                                mask_range, mask_kind, causal, vec8_reads, vec_writes, batch * hq);
  }
  PushConstants push = shared_push(kQueryRows);
  push.u32(split.splits).u32(split.blocks_per_split);
  KernelKey key{std::string("attention") + float_suffix(y.dtype),
                {static_cast<int32_t>(e4), static_cast<int32_t>(ev4), static_cast<int32_t>(row_stride), chunks, mask_kind,
                 causal ? 1 : 0, vec_reads ? 1 : 0, vec_writes ? 1 : 0,
                 static_cast<int32_t>(keys), split.splits > 1 ? 1 : 0, heads_inner ? 1 : 0},
                6,
                push.size()};
  gpu::StepWork work;
  // A profile says why one pass as well as why a split.
  work.choice = split.splits > 1 ? "split keys " + std::to_string(split.splits) + " x " +
                                       std::to_string(split.blocks_per_split * block_keys)
                                 : "one pass, " + std::to_string(kQueryRows) + " rows x " + std::to_string(block_keys) +
                                       " keys a block";
  work.why = !split.why.empty() ? split.why
             : causal && len_l == len_s
                 ? "causal over square scores: a split's later shares would find little left of the diagonal"
                 : std::to_string(row_blocks) + " workgroups of rows";
  const uint64_t workgroups = row_blocks * split.splits;
  // Split: per (batch, head, row, split) Ev / 4 vec4s of output and one of
  // stats; else binding 5 takes the output's range, never written.
  const uint64_t rows = batch * hq * len_l;
  BufferRange partials = y.range;
  if (split.splits > 1) {
    GPUU_ASSIGN_OR_RETURN(partials, lc.scratch(rows * split.splits * (ev4 + 1) * 16, "attention key-split partials"));
  }
  GPUU_RETURN_IF_ERROR(add_dispatch(lc, n, key,
                                    {{ranges[0], false}, {ranges[1], false}, {ranges[2], false}, {mask_range, false},
                                     {y.range, true}, {partials, true}},
                                    push, workgroups * kWorkgroupSize, work));
  if (split.splits == 1) return Status::Ok();
  PushConstants combine;
  combine.u32(static_cast<uint32_t>(rows)).u32(ev).u32(ev4).u32(split.splits).u32(hq).u32(len_l);
  KernelKey combine_key{std::string("attention_combine") + float_suffix(y.dtype), {heads_inner ? 1 : 0}, 2,
                        combine.size()};
  work.bytes = partials.size + y.range.size;
  return add_dispatch(lc, n, combine_key, {{partials, false}, {y.range, true}}, combine, rows * ev, std::move(work));
}

Status lower_attention(LoweringContext& lc, const graph::Node& n) {
  return lower_attention_to(lc, n, lc.tensor(n.outputs[0]), false);
}

}  // namespace

bool swaps_heads_and_rows(const graph::Graph& g, const graph::Node& transpose) {
  if (transpose.op != "transpose" || transpose.inputs.size() != 1 || transpose.inputs[0] < 0) return false;
  const size_t r = g.value(transpose.inputs[0]).shape.size();
  Result<graph::AttrMap> attrs = graph::resolve_attrs(transpose);
  if (r < 3 || !attrs.ok()) return false;
  const std::vector<int64_t> perm = graph::attr_ints(*attrs, "perm");
  if (perm.size() != r) return false;
  // Compared in memory order, unit dims left out: torchvision's multi-head
  // attention moves its batch of 1 too ([1, H, L, D] -> [L, 1, H, D]), which
  // is the same bytes as [1, L, H, D].
  const graph::Shape& shape = g.value(transpose.inputs[0]).shape;
  std::vector<int64_t> want(r), got, wanted;
  for (size_t d = 0; d < r; ++d) want[d] = static_cast<int64_t>(d);
  std::swap(want[r - 3], want[r - 2]);
  for (size_t d = 0; d < r; ++d) {
    const int64_t axis = graph::normalize_axis(perm[d], r);
    if (axis < 0 || axis >= static_cast<int64_t>(r)) return false;
    if (shape[static_cast<size_t>(axis)] != 1) got.push_back(axis);
    if (shape[static_cast<size_t>(want[d])] != 1) wanted.push_back(want[d]);
  }
  return got == wanted;
}

Status lower_attention_heads_inner(LoweringContext& lc, const graph::Node& attention, const graph::Node& transpose) {
  return lower_attention_to(lc, attention, lc.tensor(transpose.outputs[0]), true);
}

void add_attention_kernels(std::vector<OpKernel>& table) {
  table.push_back(
      OpKernel{"scaled_dot_product_attention", kFloatDTypes, check_attention, lower_attention, 0, takes_operand_view});
}

}  // namespace gpuu::kernels
