"""Sparse mixture-of-experts blocks in a form that traces.

Hugging Face's Mixtral and Qwen2-MoE blocks pick each expert's tokens with `nonzero` and `where`: shapes that
follow the router's choices, which neither make_fx nor torch.export can record. While gpuu traces a model, such a
block runs densely instead: the router's top-k weights are scattered into a [tokens, experts] matrix (zero where
an expert is not chosen) and every expert's output is added in, weighted by its column. The result is the block's
(a token's experts are summed in expert order, as the block's index_add does; the others add exact zeros), at the
cost of running every expert on every token.
"""

import contextlib
from typing import Any, Callable, Dict, Iterator, Tuple

import torch
import torch.nn.functional as F


def _routed(block: Any, x: torch.Tensor, normalize: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(router logits, top-k weights in x's dtype, chosen experts), as the blocks compute them."""
    logits = block.gate(x)
    weights, chosen = torch.topk(F.softmax(logits, dim=1, dtype=torch.float), block.top_k, dim=-1)
    if normalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return logits, weights.to(x.dtype), chosen


def _experts_weighted(block: Any, x: torch.Tensor, weights: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    dense = torch.zeros(x.shape[0], len(block.experts), dtype=x.dtype).scatter(1, chosen, weights)
    out = torch.zeros_like(x)
    for e, expert in enumerate(block.experts):
        out = out + dense[:, e:e + 1] * expert(x)
    return out


def _mixtral(block: Any, hidden: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    batch, seq, width = hidden.shape
    x = hidden.reshape(-1, width)
    logits, weights, chosen = _routed(block, x, True)
    return _experts_weighted(block, x, weights, chosen).reshape(batch, seq, width), logits


def _qwen2_moe(block: Any, hidden: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    batch, seq, width = hidden.shape
    x = hidden.reshape(-1, width)
    logits, weights, chosen = _routed(block, x, block.norm_topk_prob)
    out = _experts_weighted(block, x, weights, chosen)
    out = out + torch.sigmoid(block.shared_expert_gate(x)) * block.shared_expert(x)
    return out.reshape(batch, seq, width), logits


# Block class name -> its dense forward.
DENSE_FORMS: Dict[str, Callable[[Any, torch.Tensor], Any]] = {
    "MixtralSparseMoeBlock": _mixtral,
    "Qwen2MoeSparseMoeBlock": _qwen2_moe,
}


@contextlib.contextmanager
def dense_experts(module: Any) -> Iterator[None]:
    """Within the block: every sparse MoE block of `module` (DENSE_FORMS) runs its dense form."""
    patched = []  # (block, the forward its instance had of its own, if any)
    if isinstance(module, torch.nn.Module):
        for sub in module.modules():
            form = DENSE_FORMS.get(type(sub).__name__)
            if form is not None and not sub.training:
                patched.append((sub, sub.__dict__.get("forward")))
                sub.forward = form.__get__(sub)
    try:
        yield
    finally:
        for sub, own in patched:
            if own is None:
                del sub.forward
            else:
                sub.forward = own
