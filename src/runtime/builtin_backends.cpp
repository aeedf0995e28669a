// Registration of the built-in backends, on first use.
#include "runtime/builtin_backends.h"

#include <cstdlib>
#include <mutex>

#include "backends/vgf/vgf_backend.h"
#include "backends/vulkan/vulkan_backend.h"

namespace gpuu::runtime {

program::Preprocessors builtin_preprocessors() {
  auto from = [](const char* id) -> program::PreprocessFn {
    return [id](const graph::Graph& graph, const partition::Region& region,
                const program::RegionIo&) -> Result<program::PreprocessedRegion> {
      GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, backend_registry().find(id)->preprocess(graph, region, {}));
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

namespace {

// Built-ins first, then the plugins the environment names: both happen once,
// on first use of either.
struct Backends {
  backends::BackendRegistry registry;
  plugins::PluginLoader loader{registry};
  Backends() {
    // A fresh registry cannot hold these ids yet: registration cannot fail.
    Status vulkan = registry.register_backend(std::make_unique<vulkan::VulkanBackend>());
    Status vgf = registry.register_backend(std::make_unique<vgf::VgfBackend>());
    (void)vulkan;
    (void)vgf;
    // Refusals are logged by the loader; the process carries on without them.
    if (const char* paths = std::getenv(plugins::kBackendPathEnv)) loader.load(paths);
  }
};

Backends& process_backends() {
  static Backends* b = new Backends();  // never destroyed: delegates may outlive static teardown
  return *b;
}

}  // namespace

backends::BackendRegistry& backend_registry() { return process_backends().registry; }

plugins::PluginLoader& plugin_loader() { return process_backends().loader; }

}  // namespace gpuu::runtime
