// The backends gpuu ships, registered once in the process-wide registry.
#pragma once

#include "backends/backend.h"
#include "partition/capabilities.h"
#include "plugins/plugin_loader.h"
#include "program/program_writer.h"

namespace gpuu::runtime {

// The registry with VulkanBackend (and every other built-in backend) in it,
// then the plugins GPUU_BACKEND_PATH names (read once, on first use).
backends::BackendRegistry& backend_registry();

// The loader of plugins into backend_registry() (gpuu_backends_load).
plugins::PluginLoader& plugin_loader();

// Each GPU backend's own preprocess (VGF: a VGF file; Vulkan: a SubGraph),
// for the program writer.
program::Preprocessors builtin_preprocessors();

// Narrows the partitioner's tables to what the built-in backends' own checks
// accept, so a region is never given to a backend that would refuse it.
void narrow_to_builtin_backends(partition::Capabilities& capabilities);

}  // namespace gpuu::runtime
