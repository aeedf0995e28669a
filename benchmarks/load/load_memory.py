"""Issue 21's figures at real sizes: how a program file compares with its weights, what loading it costs the
process in host memory and time, how the first execute compares with a warm one, and what the session holds on
the device, per model, policy and VGF path.

    python benchmarks/load/load_memory.py OUT_DIR [--cases resnet50_b1,vit_b_16_b1,gpt2_trunk_s128]
        [--policies vulkan_first,vgf_first] [--vgf-paths executor,native] [--result FILE]

Each model (benchmarks/real/real_models.py's cases, random weights from a fixed seed; torchvision for the
torchvision ones) is exported once per policy into OUT_DIR. Every load runs in a process of its own, which loads
a tiny program first (so the driver's own start-up is in the baseline, not in the figure), then the program:
- load_s: gpuu.load (file mapped, delegates made, weights uploaded, pipelines created);
- rss_growth_mib: the process's peak resident memory while loading (VmHWM) minus the baseline; the bound
  is 64 MiB + the weights where the device's memory is the host's (lavapipe, integrated GPUs), 64 MiB else;
- first_ms, warm_ms: the first execute and the median of 5 after it;
- memory: the session's device memory report (Session.memory()).
It loads each program twice with one pipeline cache file: "cold" (a fresh file) and "warm" (the file the cold
load left). The native VGF path (Arm's emulation layers, set up as the tests do) is measured for vgf_first.
Writes benchmarks/results/load-<device>-<date>-<commit>.json unless --result says otherwise.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WARM_RUNS = 5
BASE_ALLOWANCE_MIB = 64


def _status_mib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no {key} in /proc/self/status")


def measure(path, tiny, vgf_path, cache):
    """One load of `path` in this process (a child): the figures as a dict."""
    import numpy as np
    import gpuu

    kwargs = {"vgf_path": vgf_path} if vgf_path else {}
    with gpuu.load(tiny, **kwargs) as warm_up:
        warm_up.run([np.zeros(i.shape, np.float32) for i in warm_up.inputs])
        base = _status_mib("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        started = time.perf_counter()
        with gpuu.load(path, pipeline_cache=cache, **kwargs) as program:
            load_s = time.perf_counter() - started
            peak = _status_mib("VmHWM")
            rng = np.random.default_rng(0)
            inputs = [rng.standard_normal(i.shape).astype(np.float32) for i in program.inputs]
            started = time.perf_counter()
            program.run(inputs)
            first_ms = (time.perf_counter() - started) * 1e3
            warm = []
            for _ in range(WARM_RUNS):
                started = time.perf_counter()
                program.run(inputs)
                warm.append((time.perf_counter() - started) * 1e3)
            memory = program.memory()
            device = program.context().device_name
    return {"load_s": round(load_s, 3), "rss_growth_mib": round(peak - base, 1), "first_ms": round(first_ms, 2),
            "warm_ms": round(statistics.median(warm), 2), "memory": memory, "device": device}


def _child(path, tiny, vgf_path, cache, env):
    argv = [sys.executable, os.path.abspath(__file__), "--measure", path, "--tiny", tiny, "--cache", cache]
    if vgf_path:
        argv += ["--vgf-path", vgf_path]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {path} ({vgf_path or 'default'}) failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _weights_bytes(model):
    seen, total = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


def _commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--cases", default="resnet50_b1,vit_b_16_b1,gpt2_trunk_s128")
    ap.add_argument("--policies", default="vulkan_first,vgf_first")
    ap.add_argument("--vgf-paths", default="executor,native")
    ap.add_argument("--result")
    ap.add_argument("--measure")
    ap.add_argument("--tiny")
    ap.add_argument("--cache")
    ap.add_argument("--vgf-path")
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.tiny, args.vgf_path, args.cache)))
        return
    if not args.out_dir:
        ap.error("OUT_DIR is required")

    import torch
    import gpuu
    sys.path.insert(0, os.path.join(ROOT, "benchmarks", "real"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    from real_models import make_case

    os.makedirs(args.out_dir, exist_ok=True)
    tiny = os.path.join(args.out_dir, "tiny.gpuu")
    torch.manual_seed(0)
    gpuu.export(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval(), (torch.randn(1, 8),),
                gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1),
                tiny)
    native_env = None
    if "native" in args.vgf_paths.split(","):
        import arm_sdk  # Arm's emulation layers for the native path, set up as the tests do
        native_env = arm_sdk.emulation_env(tempfile.mkdtemp(prefix="gpuu_load_layers_"))
    rows = []
    for case in args.cases.split(","):
        model, x = make_case(case)
        weights = _weights_bytes(model)
        for policy in args.policies.split(","):
            path = os.path.join(args.out_dir, f"{case}_{policy}.gpuu")
            started = time.perf_counter()
            if not os.path.exists(path):
                spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=policy, min_partition_size=1)
                gpuu.export(model, (x,), spec, path)
            export_s = time.perf_counter() - started
            size = os.path.getsize(path)
            paths = args.vgf_paths.split(",") if policy == "vgf_first" else [None]
            for vgf_path in paths:
                env = native_env if vgf_path == "native" else dict(os.environ)
                cache = os.path.join(args.out_dir, f"{case}_{policy}_{vgf_path or 'vulkan'}.cache")
                if os.path.exists(cache):
                    os.remove(cache)
                row = {"case": case, "policy": policy, "vgf_path": vgf_path, "file_bytes": size,
                       "weight_bytes": weights, "file_over_weights": round(size / weights, 4),
                       "export_s": round(export_s, 1)}
                for phase in ("cold", "warm"):
                    row[phase] = _child(path, tiny, vgf_path, cache, env)
                row["device"] = row["warm"].pop("device") or row["cold"].get("device", "")
                row["cold"].pop("device", None)
                row["rss_bound_mib"] = BASE_ALLOWANCE_MIB + weights / 2**20
                rows.append(row)
                print(json.dumps(row), flush=True)
    device = next((r["device"] for r in rows if r["device"]), "unknown")
    doc = {"what": "issue 21: file vs weights, load, RSS growth, first vs warm execute, session memory",
           "date": datetime.date.today().isoformat(), "commit": _commit(), "device": device, "cases": rows}
    result = args.result or os.path.join(
        ROOT, "benchmarks", "results",
        f"load-{''.join(c if c.isalnum() else '_' for c in device)}-{doc['date']}-{doc['commit']}.json")
    with open(result, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", result)


if __name__ == "__main__":
    main()
