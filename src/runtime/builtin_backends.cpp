// Registration of the built-in backends, on first use, and the CPU fallback.
#include "runtime/builtin_backends.h"

#include <cstdlib>
#include <mutex>

#include "backends/cpu/cpu_backend.h"
#include "backends/vgf/vgf_backend.h"
#include "backends/vulkan/vulkan_backend.h"

namespace gpuu::runtime {

program::Preprocessors builtin_preprocessors() {
  program::Preprocessors out;
  for (const std::string& id : backend_registry().ids()) {
    const backends::Backend* backend = backend_registry().find(id);
    out[id] = [backend](const graph::Graph& graph, const partition::Region& region, const program::RegionIo&,
                        const std::vector<CompileSpecEntry>& specs) -> Result<program::PreprocessedRegion> {
      GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> blob, backend->preprocess(graph, region, specs));
      return program::PreprocessedRegion{Blob::take(std::move(blob)), {}};
    };
  }
  return out;
}

program::Preprocessors builtin_program_preprocessors() {
  program::Preprocessors out;
  for (const std::string& id : backend_registry().ids()) {
    const backends::Backend* backend = backend_registry().find(id);
    out[id] = [backend](const graph::Graph& graph, const partition::Region& region, const program::RegionIo& io,
                        const std::vector<CompileSpecEntry>& specs) {
      return backend->preprocess_for_program(graph, region, io, specs);
    };
  }
  return out;
}

partition::Capabilities registered_capabilities() {
  std::vector<const partition::BackendCapability*> list;
  std::vector<const backends::Backend*> registered;
  for (const std::string& id : backend_registry().ids()) registered.push_back(backend_registry().find(id));
  for (const backends::Backend* b : registered) list.push_back(&b->capability());
  partition::Capabilities capabilities(std::move(list));
  for (const backends::Backend* b : registered) {
    capabilities.narrow(b->id(), [b](const graph::Graph& g, const graph::Node& n) { return b->check(g, n); });
  }
  return capabilities;
}

namespace {

// Built-ins first, then the plugins the environment names: both happen once,
// on first use of either.
struct Backends {
  backends::BackendRegistry registry;
  plugins::PluginLoader loader{registry};
  Backends() {
    // A fresh registry cannot hold these ids yet: registration cannot fail.
    // A new built-in backend is one more line here (and its folder).
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

const backends::HostExecutor& host_executor() { return cpu::cpu_host_executor(); }

}  // namespace gpuu::runtime
