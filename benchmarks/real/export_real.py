"""Exports the real-size benchmark's programs on the GPU machine (their weights are too large to carry):
NAME_PREC.gpuu for every case of real_models.CASES in f32, f16 (the model made half in PyTorch),
f32to16 (the f32 model exported with precision="fp16": f32 in and out, f16 inside), int8 and a16w8
(gpuu.quantize's a8w8 and a16w8 schemes, on four random batches; f32 in and out), with
NAME_PREC.in0.bin (the input, raw little-endian, in the program's dtype) and NAME_PREC.out0.bin
(PyTorch eager's f32 output on the GPU with TF32 off, the reference every precision is compared with).

    python3 benchmarks/real/export_real.py OUT_DIR [--policy vulkan_first] [--cases a,b] [--precisions f32,f16]
"""

import argparse
import json
import os
import sys
import time

import torch

import gpuu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_models import CASES, make_case  # noqa: E402

# The quantized precisions: gpuu.quantize's scheme for each.
QUANTIZED = {"int8": "a8w8", "a16w8": "a16w8"}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--policy", default="vulkan_first")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--precisions", default="f32,f16")
    p.add_argument("--log", default="export.json", help="the export log's file name in OUT_DIR")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    log = {}
    for name in a.cases.split(","):
        model, x = make_case(name)
        with torch.no_grad():
            want = model.to(dev)(x.to(dev)).float().cpu()
        model = model.cpu()
        for prec in a.precisions.split(","):
            case = f"{name}_{prec}"
            m, xi = (model.half(), x.half()) if prec == "f16" else (model.float(), x)
            precision = "fp16" if prec == "f32to16" else "fp32"
            if prec in QUANTIZED:  # gpuu.quantize, calibrated on 4 seeded random batches (needs torchao)
                gen = torch.Generator().manual_seed(5)
                try:
                    m = gpuu.quantize(model.float(), (x,), [torch.randn(x.shape, generator=gen) for _ in range(4)],
                                      scheme=QUANTIZED[prec])
                except Exception as e:  # noqa: BLE001
                    log[case] = {"error": f"{type(e).__name__}: {e}"}
                    print(f"{case}: quantize failed: {e}", flush=True)
                    continue
            spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=a.policy, min_partition_size=1,
                                              shared_context_token="bench_real", shared_sync_mode="timeline")
            path = os.path.join(a.out_dir, f"{case}.gpuu")
            t0 = time.perf_counter()
            try:
                report = gpuu.export(m, (xi,), spec, path, precision=precision)
            except Exception as e:  # noqa: BLE001 (one case failing leaves the others)
                log[case] = {"error": f"{type(e).__name__}: {e}"}
                print(f"{case}: export failed: {e}", flush=True)
                continue
            xi.numpy().tofile(os.path.join(a.out_dir, f"{case}.in0.bin"))
            want.numpy().astype("<f4").tofile(os.path.join(a.out_dir, f"{case}.out0.bin"))
            log[case] = {"export_s": round(time.perf_counter() - t0, 2), "bytes": os.path.getsize(path),
                         "backends": report["summary"]["backends"]}
            print(f"{case}: {log[case]['export_s']} s, {log[case]['bytes']} bytes", flush=True)
    with open(os.path.join(a.out_dir, a.log), "w") as f:
        json.dump({"policy": a.policy, "cases": log}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
