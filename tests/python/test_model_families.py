"""The model-family suite (model_families.py) exported and run as a user would, against PyTorch eager.

Each family under vgf_first, vulkan_first and auto:
  - f32: gpuu's output against eager at relative 1e-4 (atol 1e-4 for outputs of order 1);
  - f16: the half-precision model against the f32 eager reference, at an f16 tolerance;
  - vgf_first puts no node on the CPU fallback.
"""

import numpy as np
import pytest
import torch

import gpuu

from model_families import FAMILIES, family_input, make_family

POLICIES = ("vgf_first", "vulkan_first", "auto")
F32_TOL = 1e-4
# f16 has an 11-bit mantissa; errors compound over a few layers of small models.
F16_RTOL, F16_ATOL = 3e-2, 3e-2


def _export(model, x, prefer, path):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="model_families")
    report = gpuu.export(model, (x,), spec, path)
    return report


def _cpu_nodes(report):
    """The number of nodes the partition left on the CPU fallback."""
    return report["summary"]["backends"]["CpuFallback"]["nodes"]


def _run(path, x):
    with gpuu.load(path) as program:
        return program.run([x.numpy()])


@pytest.mark.parametrize("prefer", POLICIES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_f32_matches_eager(name, prefer, tmp_path):
    model, x = make_family(name), family_input(name, batch=2)
    with torch.no_grad():
        want = model(x).numpy()
    report = _export(model, x, prefer, tmp_path / f"{name}.gpuu")
    if prefer == "vgf_first":
        assert _cpu_nodes(report) == 0, (name, report["regions"])
    (got,) = _run(tmp_path / f"{name}.gpuu", x)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=F32_TOL * scale, err_msg=f"{name} under {prefer}")


@pytest.mark.parametrize("prefer", POLICIES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_f16_matches_f32_reference(name, prefer, tmp_path):
    model, x = make_family(name), family_input(name, batch=1)
    with torch.no_grad():
        want = model(x).numpy()
    half_input = x if not x.is_floating_point() else x.half()
    report = _export(model.half(), half_input, prefer, tmp_path / f"{name}_f16.gpuu")
    if prefer == "vgf_first":
        assert _cpu_nodes(report) == 0, (name, report["regions"])
    (got,) = _run(tmp_path / f"{name}_f16.gpuu", half_input)
    assert got.dtype == np.float16 and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=F16_RTOL, atol=F16_ATOL * scale,
                               err_msg=f"{name} (f16) under {prefer}")


@pytest.mark.parametrize("name", ["resnet", "gpt"])
def test_family_at_batch_8(name, tmp_path):
    model, x = make_family(name), family_input(name, batch=8)
    with torch.no_grad():
        want = model(x).numpy()
    _export(model, x, "vgf_first", tmp_path / f"{name}_b8.gpuu")
    (got,) = _run(tmp_path / f"{name}_b8.gpuu", x)
    np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=F32_TOL * max(1.0, float(np.abs(want).max())))
