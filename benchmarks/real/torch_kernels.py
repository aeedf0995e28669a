"""Where PyTorch's time goes in a real-size case, kernel by kernel: the CUDA kernels one eager call launches
(torch.profiler's CUDA activity), each with its count and GPU time, largest first. The reference for
gpuu's own profile (profile_program) of the same case: which kernels cuBLAS/cuDNN pick at these sizes and
how long each takes.

    python3 benchmarks/real/torch_kernels.py [--cases gpt2_trunk_s128_f16,vit_b_16_b1_f32] [--runs N]

Prints one JSON object: per case, the kernels of one call (times are medians over --runs profiled calls).
"""

import argparse
import collections
import json
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from real_models import make_case  # noqa: E402


def kernels_of_one_call(fn, runs):
    """{kernel name: (launches per call, median GPU us per call)} over `runs` calls."""
    per_call = []
    for _ in range(runs):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        totals = collections.defaultdict(lambda: [0, 0.0])
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                totals[e.name][0] += 1
                totals[e.name][1] += e.device_time if hasattr(e, "device_time") else e.cuda_time
        per_call.append(totals)
    names = set().union(*per_call)
    return {n: (per_call[-1].get(n, [0, 0.0])[0], statistics.median(c.get(n, [0, 0.0])[1] for c in per_call))
            for n in names}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cases", default="gpt2_trunk_s128_f16,vit_b_16_b1_f16")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": []}
    with torch.no_grad():
        for case in a.cases.split(","):
            name, prec = case.rsplit("_", 1)
            model, x = make_case(name)
            model, x = model.to(dev), x.to(dev)
            if prec == "f16":
                model, x = model.half(), x.half()
            for _ in range(10):  # warm-up: cuBLAS heuristics and cuDNN autotuning settle
                model(x)
            torch.cuda.synchronize()
            k = kernels_of_one_call(lambda: model(x), a.runs)
            rows = sorted(({"kernel": n, "count": c, "gpu_us": round(t, 2)} for n, (c, t) in k.items()),
                          key=lambda r: -r["gpu_us"])
            out["cases"].append({"case": case, "gpu_us": round(sum(r["gpu_us"] for r in rows), 2),
                                 "launches": sum(r["count"] for r in rows), "kernels": rows})
            del model, x
            torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
