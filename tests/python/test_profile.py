"""Profiles from Python: gpuu.load(path, profile=True), program.profile() (the parsed
gpuu_session_profile_json), program.profile_trace(path) (a Chrome trace), program.profile_text(),
on a program whose steps run on VGF's executor, the Vulkan backend and the CPU fallback."""

import json

import numpy as np
import pytest

import gpuu

M, K, N = 16, 32, 24


def profiled_graph():
    """x[1,4,8,8] -> conv2d; a[16,32] @ b -> mul(s) -> relu -> tanh -> floor -> sin."""
    g = gpuu.Graph()
    x = g.add_input("x", np.float32, [1, 4, 8, 8])
    a = g.add_input("a", np.float32, [M, K])
    rng = np.random.default_rng(0)
    w = g.add_constant("w", rng.uniform(-1, 1, (8, 4, 3, 3)).astype(np.float32))
    b = g.add_constant("b", rng.uniform(-1, 1, (K, N)).astype(np.float32))
    s = g.add_constant("s", rng.uniform(-1, 1, (N,)).astype(np.float32))
    c = g.add_node("conv2d", "conv_0", [x, w], {"padding": [1, 1]})[0]
    m = g.add_node("matmul", "matmul_0", [a, b])[0]
    t = g.add_node("tanh", "tanh_0", [g.add_node("relu", "relu_0", [g.add_node("mul", "mul_0", [m, s])[0]])[0]])[0]
    y = g.add_node("sin", "sin_0", [g.add_node("floor", "floor_0", [t])[0]])[0]
    g.mark_output(c)
    g.mark_output(y)
    return g


@pytest.fixture(scope="module")
def program_path(tmp_path_factory):
    """VGF takes what it can; floor_0 runs on the CPU and sin_0 on the Vulkan backend."""
    partitioner = gpuu.UnifiedGpuPartitioner(
        gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                   shared_context_token="python-profile"),
        pins={"floor_0": "cpu", "sin_0": "vulkan"})
    path = tmp_path_factory.mktemp("profile") / "model.gpuu"
    path.write_bytes(partitioner.write_program(partitioner.partition(profiled_graph())))
    return path


def inputs():
    rng = np.random.default_rng(1)
    return [rng.uniform(-1, 1, (1, 4, 8, 8)).astype(np.float32), rng.uniform(-1, 1, (M, K)).astype(np.float32)]


@pytest.fixture(scope="module")
def profiled(program_path, tmp_path_factory):
    """One profiled run: its profile, its Chrome trace, its table."""
    trace_path = tmp_path_factory.mktemp("trace") / "trace.json"
    with gpuu.load(program_path, profile=True) as program:
        program.run(inputs())
        profile = program.profile()
        program.profile_trace(trace_path)
        text = program.profile_text(top=2)
    return profile, json.loads(trace_path.read_text()), text


def test_profile_lists_each_step_dispatch_and_op_of_the_last_run(profiled):
    profile, _, text = profiled
    assert profile["peaks_measured"] is True
    (device,) = profile["devices"]
    assert device["memory_gbps"] > 0 and device["f32_tflops"] > 0
    delegates = [step for step in profile["plan"] if step["kind"] == "delegate"]
    cpu = [step for step in profile["plan"] if step["kind"] == "cpu"]
    assert [(step["node"], step["op"]) for step in cpu] == [("floor_0", "floor")] and cpu[0]["host_us"] > 0
    assert {step["backend"] for step in delegates} == {"VgfBackend", "VulkanBackend"}
    assert [step["index"] for step in delegates] == list(range(len(delegates)))
    dispatches = [d for step in delegates for d in step["dispatches"]]
    assert all(d["gpu_us"] > 0 and d["bytes"] > 0 and d["gbps"] > 0 for d in dispatches)
    for step in delegates:
        assert step["gpu_us"] == pytest.approx(sum(d["gpu_us"] for d in step["dispatches"]), rel=1e-9)
    # The mul that alone reads the matmul's result folds into its store (a GEMM epilogue): "matmul+mul".
    (matmul,) = [d for d in dispatches if d["ops"].split("+")[0] == "matmul"]
    assert matmul["flops"] == 2 * M * N * K and matmul["tflops"] > 0 and matmul["choice"]
    # The conv runs directly (8 output channels) and stores through the chain after it, if any: "conv2d+...".
    (conv,) = [d for d in dispatches if d["ops"].split("+")[0] == "conv2d"]
    assert conv["flops"] == 2 * (8 * 8 * 8) * (4 * 3 * 3)
    (sin,) = [d for d in dispatches if d["ops"] == "sin"]
    assert sin["flops"] == 0 and sin["tflops"] is None and sin["bytes"] == 2 * M * N * 4
    by_op = profile["by_op"]
    assert [op["gpu_us"] for op in by_op] == sorted((op["gpu_us"] for op in by_op), reverse=True)
    assert sum(op["gpu_us"] for op in by_op) == pytest.approx(profile["gpu_us"], rel=1e-9)
    assert sum(op["count"] for op in by_op) == len(dispatches)
    assert "by op:" in text and "top 2 dispatches:" in text


def test_profile_trace_has_a_track_per_delegate_and_the_host(profiled):
    profile, trace, _ = profiled
    tracks = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    delegates = [step for step in profile["plan"] if step["kind"] == "delegate"]
    assert tracks == {0: "host (CPU fallback)",
                      **{i + 1: f"delegate {d['index']} ({d['backend']})" for i, d in enumerate(delegates)}}
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == sum(len(d["dispatches"]) for d in delegates) + 1
    assert [e["tid"] for e in complete if e["name"] == "floor_0"] == [0]
    assert all(e["dur"] > 0 for e in complete)
    assert [e["ts"] for e in complete] == sorted(e["ts"] for e in complete)


def test_profile_needs_the_option_and_a_run(program_path):
    with gpuu.load(program_path) as program:
        program.run(inputs())
        with pytest.raises(gpuu.FailedPreconditionError, match="does not profile"):
            program.profile()
    with gpuu.load(program_path, profile=True) as program:
        with pytest.raises(gpuu.FailedPreconditionError, match="no successful execute"):
            program.profile_trace("unused.json")
