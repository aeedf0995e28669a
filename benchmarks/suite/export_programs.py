"""Exports the suite's programs (the RFC model, the model families at batch 1
and 8, the 224x224 conv net) for bench_suite: NAME.gpuu, with NAME.in0.bin
(the input) and NAME.out0.bin (PyTorch eager's output), raw little-endian,
which the runner compares its output with.

    python benchmarks/suite/export_programs.py [OUT_DIR]   (default .bench/suite/programs)
"""

import argparse
import os
import subprocess
import sys

import torch

import gpuu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_models import program_models, repo_root  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir", nargs="?", default=os.path.join(repo_root(), ".bench", "suite", "programs"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    # The commit the programs (and the bench_suite built beside them) come from: the GPU machine has no git.
    commit = subprocess.run(["git", "-C", repo_root(), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", repo_root(), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    with open(os.path.join(args.out_dir, "commit.txt"), "w") as f:
        f.write((commit.stdout.strip() or "unknown") + ("-dirty" if dirty else "") + "\n")
    for name, (model, x) in program_models().items():
        # The RFC keeps its sample's spec (named context, timeline); the rest as the family tests export.
        token = "vgf_vk_unified_e2e" if name == "rfc" else "bench_suite"
        spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                          shared_context_token=token, shared_sync_mode="timeline")
        path = os.path.join(args.out_dir, f"{name}.gpuu")
        report = gpuu.export(model, (x,), spec, path)
        with torch.no_grad():
            want = model(x)
        x.numpy().tofile(os.path.join(args.out_dir, f"{name}.in0.bin"))
        want.numpy().astype("<f4").tofile(os.path.join(args.out_dir, f"{name}.out0.bin"))
        regions = " ".join(f"{r['backend']}:{r['node_count']}" for r in report["regions"])
        print(f"{path}  {os.path.getsize(path)} bytes  {regions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
