// The attention kernel family (families/attention.cpp) beyond its OpKernel:
// the layout it can write its result in, and how it shares a row block's
// keys among workgroups: flash-decoding. A decode step has one query row per
// head, so one workgroup per (batch, head, 32-row block) makes 12-32
// workgroups on a GPU of 132 multiprocessors, each walking the whole cache
// alone; split over the keys, each walks a share and a second dispatch
// (attention_combine.comp) weighs the shares' partial softmaxes together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "graph/graph.h"
#include "kernels/op_table.h"

namespace gpuu::kernels {

struct AttentionSplit {
  uint32_t splits = 1;            // workgroups per row block
  uint32_t blocks_per_split = 0;  // key blocks each walks (all of them when splits is 1)
  std::string why;                // for profiles: "12 workgroups for 132 multiprocessors: 16 x 1 key blocks"
};

// Whether `transpose` swaps the head and row dims of a (batch..., heads,
// rows, head dim) tensor and nothing else, in memory (unit dims may move
// too): the layout the attention kernel can write its result in directly
// (lower_attention_heads_inner).
bool swaps_heads_and_rows(const graph::Graph& graph, const graph::Node& transpose);

// Lowers scaled_dot_product_attention node `attention` writing its result
// as `transpose`'s (its rows and heads swapped, swaps_heads_and_rows): the
// transpose a transformer reads before its output projection, with no copy.
Status lower_attention_heads_inner(LoweringContext& lc, const graph::Node& attention, const graph::Node& transpose);

// `workgroups`: (batch, head, row block)s; `key_blocks`: blocks of keys a row
// block may see; `compute_units`: the device's multiprocessors (0 where the
// driver does not say: no split); `force`: a split count from
// KernelGraphOptions, capped by the key blocks; `causal_square`: an
// is_causal attention of as many rows as keys (a prefill), whose row blocks
// walk a triangle of key blocks: never split unless forced.
AttentionSplit choose_attention_split(uint64_t workgroups, uint32_t key_blocks, uint32_t compute_units,
                                      std::optional<uint32_t> force = std::nullopt, bool causal_square = false);

// Subgroups of the matrix-core attention (attention_coopmat.comp) that share
// each 64-key block of one workgroup's rows: 1 (64 rows a workgroup), 2 or 4
// (16 rows). The fewest that give `heads` (batch x heads) row blocks of
// `rows` queries at least `compute_units` workgroups, else 4; 1 where the
// driver names no multiprocessors. `force` (KernelGraphOptions) is taken as
// is where it is 1, 2 or 4.
uint32_t choose_coop_attention_key_split(uint64_t heads, uint32_t rows, uint32_t compute_units,
                                         std::optional<uint32_t> force = std::nullopt);

}  // namespace gpuu::kernels
