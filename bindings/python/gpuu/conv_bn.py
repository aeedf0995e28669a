"""Eval-mode batch norm folded into the convolution before it.

A batch norm in eval mode is an affine map per channel, y = x * scale + shift. Lowered on its own it is a multiply
and an add after the convolution: work in every element, and in a residual block (resnet's downsample branch) two
such chains meet in one add that neither convolution's store can take, so it became a dispatch of its own. Where
the batch norm alone reads a convolution whose weight (and bias) are constants, the frontend instead scales the
weight per output channel and folds the shift into the bias, as PyTorch's own fuse_conv_bn_eval does: the batch
norm costs nothing at run time, on every backend.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Set, Tuple

import torch

from .quantized import packet

_CONVOLUTIONS = {"convolution", "_convolution"}
_EVAL_BATCH_NORMS = {"_native_batch_norm_legit_no_training", "native_batch_norm"}


def _arg(node: Any, index: int, name: str) -> Any:
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[index] if index < len(node.args) else None


def plan(gm: torch.fx.GraphModule, constants: Set[Any], live: Set[Any], skip: Set[Any]) -> Dict[Any, Any]:
    """{convolution node: batch norm node} for each eval batch norm that alone reads a non-transposed convolution
    of constant weight and bias; `skip`: nodes another fold takes (a quantized convolution)."""
    folds: Dict[Any, Any] = {}
    for bn in gm.graph.nodes:
        if bn not in live or bn.op != "call_function" or packet(bn) not in _EVAL_BATCH_NORMS:
            continue
        if packet(bn) == "native_batch_norm" and _arg(bn, 5, "training"):
            continue
        conv = bn.args[0] if bn.args else None
        if not isinstance(conv, torch.fx.Node) or conv in skip or bn in skip:
            continue
        if conv.op != "call_function" or packet(conv) not in _CONVOLUTIONS or _arg(conv, 6, "transposed"):
            continue
        if [u for u in conv.users if u in live] != [bn]:
            continue
        weight, bias = _arg(conv, 1, "weight"), _arg(conv, 2, "bias")
        stats = [_arg(bn, i, k) for i, k in ((1, "weight"), (2, "bias"), (3, "running_mean"), (4, "running_var"))]
        if weight not in constants or stats[2] not in constants or stats[3] not in constants:
            continue
        if any(v is not None and v not in constants for v in [bias, stats[0], stats[1]]):
            continue
        folds[conv] = bn
    return folds


def folded(conv: Any, bn: Any, value_of: Callable[[Any], torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
    """The weight and bias of `conv` with `bn` folded in, in the weight's dtype (computed in float64)."""
    weight = value_of(_arg(conv, 1, "weight")).detach()
    bias_node = _arg(conv, 2, "bias")
    gamma, beta, mean, var = (None if n is None else value_of(n).detach().double()
                              for n in (_arg(bn, i, k) for i, k in ((1, "weight"), (2, "bias"), (3, "running_mean"),
                                                                    (4, "running_var"))))
    eps_index = 6 if packet(bn) == "_native_batch_norm_legit_no_training" else 7
    eps = float(_arg(bn, eps_index, "eps"))
    scale = torch.rsqrt(var + eps)
    if gamma is not None:
        scale = scale * gamma
    shift = -mean * scale
    if beta is not None:
        shift = shift + beta
    bias = shift if bias_node is None else value_of(bias_node).detach().double() * scale + shift
    w = weight.double() * scale.reshape([-1] + [1] * (weight.dim() - 1))
    return w.to(weight.dtype), bias.to(weight.dtype)
