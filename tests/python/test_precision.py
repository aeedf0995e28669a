"""gpuu.export(..., precision="fp16"): an f32 model's math in f16 behind its f32 interface.

The program takes and returns f32 as before, its GEMMs and convolutions run f16 kernels (no f32
GEMM left, read from a profile of one run), its output stays within an f16 tolerance of the f32
eager model, and the export report carries that error, measured by running the program.
"""

import numpy as np
import pytest
import torch
import torch.nn as nn

import gpuu
from gpuu.frontend import FrontendError


class ConvThenAttention(nn.Module):
    """A conv stem, a transformer block on its pixels and a head: conv2d, linear, layer norm, SDPA."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.Hardswish())
        self.block = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        y = self.stem(x).flatten(2).transpose(1, 2)  # [batch, pixels, channels]
        return self.head(self.block(y).mean(1))


def _spec(prefer="vulkan_first"):
    return gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="precision")


def _model_and_input():
    torch.manual_seed(0)
    model = ConvThenAttention().eval()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        model.stem[1].running_mean.uniform_(-0.5, 0.5)
        model.stem[1].running_var.uniform_(0.5, 2.0)
    return model, torch.randn(2, 3, 8, 8)


def test_fp16_export_runs_f16_kernels_behind_the_f32_interface(tmp_path):
    model, x = _model_and_input()
    with torch.no_grad():
        want = model(x).numpy()
    path = tmp_path / "fp16.gpuu"
    report = gpuu.export(model, (x,), _spec(), path, precision="fp16")
    with gpuu.load(path, profile=True) as program:
        (got,) = program.run([x.numpy()])
        kernels = [d["kernel"] for step in program.profile()["plan"] for d in step.get("dispatches", [])]
    assert got.dtype == np.float32 and got.shape == want.shape
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-2 * max(1.0, scale))
    gemms = [k for k in kernels if k.startswith(("gemm", "conv2d"))]
    assert gemms and all(k.endswith("_f16") for k in gemms), kernels
    assert any(k.startswith("attention") and k.endswith("_f16") for k in kernels), kernels
    entry = report["precision"]
    assert entry["compute"] == "fp16" and "unmeasured_why" not in entry, entry
    # The report's error is the program's: recomputed here from the same run.
    assert entry["max_abs_err"] == pytest.approx(float(np.abs(got.astype(np.float64) - want).max()), rel=1e-6)
    assert 0 < entry["max_abs_err"] < 2e-2 * max(1.0, scale)
    assert entry["reference_max_abs"] == pytest.approx(scale, rel=1e-6)


def test_fp32_is_the_default_and_reports_nothing_extra(tmp_path):
    model, x = _model_and_input()
    report = gpuu.export(model, (x,), _spec(), tmp_path / "fp32.gpuu")
    assert "precision" not in report
    with gpuu.load(tmp_path / "fp32.gpuu", profile=True) as program:
        program.run([x.numpy()])
        kernels = [d["kernel"] for step in program.profile()["plan"] for d in step.get("dispatches", [])]
    assert not any(k.endswith("_f16") for k in kernels), kernels


@pytest.mark.parametrize("precision, says", [("bf16", "no bf16 dtype"), ("int4", "not one of fp32, fp16")])
def test_unknown_precisions_are_refused_by_name(precision, says, tmp_path):
    model, x = _model_and_input()
    with pytest.raises(FrontendError, match=says):
        gpuu.export(model, (x,), _spec(), tmp_path / "p.gpuu", precision=precision)
    assert not (tmp_path / "p.gpuu").exists()


def test_an_exported_program_keeps_its_dtypes(tmp_path):
    model, x = _model_and_input()
    exported = torch.export.export(model, (x,))
    with pytest.raises(FrontendError, match="ExportedProgram keeps the dtypes"):
        gpuu.export(exported, (x,), _spec(), tmp_path / "e.gpuu", precision="fp16")


def _lacks_coopmat2():
    """The default device is a CPU one (lavapipe: VkPhysicalDeviceType 4), which has no VK_NV_cooperative_matrix2."""
    return gpuu.enumerate_devices()[0][1] == 4


def test_the_coopmat2_gemm_option_runs_and_falls_back_where_the_device_lacks_it(tmp_path):
    """VulkanBackend:gemm_kernel=coopmat2 asks for f16 matmuls and linears on workgroup-scope matrices
    (VK_NV_cooperative_matrix2); lavapipe has none, so the same kernels run (elsewhere the outputs agree within
    the f16 tolerance)."""
    model, x = _model_and_input()
    path = tmp_path / "fp16.gpuu"
    gpuu.export(model, (x,), _spec(), path, precision="fp16")
    with gpuu.load(path) as program:
        (default,) = program.run([x.numpy()])
    option = {"VulkanBackend": {"gemm_kernel": "coopmat2"}}
    with gpuu.load(path, backend_options=option) as program:
        (chosen,) = program.run([x.numpy()])
    scale = max(1.0, float(np.abs(default).max()))
    np.testing.assert_allclose(chosen, default, rtol=0, atol=0 if _lacks_coopmat2() else 2e-2 * scale)
    with pytest.raises(gpuu.InvalidArgumentError, match="'fastest' is not one of auto, coopmat2"):
        gpuu.load(path, backend_options={"VulkanBackend": {"gemm_kernel": "fastest"}})
