"""The real-size benchmark, PyTorch side: every case of real_models.CASES in f32 (TF32 off, so f32 is f32
as in gpuu) and f16, eager (synchronised per call) and as CUDA-graph replay, wall medians after warm-up and
the replay's GPU time from CUDA events. Prints one JSON object.

    python3 benchmarks/real/torch_real.py [--runs N] [--warmup N] [--cases a,b]
"""

import argparse
import json
import os
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "suite"))
from real_models import CASES, make_case  # noqa: E402
from torch_suite import event_us, graphed, wall_us  # noqa: E402  (the suite's timing, one home)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--cases", default=",".join(CASES))
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "runs": a.runs, "warmup": a.warmup, "cases": []}
    w = torch.randn(2048, 2048, device=dev)  # the boost clock comes after seconds of steady work
    start = time.perf_counter()
    while time.perf_counter() - start < 3.0:
        w @ w
        torch.cuda.synchronize()
    with torch.no_grad():
        for name in a.cases.split(","):
            model, x = make_case(name)
            model, x = model.to(dev), x.to(dev)
            for prec in ("f32", "f16"):
                m, xi = (model.half(), x.half()) if prec == "f16" else (model.float(), x.float())
                r = {"case": f"{name}_{prec}"}
                try:  # one case failing leaves the others' numbers
                    r["eager_us"] = wall_us(lambda: m(xi), dev, a.warmup, a.runs)
                    g, _ = graphed(lambda: m(xi))
                    r["graph_us"] = wall_us(g.replay, dev, a.warmup, a.runs)
                    r["graph_gpu_us"] = event_us(g.replay, a.warmup, a.runs)
                except Exception as e:  # noqa: BLE001 (reported in the JSON)
                    r["error"] = f"{type(e).__name__}: {e}"
                out["cases"].append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
            del model, x
            torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
