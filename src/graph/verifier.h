// The graph verifier: the structural and semantic rules every graph handed to
// the partitioner, the program writer or a backend must satisfy.
#pragma once

#include "base/status.h"
#include "graph/graph.h"

namespace gpuu::graph {

// Checks, in this order, and fails (kInvalidArgument) at the first broken rule
// with a message naming the value, constant, node, input or attribute:
//  - values: non-empty unique names, known dtypes, shapes within the limits;
//  - constants: each points at a value that points back, same name, data of
//    numel * dtype_size bytes;
//  - states: each value points back, reads no constant and has no producer;
//    initial data of numel * dtype_size bytes; an update set, neither a
//    constant nor a state's value, of the state's dtype and shape;
//  - graph inputs: valid, distinct, neither constants, states nor produced by a node;
//  - nodes: non-empty unique names; every value produced once (by exactly one
//    node, or as a graph input, or as a constant) and Value::producer agrees;
//    nodes in topological order (a node reads only graph inputs, constants and
//    outputs of earlier nodes); infer() accepts the node and gives exactly the
//    stored output count, dtypes and shapes;
//  - outputs: at least one (unless the graph has states), each a valid value
//    id, no repeats, none a state's value.
Status verify(const Graph& graph);

}  // namespace gpuu::graph
