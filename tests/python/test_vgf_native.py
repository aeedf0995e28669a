"""The VGF backend's native path: VK_ARM_data_graph on lavapipe through Arm's emulation layers.

ctest runs this file with Arm's layers enabled (GPUU_VULKAN_LAYERS, from the
environment's ai-ml-emulation-layer-for-vulkan) and *without* the Khronos
validation layer: Debian's validation layer (1.3.239) predates VK_ARM_data_graph
and, placed under the emulation layers, reports on the layers' own internal
compute pipelines rather than on gpuu's calls. Every other test file keeps it.

Each program runs three ways and must agree: natively (vgf_path="native", which
fails rather than fall back), on gpuu's TOSA executor (vgf_path="executor"),
and in PyTorch eager.
"""

import os

import numpy as np
import pytest
import torch

import gpuu
from conftest import SYNC_MODES, UnifiedVgfVulkanModel, VgfInitLines, rfc_input
from model_families import FAMILIES, family_input, make_family

TOL = 1e-5


@pytest.fixture(autouse=True, scope="module")
def arm_layers_present():
    layers = os.environ.get("GPUU_VULKAN_LAYERS", "")
    assert "VK_LAYER_ML_Graph_Emulation" in layers, (
        "this file runs under Arm's emulation layers: ctest sets GPUU_VULKAN_LAYERS, VK_LAYER_PATH and "
        "LD_LIBRARY_PATH (see bindings/python/CMakeLists.txt)")
    with gpuu.Context.resolve("native_probe", 0) as ctx:
        assert "VK_ARM_data_graph" in ctx.extensions, ctx.extensions
        assert ctx.vulkan_handles().enabled_features & gpuu.gpuu_c.GPUU_FEATURE_DATA_GRAPH
    gpuu.Context.unregister("native_probe", 0)


def _export(model, x, path, prefer="vgf_first"):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="vgf_native")
    return gpuu.export(model, (x,), spec, path)


def _run(path, x, **options):
    with VgfInitLines() as lines, gpuu.load(path, **options) as program:
        outputs = program.run([x.numpy()])
    return outputs, lines.lines


@pytest.fixture(scope="module")
def rfc_program(tmp_path_factory):
    model, x = UnifiedVgfVulkanModel().eval(), rfc_input()
    path = tmp_path_factory.mktemp("rfc") / "rfc.gpuu"
    report = _export(model, x, path)
    assert [r["backend"] for r in report["regions"]] == ["VgfBackend", "VulkanBackend", "VgfBackend"]
    with torch.no_grad():
        want = model(x).numpy()
    return path, x, want


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_rfc_model_runs_natively_and_agrees_with_executor_and_eager(rfc_program, sync_mode):
    path, x, want = rfc_program
    (native,), lines = _run(path, x, sync_mode=sync_mode, vgf_path="native")
    assert len(lines) == 2 and all("path=native (VK_ARM_data_graph on" in line for line in lines), lines
    (executor,), lines = _run(path, x, sync_mode=sync_mode, vgf_path="executor")
    assert all("path=executor (the session asked for the executor)" in line for line in lines), lines
    np.testing.assert_allclose(native, want, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(native, executor, rtol=TOL, atol=TOL)


def test_auto_takes_the_native_path_where_the_device_has_it(rfc_program):
    path, x, want = rfc_program
    (got,), lines = _run(path, x)
    assert all("path=native" in line for line in lines), lines
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


@pytest.fixture(scope="module")
def one_delegate_program(tmp_path_factory):
    """A program that is one VGF delegate (create_only lets just one delegate create the context)."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AvgPool2d(2)).eval()
    x = torch.randn(1, 3, 10, 10)
    path = tmp_path_factory.mktemp("one") / "one.gpuu"
    report = _export(model, x, path)
    assert [r["backend"] for r in report["regions"]] == ["VgfBackend"], report["regions"]
    with torch.no_grad():
        return path, x, model(x).numpy()


@pytest.mark.parametrize("mode", ["disabled", "lookup_or_create", "create_only", "lookup_only"])
def test_every_context_mode_with_the_native_path(rfc_program, one_delegate_program, mode):
    path, x, want = one_delegate_program if mode == "create_only" else rfc_program
    token = f"native_{mode}"
    app_context = None
    if mode == "lookup_only":  # the context exists before the program loads
        app_context = gpuu.Context.resolve(token, 3)
    try:
        with gpuu.load(path, token=token, group_id=3, mode=mode, vgf_path="native") as program:
            (got,) = program.run([x.numpy()])
            if mode != "disabled":
                # Every delegate (VGF -> Vulkan -> VGF for the RFC model) on the one registered VkDevice.
                with gpuu.Context.lookup(token, 3) as shared:
                    assert program.context().vulkan_handles().device == shared.vulkan_handles().device
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    finally:
        if app_context is not None:
            app_context.close()
        if mode != "disabled":
            gpuu.Context.unregister(token, 3)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_model_family_regions_run_natively(name, tmp_path):
    model, x = make_family(name), family_input(name, batch=2)
    with torch.no_grad():
        want = model(x).numpy()
    report = _export(model, x, tmp_path / f"{name}.gpuu")
    assert report["summary"]["backends"]["VgfBackend"]["regions"] >= 1, report["regions"]
    (native,), lines = _run(tmp_path / f"{name}.gpuu", x, vgf_path="native")
    assert lines and all("path=native" in line for line in lines), lines
    (executor,), _ = _run(tmp_path / f"{name}.gpuu", x, vgf_path="executor")
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(native, want, rtol=1e-4, atol=1e-4 * scale, err_msg=name)
    np.testing.assert_allclose(native, executor, rtol=1e-4, atol=1e-4 * scale, err_msg=name)


def test_int8_block_runs_natively_bit_exact(tmp_path):
    """A TOSA INT-profile block (i8 conv with zero point -> per-channel RESCALE -> TABLE -> i8 max pool)."""
    rng = np.random.default_rng(54)
    with gpuu.Graph() as g:
        x = g.add_input("x", np.int8, [1, 2, 6, 6])
        w = g.add_constant("w", rng.integers(-128, 128, (3, 2, 3, 3), dtype=np.int8))
        bias = g.add_constant("bias", np.array([100, -100, 7], dtype=np.int32))
        m = g.add_constant("m", np.array([1300000000, 1500000000, 1700000000], dtype=np.int32))
        s = g.add_constant("s", np.array([38, 38, 39], dtype=np.int32))
        table = g.add_constant("tbl", ((np.arange(256) * 91 + 3) % 256 - 128).astype(np.int8))
        conv = g.add_node("conv2d_int", "conv", [x, w, bias], {"padding": [1, 1, 1, 1], "input_zp": -4})[0]
        rq = g.add_node("rescale", "rq", [conv, m, s], {"dtype": "i8", "axis": 1})[0]
        lut = g.add_node("table", "lut", [rq, table])[0]
        g.mark_output(g.add_node("max_pool2d", "pool", [lut], {"kernel": [2, 2]})[0])
        spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                          shared_context_token="vgf_native_int8")
        partitioner = gpuu.UnifiedGpuPartitioner(spec)
        result = partitioner.partition(g)
        assert result.delegate_backends == ["VgfBackend"], result.region_strings()
        partitioner.write_program(result, tmp_path / "int8.gpuu")
        result.partition.close()
    xs = rng.integers(-128, 128, (1, 2, 6, 6), dtype=np.int8)
    x_tensor = torch.from_numpy(xs)
    (native,), lines = _run(tmp_path / "int8.gpuu", x_tensor, vgf_path="native")
    assert all("path=native" in line for line in lines), lines
    (executor,), _ = _run(tmp_path / "int8.gpuu", x_tensor, vgf_path="executor")
    assert native.dtype == np.int8
    np.testing.assert_array_equal(native, executor)


AFFINE_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < 1000u) y[i] = x[i] * 2.0 + 1.0; }
"""


def test_custom_shader_between_graph_regions_with_the_native_path(tmp_path):
    """x -> sin [GRAPH] -> custom shader [COMPUTE] -> cos [GRAPH]: the graphs run as data-graph pipelines,
    the COMPUTE segment as a compute pipeline from its own SPIR-V; forcing native accepts both."""
    import json

    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [1000])
        s = g.add_node("sin", "sin_0", [x])[0]
        attrs = {"entry_point": "main", "workgroup_sizes": [64, 1, 1], "shader_language": "GLSL",
                 "shader_code": AFFINE_GLSL, "input_0_binding": 0,
                 "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER", "output_0_binding": 1}
        a = g.add_node("custom_shader", "affine_0", [s], {
            "domain_name": "com.arm.VulkanCustomShader", "operator_name": "affine",
            "implementation_attrs": json.dumps(attrs), "num_outputs": 1, "output_0_shape": [1000],
            "output_0_dtype": "f32"})[0]
        g.mark_output(g.add_node("cos", "cos_0", [a])[0])
        spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                          shared_context_token="vgf_native_shader")
        partitioner = gpuu.UnifiedGpuPartitioner(spec)
        result = partitioner.partition(g)
        assert result.delegate_backends == ["VgfBackend"] * 3, result.region_strings()
        partitioner.write_program(result, tmp_path / "shader.gpuu")
        result.partition.close()
    values = np.linspace(-3, 3, 1000, dtype=np.float32)
    (got,), lines = _run(tmp_path / "shader.gpuu", torch.from_numpy(values), vgf_path="native")
    assert [line.split("path=")[1].split(" ")[0] for line in lines] == ["native", "compute", "native"], lines
    np.testing.assert_allclose(got, np.cos(np.sin(values) * 2 + 1), rtol=1e-5, atol=1e-5)


def test_kv_cache_update_runs_natively_as_tosa_scatter(tmp_path):
    """cache[:, :, pos] = v with int32 positions: one VGF region (the positions wrapped, then SCATTER over the
    batches with the indices tiled); native, executor and eager agree at several positions."""

    class KvUpdate(torch.nn.Module):
        def forward(self, cache, v, pos):
            cache = cache.clone()
            cache[:, :, pos] = v * 2
            return cache

    cache, v = torch.randn(1, 2, 8, 4), torch.randn(1, 2, 2, 4)
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                      shared_context_token="vgf_native_scatter")
    report = gpuu.export(KvUpdate(), (cache, v, torch.tensor([3, 5], dtype=torch.int32)), spec, tmp_path / "kv.gpuu")
    assert [r["backend"] for r in report["regions"]] == ["VgfBackend"], report["regions"]
    assert [n["op"] for n in report["nodes"] if n["op"] == "index_put"] == ["index_put"], report["nodes"]
    for positions in ([3, 5], [7, 0], [-1, 2]):
        pos = torch.tensor(positions, dtype=torch.int32)
        want = KvUpdate()(cache, v, pos).numpy()
        inputs = [cache.numpy(), v.numpy(), pos.numpy()]
        with VgfInitLines() as lines, gpuu.load(tmp_path / "kv.gpuu", vgf_path="native") as program:
            (native,) = program.run(inputs)
        assert lines.lines and all("path=native" in line for line in lines.lines), lines.lines
        with gpuu.load(tmp_path / "kv.gpuu", vgf_path="executor") as program:
            (executor,) = program.run(inputs)
        np.testing.assert_allclose(native, want, rtol=TOL, atol=TOL, err_msg=str(positions))
        np.testing.assert_array_equal(native, executor, err_msg=str(positions))


def _expect_integer_cnn_runs_natively(converted, x, tmp_path):
    """A quantized CNN exported vgf_first: one VGF backend, its convolutions on integers, natively through
    VK_ARM_data_graph bit for bit as the executor, within one output step of PyTorch's converted model."""
    from test_quantized import _output_step

    report = _export(converted, x, tmp_path / "q.gpuu")
    assert {r["backend"] for r in report["regions"]} == {"VgfBackend"}, report["regions"]
    ops = [n["op"] for n in report["nodes"]]
    assert ops.count("conv2d_int") >= 2 and "conv2d" not in ops, ops
    with torch.no_grad():
        want = converted(x).numpy()
    (native,), lines = _run(tmp_path / "q.gpuu", x, vgf_path="native")
    assert lines and all("path=native" in line for line in lines), lines
    (executor,), _ = _run(tmp_path / "q.gpuu", x, vgf_path="executor")
    np.testing.assert_array_equal(native, executor)
    assert np.abs(native - want).max() <= _output_step(converted) * 1.001


@pytest.mark.parametrize("model", ["small_cnn", "resnet", "mobilenet"])
def test_pt2e_quantized_cnn_runs_natively_on_integers(model, tmp_path):
    """PT2E a8w8 models on vgf_first: TOSA INT-profile CONV2D / MATMUL / RESCALE / TABLE through VK_ARM_data_graph,
    bit for bit the executor's, and within one output step of PyTorch's converted model."""
    from test_quantized import SmallCnn, _quantize

    if model == "small_cnn":
        converted, x = _quantize(SmallCnn(), (1, 3, 8, 8))
    else:
        x = family_input(model)
        converted = gpuu.quantize(make_family(model), (x,), [family_input(model, seed=s) for s in range(2, 10)])
    _expect_integer_cnn_runs_natively(converted, x, tmp_path)


@pytest.mark.parametrize("model", ["resnet", "mobilenet"])
def test_a16w8_cnn_runs_natively_on_16_bit_integers(model, tmp_path):
    """a16w8 (16-bit activations) on vgf_first: TOSA's INT16 forms (CONV2D i16 x i8 into i48, RESCALE from i48,
    CLAMP on i16) through VK_ARM_data_graph, bit for bit the executor's, within one output step of the converted
    model."""
    x = family_input(model)
    converted = gpuu.quantize(make_family(model), (x,), [family_input(model, seed=s) for s in range(2, 6)],
                              scheme="a16w8")
    _expect_integer_cnn_runs_natively(converted, x, tmp_path)
