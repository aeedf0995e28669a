"""Dead nodes (results that reach no graph output) join no region, under every policy.

A slice assignment into a clone left, after functionalization, a slice of the original that nothing
read; it became a region of its own, and export failed with "the graph has no outputs". Two changes
meet here: the frontend no longer lowers the overwritten operand of a copy at all (so these models make
no dead node), and the partitioner leaves any dead node out of every region (graphs built with the graph
builder below). Both export under every policy and match PyTorch (numpy for the built graphs): copies
and products by 2 exactly, sin and cos within 1e-6.
"""

import numpy as np
import pytest
import torch
import torch.nn as nn

import gpuu
from gpuu.frontend import from_torch

from conftest import eager, export_traced

POLICIES = ["vgf_first", "vulkan_first", "auto"]
DEAD_WHY = "dead: its results reach no graph output, so no backend runs it"


class SliceAssign(nn.Module):
    """The users' case: a slice of a clone assigned, then the clone used."""

    def forward(self, c, k):
        c = c.clone()
        c[:, :, 5:6] = k
        return c * 2


class TwoSliceAssigns(nn.Module):
    """Two assignments into one clone, one of them along another axis: two dead slices."""

    def forward(self, c, k):
        c = c.clone()
        c[:, :, 5:6] = k
        c[:, 1:2, :, 0:1] = k[:, :1, :, :1] * 3
        return c * 2


class AssignBetweenRegions(nn.Module):
    """sin (VGF) -> an i64-indexed select (Vulkan: TOSA has no i64) -> slice assignment -> cos (VGF): the
    dead slice reads the Vulkan region's result, where VGF's second region would have started."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.tensor([7, 0, 6, 1, 5, 2, 4, 3]))

    def forward(self, c, k):
        h = torch.sin(c).index_select(2, self.rows)
        h = h.clone()
        h[:, :, 5:6] = k
        return torch.cos(h)


MODELS = {"slice_assign": SliceAssign, "two_slice_assigns": TwoSliceAssigns,
          "assign_between_regions": AssignBetweenRegions}


def inputs():
    torch.manual_seed(0)
    return torch.randn(1, 4, 8, 3), torch.randn(1, 4, 1, 3)


@pytest.fixture(scope="module", params=sorted(MODELS))
def traced(request):
    model = MODELS[request.param]().eval()
    example = inputs()
    graph = from_torch(model, example)
    yield request.param, model, example, graph
    graph.close()


def dead_node_names(report):
    return [n["name"] for n in report["nodes"] if n["region"] == -1]


@pytest.mark.parametrize("prefer", POLICIES)
def test_model_with_a_slice_assignment_exports_and_matches_torch(traced, prefer, tmp_path, vgf_runtime):
    name, model, example, graph = traced
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    report = export_traced(graph, spec, tmp_path / f"{name}.gpuu")
    # The overwritten slice is not lowered, so no node is dead and every node runs somewhere.
    assert dead_node_names(report) == [], report["nodes"]
    assert report["summary"]["dead_nodes"] == 0
    with gpuu.load(tmp_path / f"{name}.gpuu") as program:
        got = program.run([x.numpy() for x in example])
    (want,) = eager(model, *example)
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6)


def test_the_regions_around_a_slice_assignment_keep_their_places_under_vgf_first():
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    with from_torch(AssignBetweenRegions().eval(), inputs()) as graph:
        result = gpuu.UnifiedGpuPartitioner(spec).partition(graph)
    try:
        assert result.delegate_backends == ["VgfBackend", "VulkanBackend", "VgfBackend"], result.region_strings()
        assert dead_node_names(result.explain) == []
    finally:
        result.partition.close()


def built_graph():
    """x [2, 6]: y = relu(x) * 2, with a dead chain exp -> neg and a dead add of it and a live value."""
    g = gpuu.Graph()
    x = g.add_input("x", np.float32, [2, 6])
    two = g.add_constant("two", np.array([2.0], dtype=np.float32))
    r = g.add_node("relu", "relu_0", [x])[0]
    e = g.add_node("exp", "dead_exp", [r])[0]
    n = g.add_node("neg", "dead_neg", [e])[0]
    g.add_node("add", "dead_add", [n, r])
    g.mark_output(g.add_node("mul", "mul_0", [r, two])[0])
    return g


def test_a_dead_node_has_no_backend_and_says_why():
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    with built_graph() as g:
        result = gpuu.UnifiedGpuPartitioner(spec).partition(g)
    try:
        for node in result.explain["nodes"]:
            if node["region"] == -1:
                assert node["backend"] is None
                assert set(node["why_not"].values()) == {DEAD_WHY}
        assert result.explain["summary"]["dead_nodes"] == 3
        with pytest.raises(gpuu.InvalidArgumentError, match="is dead \\(its results reach no graph output\\)"):
            result.node_backend("dead_exp")
    finally:
        result.partition.close()


@pytest.mark.parametrize("prefer", POLICIES)
def test_graph_builder_dead_chain_exports_under_every_policy(prefer, tmp_path, vgf_runtime):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)
    with built_graph() as g:
        spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
        report = export_traced(g, spec, tmp_path / "built.gpuu")
    assert sorted(dead_node_names(report)) == ["dead_add", "dead_exp", "dead_neg"]
    assert [r["node_count"] for r in report["regions"]] == [2]
    with gpuu.load(tmp_path / "built.gpuu") as program:
        (got,) = program.run([x])
    np.testing.assert_array_equal(got, np.maximum(x, 0) * 2)
