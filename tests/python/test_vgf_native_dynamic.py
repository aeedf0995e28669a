"""Dynamic dims on the VGF backend's native path (VK_ARM_data_graph through Arm's emulation layers): a program
with a dynamic batch, exported vgf_first, runs natively at sizes within its bounds (each size's VGF regions made
again at that size and initialised as data graphs) and agrees with PyTorch and with gpuu's TOSA executor there."""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import gpuu
from conftest import VgfInitLines

TOL = 1e-5


@pytest.fixture(autouse=True, scope="module")
def arm_layers_present():
    assert "VK_LAYER_ML_Graph_Emulation" in os.environ.get("GPUU_VULKAN_LAYERS", ""), (
        "this file runs under Arm's emulation layers (bindings/python/CMakeLists.txt sets them for test_vgf_native*)")


def test_dynamic_batch_runs_natively_at_every_size(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 6)).eval()
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                      shared_context_token="vgf_native_dynamic")
    path = tmp_path / "dyn.gpuu"
    report = gpuu.export(model, (torch.randn(2, 3, 8, 8),), spec, path,
                         dynamic_shapes=({0: Dim("batch", min=1, max=6)},))
    assert "VgfBackend" in {r["backend"] for r in report["regions"]}
    with VgfInitLines() as lines, gpuu.load(path, vgf_path="native") as native, \
            gpuu.load(path, vgf_path="executor") as executor:
        for batch in [1, 6, 3, 2]:
            x = torch.randn(batch, 3, 8, 8)
            (got,) = native.run([x.numpy()])
            (reference,) = executor.run([x.numpy()])
            with torch.no_grad():
                want = model(x).numpy()
            assert native.dims == {"batch": batch}
            np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL, err_msg=f"batch {batch}")
            np.testing.assert_allclose(got, reference, rtol=TOL, atol=TOL, err_msg=f"batch {batch}")
    native_lines = [line for line in lines.lines if "path=native" in line]
    # One init per VGF delegate at the example and at each new size, every one on the data-graph path.
    assert len(native_lines) >= 4, lines.lines
