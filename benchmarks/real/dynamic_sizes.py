"""Dynamic sizes at real size: one program exported with a dynamic dim, run at several sizes on the GPU,
against a program exported static at each size and PyTorch's CUDA graph of that size, in one run. The load
time (a session plans its memory for the dims' upper bounds: it makes the program there first). For each
size: the first run's wall time (the program specialized there: preprocess, pipelines, recording) and the
device memory in use after it (the session's, measured as the device's free memory; every size's first run
comes before PyTorch uses the device), the steady wall median, the static program's and the graph's, and the error against
PyTorch eager.

    python3 benchmarks/real/dynamic_sizes.py OUT.json [--runs N] [--warmup N]

Cases: resnet50 with batch 1..8, and the GPT-2-small trunk with sequence 16..512 (batch 1). Needs the gpuu
wheel on PYTHONPATH and torch with CUDA (torchvision for resnet50).
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch
from torch.export import Dim

import gpuu

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "suite"))
from real_models import CASES  # noqa: E402
from torch_suite import graphed, median, wall_us  # noqa: E402  (the suite's timing, one home)

# name -> (case of real_models, dim, input axis, export size, sizes to run)
DYNAMIC = {
    "resnet50_batch": ("resnet50_b1", Dim("batch", min=1, max=8), 0, 2, [1, 4, 8, 2]),
    "gpt2_trunk_seq": ("gpt2_trunk_s128", Dim("seq", min=16, max=512), 1, 128, [128, 16, 512, 64]),
}


def spec():
    return gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1,
                                      shared_context_token="bench_dyn", shared_sync_mode="timeline")


def input_at(shape, axis, size, seed):
    shape = list(shape)
    shape[axis] = size
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def gpuu_wall(program, x, warmup, runs):
    times = []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        program.run([x])
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e6)
    return median(times)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--cases", default=",".join(DYNAMIC))
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "runs": a.runs, "cases": []}
    tmp = tempfile.mkdtemp(prefix="gpuu_dyn.")
    for name in a.cases.split(","):
        case, dim, axis, export_size, sizes = DYNAMIC[name]
        build, shape = CASES[case]
        torch.manual_seed(0)
        model = build().eval()
        x0 = input_at(shape, axis, export_size, 0)
        path = os.path.join(tmp, f"{name}.gpuu")
        t0 = time.perf_counter()
        dynamic_shapes = ({axis: dim},)
        report = gpuu.export(model, (x0,), spec(), path, dynamic_shapes=dynamic_shapes)
        entry = {"case": name, "dims": report["dims"], "export_s": round(time.perf_counter() - t0, 2), "sizes": []}
        print(f"{name}: exported in {entry['export_s']} s", flush=True)
        torch.cuda.synchronize()
        free_before = torch.cuda.mem_get_info()[0]  # the device's: gpuu's Vulkan memory shows here too
        t0 = time.perf_counter()
        with gpuu.load(path) as program:
            entry["load_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
            entry["device_mib_after_load"] = round((free_before - torch.cuda.mem_get_info()[0]) / 2**20, 1)
            print(f"  loaded in {entry['load_ms']} ms, {entry['device_mib_after_load']} MiB of device memory", flush=True)
            # gpuu alone first: each size's first run and the device memory after it, before PyTorch
            # allocates anything of its own on the device.
            firsts = {}
            for size in sizes:
                x = input_at(shape, axis, size, size)
                t0 = time.perf_counter()
                (got,) = program.run([x.numpy()])
                first_ms = (time.perf_counter() - t0) * 1e3
                firsts[size] = (got, first_ms, round((free_before - torch.cuda.mem_get_info()[0]) / 2**20, 1))
                print(f"  {dim.__name__}={size}: first run {first_ms:.1f} ms, {firsts[size][2]} MiB", flush=True)
            for size in sizes:
                got, first_ms, gpuu_mib = firsts[size]
                x = input_at(shape, axis, size, size)
                dyn_us = gpuu_wall(program, x.numpy(), a.warmup, a.runs)
                with torch.no_grad():
                    m, xd = model.to(dev), x.to(dev)
                    want = m(xd).float().cpu().numpy()
                    g, _ = graphed(lambda: m(xd))
                    graph_us = wall_us(g.replay, dev, a.warmup, a.runs)
                model.cpu()
                static_path = os.path.join(tmp, f"{name}_{size}.gpuu")
                gpuu.export(model, (x,), spec(), static_path)
                with gpuu.load(static_path) as static:
                    static_us = gpuu_wall(static, x.numpy(), a.warmup, a.runs)
                os.remove(static_path)
                row = {"size": size, "first_run_ms": round(first_ms, 1), "device_mib": gpuu_mib,
                       "dynamic_us": round(dyn_us, 1),
                       "static_us": round(static_us, 1), "graph_us": round(graph_us, 1),
                       "dynamic_over_static": round(dyn_us / static_us, 3),
                       "max_abs_err": float(np.abs(got - want).max())}
                entry["sizes"].append(row)
                print(f"  {dim.__name__}={size}: dynamic {row['dynamic_us']} us, "
                      f"static {row['static_us']} us, graph {row['graph_us']} us, err {row['max_abs_err']:.2e}",
                      flush=True)
        result["cases"].append(entry)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
