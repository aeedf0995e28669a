// The backends gpuu ships, registered once in the process-wide registry, and
// the CPU fallback's host executor: the one file that opens the backends'
// doors (backends/<X>/<X>_backend.h).
#pragma once

#include "backends/backend.h"
#include "backends/host_executor.h"
#include "partition/capabilities.h"
#include "plugins/plugin_loader.h"
#include "program/program_writer.h"

namespace gpuu::runtime {

// The registry with VulkanBackend (and every other built-in backend) in it,
// then the plugins GPUU_BACKEND_PATH names (read once, on first use).
backends::BackendRegistry& backend_registry();

// The loader of plugins into backend_registry() (gpuu_backends_load).
plugins::PluginLoader& plugin_loader();

// What runs the nodes no delegate took: the CPU fallback.
const backends::HostExecutor& host_executor();

// Each registered backend's own preprocess by id (VGF: a VGF file; Vulkan: a
// SubGraph, a plugin: its own bytes): complete blobs.
program::Preprocessors builtin_preprocessors();
// As above, for the program writer and for a program with dims made at run
// time at each size (program::specialize): each backend's
// preprocess_for_program, so that a blob may read its constants from the
// program file instead of holding a second copy (VGF).
program::Preprocessors builtin_program_preprocessors();

// The partitioner's view of every registered backend, in registration order:
// each one's capability(), narrowed to what its own check() accepts, so a
// region is never given to a backend that would refuse it.
partition::Capabilities registered_capabilities();

}  // namespace gpuu::runtime
