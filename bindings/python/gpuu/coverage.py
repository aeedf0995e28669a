"""How much of PyTorch's Core ATen operator set the frontend covers, read from the installed torch and the frontend.

    python -m gpuu.coverage             # the table as Markdown (docs/ops.md's second half)
    python -m gpuu.coverage --summary   # one line: covered / inference ops

Each Core ATen op (an overload tagged torch.Tag.core) is in one class:
  mapped      a lowering in gpuu.aten_ops turns it into gpuu ops
  decomposed  gpuu's decomposition table turns it into ops that are mapped
  folded      it creates a tensor from constants alone (arange, full, ...): computed at export
  training    backward, random or dropout ops: not part of inference
  missing     an inference op gpuu does not cover yet (export names it when a model uses it)
"""

from __future__ import annotations

import sys
from typing import Dict, List, Tuple

import torch

from . import aten_ops
from .frontend import decomposition_table

_FOLDED = {"arange", "empty", "empty_strided", "fill", "full", "full_like", "scalar_tensor", "sym_numel", "sym_size",
           "sym_storage_offset", "sym_stride", "_local_scalar_dense"}
_TRAINING = {"rand", "randn", "randperm", "native_dropout"}
_WHY_MISSING = {
    "nonzero": "its output shape depends on the data",
    "masked_scatter": "its output layout depends on the data",
    "_pdist_forward": "no kernel yet",
    "_fft_r2c": "no FFT kernels",
    "_fft_c2r": "no FFT kernels (complex tensors)",
}


def core_aten_ops() -> Dict[str, List[object]]:
    """Overload packet name -> its overloads tagged core, for every packet that has one."""
    ops: Dict[str, List[object]] = {}
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        core = [getattr(packet, o) for o in packet.overloads() if torch.Tag.core in getattr(packet, o).tags]
        if core:
            ops[packet.__name__] = core
    return dict(sorted(ops.items()))


def classify() -> List[Tuple[str, str, str]]:
    """(op, class, note) for every Core ATen op."""
    table = decomposition_table()
    rows = []
    for name, overloads in core_aten_ops().items():
        decomposed = all(o in table for o in overloads)
        if name.endswith("_backward") or name in _TRAINING:
            rows.append((name, "training", "not part of inference"))
        elif name in aten_ops.LOWERINGS:
            fn = aten_ops.LOWERINGS[name]
            rows.append((name, "mapped", (fn.__doc__ or "").strip().split("\n")[0]))
        elif name.startswith("sym_") or name in _FOLDED or name in aten_ops.SHAPE_ONLY:
            rows.append((name, "folded", "computed at export from constants"))
        elif name in _WHY_MISSING:
            rows.append((name, "missing", _WHY_MISSING[name]))
        elif decomposed:
            rows.append((name, "decomposed", "PyTorch's decomposition, then mapped ops"))
        elif name in _FOLDED or name in aten_ops.SHAPE_ONLY:
            rows.append((name, "folded", "computed at export from constants"))
        else:
            rows.append((name, "missing", _WHY_MISSING.get(name, "no lowering yet")))
    return rows


def summary(rows: List[Tuple[str, str, str]]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for _, cls, _ in rows:
        counts[cls] = counts.get(cls, 0) + 1
    inference = len(rows) - counts.get("training", 0)
    covered = counts.get("mapped", 0) + counts.get("decomposed", 0) + counts.get("folded", 0)
    return {"core_ops": len(rows), "inference_ops": inference, "covered": covered, **counts}


def markdown() -> str:
    rows = classify()
    s = summary(rows)
    lines = [f"Core ATen operators (torch {torch.__version__.split('+')[0]}): {s['covered']} of the "
             f"{s['inference_ops']} inference operators are covered ({s.get('mapped', 0)} mapped, "
             f"{s.get('decomposed', 0)} decomposed, {s.get('folded', 0)} folded at export); "
             f"{s.get('training', 0)} more are training-only.", "",
             "| ATen op | coverage | note |", "| --- | --- | --- |"]
    lines += [f"| `aten.{name}` | {cls} | {note} |" for name, cls, note in rows]
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    if argv[1:] == ["--summary"]:
        s = summary(classify())
        print(f"{s['covered']}/{s['inference_ops']} Core ATen inference ops covered "
              f"({s.get('missing', 0)} missing, {s.get('training', 0)} training-only not counted)")
        return 0
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
