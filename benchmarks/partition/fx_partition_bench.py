#!/usr/bin/python3
"""Times torch.fx's CapabilityBasedPartitioner on a graph written by
gpuu_partition_bench --write-graph, so both partitioners see the same DAG and
the same supported-op set (the nodes VGF supports). Prints one JSON line.

Run with Debian's interpreter (torch 1.13): /usr/bin/python3 fx_partition_bench.py GRAPH [--runs R] [--warmup W]
The timed step is what a user of the fx partitioner pays: constructing
CapabilityBasedPartitioner (it builds its dependency map there) and calling
propose_partitions().
"""
import argparse
import json
import resource
import statistics
import sys
import time

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase


# One plain function per op name: fx only needs callable targets with
# qualified names; the graph is never executed.
def _make_op(name):
    def op(*args):
        raise RuntimeError("benchmark graphs are not executed")

    op.__name__ = name
    op.__qualname__ = name
    return op


_OPS = {}


def op_target(name):
    if name not in _OPS:
        _OPS[name] = _make_op(name)
        globals()[name] = _OPS[name]  # so _get_qualified_name resolves it
    return _OPS[name]


class VgfSupport(OperatorSupportBase):
    """Supported exactly where gpuu's VGF capability table said so."""

    def is_node_supported(self, submodules, node):
        return node.op == "call_function" and node.meta.get("vgf_supported", False)


def load_graph(path):
    with open(path) as f:
        header = f.readline().split()
        if header != ["gpuu-partition-bench-graph", "1"]:
            sys.exit("%s: not a gpuu-partition-bench-graph 1 file" % path)
        count = int(f.readline())
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        nodes = []
        for i in range(count):
            parts = f.readline().split()
            op, vgf, k = parts[0], parts[1] == "1", int(parts[2])
            args = tuple(x if int(p) < 0 else nodes[int(p)] for p in parts[3:3 + k])
            node = graph.call_function(op_target(op), args)
            node.meta["vgf_supported"] = vgf
            nodes.append(node)
        graph.output(nodes[-1])
    return graph, count


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("graph")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()

    graph, count = load_graph(args.graph)
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    edges = sum(len(n.all_input_nodes) for n in graph.nodes if n.op == "call_function")
    times = []
    partitions = 0
    for i in range(args.warmup + args.runs):
        start = time.perf_counter()
        partitioner = CapabilityBasedPartitioner(module, VgfSupport(), allows_single_node_partition=True)
        result = partitioner.propose_partitions()
        elapsed = (time.perf_counter() - start) * 1000.0
        partitions = len(result)
        del partitioner, result
        if i >= args.warmup:
            times.append(elapsed)
    print(json.dumps({
        "tool": "torch.fx CapabilityBasedPartitioner",
        "torch": torch.__version__,
        "nodes": count,
        "edges": edges,
        "partitions": partitions,
        "runs": args.runs,
        "warmup": args.warmup,
        "median_ms": round(statistics.median(times), 3),
        "min_ms": round(min(times), 3),
        "max_ms": round(max(times), 3),
        # The fx partitioner keeps every node's full ancestor set (O(n^2)).
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
    }))


if __name__ == "__main__":
    main()
