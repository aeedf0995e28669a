"""Real models through the whole flow (trace, partition, write, load, run) against PyTorch eager, per sync mode.

Tolerances: f32 throughout, outputs of order 1. The kernels' sums run in
another order than PyTorch's, which costs a few 1e-7 here; 1e-5 leaves a wide
margin yet still catches a swapped approximation (tanh-GELU for exact GELU in
the MLP is off by 7e-5).
"""

RTOL = ATOL = 1e-5

import numpy as np
import pytest
import torch

import gpuu

from conftest import SYNC_MODES, EncoderBlock, Mlp, SmallCnn, eager, seeded

MODELS = {
    "cnn": (SmallCnn, lambda: torch.randn(2, 3, 16, 16)),
    "mlp": (Mlp, lambda: torch.randn(4, 7, 32)),
    "encoder_block": (EncoderBlock, lambda: torch.randn(2, 6, 32)),
}


def export_model(name, tmp_path, prefer, min_partition_size=1, **options):
    model_cls, make_input = MODELS[name]
    model = seeded(model_cls)
    torch.manual_seed(1)
    x = make_input()
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=min_partition_size,
                                      shared_context_token="python_models")
    path = tmp_path / f"{name}_{prefer}.gpuu"
    report = gpuu.export(model, (x,), spec, path, **options)
    return path, report, eager(model, x), x.numpy()


@pytest.fixture(scope="module", params=sorted(MODELS))
def vulkan_program(request, tmp_path_factory):
    """Each model exported once with everything on the Vulkan backend."""
    path, report, want, x = export_model(request.param, tmp_path_factory.mktemp(request.param), "vulkan_first")
    assert [r["backend"] for r in report["regions"]] == ["VulkanBackend"], report["regions"]
    return request.param, path, want, x


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_model_on_vulkan_matches_eager(vulkan_program, sync_mode):
    name, path, want, x = vulkan_program
    with gpuu.load(path, sync_mode=sync_mode) as program:
        got = program.run([x])
        stats = program.last_execute_stats()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name} ({sync_mode})")
    assert stats.delegate_submits >= 1


def test_running_twice_gives_the_same_outputs(vulkan_program):
    _, path, _, x = vulkan_program
    with gpuu.load(path) as program:
        first = program.run([x])
        second = program.run([x * 1.0])
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_split_between_vulkan_and_cpu_matches_eager(name, tmp_path):
    # Every softmax, layer_norm and pool stays on the CPU: several GPU <-> CPU hand-offs per run.
    denied = [(backend, op) for op in ("softmax", "layer_norm", "max_pool2d", "reduce_mean")
              for backend in ("vulkan", "vgf")]
    path, report, want, x = export_model(name, tmp_path, "vulkan_first", deny=denied)
    backends = [r["backend"] for r in report["regions"]]
    assert set(backends) == {"CpuFallback", "VulkanBackend"} and len(backends) >= 3, backends
    with gpuu.load(path, sync_mode="timeline") as program:
        got = program.run([x])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


@pytest.fixture(scope="module", params=sorted(MODELS))
def vgf_program(request, tmp_path_factory):
    """Each model exported once under vgf_first."""
    path, report, want, x = export_model(request.param, tmp_path_factory.mktemp(request.param), "vgf_first")
    assert "VgfBackend" in [r["backend"] for r in report["regions"]]
    return request.param, path, want, x


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_model_vgf_first_matches_eager(vgf_program, sync_mode, vgf_runtime):
    name, path, want, x = vgf_program
    with gpuu.load(path, sync_mode=sync_mode) as program:
        got = program.run([x])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name} ({sync_mode})")


def test_models_map_to_the_expected_gpuu_ops():
    from gpuu.frontend import from_torch

    expected = {
        # Its batch norms fold into the convolutions before them (gpuu/conv_bn.py): no mul or add is left.
        "cnn": {"conv2d", "relu", "max_pool2d", "avg_pool2d", "reduce_mean", "reshape", "linear"},
        "mlp": {"linear", "layer_norm", "gelu", "add", "reshape"},
        "encoder_block": {"layer_norm", "linear", "slice", "reshape", "transpose", "matmul", "div", "softmax", "add",
                          "gelu", "mul"},
    }
    for name, (model_cls, make_input) in MODELS.items():
        with from_torch(seeded(model_cls), (make_input(),)) as traced:
            ops = {n.op for n in traced.graph.nodes()}
        assert ops == expected[name], (name, ops)
