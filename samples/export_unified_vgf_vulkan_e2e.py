#!/usr/bin/env python3
"""The RFC's end-to-end export: UnifiedVgfVulkanModel -> one gpuu program with VGF and Vulkan delegates.

Writes OUT_DIR/unified_vgf_vulkan.gpuu, OUT_DIR/input0.bin and OUT_DIR/expected0.bin
(PyTorch eager output), both raw little-endian f32. Needs the gpuu package on
PYTHONPATH (<build>/bindings/python, or <prefix>/lib/python3.X/site-packages
after `cmake --install`) and PyTorch:

  python3 samples/export_unified_vgf_vulkan_e2e.py --out_dir /tmp/unified_gpu \\
      --token vgf_vk_unified_e2e --group_id 7 --prefer vgf_first --min_partition_size 1 --sync_mode timeline
  strings /tmp/unified_gpu/unified_vgf_vulkan.gpuu | grep -E 'VgfBackend|VulkanBackend'
  gpuu-run ... or add --run to execute it here and compare with expected0.bin.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

try:
    import gpuu
except ImportError as e:  # say where the package lives rather than a bare traceback
    sys.exit(f"cannot import gpuu ({e}): `pip install .` from the gpuu source tree (the main job,"
             " tools/dev/main.sh, does it into .venv), or set PYTHONPATH to <build>/bindings/python")


class UnifiedVgfVulkanModel(torch.nn.Module):
    """
    Expected partitioning intent:
      - VGF: transpose -> avg_pool2d
      - Vulkan: index_select -> gather -> index_select
      - VGF: sin -> cos -> reciprocal -> mul -> transpose
    """

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer(
            "channel_index",
            torch.tensor([2, 0, 1], dtype=torch.int64),
        )
        self.register_buffer(
            "row_index",
            torch.tensor([3, 1, 2, 0], dtype=torch.int64),
        )
        col_pattern = torch.tensor([3, 1, 2, 0], dtype=torch.int64)
        self.register_buffer(
            "col_gather_index",
            col_pattern.view(1, 1, 1, 4).repeat(1, 3, 4, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # VGF-friendly prefix
        x = x.transpose(-1, -2)
        x = F.avg_pool2d(x, kernel_size=2, stride=2)

        # Vulkan fallback island
        x = torch.index_select(x, dim=1, index=self.channel_index)
        x = torch.gather(x, dim=3, index=self.col_gather_index)
        x = torch.index_select(x, dim=2, index=self.row_index)

        # VGF-friendly suffix
        s = torch.sin(x)
        c = torch.cos(x)
        y = s * torch.reciprocal(c)
        return y.transpose(-1, -2)


def example_inputs():
    return (
        torch.linspace(
            -0.8,
            0.8,
            steps=1 * 3 * 8 * 8,
            dtype=torch.float32,
        ).reshape(1, 3, 8, 8),
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--token", default="vgf_vk_unified_e2e")
    parser.add_argument("--group_id", type=int, default=7)
    parser.add_argument("--mode", default="lookup_or_create",
                        choices=["disabled", "lookup_only", "lookup_or_create", "create_only"])
    parser.add_argument("--prefer", default="vgf_first", choices=["auto", "vgf_first", "vulkan_first"])
    parser.add_argument("--min_partition_size", type=int, default=1)
    parser.add_argument("--sync_mode", default="timeline", choices=["timeline", "queue_wait_idle", "none"])
    parser.add_argument("--run", action="store_true",
                        help="also run the program with gpuu and compare with the eager output")
    args = parser.parse_args(argv)

    model = UnifiedVgfVulkanModel().eval()
    inputs = example_inputs()
    spec = gpuu.UnifiedGpuCompileSpec(
        vgf=gpuu.VgfCompileSpec(),
        vulkan_compile_options={},
        shared_context_token=args.token,
        shared_context_mode=args.mode,
        shared_sync_mode=args.sync_mode,
        shared_group_id=args.group_id,
        min_partition_size=args.min_partition_size,
        prefer=args.prefer,
    )

    os.makedirs(args.out_dir, exist_ok=True)
    program_path = os.path.join(args.out_dir, "unified_vgf_vulkan.gpuu")
    report = gpuu.export(model, inputs, spec, program_path)

    with torch.no_grad():
        expected = model(*inputs)
    inputs[0].numpy().astype("<f4").tofile(os.path.join(args.out_dir, "input0.bin"))
    expected.numpy().astype("<f4").tofile(os.path.join(args.out_dir, "expected0.bin"))

    print(f"wrote {program_path}")
    for region in report["regions"]:
        print(f"  {region['backend']:<14} {region['node_count']:>2} nodes: {region['first_node']} .. "
              f"{region['last_node']}")
    with gpuu.Program(path=program_path) as program:
        print(f"  delegates: {' -> '.join(program.delegates) or '(none)'}")

    if args.run:
        with gpuu.load(program_path) as loaded:
            (got,) = loaded.run([inputs[0].numpy()])
        err = float(np.max(np.abs(got - expected.numpy())))
        print(f"  gpuu vs eager: max abs error {err:.3g}")
        if not np.allclose(got, expected.numpy(), rtol=1e-4, atol=1e-4):
            print("  MISMATCH", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
