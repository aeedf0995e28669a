"""The benchmark chain of bench_runtime.cpp in PyTorch (sin, add c, cos, mul c
repeated), timed eagerly and as a CUDA-graph replay: medians after warm-up.
Runs where PyTorch has CUDA (the GPU machine); prints one JSON object."""
import argparse
import json
import time

import torch


def chain(x, c, ops):
    for i in range(ops):
        k = i % 4
        if k == 0:
            x = torch.sin(x)
        elif k == 1:
            x = x + c
        elif k == 2:
            x = torch.cos(x)
        else:
            x = x * c
    return x


def median_us(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(0.99 * (len(times) - 1) + 0.5))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--elements", type=int, default=4096)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    a = p.parse_args()
    dev = torch.device("cuda")
    x = (torch.arange(a.elements, device=dev) % 97).float() / 97.0
    c = torch.full((a.elements,), 0.5, device=dev)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": []}
    for ops in (10, 100, 1000):
        eager_med, eager_p99 = median_us(lambda: chain(x, c, ops), a.warmup, a.runs)
        static_x = x.clone()
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            chain(static_x, c, ops)  # warm the allocator outside the capture
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            static_y = chain(static_x, c, ops)
        graph_med, graph_p99 = median_us(g.replay, a.warmup, a.runs)
        ref = chain(x, c, ops)
        static_x.copy_(x)
        g.replay()
        torch.cuda.synchronize()
        assert torch.allclose(static_y, ref), "graph replay disagrees with eager"
        out["results"].append({"ops": ops, "eager_median_us": eager_med, "eager_p99_us": eager_p99,
                               "cuda_graph_median_us": graph_med, "cuda_graph_p99_us": graph_p99})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
