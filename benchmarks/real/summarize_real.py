"""Merges bench_suite's program runs (gpuu.json) and torch_real.py's (torch.json) into the real-size
summary: per model and precision gpuu_us (wall, device-resident I/O), gpuu_gpu_us, torch_eager_us,
torch_graph_us, the ratios, the error against PyTorch's f32 eager, and the commit and date.

    python3 benchmarks/real/summarize_real.py gpuu.json torch.json OUT.json --commit C --date D [--export export.json]
"""

import argparse
import json
import os


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("gpuu")
    p.add_argument("torch")
    p.add_argument("out")
    p.add_argument("--commit", required=True)
    p.add_argument("--date", required=True)
    p.add_argument("--export", nargs="*", default=[], help="export_real.py's logs")
    a = p.parse_args()
    g = json.load(open(a.gpuu))
    t = json.load(open(a.torch))
    logs = [json.load(open(path)) for path in a.export if os.path.exists(path)]  # F32=0 writes no f32 log
    exported = {k: v for log in logs for k, v in log["cases"].items()}
    torch_by = {c["case"]: c for c in t["cases"]}
    rows = []
    for c in g["cases"]:
        if c.get("kind") != "program":
            continue
        name = c["case"]
        # An f32 model exported with precision="fp16" is held to PyTorch's f16 model, and so are the quantized
        # ones (the targets: int8 faster than f16).
        tc = torch_by.get(name.replace("_f32to16", "_f16").replace("_int8", "_f16").replace("_a16w8", "_f16"), {})
        r = {"case": name, "gpuu_us": c.get("wall_us"), "gpuu_gpu_us": c.get("gpu_us"),
             "gpuu_host_wait_us": c.get("host_wait_us"), "gpuu_host_submit_us": c.get("host_submit_us"),
             "gpuu_host_io_us": c.get("host_io_wall_us"),
             "delegates": c.get("delegates"),
             "torch_eager_us": tc.get("eager_us"), "torch_graph_us": tc.get("graph_us"),
             "torch_graph_gpu_us": tc.get("graph_gpu_us"),
             "max_abs_err_vs_f32_eager": c.get("max_abs_diff"), "ref_max_abs": c.get("ref_max_abs")}
        if "error" in c:
            r["error"] = c["error"]
        if name in exported:
            r["export"] = exported[name]
        if r["gpuu_us"] and r["torch_graph_us"]:
            r["gpuu_over_graph"] = round(r["gpuu_us"] / r["torch_graph_us"], 3)
        if r["gpuu_us"] and r["torch_eager_us"]:
            r["gpuu_over_eager"] = round(r["gpuu_us"] / r["torch_eager_us"], 3)
        rows.append(r)
    out = {"device": g.get("device"), "driver": g.get("driver"), "torch": t.get("torch"), "cuda": t.get("cuda"),
           "date": a.date, "commit": a.commit, "policy": logs[0].get("policy") if logs else None,
           "tf32": False, "runs": g.get("runs"), "cases": rows}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    for r in rows:
        print(f"{r['case']:28s} gpuu {r['gpuu_us']!s:>10} us  graph {r['torch_graph_us']!s:>10}  "
              f"eager {r['torch_eager_us']!s:>10}  x{r.get('gpuu_over_graph')}  err {r['max_abs_err_vs_f32_eager']}")


if __name__ == "__main__":
    main()
