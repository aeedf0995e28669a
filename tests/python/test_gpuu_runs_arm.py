"""gpuu runs Arm: TOSA graphs written here as MLIR, made into .vgf by Arm's model converter, run in gpuu.

Each graph (float conv2d + clamp, matmul, an elementwise chain, a max pool) is
TOSA 1.0 MLIR text (`tosa.*` ops in a `func.func`, the model converter's input
dialect), converted by Arm's model-converter 0.11 (VGF format 0.5.0), loaded
with gpuu.load_vgf and run on gpuu's TOSA executor; its outputs must match a
NumPy reference. Where gpuu lowers the same graph itself (the PyTorch model
that computes it, NCHW where TOSA is NHWC), gpuu's own .vgf of it gives the
same numbers. Also: gpuu's errors for what it cannot load name the problem.

The int8 conv2d + rescale case the issue asks for is not here: it needs the
executor's TOSA INT8 operators (branch vgf-int8). It is the one commit of branch
vgf-interop-int8 (tests/python/test_gpuu_runs_arm_int8.py), which passes on
vgf-int8 merged with this branch; merge it after both.
"""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu

import arm_sdk
import arm_suite

RNG = np.random.default_rng(3)


def tt(shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def convert(tmp_path, name, text):
    mlir = tmp_path / f"{name}.mlir"
    mlir.write_text(text)
    vgf_path = str(tmp_path / f"{name}.vgf")
    arm_sdk.model_converter(str(mlir), vgf_path)
    return vgf_path


def run_vgf(vgf_path, inputs):
    """Runs an Arm-made .vgf on gpuu's executor and, under Arm's emulation layers (ctest runs this file a
    second time with them: python_test_gpuu_runs_arm_native), natively too; both must agree."""
    with gpuu.load_vgf(vgf_path, vgf_path="executor") as program:
        assert program.delegates == ["VgfBackend"]
        assert len(program.inputs) == len(inputs)
        for info, x in zip(program.inputs, inputs):
            assert list(info.shape) == list(x.shape), (info, x.shape)
        outputs = program.run(inputs)
    if arm_sdk.native_layers_enabled():
        with gpuu.load_vgf(vgf_path, vgf_path="native") as program:
            native = program.run(inputs)
        for a, b in zip(native, outputs):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg="native vs executor")
    return outputs


def gpuu_own_vgf(tmp_path, model, example):
    """gpuu's own single-region .vgf of `model`, run through gpuu.load_vgf."""
    paths = gpuu.export_vgf(model, example, arm_suite.spec(), str(tmp_path / "gpuu_own"))
    assert len(paths) == 1, f"expected one VGF region, got {paths}"
    return run_vgf(paths[0], [x.numpy() for x in example])


# ---- NumPy references (NHWC, as TOSA) ----------------------------------------

def conv2d_nhwc(x, w, b, pad):
    """x [N,H,W,C], w [O,KH,KW,C] (TOSA's OHWI), stride 1."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, oh, ow, o), np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nhwc,oc->nhwo", xp[:, i:i + oh, j:j + ow, :], w[:, i, j, :])
    return (y + b).astype(np.float32)


def test_conv2d_clamp(tmp_path):
    x = RNG.standard_normal((1, 6, 6, 3), np.float32)
    w = RNG.standard_normal((4, 3, 3, 3), np.float32) * 0.5
    b = RNG.standard_normal(4).astype(np.float32)
    text = f"""module {{
  func.func @main(%x: {tt(x.shape)}) -> {tt((1, 6, 6, 4))} {{
    %w = "tosa.const"() <{{values = dense<{arm_sdk.mlir_dense(w)}> : {tt(w.shape)}}}> : () -> {tt(w.shape)}
    %b = "tosa.const"() <{{values = dense<{arm_sdk.mlir_dense(b)}> : {tt(b.shape)}}}> : () -> {tt(b.shape)}
    %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
    %c = tosa.conv2d %x, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : ({tt(x.shape)}, {tt(w.shape)}, {tt(b.shape)}, tensor<1xf32>, tensor<1xf32>) -> {tt((1, 6, 6, 4))}
    %y = tosa.clamp %c {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({tt((1, 6, 6, 4))}) -> {tt((1, 6, 6, 4))}
    return %y : {tt((1, 6, 6, 4))}
  }}
}}
"""
    vgf_path = convert(tmp_path, "conv2d_clamp", text)
    (y,) = run_vgf(vgf_path, [x])
    want = np.clip(conv2d_nhwc(x, w, b, 1), 0.0, 6.0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)

    # gpuu's own lowering of the same graph (NCHW; weights OIHW).
    conv = nn.Conv2d(3, 4, 3, padding=1)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(w.transpose(0, 3, 1, 2).copy()))
        conv.bias.copy_(torch.from_numpy(b))
    model = nn.Sequential(conv, nn.ReLU6()).eval()
    (own,) = gpuu_own_vgf(tmp_path, model, (torch.from_numpy(x.transpose(0, 3, 1, 2).copy()),))
    np.testing.assert_allclose(own.transpose(0, 2, 3, 1), y, rtol=1e-5, atol=1e-5)


def test_matmul(tmp_path):
    a = RNG.standard_normal((2, 4, 8), np.float32)
    b = RNG.standard_normal((2, 8, 5), np.float32)
    text = f"""module {{
  func.func @main(%a: {tt(a.shape)}, %b: {tt(b.shape)}) -> {tt((2, 4, 5))} {{
    %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
    %y = tosa.matmul %a, %b, %zp, %zp : ({tt(a.shape)}, {tt(b.shape)}, tensor<1xf32>, tensor<1xf32>) -> {tt((2, 4, 5))}
    return %y : {tt((2, 4, 5))}
  }}
}}
"""
    vgf_path = convert(tmp_path, "matmul", text)
    (y,) = run_vgf(vgf_path, [a, b])
    np.testing.assert_allclose(y, a @ b, rtol=1e-5, atol=1e-5)

    class Bmm(nn.Module):
        def forward(self, p, q):
            return torch.bmm(p, q)

    (own,) = gpuu_own_vgf(tmp_path, Bmm().eval(), (torch.from_numpy(a), torch.from_numpy(b)))
    np.testing.assert_allclose(own, y, rtol=1e-5, atol=1e-5)


def test_elementwise_chain(tmp_path):
    shape = (2, 3, 5)
    x = RNG.standard_normal(shape, np.float32)
    y = RNG.standard_normal(shape, np.float32)
    t = tt(shape)
    text = f"""module {{
  func.func @main(%x: {t}, %y: {t}) -> {t} {{
    %shift = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %0 = tosa.add %x, %y : ({t}, {t}) -> {t}
    %1 = tosa.mul %0, %x, %shift : ({t}, {t}, tensor<1xi8>) -> {t}
    %2 = tosa.sigmoid %1 : ({t}) -> {t}
    %3 = tosa.sub %2, %y : ({t}, {t}) -> {t}
    %4 = tosa.maximum %3, %x : ({t}, {t}) -> {t}
    %5 = tosa.tanh %4 : ({t}) -> {t}
    return %5 : {t}
  }}
}}
"""
    vgf_path = convert(tmp_path, "elementwise", text)
    (out,) = run_vgf(vgf_path, [x, y])
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    want = np.tanh(np.maximum(1.0 / (1.0 + np.exp(-((xd + yd) * xd))) - yd, xd))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

    class Chain(nn.Module):
        def forward(self, p, q):
            return torch.tanh(torch.maximum(torch.sigmoid((p + q) * p) - q, p))

    (own,) = gpuu_own_vgf(tmp_path, Chain().eval(), (torch.from_numpy(x), torch.from_numpy(y)))
    np.testing.assert_allclose(own, out, rtol=1e-5, atol=1e-5)


def test_max_pool(tmp_path):
    x = RNG.standard_normal((1, 8, 8, 4), np.float32)
    text = f"""module {{
  func.func @main(%x: {tt(x.shape)}) -> {tt((1, 4, 4, 4))} {{
    %y = tosa.max_pool2d %x {{kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : ({tt(x.shape)}) -> {tt((1, 4, 4, 4))}
    return %y : {tt((1, 4, 4, 4))}
  }}
}}
"""
    vgf_path = convert(tmp_path, "max_pool", text)
    (y,) = run_vgf(vgf_path, [x])
    want = x.reshape(1, 4, 2, 4, 2, 4).max(axis=(2, 4))
    np.testing.assert_array_equal(y, want)

    class Pool(nn.Module):
        def forward(self, p):
            return F.max_pool2d(p, 2)

    (own,) = gpuu_own_vgf(tmp_path, Pool().eval(), (torch.from_numpy(x.transpose(0, 3, 1, 2).copy()),))
    np.testing.assert_array_equal(own.transpose(0, 2, 3, 1), y)


# ---- what gpuu cannot load is named -------------------------------------------

def test_load_vgf_errors_name_the_problem(tmp_path):
    not_vgf = tmp_path / "not.vgf"
    not_vgf.write_bytes(b"this is not a VGF file" * 8)
    with pytest.raises(gpuu.InvalidFormatError, match="magic"):
        gpuu.load_vgf(not_vgf)
    with pytest.raises(gpuu.IoError, match="missing.vgf"):
        gpuu.load_vgf(tmp_path / "missing.vgf")
    empty = tmp_path / "empty.vgf"
    empty.write_bytes(b"")
    with pytest.raises(gpuu.InvalidFormatError, match="empty"):
        gpuu.load_vgf(empty)
    # A truncated file: the header names a section beyond its end.
    samples = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference", "vgf-samples")
    with open(os.path.join(samples, "sin_mul_const.vgf"), "rb") as f:
        data = f.read()
    with pytest.raises(gpuu.InvalidFormatError, match="does not fit"):
        gpuu.Program.from_vgf(data=data[:600])
    # Arm's maxpool fixture carries a 1-word stand-in for its SPIR-V.
    with pytest.raises(gpuu.InvalidFormatError, match="5-word header"):
        gpuu.load_vgf(os.path.join(samples, "single_maxpool_graph_v0_4_3.vgf"))
    # Arm's own reference files run: sin(x) * W with W a graph constant.
    with gpuu.load_vgf(os.path.join(samples, "sin_mul_const.vgf")) as program:
        x = RNG.standard_normal((1, 3, 4, 4), np.float32)
        (y,) = program.run([x])
    w = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4) * 0.5
    np.testing.assert_allclose(y, np.sin(x) * w, rtol=1e-5, atol=1e-5)
