"""Weight-only quantized linears: integer weights with float scales, float activations (issue 20's LLM form).

gpuu.quantize(model, scheme="w8" | "w4g32" | "w4g64" | "w4g128") gives a model whose linears are gpuu::linear_dequant
(gpuu/weight_only.py); torchao's Int8WeightOnlyConfig gives mm(x, float(W^T)) times a scale, which the frontend folds
into the same op. Either way the program stores the integers and the Vulkan backend's GEMM kernels dequantize them as
they read them (gemv_qw*/gemm_qw*). The quantized PyTorch model is the reference: the same integers and scales, so
the results agree to float rounding (the dequantized weights are the same numbers; only the order of the sums
differs), and the LLM's greedy tokens are PyTorch's.
"""

import copy
import os

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu
from gpuu import weight_only
from llama_sample import llama
from model_families import GptBlock



class Mlp(nn.Module):
    def __init__(self, d=128, hidden=256, out=64):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, out, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


def _export_and_run(model, x, prefer, tmp_path, name="m"):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    path = tmp_path / f"{name}_{prefer}.gpuu"
    report = gpuu.export(model, (x,), spec, path)
    with gpuu.load(path, profile=True) as program:
        (got,) = program.run([x.numpy()])
        kernels = [d["kernel"] for step in program.profile()["plan"] for d in step.get("dispatches", [])]
    return got, report, kernels, os.path.getsize(path)


def test_nibble_packing_round_trips():
    values = torch.arange(-8, 8, dtype=torch.int8).repeat(3, 2)  # [3, 32]
    packed = weight_only.pack_nibbles(values)
    assert packed.shape == (3, 16) and packed.dtype == torch.int8
    # Element 2i in the low nibble of byte i: -8 (0x8) and -7 (0x9) make 0x98.
    assert int(packed[0, 0]) & 0xFF == 0x98
    assert torch.equal(weight_only.unpack_nibbles(packed), values)


@pytest.mark.parametrize("scheme", ["w8", "w4g32", "w4g64", "w4g128"])
def test_quantized_mlp_runs_integer_weights_on_vulkan(scheme, tmp_path):
    torch.manual_seed(1)
    model = Mlp().eval()
    quantized = gpuu.quantize(model, scheme=scheme)
    assert {type(m) for m in quantized.modules()} >= {weight_only.WeightOnlyLinear}
    bits, group = weight_only.SCHEMES[scheme]
    for rows in (1, 24):  # a decode step (gemv) and a prefill (tiled)
        x = torch.randn(rows, 128)
        with torch.no_grad():
            want = quantized(x).numpy()
            float_error = np.abs(want - model(x).numpy()).max()
        got, report, kernels, size = _export_and_run(quantized, x, "vulkan_first", tmp_path, f"{scheme}_{rows}")
        assert np.abs(got - want).max() <= 1e-5 * max(1.0, np.abs(want).max()), np.abs(got - want).max()
        assert 0 < float_error < 0.2, float_error  # quantized, and still close to the float model
        ops = [n["op"] for n in report["nodes"]]
        assert ops.count("linear_dequant") == 2 and "linear" not in ops, ops
        form = "gemv" if rows == 1 else "gemm"
        assert kernels == [f"{form}_qw{bits}_f32"] * 2, kernels  # SiLU folded into the first one's store
    # The integers are stored: 1 (8-bit) or 1/2 (4-bit) byte a weight, not 4.
    weights = 128 * 256 + 256 * 64
    assert size < weights * bits / 8 + 24 * 1024, (size, weights)


def test_vgf_first_leaves_integer_weight_linears_to_vulkan(tmp_path):
    """VGF has no integer-weight linear (TOSA has none): under vgf_first the linears still run on Vulkan, the
    activation between them on VGF, and the report says why."""
    torch.manual_seed(2)
    quantized = gpuu.quantize(Mlp().eval(), scheme="w4g64")
    x = torch.randn(3, 128)
    with torch.no_grad():
        want = quantized(x).numpy()
    got, report, kernels, _ = _export_and_run(quantized, x, "vgf_first", tmp_path)
    assert np.abs(got - want).max() <= 1e-5
    linears = [n for n in report["nodes"] if n["op"] == "linear_dequant"]
    assert len(linears) == 2 and all(n["backend"] == "VulkanBackend" for n in linears), linears


def test_gpt_block_w8_matches_the_quantized_model(tmp_path):
    torch.manual_seed(3)
    quantized = gpuu.quantize(GptBlock(), scheme="w8")
    x = torch.randn(2, 8, 32)
    with torch.no_grad():
        want = quantized(x).numpy()
    got, report, kernels, _ = _export_and_run(quantized, x, "vulkan_first", tmp_path)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert [n["op"] for n in report["nodes"]].count("linear_dequant") == 4
    assert not [k for k in kernels if k.startswith(("gemm_f", "gemv_f"))], kernels


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_torchao_int8_weight_only_folds_into_integer_weights(dtype, tmp_path):
    from torchao.quantization import Int8WeightOnlyConfig, quantize_
    torch.manual_seed(4)
    model = Mlp().eval().to(dtype)
    quantize_(model, Int8WeightOnlyConfig())
    x = torch.randn(2, 5, 128, dtype=dtype)
    with torch.no_grad():
        want = model(x).float().numpy()
    got, report, kernels, size = _export_and_run(model, x, "vulkan_first", tmp_path)
    tol = 1e-5 if dtype == torch.float32 else 2e-3 * max(1.0, np.abs(want).max())
    assert np.abs(got.astype(np.float32) - want).max() <= tol
    rows = report["quantized"]
    assert len(rows) == 2 and all(r["runs"] == "int8 weights" for r in rows), rows
    suffix = "f32" if dtype == torch.float32 else "f16"
    assert kernels.count(f"gemm_qw8_{suffix}") == 2, kernels
    assert size < (128 * 256 + 256 * 64) + 24 * 1024, size
    assert type(model.up.weight) not in (torch.Tensor, nn.Parameter)  # the caller's model keeps torchao's weights


@pytest.mark.parametrize("scheme", ["w8", "w4g64"])
def test_llm_with_integer_weights_generates_pytorchs_tokens(scheme, tmp_path):
    """The stateful issue's Llama-style decoder (samples/llm) with its linears quantized: 64 greedy tokens, the
    prompt in one step, identical to PyTorch's quantized model's. Its SwiGLU down projection (K = 176) takes no
    groups of 64, and stays float under w4g64, with a warning naming it."""
    model = llama.LlamaDecoder()
    if scheme == "w4g64":
        with pytest.warns(UserWarning, match=r"w2 \(K=176\)"):
            quantized = gpuu.quantize(model, scheme=scheme)
    else:
        quantized = gpuu.quantize(model, scheme=scheme)
    want = llama.generate(llama.torch_step(copy.deepcopy(quantized)), [1, 2, 3, 4, 5], 64)
    report = llama.export(quantized, tmp_path / "llm.gpuu", "vulkan_first", example_length=5)
    ops = [n["op"] for n in report["nodes"]]
    assert ops.count("linear_dequant") == (15 if scheme == "w8" else 13), ops
    with gpuu.load(tmp_path / "llm.gpuu") as program:
        assert llama.generate(llama.gpuu_step(program), [1, 2, 3, 4, 5], 64) == want


def test_quantize_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match=r"unknown scheme 'w3'.*a8w8.*w4g64"):
        gpuu.quantize(Mlp(), scheme="w3")
    with pytest.raises(ValueError, match="needs example_inputs and calibration_data"):
        gpuu.quantize(Mlp(), scheme="a8w8")
    with pytest.raises(ValueError, match=r"no nn.Linear of the model takes scheme 'w4g128'.*K=64"):
        gpuu.quantize(nn.Sequential(nn.Linear(64, 8)), scheme="w4g128")
