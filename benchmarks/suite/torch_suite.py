"""Benchmark suite, PyTorch side: the cases of bench_suite.cpp in PyTorch eager
(synchronised per call) and as CUDA-graph replay, medians after warm-up, and
GPU time from CUDA events for the GEMMs and the fused chain. TF32 is off, so
f32 is f32 as in gpuu. Prints one JSON object.

Runs where PyTorch has CUDA (the GPU machine); elsewhere it runs eager on the
CPU (no graphs), which only checks the script. --small takes bench_suite's
--small sizes.
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_models import program_models  # noqa: E402


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def median(v):
    v = sorted(v)
    return round(v[len(v) // 2], 2)


def wall_us(fn, dev, warmup, runs):
    for _ in range(warmup):
        fn()
    sync(dev)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync(dev)
        times.append((time.perf_counter() - t0) * 1e6)
    return median(times)


def event_times(fn, warmup, runs):
    """GPU times of `runs` calls (us, sorted), each from CUDA events around it."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return sorted(times)


def event_us(fn, warmup, runs):
    """Median GPU time of one call."""
    return median(event_times(fn, warmup, runs))


def graphed(fn):
    """fn captured in a CUDA graph (after a warm-up on a side stream, as PyTorch asks): its replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def measure(fn, dev, warmup, runs, events=False):
    """eager_us, graph_us (CUDA only) and, with events, the GPU time of eager and of a replay."""
    r = {"eager_us": wall_us(fn, dev, warmup, runs)}
    if dev.type != "cuda":
        return r, None
    if events:
        r["eager_gpu_us"] = event_us(fn, warmup, runs)
    g, out = graphed(fn)
    r["graph_us"] = wall_us(g.replay, dev, warmup, runs)
    if events:
        r["graph_gpu_us"] = event_us(g.replay, warmup, runs)
    return r, out


def chain(x, c, ops):
    """bench_runtime's chain: sin, add c, cos, mul c repeated."""
    for i in range(ops):
        k = i % 4
        x = torch.sin(x) if k == 0 else x + c if k == 1 else torch.cos(x) if k == 2 else x * c
    return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--small", action="store_true")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out = {"device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", "torch": torch.__version__,
           "cuda": torch.version.cuda, "runs": a.runs, "warmup": a.warmup, "cases": []}
    big_runs, big_warmup = (3, 1) if a.small else (min(a.runs, 30), min(a.warmup, 5))

    models = program_models()
    if dev.type == "cuda":  # the GPU reaches its boost clock only after seconds of steady work (bench_suite does the same)
        w = torch.randn(2048, 2048, device=dev)
        start = time.perf_counter()
        while time.perf_counter() - start < 5.0:
            for _ in range(20):
                w @ w
            torch.cuda.synchronize()
    with torch.no_grad():  # the reference on the CPU first, outside any device context
        wants = {name: model(x) for name, (model, x) in models.items()}
    with torch.no_grad(), torch.device(dev):  # factory calls inside forward (gpt's arange) land on dev too
        for name, (model, x) in models.items():
            model, x = model.to(dev), x.to(dev)
            runs, warmup = (3, 1) if a.small and name == "convnet_224" else (a.runs, a.warmup)
            try:  # one case failing leaves the others' numbers
                r, graph_out = measure(lambda: model(x), dev, warmup, runs)
                got = (graph_out if graph_out is not None else model(x)).detach().float().to("cpu")
                r["max_abs_diff_vs_cpu"] = float((got - wants[name].float().to("cpu")).abs().max().to("cpu"))
            except Exception as e:  # noqa: BLE001 (reported in the JSON)
                r = {"error": f"{type(e).__name__}: {e}"}
            out["cases"].append({"case": name, **r})

        x = (torch.arange(4096) % 97).float() / 97.0
        c = torch.full((4096,), 0.5)
        r, _ = measure(lambda: chain(x, c, 100), dev, a.warmup, a.runs)
        out["cases"].append({"case": "delegates_3_vs_1", "ops": 100, "elements": 4096, **r})

        n = 256 if a.small else 4096
        for dtype, label in ((torch.float32, "gemm_f32"), (torch.float16, "gemm_f16")):
            if dev.type == "cpu" and dtype == torch.float16:
                continue  # CPU half matmul: slow and beside the point here
            g = torch.Generator(device=dev).manual_seed(1)
            a_, b_ = (torch.rand(n, n, generator=g, device=dev, dtype=dtype) * 2 - 1 for _ in range(2))
            r, _ = measure(lambda: a_ @ b_, dev, big_warmup, big_runs, events=dev.type == "cuda")
            t = r.get("graph_gpu_us", r.get("eager_gpu_us", r["eager_us"]))
            r["tflops"] = round(2.0 * n ** 3 / (t * 1e-6) / 1e12, 3)
            out["cases"].append({"case": f"{label}_{n}", "n": n, **r})

        elements = (1 << 20) if a.small else (64 << 20)
        x = torch.rand(elements) * 2 - 1
        r, _ = measure(lambda: torch.sin(x) * (1 / torch.cos(x)), dev, big_warmup, big_runs,
                       events=dev.type == "cuda")
        # Useful bytes: x read once, y written once (eager makes four passes).
        r["tb_s"] = round(8.0 * elements / (r.get("eager_gpu_us", r["eager_us"]) * 1e-6) / 1e12, 4)
        if "graph_gpu_us" in r:
            r["graph_tb_s"] = round(8.0 * elements / (r["graph_gpu_us"] * 1e-6) / 1e12, 4)
        out["cases"].append({"case": "fused_chain", "elements": elements, **r})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
