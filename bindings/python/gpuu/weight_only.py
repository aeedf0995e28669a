"""Weight-only quantized linears (an LLM's usual quantization): integer weights with float scales, float activations.

gpuu.quantize(model, scheme="w8" | "w4g32" | "w4g64" | "w4g128") replaces every nn.Linear of a copy of `model` with a
WeightOnlyLinear: symmetric integer weights, 8-bit with one scale per output channel ("w8") or 4-bit with one scale
per group of 32, 64 or 128 along K ("w4gNN"), the activations untouched. Its forward is the custom op
gpuu::linear_dequant, which PyTorch runs by dequantizing (the reference) and gpuu exports as its linear_dequant op,
whose Vulkan kernels read the integers and dequantize them as they load: the weights cross the memory bus at 1 or
1/2 byte each instead of 2 or 4.

4-bit weights are stored two to a byte, low nibble first (element 2i in bits 0..3 of byte i), as gpuu's op reads them.
"""

from __future__ import annotations

import copy
import warnings
from typing import Dict, Optional, Tuple

import torch

# scheme -> (bits, group size along K; 0: one scale per output channel)
SCHEMES: Dict[str, Tuple[int, int]] = {"w8": (8, 0), "w4g32": (4, 32), "w4g64": (4, 64), "w4g128": (4, 128)}


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """int8 [N, K/2] of two signed 4-bit values a byte (low first) -> int8 [N, K] of values -8..7."""
    b = packed.to(torch.int16) & 0xFF
    lo, hi = b & 0xF, b >> 4
    both = torch.stack([lo, hi], dim=-1).reshape(packed.shape[0], -1)
    return torch.where(both >= 8, both - 16, both).to(torch.int8)


def pack_nibbles(values: torch.Tensor) -> torch.Tensor:
    """int8 [N, K] of values -8..7 (K even) -> int8 [N, K/2], two a byte, low first."""
    v = values.to(torch.int16) & 0xF
    packed = v[:, 0::2] | (v[:, 1::2] << 4)
    return torch.where(packed >= 128, packed - 256, packed).to(torch.int8)


def dequantize(weight: torch.Tensor, scales: torch.Tensor, bits: int, group_size: int) -> torch.Tensor:
    """The float32 weight [N, K]: each integer times its group's scale (as gpuu's kernels compute it)."""
    q = unpack_nibbles(weight) if bits == 4 else weight
    n, k = q.shape
    group = k if group_size == 0 else group_size
    w = q.to(torch.float32).reshape(n, k // group, group) * scales.to(torch.float32).reshape(n, -1, 1)
    return w.reshape(n, k)


@torch.library.custom_op("gpuu::linear_dequant", mutates_args=())
def linear_dequant(x: torch.Tensor, weight: torch.Tensor, scales: torch.Tensor, bias: Optional[torch.Tensor],
                   bits: int, group_size: int) -> torch.Tensor:
    """x dequantize(weight)^T + bias, in x's dtype (gpuu's op linear_dequant; see docs/ops.md)."""
    w = dequantize(weight, scales, bits, group_size)
    y = torch.nn.functional.linear(x.to(torch.float32), w, None if bias is None else bias.to(torch.float32))
    return y.to(x.dtype)


@linear_dequant.register_fake
def _(x, weight, scales, bias, bits, group_size):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


class WeightOnlyLinear(torch.nn.Module):
    """A linear with quantized weights (buffers `weight`, int8, and `scales`, the activations' dtype) and a float bias."""

    def __init__(self, weight: torch.Tensor, scales: torch.Tensor, bias: Optional[torch.Tensor], bits: int,
                 group_size: int):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("scales", scales)
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone(), requires_grad=False)
        self.bits = bits
        self.group_size = group_size

    @staticmethod
    def from_linear(linear: torch.nn.Linear, bits: int, group_size: int) -> "WeightOnlyLinear":
        w = linear.weight.detach().to(torch.float32)
        n, k = w.shape
        group = k if group_size == 0 else group_size
        if k % group != 0 or (bits == 4 and k % 2 != 0):
            raise ValueError(f"a linear of K={k} cannot take {bits}-bit weights in groups of {group}")
        qmax = 127 if bits == 8 else 7
        grouped = w.reshape(n, k // group, group)
        scales = grouped.abs().amax(dim=-1).clamp(min=1e-12) / qmax  # [N, K / group]
        q = torch.clamp(torch.round(grouped / scales.unsqueeze(-1)), -qmax - 1, qmax).to(torch.int8).reshape(n, k)
        weight = pack_nibbles(q) if bits == 4 else q
        return WeightOnlyLinear(weight, scales.to(linear.weight.dtype), linear.bias, bits, group_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_dequant(x, self.weight, self.scales, self.bias, self.bits, self.group_size)

    def extra_repr(self) -> str:
        k = self.weight.shape[1] * (2 if self.bits == 4 else 1)
        group = "per channel" if self.group_size == 0 else f"groups of {self.group_size}"
        return f"in_features={k}, out_features={self.weight.shape[0]}, bits={self.bits}, {group}"


def quantize_weights(model: torch.nn.Module, scheme: str) -> torch.nn.Module:
    """A copy of `model` with every nn.Linear a WeightOnlyLinear of `scheme` (one of SCHEMES)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r} is not a weight-only scheme; choose one of {', '.join(SCHEMES)}")
    bits, group_size = SCHEMES[scheme]
    quantized = copy.deepcopy(model)
    replaced, kept = 0, []
    for parent_name, parent in list(quantized.named_modules()):
        for name, child in list(parent.named_children()):
            if type(child) is not torch.nn.Linear:
                continue
            k = child.in_features
            if k % (group_size or 1) != 0 or (bits == 4 and k % 2 != 0):
                kept.append(f"{parent_name + '.' if parent_name else ''}{name} (K={k})")
                continue
            setattr(parent, name, WeightOnlyLinear.from_linear(child, bits, group_size))
            replaced += 1
    if replaced == 0:
        raise ValueError(f"no nn.Linear of the model takes scheme {scheme!r}"
                         + (f": K is not a multiple of {group_size} in {', '.join(kept)}" if kept else ""))
    if kept:
        warnings.warn(f"gpuu.quantize({scheme!r}): {len(kept)} linears stay float, their K not a multiple of "
                      f"{group_size}: {', '.join(kept[:8])}{' ...' if len(kept) > 8 else ''}")
    return quantized.eval()
