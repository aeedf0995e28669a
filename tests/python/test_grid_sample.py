"""F.grid_sample (aten.grid_sampler_2d) as gpuu's grid_sample op, against PyTorch eager.

Every mode x padding x align_corners on the Vulkan kernel and the CPU fallback (odd, non-square sizes,
batch 2, grid points up to 1.6 outside [-1, 1] and on the edges); f16 on Vulkan; the partitioner placing
it when VGF (TOSA has no grid sample) leads; a small RAFT-style warp; refusals that name the problem.

Tolerances: both backends compute PyTorch's f32 coordinates and weights, summing in another order (f32 on
the GPU, double on the CPU): 1e-5. Nearest reads one pixel: exact. f16 against torch's f32 result on the
same f16 values: 4e-3 (a few f16 roundings of values of order 2).
"""

import itertools

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu
from gpuu.frontend import from_torch

from conftest import eager, export_traced

MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]
TOKEN = "grid_sample"


class Sample(nn.Module):
    def __init__(self, mode, padding, align_corners):
        super().__init__()
        self.mode, self.padding, self.align_corners = mode, padding, align_corners

    def forward(self, x, grid):
        return F.grid_sample(x, grid, mode=self.mode, padding_mode=self.padding, align_corners=self.align_corners)


def sample_inputs(dtype=torch.float32):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 5, 7)
    grid = torch.rand(2, 4, 6, 2) * 3.2 - 1.6
    grid[0, 0, :3] = torch.tensor([[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0]])  # the corners and the centre
    return x.to(dtype), grid.to(dtype)


def spec(prefer):
    return gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token=TOKEN)


def run(path, inputs):
    with gpuu.load(path) as program:
        return program.run([x.numpy() for x in inputs])


def op_backends(report):
    return [n["backend"] for n in report["nodes"] if n["op"] == "grid_sample"]


@pytest.mark.parametrize("mode,padding,align_corners", list(itertools.product(MODES, PADDINGS, [False, True])))
def test_every_mode_padding_and_alignment_matches_torch_on_vulkan_and_the_cpu(mode, padding, align_corners,
                                                                              tmp_path):
    model = Sample(mode, padding, align_corners)
    inputs = sample_inputs()
    (want,) = eager(model, *inputs)
    tol = 0.0 if mode == "nearest" else 1e-5
    with from_torch(model, inputs) as graph:
        for backend, deny in (("VulkanBackend", ()), ("CpuFallback", [("VulkanBackend", "grid_sample")])):
            path = tmp_path / f"{backend}.gpuu"
            report = export_traced(graph, spec("vulkan_first"), path, deny=deny)
            assert op_backends(report) == [backend], report["nodes"]
            (got,) = run(path, inputs)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=backend)


@pytest.mark.parametrize("mode", MODES)
def test_f16_on_vulkan_is_within_a_few_f16_roundings_of_torch(mode, tmp_path):
    model = Sample(mode, "reflection", False)
    inputs = sample_inputs(torch.float16)
    with torch.no_grad():
        want = model(*(t.float() for t in inputs)).numpy()  # f32 math on the same f16 values
    report = gpuu.export(model, inputs, spec("vulkan_first"), tmp_path / "f16.gpuu")
    assert op_backends(report) == ["VulkanBackend"], report["nodes"]
    (got,) = run(tmp_path / "f16.gpuu", inputs)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=4e-3, atol=4e-3)


class Warp(nn.Module):
    """RAFT's step in small: a flow field from two convs, a feature map warped by it (bilinear, border), more
    convs on the result. The base grid is a constant; the flow is in pixels, normalized to [-1, 1]."""

    def __init__(self, channels=8, size=(12, 16)):
        super().__init__()
        self.features = nn.Conv2d(3, channels, 3, padding=1)
        self.flow = nn.Sequential(nn.Conv2d(channels, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 3, padding=1))
        self.head = nn.Sequential(nn.Conv2d(2 * channels, channels, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(channels, 2, 1))
        h, w = size
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys], dim=-1).unsqueeze(0))
        self.register_buffer("pixel", torch.tensor([2.0 / (w - 1), 2.0 / (h - 1)]))

    def forward(self, image):
        f = self.features(image)
        flow = self.flow(f) * 3.0
        grid = self.base + flow.permute(0, 2, 3, 1) * self.pixel
        warped = F.grid_sample(f, grid, mode="bilinear", padding_mode="border", align_corners=True)
        return self.head(torch.cat([f, warped], dim=1)) + flow


@pytest.fixture(scope="module")
def warp_graph():
    torch.manual_seed(1)
    model = Warp().eval()
    image = torch.randn(2, 3, 12, 16)
    with from_torch(model, (image,)) as graph:
        yield model, image, graph


@pytest.mark.parametrize("prefer", ["vulkan_first", "vgf_first"])
def test_raft_style_warp_exports_and_matches_torch(warp_graph, prefer, tmp_path, vgf_runtime):
    model, image, graph = warp_graph
    report = export_traced(graph, spec(prefer), tmp_path / f"{prefer}.gpuu")
    assert op_backends(report) == ["VulkanBackend"], report["nodes"]
    backends = {n["backend"] for n in report["nodes"]}
    if prefer == "vgf_first":
        # TOSA has no grid sample: VGF takes the convolutions around it, Vulkan the sample.
        assert [r["backend"] for r in report["regions"]] == ["VgfBackend", "VulkanBackend", "VgfBackend"], \
            report["regions"]
        why = next(n for n in report["nodes"] if n["op"] == "grid_sample")["why_not"]["VgfBackend"]
        assert why.startswith("unsupported:") and "grid_sample" in why, why
    else:
        assert backends == {"VulkanBackend"}, report["nodes"]
    (got,) = run(tmp_path / f"{prefer}.gpuu", (image,))
    (want,) = eager(model, image)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_bad_grids_and_modes_are_refused_naming_the_problem():
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [1, 3, 4, 4])
        cases = {
            "last_dim_3": (g.add_input("grid3", np.float32, [1, 2, 2, 3]), {},
                           "input 1 (grid 'grid3') [1,2,2,3] must be [N, Ho, Wo, 2] (an x and a y per point), but its "
                           "last dim is 3"),
            "rank_3": (g.add_input("flat", np.float32, [1, 4, 2]), {}, "input 1 (grid 'flat') must have rank 4"),
            "batch": (g.add_input("batch2", np.float32, [2, 2, 2, 2]), {},
                      "input 1 (grid 'batch2') [2,2,2,2] has batch 2 but input 0 (x 'x') [1,3,4,4] has batch 1"),
            "mode": (g.add_input("grid", np.float32, [1, 2, 2, 2]), {"mode": "area"},
                     "attribute 'mode' must be \"bilinear\", \"nearest\" or \"bicubic\", got \"area\""),
        }
        cases["padding"] = (cases["mode"][0], {"padding_mode": "wrap"},
                            "attribute 'padding_mode' must be \"zeros\", \"border\" or \"reflection\", got \"wrap\"")
        for name, (grid, attrs, message) in cases.items():
            with pytest.raises(gpuu.InvalidArgumentError) as e:
                g.add_node("grid_sample", f"sample_{name}", [x, grid], attrs)
            assert f"node 'sample_{name}' (grid_sample): {message}" in str(e.value), name
        # The graph is still usable: a good node goes in.
        (y,) = g.add_node("grid_sample", "sample_ok", [x, cases["mode"][0]])
        assert g.value_shape(y) == (1, 3, 2, 2)


def test_grid_sampler_2d_reaches_the_lowering_whole():
    # Core ATen keeps grid_sampler_2d (only PyTorch's full table breaks it into gathers): one node, no gathers.
    with from_torch(Sample("bilinear", "zeros", False), sample_inputs()) as traced:
        assert [n.op for n in traced.graph.nodes()] == ["grid_sample"]


def test_an_exported_program_s_grid_sampler_maps_too(tmp_path):
    # torch.export keeps aten.grid_sampler; Core ATen's decomposition makes it grid_sampler_2d.
    model = Sample("bicubic", "reflection", False)
    inputs = sample_inputs()
    program = torch.export.export(model, inputs)
    report = gpuu.export(program, inputs, spec("vgf_first"), tmp_path / "ep.gpuu")
    assert op_backends(report) == ["VulkanBackend"], report["nodes"]
    (got,) = run(tmp_path / "ep.gpuu", inputs)
    (want,) = eager(model, *inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
