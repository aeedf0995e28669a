"""Merges bench_suite's and torch_suite.py's JSON into the suite summary:
per case gpuu's wall (gpuu_us), GPU time (gpuu_gpu_us), wall with host I/O
(gpuu_host_io_us), PyTorch eager and CUDA-graph replay (torch_eager_us,
torch_graph_us), the ratios gpuu/eager and gpuu/graph, and issue 12's targets
marked met or missed.

    python summarize.py GPUU_JSON TORCH_JSON|- OUT_JSON --commit C --date D [--raw DIR]
"""

import argparse
import json
import os
import sys

# Outputs within this of PyTorch eager (relative to the output's scale) count as correct.
TOLERANCE = 1e-4


def ratio(a, b):
    return round(a / b, 3) if a is not None and b and a > 0 and b > 0 else None


def target(what, value, limit, le=True):
    met = value is not None and limit is not None and (value <= limit if le else value >= limit)
    return {"target": what, "value": value, "limit": limit, "met": met}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("gpuu")
    p.add_argument("torch", help="torch_suite.py's JSON, or - where it did not run")
    p.add_argument("out")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--date", default="")
    p.add_argument("--raw", default="", help="where the raw JSON files lie (recorded relative to OUT_JSON)")
    a = p.parse_args()
    with open(a.gpuu) as f:
        g = json.load(f)
    t = {"cases": []}
    if a.torch != "-":
        with open(a.torch) as f:
            t = json.load(f)
    torch_cases = {c["case"]: c for c in t["cases"]}

    cases = {}
    for c in g["cases"]:
        name, kind = c["case"], c.get("kind")
        tc = torch_cases.get(name, {})
        s = {"kind": kind}
        if "error" in c:
            s["error"] = c["error"]
        if kind == "program":
            s.update(gpuu_us=c.get("wall_us"), gpuu_gpu_us=c.get("gpu_us"), gpuu_host_io_us=c.get("host_io_wall_us"),
                     gpuu_delegates=c.get("delegates"))
            diff, scale = c.get("max_abs_diff", -1), max(1.0, c.get("ref_max_abs", 0))
            s["max_abs_diff_vs_eager"] = diff
            s["correct"] = diff is not None and 0 <= diff <= TOLERANCE * scale
        elif kind == "delegates":
            d1, d3 = c.get("d1", {}), c.get("d3", {})
            s.update(gpuu_us=d3.get("wall_us"), gpuu_gpu_us=d3.get("gpu_us"), gpuu_host_io_us=d3.get("host_io_wall_us"),
                     gpuu_1_delegate_us=d1.get("wall_us"), gpuu_1_delegate_gpu_us=d1.get("gpu_us"),
                     delegates_3_vs_1=ratio(d3.get("wall_us"), d1.get("wall_us")))
        else:  # gemm, chain: kernel-layer runs (wall = submit + wait), and the same graph through a Session
            s.update(gpuu_us=c.get("wall_us"), gpuu_gpu_us=c.get("gpu_us"), gpuu_dispatches=c.get("dispatches"),
                     gpuu_runtime_us=c.get("runtime_wall_us"), gpuu_runtime_host_io_us=c.get("runtime_host_io_wall_us"),
                     correct=c.get("ok", False))
            if kind == "gemm":
                s["tflops"] = c.get("tflops")
                s["torch_tflops"] = tc.get("tflops")
                s["tflops_vs_torch"] = ratio(c.get("tflops"), tc.get("tflops"))
            else:
                s["tb_s"] = c.get("tb_s")
                s["torch_eager_tb_s"] = tc.get("tb_s")
                s["torch_graph_tb_s"] = tc.get("graph_tb_s")
        s["torch_eager_us"] = tc.get("eager_us")
        s["torch_graph_us"] = tc.get("graph_us")
        for k in ("eager_gpu_us", "graph_gpu_us"):
            if k in tc:
                s["torch_" + k] = tc[k]
        s["gpuu_vs_eager"] = ratio(s.get("gpuu_us"), s["torch_eager_us"])
        s["gpuu_vs_graph"] = ratio(s.get("gpuu_us"), s["torch_graph_us"])

        # Issue 12's targets.
        targets = []
        if name == "rfc":
            targets.append(target("gpuu_us <= 45", s["gpuu_us"], 45))
        elif kind == "program":  # the families and the conv net
            targets.append(target("gpuu_gpu_us <= torch_eager_us", s["gpuu_gpu_us"], s["torch_eager_us"]))
            gpu = s["gpuu_gpu_us"]
            targets.append(target("gpuu_us <= 1.1 * gpuu_gpu_us", s["gpuu_us"],
                                  round(1.1 * gpu, 2) if gpu and gpu > 0 else None))
        elif kind == "delegates":
            d1 = s["gpuu_1_delegate_us"]
            targets.append(target("3 delegates <= 1.15 * 1 delegate (wall)", s["gpuu_us"],
                                  round(1.15 * d1, 2) if d1 else None))
        elif kind == "gemm":
            share = 0.8 if name.startswith("gemm_f32") else 0.5
            tt = s["torch_tflops"]
            targets.append(target(f"tflops >= {share} * torch_tflops", s["tflops"],
                                  round(share * tt, 3) if tt else None, le=False))
        elif kind == "chain":
            targets.append(target("tb_s >= 2.6", s["tb_s"], 2.6, le=False))
        s["targets"] = targets
        cases[name] = s

    missed = [f"{n}: {x['target']}" for n, s in cases.items() for x in s["targets"] if not x["met"]]
    incorrect = [n for n, s in cases.items() if s.get("correct") is False]
    summary = {
        "benchmark": "suite",
        "date": a.date,
        "commit": a.commit,
        "device": {"name": g.get("device"), "driver": g.get("driver")},
        "torch": {k: t.get(k) for k in ("torch", "cuda", "device")} if a.torch != "-" else None,
        "runs": g.get("runs"), "warmup": g.get("warmup"), "small": g.get("small"),
        "raw": os.path.relpath(a.raw, os.path.dirname(os.path.abspath(a.out)) or ".") if a.raw else "",
        "targets_met": sum(x["met"] for s in cases.values() for x in s["targets"]),
        "targets_missed": missed,
        "incorrect": incorrect,
        "cases": cases,
    }
    with open(a.out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"wrote {a.out}: {summary['targets_met']} targets met, {len(missed)} missed, "
          f"{len(incorrect)} cases incorrect", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
