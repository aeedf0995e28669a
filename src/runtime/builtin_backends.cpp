// Registration of the built-in backends, on first use.
#include "runtime/builtin_backends.h"

#include <mutex>

#include "backends/vgf/vgf_backend.h"
#include "backends/vulkan/vulkan_backend.h"

namespace gpuu::runtime {

program::Preprocessors builtin_preprocessors() {
  auto from = [](const char* id) -> program::PreprocessFn {
    return [id](const graph::Graph& graph, const partition::Region& region,
                const program::RegionIo&,
                const std::vector<CompileSpecEntry>& specs) -> Result<program::PreprocessedRegion> {
      GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, backend_registry().find(id)->preprocess(graph, region, specs));
      return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
    };
  };
  return program::Preprocessors{from("VgfBackend"), from("VulkanBackend")};
}

void narrow_to_builtin_backends(partition::Capabilities& capabilities) {
  for (partition::Backend b : {partition::Backend::kVgf, partition::Backend::kVulkan}) {
    const backends::Backend* backend = backend_registry().find(partition::backend_id(b));
    capabilities.narrow(b, [backend](const graph::Graph& g, const graph::Node& n) { return backend->check(g, n); });
  }
}

backends::BackendRegistry& backend_registry() {
  static backends::BackendRegistry* registry = [] {
    auto* r = new backends::BackendRegistry();  // never destroyed: delegates may outlive static teardown
    // A fresh registry cannot hold these ids yet: registration cannot fail.
    Status vulkan = r->register_backend(std::make_unique<vulkan::VulkanBackend>());
    Status vgf = r->register_backend(std::make_unique<vgf::VgfBackend>());
    (void)vulkan;
    (void)vgf;
    return r;
  }();
  return *registry;
}

}  // namespace gpuu::runtime
