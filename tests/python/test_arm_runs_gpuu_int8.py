"""Arm runs gpuu, quantized: the .vgf regions of int8 models (gpuu.quantize, a8w8) run in Arm's scenario runner
with gpuu's outputs.

Two models, quantized with fixed seeds: a small CNN (conv-ReLU, depthwise conv, hardswish as a TABLE, a residual
add, max pool, linear) and the test families' GPT block (its four linears on integers, GELU a TABLE, layer norm
and attention in float). Each is exported VGF-first under two TOSA specs:
- "TOSA-1.0+FP+INT" (the default): one VGF region for the whole model, float in and out, the quantize and
  dequantize in float TOSA around the integer ops;
- "TOSA-1.0+INT": VGF takes integer ops only, so its regions hold no float tensor at all and their inputs and
  outputs are int8 or int32 (the float quantize/dequantize go to the Vulkan backend, and so does the integer add:
  the spec denies VGF an op by name, and "add" also runs on floats in the graph, in the quantize).
Both export flows of test_arm_runs_gpuu write the standalone files (gpuu.export_vgf and `gpuu-inspect
--extract-vgf`). For each file: Arm's vgf_dump extracts its SPIR-V module, whose TOSA operators must be the
integer forms (CONV2D / DEPTHWISE_CONV2D / MATMUL with i32 results, RESCALE, TABLE on i8, ...), then
test_arm_runs_gpuu's run_and_compare checks gpuu's scenario JSON against Arm's schema and template, runs it in
Arm's scenario runner and compares its outputs with gpuu's own executor (gpuu.load_vgf, vgf_path="executor") on the
same inputs:
- integer outputs bit for bit (TOSA's integer ops are exact: i32 accumulation, RESCALE's fixed-point rounding,
  TABLE lookups);
- float outputs (the dequantized model outputs of the FP+INT regions) bit for bit too where every float operator of
  the region is correctly rounded (ADD, SUB, MUL, FLOOR/CEIL/SELECT for round-half-even, CLAMP, CAST: the CNN's
  quantize and dequantize). Where the region has float operators whose rounding TOSA leaves to the implementation
  (EXP, RSQRT, RECIPROCAL; the summation order of f32 REDUCE_SUM and MATMUL: the GPT block's layer norm and
  attention), a float value at a quantize's rounding boundary may land on either side, so such an output may differ
  by one quantization step of the output (the model's last dequantize scale) in at most 1% of its elements; every
  difference must still be a whole number of steps.
Inputs: int8 over the full range -128..127; int32 (accumulators, or add operands at 2^20 times the int8 scale) with
log-uniform magnitudes 1..2^30, so a rescale of any scale sees values across its range and saturates on the large
ones; float inputs standard normal times 1.5 (some beyond the calibrated range). Each output must vary (not all
clamped), so an agreement is not one of two constants.
"""

import contextlib
import functools

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu

import arm_sdk
import arm_suite
from model_families import GptBlock
from test_arm_runs_gpuu import run_and_compare


class QuantCnn(nn.Module):
    """conv-ReLU, depthwise conv, hardswish, residual add, max pool, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        y = F.relu(self.conv(x))
        y = F.hardswish(self.depthwise(y)) + y
        return self.fc(F.max_pool2d(y, 2).flatten(1))


MODELS = {"cnn": (QuantCnn, (1, 3, 8, 8)), "gpt_block": (GptBlock, (2, 8, 32))}
SPECS = {"fp_int": "TOSA-1.0+FP+INT", "int": "TOSA-1.0+INT"}

# The integer TOSA each model's regions must hold (operator, result element type), over all its regions.
INTEGER_OPS = {
    "cnn": {("CONV2D", "i32"), ("DEPTHWISE_CONV2D", "i32"), ("TABLE", "i8"), ("MAX_POOL2D", "i8"), ("MATMUL", "i32"),
            ("RESCALE", "i8"), ("RESCALE", "i32")},
    "gpt_block": {("MATMUL", "i32"), ("TABLE", "i8"), ("RESCALE", "i8"), ("RESCALE", "i32")},
}
# ... and, in the one FP+INT region, the integer add that the INT spec leaves to Vulkan (gpuu op "add" runs on
# floats elsewhere in the graph: in the quantize).
FP_INT_ONLY_OPS = {"cnn": {("ADD", "i32")}, "gpt_block": {("ADD", "i32")}}
# Float TOSA operators whose result is correctly rounded (IEEE-754 f32, as Vulkan requires of OpFAdd, OpFSub and
# OpFMul), or exact: a float output computed through these alone must agree bit for bit.
EXACT_FLOAT_OPS = {"ADD", "SUB", "MUL", "FLOOR", "CEIL", "SELECT", "CLAMP", "CAST", "EQUAL", "GREATER",
                   "GREATER_EQUAL", "MAXIMUM", "MINIMUM", "NEGATE", "ABS", "RESHAPE", "TRANSPOSE", "SLICE", "CONCAT",
                   "PAD", "TILE", "MAX_POOL2D", "REDUCE_MAX", "REDUCE_MIN"}


@functools.lru_cache(maxsize=None)
def quantized(name):
    """(the model quantized by gpuu.quantize a8w8, its example input, its output's quantization step)."""
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=g)
    calibration = [torch.randn(*shape, generator=g) for _ in range(8)]
    converted = gpuu.quantize(model, (x,), calibration, scheme="a8w8")
    dq = [n for n in converted.graph.nodes if "dequantize_per_tensor" in str(n.target)]
    return converted, x, float(dq[-1].args[1])


def quantized_input(placeholder, rng):
    if placeholder.dtype == np.int8:
        return rng.integers(-128, 128, placeholder.shape).astype(np.int8)
    if placeholder.dtype == np.int32:
        magnitude = np.exp2(rng.uniform(0, 30, placeholder.shape)).astype(np.int64)
        return (magnitude * rng.choice([-1, 1], placeholder.shape)).astype(np.int32)
    assert placeholder.dtype == np.float32, f"a region input of {placeholder.dtype}"
    return (rng.standard_normal(placeholder.shape) * 1.5).astype(np.float32)


def region_tosa(vgf_path):
    """The TOSA operators of the file's module (as Arm's vgf_dump extracts it) and its tensors' element types."""
    return arm_sdk.tosa_ops(arm_sdk.spirv_module(vgf_path, vgf_path[:-4] + ".spv"))


def comparison(ops, step):
    inexact = sorted({op for op, t in ops if t.startswith("f") and op not in EXACT_FLOAT_OPS})

    def compare(vgf_path, uid, theirs, mine):
        where = f"{vgf_path}: output {uid} ({mine.dtype}), Arm's scenario runner vs gpuu"
        assert len(np.unique(mine)) >= min(8, mine.size // 2), f"{where}: a degenerate output {mine}"
        if mine.dtype.kind in "iu" or not inexact:
            np.testing.assert_array_equal(theirs, mine, err_msg=where)
            return
        steps = (theirs.astype(np.float64) - mine.astype(np.float64)) / step
        assert np.abs(steps - np.round(steps)).max() < 1e-3, f"{where}: a difference of a fraction of a step"
        off = np.abs(np.round(steps)) > 0
        assert np.abs(steps).max() <= 1.001 and off.mean() <= 0.01, (
            f"{where} (float operators {inexact}): {int(off.sum())} of {off.size} elements differ, by up to "
            f"{np.abs(steps).max():.0f} steps of {step}, first at {np.argwhere(off)[:4].tolist()}")

    return compare


def check_integer_tosa(flow, tosa, model_name, spec_name):
    """The regions of one export flow ({path: region_tosa(path)}) hold the model's integer TOSA, and no float form
    of what the quantizer made integer."""
    for path, (ops, types) in tosa.items():
        assert "i8" in types, f"{path}: no int8 tensor in {sorted(types)}"
        if spec_name == "int":
            assert types <= {"i8", "i32"}, f"{path}: an integer-only region with {sorted(types)} tensors"
    ops = [op for region_ops, _ in tosa.values() for op in region_ops]
    want = INTEGER_OPS[model_name] | (FP_INT_ONLY_OPS[model_name] if spec_name == "fp_int" else set())
    assert want <= set(ops), f"{flow}: integer TOSA missing from {model_name}'s regions: {sorted(want - set(ops))}"
    # No float convolution; the linears are i32 MATMULs, and the GPT block's only float MATMULs are attention's two
    # (the scores, and their weighted sum of the values).
    assert not [op for op in ops if op[0] in ("CONV2D", "DEPTHWISE_CONV2D") and op[1] != "i32"], ops
    assert ops.count(("MATMUL", "i32")) == {"cnn": 1, "gpt_block": 4}[model_name], ops
    assert ops.count(("MATMUL", "f32")) == (2 if (model_name, spec_name) == ("gpt_block", "fp_int") else 0), ops


# In this order, ctest's two entries of the file (conftest's --shard: contiguous halves) take about as long: the
# GPT block's one FP+INT region (some 250 TOSA operators) costs most, in Arm's runner and in gpuu's pipelines.
CASES = [("gpt_block", "fp_int"), ("cnn", "int"), ("cnn", "fp_int"), ("gpt_block", "int")]


@pytest.mark.parametrize("model_name,spec_name", CASES)
def test_arm_scenario_runner_runs_quantized_regions(model_name, spec_name, tmp_path):
    converted, x, step = quantized(model_name)
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(tosa_spec=SPECS[spec_name]), prefer="vgf_first",
                                      shared_context_token="arm_interop", min_partition_size=1)
    files = arm_suite.export_module(model_name, converted, (x,), str(tmp_path), spec)
    if spec_name == "fp_int":
        assert len(files["export_vgf"]) == 1, files  # the whole model, float in and out
    # The export_vgf files' gpuu sessions stay open until the extract_vgf ones (the same TOSA) have run: gpuu
    # builds the pipelines once. No dry run: it costs what the run does, and the run's output is checked the same.
    with contextlib.ExitStack() as keep:
        for flow in ("export_vgf", "extract_vgf"):
            tosa = {path: region_tosa(path) for path in files[flow]}
            check_integer_tosa(flow, tosa, model_name, spec_name)
            for path, (ops, _) in tosa.items():
                run_and_compare(path, str(tmp_path / "emulation"), make_input=quantized_input,
                                compare=comparison(ops, step), runtime_options={"vgf_path": "executor"},
                                dry_run=False, keep=keep if flow == "export_vgf" else None)


def test_quantized_max_pool_leaves_no_float_pool():
    """A quantized max pool runs on int8 alone. Its fold used to leave a float copy of the pool (and of the
    dequantize before it) in the graph, dead, because the pool's unused indices counted as a user needing its float
    value; that float max_pool2d alone then made the "TOSA-1.0+INT" spec deny VGF the int8 one."""
    from gpuu.frontend import from_torch

    converted, x, _ = quantized("cnn")
    traced = from_torch(converted, (x,))
    try:
        g = traced.graph
        pools = [gpuu.core.dtype_name(g.value_dtype(n.outputs[0])) for n in g.nodes() if n.op == "max_pool2d"]
        assert pools == ["i8"], pools
        denied = gpuu.VgfCompileSpec(tosa_spec="TOSA-1.0+INT").denied_ops_for(g)
        assert "max_pool2d" not in denied and "add" in denied, denied
    finally:
        traced.close()


# a16w8: the same CNN with 16-bit activations. Its convolutions and linear are TOSA's INT16 forms (i16 x i8 into
# i48, rescaled from i48), its ReLU a CLAMP on i16 and its max pool a MAX_POOL2D on i16; the hardswish stays float (a
# 16-bit table has no exact TOSA form). One FP+INT region: Arm's scenario runner must give gpuu's executor's output bit for bit, and the
# whole program on VGF the converted model's within one output step (test_vgf_native runs it natively too).
def test_arm_scenario_runner_runs_a16w8_regions(tmp_path):
    cls, shape = MODELS["cnn"]
    torch.manual_seed(0)
    model = cls().eval()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=g)
    converted = gpuu.quantize(model, (x,), [torch.randn(*shape, generator=g) for _ in range(8)], scheme="a16w8")
    dq = [n for n in converted.graph.nodes if "dequantize_per_tensor" in str(n.target)]
    step = float(dq[-1].args[1])
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first",
                                      shared_context_token="arm_interop", min_partition_size=1)
    files = arm_suite.export_module("cnn_a16w8", converted, (x,), str(tmp_path), spec)
    assert len(files["export_vgf"]) == 1, files
    path = files["export_vgf"][0]
    ops, types = region_tosa(path)
    # i48 is a 64-bit integer in SPIR-V (tosa_ops names types by width).
    assert {("CONV2D", "i64"), ("DEPTHWISE_CONV2D", "i64"), ("RESCALE", "i16"), ("CLAMP", "i16"),
            ("MAX_POOL2D", "i16")} <= set(ops), ops
    assert "i16" in types and "i64" in types, sorted(types)
    assert not [op for op in ops if op[0] in ("CONV2D", "DEPTHWISE_CONV2D") and op[1] != "i64"], ops
    run_and_compare(path, str(tmp_path / "emulation"), make_input=quantized_input, compare=comparison(ops, step),
                    runtime_options={"vgf_path": "executor"}, dry_run=False)
    with torch.no_grad():
        want = converted(x).numpy()
    program = str(tmp_path / "cnn_a16w8" / "program.gpuu")
    with gpuu.load(program, vgf_path="executor") as p:
        (got,) = p.run([x.numpy()])
    assert np.abs(got - want).max() <= step * 1.001, np.abs(got - want).max() / step
