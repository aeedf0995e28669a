"""UnifiedGpuPartitioner on the traced RFC model.

Exact regions per policy, min_partition_size, retry, deny/pin, backend specs and the explain report.
"""

import pytest

import gpuu
from gpuu.frontend import from_torch

from conftest import UnifiedVgfVulkanModel, rfc_input

PREFIX = "transpose_0,avg_pool2d_0"
ISLAND = "index_select_0,gather_0,index_select_1"
SUFFIX = "sin_0,cos_0,reciprocal_0,mul_0,transpose_1"


@pytest.fixture(scope="module")
def rfc_graph():
    traced = from_torch(UnifiedVgfVulkanModel().eval(), (rfc_input(),))
    yield traced
    traced.close()


def regions(graph, **spec_fields):
    options = {k: spec_fields.pop(k) for k in list(spec_fields) if k in (
        "retry_pruned", "deny", "pins", "op_costs", "op_cost", "backends", "gpu_crossing_cost", "cpu_crossing_cost",
        "gpu_region_cost")}
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), **spec_fields)
    result = gpuu.UnifiedGpuPartitioner(spec, **options).partition(graph)
    return result.region_strings(), result


def test_frontend_names_the_rfc_nodes_like_the_c_tests(rfc_graph):
    g = rfc_graph.graph
    assert [n.name for n in g.nodes()] == (PREFIX + "," + ISLAND + "," + SUFFIX).split(",")
    assert rfc_graph.input_names == ["x"]
    assert {g.value_name(v) for v in range(g.value_count) if g.value_is_constant(v)} == {
        "channel_index", "col_gather_index", "row_index"}


def test_vgf_first_gives_vgf_vulkan_vgf(rfc_graph):
    got, result = regions(rfc_graph, prefer="vgf_first", min_partition_size=1)
    assert got == [f"VgfBackend[{PREFIX}]", f"VulkanBackend[{ISLAND}]", f"VgfBackend[{SUFFIX}]"]
    assert result.delegate_backends == ["VgfBackend", "VulkanBackend", "VgfBackend"]
    assert result.node_backend("gather_0") == "VulkanBackend"


def test_vulkan_first_takes_everything_in_one_region(rfc_graph):
    got, result = regions(rfc_graph, prefer="vulkan_first", min_partition_size=1)
    assert got == [f"VulkanBackend[{PREFIX},{ISLAND},{SUFFIX}]"]
    why = next(n for n in result.explain["nodes"] if n["name"] == "sin_0")["why_not"]
    assert why["VgfBackend"] == "taken first by VulkanBackend (vulkan_first)"


def test_auto_keeps_the_small_model_on_vulkan_and_reports_its_candidates(rfc_graph):
    got, result = regions(rfc_graph, prefer="auto", min_partition_size=1)
    assert got == [f"VulkanBackend[{PREFIX},{ISLAND},{SUFFIX}]"]
    report = result.explain
    assert report["options"]["prefer"] == "auto"
    assert report["auto"]["chosen"] == "vulkan_first"


def test_auto_splits_when_gpu_hand_offs_are_cheap(rfc_graph):
    got, _ = regions(rfc_graph, prefer="auto", min_partition_size=1, gpu_crossing_cost=0.5, gpu_region_cost=0.0)
    assert got == [f"VgfBackend[{PREFIX}]", f"VulkanBackend[{ISLAND}]", f"VgfBackend[{SUFFIX}]"]


def test_default_min_partition_size_prunes_the_two_node_prefix_to_the_cpu(rfc_graph):
    got, result = regions(rfc_graph, prefer="vgf_first")
    assert got == [f"CpuFallback[{PREFIX}]", f"VulkanBackend[{ISLAND}]", f"VgfBackend[{SUFFIX}]"]
    why = next(n for n in result.explain["nodes"] if n["name"] == "avg_pool2d_0")["why_not"]
    assert why["VgfBackend"] == "pruned: region of 2 nodes < min_partition_size 3"


def test_min_partition_size_four_also_prunes_the_vulkan_island(rfc_graph):
    got, result = regions(rfc_graph, prefer="vgf_first", min_partition_size=4)
    assert got == [f"CpuFallback[{PREFIX},{ISLAND}]", f"VgfBackend[{SUFFIX}]"]
    gather = next(n for n in result.explain["nodes"] if n["name"] == "gather_0")["why_not"]
    assert gather["VulkanBackend"] == "pruned: region of 3 nodes < min_partition_size 4"
    assert gather["VgfBackend"] == "unsupported: TOSA 1.0 has no i64 tensors (input 1 of gather_0 is i64)"


def test_min_partition_size_six_leaves_only_nothing_on_the_gpu(rfc_graph):
    got, result = regions(rfc_graph, prefer="vgf_first", min_partition_size=6)
    assert got == [f"CpuFallback[{PREFIX},{ISLAND},{SUFFIX}]"]
    assert result.delegate_backends == []


def test_retry_moves_the_pruned_prefix_to_vulkan(rfc_graph):
    got, _ = regions(rfc_graph, prefer="vgf_first", min_partition_size=3, retry_pruned=True)
    assert got == [f"VulkanBackend[{PREFIX},{ISLAND}]", f"VgfBackend[{SUFFIX}]"]


def test_deny_and_pin_reach_the_engine(rfc_graph):
    got, result = regions(rfc_graph, prefer="vgf_first", min_partition_size=1, deny=[("vgf", "sin")],
                          pins={"gather_0": "cpu"})
    assert got == [f"VgfBackend[{PREFIX}]", "VulkanBackend[index_select_0]", "CpuFallback[gather_0]",
                   "VulkanBackend[index_select_1,sin_0]", "VgfBackend[cos_0,reciprocal_0,mul_0,transpose_1]"]
    gather = next(n for n in result.explain["nodes"] if n["name"] == "gather_0")["why_not"]
    assert gather["VulkanBackend"] == "pinned to CpuFallback by user"


def test_backend_specs_deny_through_the_compile_spec(rfc_graph):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(denied_ops=("transpose",)), prefer="vgf_first",
                                      min_partition_size=1, vulkan_compile_options={"denied_ops": ["gather"]})
    got = gpuu.UnifiedGpuPartitioner(spec).partition(rfc_graph).region_strings()
    assert got == ["VulkanBackend[transpose_0]", "VgfBackend[avg_pool2d_0]", "VulkanBackend[index_select_0]",
                   "CpuFallback[gather_0]", "VulkanBackend[index_select_1]",
                   "VgfBackend[sin_0,cos_0,reciprocal_0,mul_0]", "VulkanBackend[transpose_1]"]


def test_an_int_only_tosa_profile_keeps_float_ops_off_vgf(rfc_graph):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec("TOSA-1.0+INT"), prefer="vgf_first",
                                      min_partition_size=1)
    result = gpuu.UnifiedGpuPartitioner(spec).partition(rfc_graph)
    assert "VgfBackend" not in result.delegate_backends
    sin = next(n for n in result.explain["nodes"] if n["name"] == "sin_0")["why_not"]
    assert sin["VgfBackend"] == "denied by user"


def test_explain_report_is_a_dict_with_regions_and_every_node(rfc_graph):
    _, result = regions(rfc_graph, prefer="vgf_first", min_partition_size=1)
    report = result.explain
    assert report["options"]["prefer"] == "vgf_first"
    assert report["options"]["min_partition_size"] == 1
    assert [r["backend"] for r in report["regions"]] == ["VgfBackend", "VulkanBackend", "VgfBackend"]
    assert [r["node_count"] for r in report["regions"]] == [2, 3, 5]
    assert len(report["nodes"]) == 10


def test_partition_refusals_carry_the_c_message(rfc_graph):
    with pytest.raises(gpuu.InvalidArgumentError, match="no_such_node"):
        regions(rfc_graph, prefer="vgf_first", pins={"no_such_node": "vulkan"})
    with pytest.raises(gpuu.InvalidArgumentError, match="CPU|CpuFallback|cpu"):
        regions(rfc_graph, deny=[("cpu", "sin")])
    with pytest.raises(gpuu.InvalidArgumentError) as info:  # an i64 gather cannot be pinned to VGF
        regions(rfc_graph, pins={"gather_0": "vgf"})
    assert "gather_0" in str(info.value)


def test_partition_results_are_deterministic(rfc_graph):
    a, ra = regions(rfc_graph, prefer="auto", min_partition_size=2)
    b, rb = regions(rfc_graph, prefer="auto", min_partition_size=2)
    assert a == b and ra.partition.explain_json() == rb.partition.explain_json()


def test_an_explicit_backend_list_is_exactly_those_backends(rfc_graph):
    got, result = regions(rfc_graph, min_partition_size=1, backends=["VgfBackend"])
    assert got == [f"VgfBackend[{PREFIX}]", f"CpuFallback[{ISLAND}]", f"VgfBackend[{SUFFIX}]"]
    assert result.partition.explain()["strategy"] == "backends"
    got, _ = regions(rfc_graph, prefer="vgf_first", min_partition_size=1, backends=["vulkan", "vgf"])
    assert got == [f"VulkanBackend[{PREFIX},{ISLAND},{SUFFIX}]"]


def test_unknown_backend_ids_are_refused_by_name(rfc_graph):
    with pytest.raises(gpuu.InvalidArgumentError) as info:
        regions(rfc_graph, backends=["vulkan", "TpuBackend"], pins={"gather_0": "NpuBackend"})
    message = str(info.value)
    assert "'TpuBackend'" in message and "'NpuBackend'" in message
    assert "registered: VulkanBackend, VgfBackend, CpuFallback" in message
