// VgfBackend ("VgfBackend"): regions as TOSA graphs in VGF files. Its
// processed blob is a VGF file that also stands on its own (Arm's tools and
// runtimes read it). At init the graph runs natively through
// VK_ARM_data_graph where a device offers it, otherwise on gpuu's built-in
// TOSA executor: the graph is parsed back, elementwise chains are fused,
// intermediates get a memory plan and the command buffer is recorded once.
#pragma once

#include "backends/backend.h"
#include "backends/vgf/vgf_capability.h"
#include "backends/vgf/vgf_options.h"

namespace gpuu::vgf {

class VgfBackend final : public backends::Backend {
 public:
  const char* id() const override { return partition::kVgfId; }
  const char* log_name() const override { return "VGF"; }
  uint32_t version() const override { return 1; }
  bool is_available() const override;
  const std::vector<backends::OptionDecl>& declared_options() const override { return vgf_options(); }

  Result<std::unique_ptr<backends::DelegateHandle>> init(backends::BackendInitContext& context, const Blob& processed,
                                                         const std::vector<CompileSpecEntry>& compile_specs) override;
  Status execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) override;
  Result<backends::DelegateMemory> plan_memory(const Blob& processed,
                                               const std::vector<CompileSpecEntry>& compile_specs,
                                               const program::ConstantLookup& constants) const override;

  std::string check(const graph::Graph& graph, const graph::Node& node) const override;
  const partition::BackendCapability& capability() const override { return vgf_capability(); }
  Result<std::vector<uint8_t>> preprocess(const graph::Graph& graph, const partition::Region& region,
                                          const std::vector<CompileSpecEntry>& compile_specs) const override;
  // The VGF file with each constant record of 256 bytes or more left empty
  // and named in the compile spec vgf_constant_refs: the region's own
  // constant where the record holds exactly its bytes, else a program
  // constant added for it (a weight rearranged for TOSA). init fills them
  // back from the program (no copy); gpuu-inspect --extract-vgf too.
  Result<program::PreprocessedRegion> preprocess_for_program(
      const graph::Graph& graph, const partition::Region& region, const program::RegionIo& io,
      const std::vector<CompileSpecEntry>& compile_specs) const override;
};

// The entry points the native VK_ARM_data_graph path needs; when a device
// claims the extension, every one must resolve or init fails naming it.
const std::vector<const char*>& data_graph_entry_points();

}  // namespace gpuu::vgf
