"""gpuu runs Arm, integer profile: an int8 conv2d + rescale written as TOSA MLIR, converted by Arm's
model converter, run in gpuu (gpuu.load_vgf) and compared exactly with a NumPy reference of TOSA's
integer semantics (i32 accumulation, RESCALE with a 32-bit multiplier, double rounding, int8 clamp).

Needs the TOSA INT8 operators of gpuu's executor (conv2d on i8, RESCALE).
"""

import numpy as np

import gpuu

import arm_sdk

RNG = np.random.default_rng(11)


def dense_int(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return str(int(a))
    return "[" + ", ".join(dense_int(sub) for sub in a) + "]"


def rescale(values, multiplier, shift, input_zp=0, output_zp=0):
    """TOSA RESCALE, scale32, DOUBLE_ROUND, int32 -> int8."""
    v = values.astype(np.int64) - input_zp
    rounding = np.int64(1) << (shift - 1)
    if shift > 31:
        rounding = np.where(v >= 0, rounding + (np.int64(1) << 30), rounding - (np.int64(1) << 30))
    out = ((v * multiplier + rounding) >> shift) + output_zp
    return np.clip(out, -128, 127).astype(np.int8)


def test_int8_conv2d_rescale(tmp_path):
    x = RNG.integers(-128, 128, (1, 5, 5, 3)).astype(np.int8)
    w = RNG.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    b = RNG.integers(-2000, 2000, 4).astype(np.int32)
    multiplier, shift = 1518500250, 40  # about 0.0014
    text = f"""module {{
  func.func @main(%x: tensor<1x5x5x3xi8>) -> tensor<1x5x5x4xi8> {{
    %w = "tosa.const"() <{{values = dense<{dense_int(w)}> : tensor<4x3x3x3xi8>}}> : () -> tensor<4x3x3x3xi8>
    %b = "tosa.const"() <{{values = dense<{dense_int(b)}> : tensor<4xi32>}}> : () -> tensor<4xi32>
    %zp = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %acc = tosa.conv2d %x, %w, %b, %zp, %zp {{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x5x5x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x5x4xi32>
    %m = "tosa.const"() <{{values = dense<{multiplier}> : tensor<1xi32>}}> : () -> tensor<1xi32>
    %s = "tosa.const"() <{{values = dense<{shift}> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %izp = "tosa.const"() <{{values = dense<0> : tensor<1xi32>}}> : () -> tensor<1xi32>
    %ozp = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %y = tosa.rescale %acc, %m, %s, %izp, %ozp {{scale32 = true, rounding_mode = DOUBLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false}} : (tensor<1x5x5x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x5x5x4xi8>
    return %y : tensor<1x5x5x4xi8>
  }}
}}
"""
    mlir = tmp_path / "int8_conv_rescale.mlir"
    mlir.write_text(text)
    vgf_path = str(tmp_path / "int8_conv_rescale.vgf")
    arm_sdk.model_converter(str(mlir), vgf_path)
    with gpuu.load_vgf(vgf_path, vgf_path="executor") as program:
        (y,) = program.run([x])
    if arm_sdk.native_layers_enabled():  # both paths, bit for bit
        with gpuu.load_vgf(vgf_path, vgf_path="native") as program:
            (native,) = program.run([x])
        np.testing.assert_array_equal(native, y)
    xp = np.pad(x.astype(np.int64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    acc = np.zeros((1, 5, 5, 4), np.int64)
    for i in range(3):
        for j in range(3):
            acc += np.einsum("nhwc,oc->nhwo", xp[:, i:i + 5, j:j + 5, :], w[:, i, j, :].astype(np.int64))
    acc += b
    want = rescale(acc.astype(np.int32), multiplier, shift)
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, want)
