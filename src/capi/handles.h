// The structs behind the opaque C handles that several capi files share.
// Only src/capi includes this.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/builder.h"
#include "graph/graph.h"
#include "partition/partition_result.h"
#include "program/program.h"

// A graph under construction through the graph-builder API.
struct gpuu_graph {
  gpuu::graph::Graph graph;
  // Names taken in `graph`, kept current by the capi_graph.cpp mutators; code
  // that fills `graph` directly need not touch it (it catches up, see GraphNames).
  gpuu::graph::GraphNames names;
  // gpuu_graph_add_dim_recording's recordings, until gpuu_graph_fit_dims.
  std::vector<std::pair<std::vector<int64_t>, gpuu::graph::Graph>> dim_recordings;
};

// The outcome of partitioning one graph with one set of options.
struct gpuu_partition {
  gpuu::partition::PartitionResult result;
  gpuu::SharedGpuCompileSpec shared_spec;  // the policy it ran with; baked into programs written from it
  std::string explain_json;
};

// A loaded program (capi_session.cpp loads them, capi_vgf.cpp makes them from VGF files).
struct gpuu_program {
  std::shared_ptr<const gpuu::program::Program> program;
};
