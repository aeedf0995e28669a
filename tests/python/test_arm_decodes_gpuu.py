"""Arm decodes gpuu: Arm's vgf_dump (VGF library 0.11) reads every .vgf gpuu writes, and sees what gpuu sees.

For each op family of arm_suite (elementwise, matmul/linear, conv/pool,
reductions, softmax/layer_norm, data movement, resize/pad/transposed conv, a
custom shader as a COMPUTE segment, the RFC model's regions), both export flows
(gpuu.export_vgf and `gpuu-inspect --extract-vgf`): Arm's vgf_dump JSON must
equal gpuu's own decoding of the same file (`gpuu-inspect --dump-vgf`, which
prints vgf_dump's view). The same holds for Arm's golden files and for files
Arm's model converter writes (format 0.5.0, with graph constant bindings).
"""

import glob
import os

import numpy as np
import pytest

import arm_sdk
import arm_suite

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference", "vgf-samples")


def assert_same_dump(vgf_path):
    theirs = arm_sdk.vgf_dump(vgf_path)
    ours = arm_sdk.gpuu_dump(vgf_path)
    assert ours == theirs, f"{vgf_path}: gpuu's dump differs from Arm's vgf_dump"
    return theirs


@pytest.mark.parametrize("case", arm_suite.CASES)
def test_arm_vgf_dump_equals_gpuu_dump(case, tmp_path):
    files = arm_suite.export_case(case, str(tmp_path))
    kinds = set()
    for flow in ("export_vgf", "extract_vgf"):
        for vgf_path in files[flow]:
            dump = assert_same_dump(vgf_path)
            assert dump["header"] == {"major": 0, "minor": 4, "patch": 3}
            kinds |= {s["type"] for s in dump["model_sequence"]["segments"]}
    # The custom shader is a COMPUTE segment of its own (the sin after it a GRAPH).
    assert kinds == ({"COMPUTE", "GRAPH"} if case == "custom_shader" else {"GRAPH"}), kinds
    # The two flows write the same bytes for the same program.
    for a, b in zip(files["export_vgf"], files["extract_vgf"]):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            assert fa.read() == fb.read(), (a, b)


def test_model_converter_files_dump_alike(tmp_path):
    mlir = tmp_path / "conv.mlir"
    weights = arm_sdk.mlir_dense((np.arange(54, dtype=np.float32).reshape(2, 3, 3, 3) % 7 - 3) * 0.25)
    mlir.write_text(f"""module {{
  func.func @main(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x2xf32> {{
    %w = "tosa.const"() <{{values = dense<{weights}> : tensor<2x3x3x3xf32>}}> : () -> tensor<2x3x3x3xf32>
    %b = "tosa.const"() <{{values = dense<[0.5, -0.5]> : tensor<2xf32>}}> : () -> tensor<2xf32>
    %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
    %y = tosa.conv2d %x, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x4x4x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x2xf32>
    return %y : tensor<1x4x4x2xf32>
  }}
}}
""")
    vgf_path = str(tmp_path / "conv.vgf")
    arm_sdk.model_converter(str(mlir), vgf_path)
    dump = assert_same_dump(vgf_path)
    assert dump["header"]["minor"] == 5
    assert dump["model_sequence"]["segments"][0]["constant_bindings"], "expected graph constant bindings"


def test_arm_golden_files_dump_alike():
    paths = sorted(glob.glob(os.path.join(SAMPLES, "*.vgf")))
    assert paths, f"no golden VGF files in {SAMPLES}"
    for path in paths:
        assert_same_dump(path)
