"""The cases of bench_gemm.cpp in PyTorch: f32 matmul with TF32 off (plain f32
as gpuu computes it), f16 matmul (cuBLAS tensor cores), and the conv2d
3x3 case in f32 (TF32 off) and f16. GPU time per call from CUDA events,
medians after warm-up. Runs where PyTorch has CUDA (the GPU machine); prints
one JSON object."""
import argparse
import json
import os
import sys

import torch

# The suite's CUDA-event timing, so both benchmarks time PyTorch one way.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "suite"))
from torch_suite import event_times  # noqa: E402


def gpu_us(fn, warmup, runs):
    """Median and fastest GPU time of one call (us)."""
    times = event_times(fn, warmup, runs)
    return times[len(times) // 2], times[0]


def linear_cases(a, dev):
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tf32": False, "cases": []}
    g = torch.Generator(device=dev).manual_seed(0)
    for spec in a.linear:
        m, k, n = (int(v) for v in spec.split(","))
        for dtype, suffix in ((torch.float16, ""), (torch.float32, "_f32")):
            x = torch.rand(m, k, device=dev, dtype=dtype, generator=g) * 2 - 1
            w = torch.rand(n, k, device=dev, dtype=dtype, generator=g) * 2 - 1
            med, best = gpu_us(lambda: torch.nn.functional.linear(x, w), a.warmup, a.runs)
            flops = 2.0 * m * k * n
            out["cases"].append({"name": f"linear_{m}x{k}x{n}{suffix}", "flops": flops, "gpu_us": med,
                                 "gpu_us_min": best, "tflops": flops / med / 1e6})
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--linear", action="append", default=[], metavar="M,K,N",
                   help="instead of the default cases: F.linear of [M, K] by a [N, K] weight, f16 and f32 "
                        "(bench_gemm --linear's cases)")
    a = p.parse_args()
    # Plain f32: no TF32 anywhere (matmul and cuDNN convolutions).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    if a.linear:
        print(json.dumps(linear_cases(a, dev), indent=2))
        return
    n = a.size
    batch, ch, hw = 16, 256, 56
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "size": n,
           "tf32": False, "cases": []}
    g = torch.Generator(device=dev).manual_seed(0)
    for dtype, suffix in ((torch.float32, "f32"), (torch.float16, "f16")):
        x = torch.rand(n, n, device=dev, dtype=dtype, generator=g) * 2 - 1
        y = torch.rand(n, n, device=dev, dtype=dtype, generator=g) * 2 - 1
        med, best = gpu_us(lambda: torch.matmul(x, y), a.warmup, a.runs)
        flops = 2.0 * n * n * n
        out["cases"].append({"name": "matmul_" + suffix, "flops": flops, "gpu_us": med, "gpu_us_min": best,
                             "tflops": flops / med / 1e6})
    for dtype, suffix in ((torch.float32, "f32"), (torch.float16, "f16")):
        x = torch.rand(batch, ch, hw, hw, device=dev, dtype=dtype, generator=g) * 2 - 1
        conv = torch.nn.Conv2d(ch, ch, 3, padding=1).to(device=dev, dtype=dtype)
        with torch.no_grad():
            med, best = gpu_us(lambda: conv(x), a.warmup, a.runs)
        flops = 2.0 * ch * (batch * hw * hw) * (ch * 9)
        out["cases"].append({"name": "conv2d_" + suffix, "flops": flops, "gpu_us": med, "gpu_us_min": best,
                             "tflops": flops / med / 1e6})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
