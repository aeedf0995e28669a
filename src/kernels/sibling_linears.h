// Linears that read one input, each with a constant weight of the same depth
// (a transformer's q, k and v projections, a SwiGLU's gate and up
// projections), as one linear over their weights side by side: one GEMM of
// their summed width instead of several narrow ones. Each original result is
// a slice of the merged one, which the kernels read as a view. A decode step
// reads 2-12 MiB per projection: each dispatch costs more in launch and
// latency than in bandwidth, so three of them cost about three times one.
#pragma once

#include "graph/graph.h"

namespace gpuu::kernels {

// `region` with each such group merged, or `region` unchanged where no group
// exists. The graph's inputs and outputs stay the same values in the same
// order; the merged weight is a new constant (the group's weights
// concatenated along N) and the groups' own weights are no longer read. The
// concatenation is host memory, one copy per group in the process, kept while
// a device copy of it or a graph holding it lives (about 1.2 GB for a 1.5B
// Llama's q/k/v and gate/up): every size and session of a program shares it,
// and shares one device copy.
graph::Graph merge_sibling_linears(const graph::Graph& region);

}  // namespace gpuu::kernels
