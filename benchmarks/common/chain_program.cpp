// The shared benchmark chain and its programs.
#include "chain_program.h"

#include <vector>

#include "backends/vulkan/vulkan_backend.h"
#include "graph/builder.h"
#include "program/program_loader.h"
#include "program/program_writer.h"

namespace gpuu::bench {

graph::Graph make_chain(int ops, int64_t elements) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", graph::DType::kF32, {elements}).value();
  std::vector<float> half(static_cast<size_t>(elements), 0.5f);
  graph::ValueId c = graph::add_graph_constant(g, "c", graph::DType::kF32, {elements},
                                               Blob::copy_of(half.data(), half.size() * 4)).value();
  graph::ValueId v = x;
  const char* cycle[] = {"sin", "add", "cos", "mul"};
  for (int i = 0; i < ops; ++i) {
    std::vector<graph::ValueId> in = (i % 2) ? std::vector<graph::ValueId>{v, c} : std::vector<graph::ValueId>{v};
    v = graph::add_op(g, cycle[i % 4], "op" + std::to_string(i), in, {}).value()[0];
  }
  g.mark_output(v);
  return g;
}

Result<std::shared_ptr<const program::Program>> vulkan_program(const graph::Graph& g, int delegates, SyncMode sync,
                                                               const std::string& token) {
  partition::PartitionResult p;
  int n = static_cast<int>(g.nodes().size());
  p.region_of_node.resize(static_cast<size_t>(n));
  for (int d = 0; d < delegates; ++d) {
    partition::Region r{partition::kVulkanId, {}};
    for (int i = d * n / delegates; i < (d + 1) * n / delegates; ++i) {
      r.nodes.push_back(i);
      p.region_of_node[static_cast<size_t>(i)] = d;
    }
    p.regions.push_back(r);
  }
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.sync_mode = sync;
  spec.present = true;
  program::Preprocessors pre;
  pre[partition::kVulkanId] = [](const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
                                 const std::vector<CompileSpecEntry>& specs) -> Result<program::PreprocessedRegion> {
    GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, vulkan::VulkanBackend().preprocess(graph, region, specs));
    return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
  };
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, program::build_program(g, p, spec, pre));
  return program::load_program_bytes(bytes.data(), bytes.size());
}

}  // namespace gpuu::bench
