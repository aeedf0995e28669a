"""The model-family suite (model_families.py) exported and run as a user would, against PyTorch eager.

Each family under vgf_first, vulkan_first and auto:
  - f32: gpuu's output against eager at relative 1e-4 (atol 1e-4 for outputs of order 1);
  - f16: the half-precision model against the f32 eager reference, at an f16 tolerance;
  - vgf_first puts no node on the CPU fallback.
Each family is traced once per precision and that graph partitioned and written under every policy, as
gpuu.export does (tracing is most of an export's time). ctest runs the f16 tests and the others side by side.
"""

import numpy as np
import pytest
import torch

import gpuu
from gpuu.frontend import from_torch

from conftest import export_traced
from model_families import FAMILIES, family_input, make_family

POLICIES = ("vgf_first", "vulkan_first", "auto")
F32_TOL = 1e-4
# f16 has an 11-bit mantissa; errors compound over a few layers of small models.
F16_RTOL, F16_ATOL = 3e-2, 3e-2


@pytest.fixture(scope="module")
def traced_families():
    """traced(name, half, batch) -> (gpuu graph, input, f32 eager output): each traced on first use only."""
    graphs = {}

    def traced(name, half, batch):
        key = (name, half, batch)
        if key not in graphs:
            model, x = make_family(name), family_input(name, batch=batch)
            with torch.no_grad():
                want = model(x).numpy()
            if half:
                model, x = model.half(), (x if not x.is_floating_point() else x.half())
            graphs[key] = (from_torch(model, (x,)), x, want)
        return graphs[key]

    yield traced
    for graph, _, _ in graphs.values():
        graph.close()


def _export(graph, prefer, path):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="model_families")
    return export_traced(graph, spec, path)


def _cpu_nodes(report):
    """The number of nodes the partition left on the CPU fallback."""
    return report["summary"]["backends"]["CpuFallback"]["nodes"]


def _run(path, x):
    with gpuu.load(path) as program:
        return program.run([x.numpy()])


@pytest.mark.parametrize("prefer", POLICIES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_f32_matches_eager(name, prefer, tmp_path, traced_families):
    graph, x, want = traced_families(name, False, 2)
    report = _export(graph, prefer, tmp_path / f"{name}.gpuu")
    if prefer == "vgf_first":
        assert _cpu_nodes(report) == 0, (name, report["regions"])
    (got,) = _run(tmp_path / f"{name}.gpuu", x)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=F32_TOL * scale, err_msg=f"{name} under {prefer}")


@pytest.mark.parametrize("prefer", POLICIES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_f16_matches_f32_reference(name, prefer, tmp_path, traced_families):
    graph, half_input, want = traced_families(name, True, 1)
    report = _export(graph, prefer, tmp_path / f"{name}_f16.gpuu")
    if prefer == "vgf_first":
        assert _cpu_nodes(report) == 0, (name, report["regions"])
    (got,) = _run(tmp_path / f"{name}_f16.gpuu", half_input)
    assert got.dtype == np.float16 and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=F16_RTOL, atol=F16_ATOL * scale,
                               err_msg=f"{name} (f16) under {prefer}")


@pytest.mark.parametrize("name", ["resnet", "gpt"])
def test_family_at_batch_8(name, tmp_path, traced_families):
    graph, x, want = traced_families(name, False, 8)
    _export(graph, "vgf_first", tmp_path / f"{name}_b8.gpuu")
    (got,) = _run(tmp_path / f"{name}_b8.gpuu", x)
    np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=F32_TOL * max(1.0, float(np.abs(want).max())))
