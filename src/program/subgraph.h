// SubGraph: one partition region as a standalone flatbuffer (identifier
// "GPSG"), the default processed blob of a delegate. Constants are referenced
// by program tensor name, so a weight shared by two delegates is stored once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "graph/graph.h"
#include "partition/partition_result.h"

namespace gpuu::program {

class Program;

// What a region exchanges with the rest of the graph.
struct RegionIo {
  // Values the region reads but does not produce (graph inputs and constants
  // included), in order of first read.
  std::vector<graph::ValueId> inputs;
  // Values the region produces that a live node outside it reads or that are
  // graph outputs or state updates, in order of production.
  std::vector<graph::ValueId> outputs;
};

// Checks that the region's node and value ids are in range, that its nodes
// come in an order where each reads only what is produced before it, and that
// it has an output (a region without one holds only dead nodes: the error
// names them).
Result<RegionIo> region_io(const graph::Graph& graph, const partition::Region& region);

// A constant the program stores as a backend reads it rather than as the
// graph has it: program constant `stored` holds the constant's elements
// viewed as `view` (row-major, same count) and permuted by `perm` (out dim i
// = view dim perm[i]), of the constant's dtype.
struct StoredRearranged {
  std::string stored;
  graph::Shape view;
  std::vector<int64_t> perm;
};

// The region as SubGraph bytes: tensors it touches, its nodes with attributes,
// inputs and outputs as region_io() says. Deterministic. A constant named in
// `rearranged` is written as the program constant holding it rearranged.
Result<std::vector<uint8_t>> serialize_region(const graph::Graph& graph, const partition::Region& region,
                                              const std::map<std::string, StoredRearranged>& rearranged = {});

// Resolves a constant the SubGraph names: bytes of the program tensor `name`,
// which must have `dtype` and `shape`.
using ConstantLookup =
    std::function<Result<Blob>(const std::string& name, graph::DType dtype, const graph::Shape& shape)>;

// A lookup into `program`'s constants (Blob views into its file).
ConstantLookup program_constant_lookup(std::shared_ptr<const Program> program);

// Verifies and decodes SubGraph bytes into a graph. Inputs come first, in the
// SubGraph's input order; with `lookup`, constant inputs become graph
// constants holding the program's bytes (a constant the program stores
// rearranged: those bytes permuted back, a copy), without it they stay graph inputs
// (graph.inputs() then lines up with the delegate's inputs one to one).
// Errors (kInvalidFormat) name the field and byte offset.
Result<graph::Graph> parse_subgraph(const uint8_t* data, size_t size, const ConstantLookup& lookup = nullptr);

}  // namespace gpuu::program
