"""Exports the programs the VGF paths benchmark runs: the RFC model and the model-family suite (vgf_first).

    python benchmarks/vgf/export_programs.py OUT_DIR [--batch N]
"""

import argparse
import importlib.util
import os
import sys

import torch

import gpuu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from model_families import FAMILIES, family_input, make_family  # noqa: E402


def rfc_model():
    path = os.path.join(ROOT, "samples", "export_unified_vgf_vulkan_e2e.py")
    spec = importlib.util.spec_from_file_location("rfc_sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.UnifiedVgfVulkanModel().eval(), module.example_inputs()[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    models = {"rfc": rfc_model()}
    for name in sorted(FAMILIES):
        models[name] = (make_family(name), family_input(name, batch=args.batch))
    for name, (model, x) in models.items():
        path = os.path.join(args.out_dir, f"{name}.gpuu")
        gpuu.export(model, (x,), spec, path)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
