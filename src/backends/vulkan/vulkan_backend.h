// VulkanBackend ("VulkanBackend"): regions lowered to gpuu's compute kernels.
// Its processed blob is the region as a SubGraph (program/subgraph.h).
#pragma once

#include "backends/backend.h"
#include "backends/vulkan/vulkan_capability.h"

namespace gpuu::vulkan {

class VulkanBackend final : public backends::Backend {
 public:
  const char* id() const override { return "VulkanBackend"; }
  const char* log_name() const override { return "Vulkan"; }
  uint32_t version() const override { return 1; }
  bool is_available() const override;

  // The Backend overrides, declared as in vgf_backend.h.
  Result<std::unique_ptr<backends::DelegateHandle>> init(backends::BackendInitContext& context, const Blob& processed,
                                                         const std::vector<CompileSpecEntry>& compile_specs) override;
  Status execute(backends::DelegateHandle& handle, const backends::ExecuteArgs& args) override;
  Result<backends::DelegateMemory> plan_memory(const Blob& processed,
                                               const std::vector<CompileSpecEntry>& compile_specs,
                                               const program::ConstantLookup& constants) const override;

  // gemm_kernel: auto (the selector's pick) or coopmat2 (f16 matmul and
  // linear on workgroup-scope matrices, VK_NV_cooperative_matrix2, wherever
  // the device and the GEMM allow).
  const std::vector<backends::OptionDecl>& declared_options() const override;

  std::string check(const graph::Graph& graph, const graph::Node& node) const override;
  const partition::BackendCapability& capability() const override { return vulkan_capability(); }
  Result<std::vector<uint8_t>> preprocess(const graph::Graph& graph, const partition::Region& region,
                                          const std::vector<CompileSpecEntry>& compile_specs) const override;
};

}  // namespace gpuu::vulkan
