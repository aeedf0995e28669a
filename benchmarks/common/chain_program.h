// What the runtime benchmarks share: the elementwise chain they time and a
// program that splits a graph evenly into Vulkan delegates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"
#include "program/program.h"

namespace gpuu::bench {

// x -> [sin, add c, cos, mul c] repeated `ops` times over `elements` floats:
// bounded values, one dispatch per op unless fused.
graph::Graph make_chain(int ops, int64_t elements);

// `g`'s nodes split evenly, in order, into `delegates` Vulkan regions, written
// and loaded as a program with context token `token` and sync mode `sync`.
Result<std::shared_ptr<const program::Program>> vulkan_program(const graph::Graph& g, int delegates, SyncMode sync,
                                                               const std::string& token);

}  // namespace gpuu::bench
