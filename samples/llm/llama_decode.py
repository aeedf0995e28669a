#!/usr/bin/env python3
"""A small Llama-style decoder that generates greedily in gpuu with its KV caches kept as program states.

One decode step is the exported program: token embedding, layers of RMSNorm -> attention (RoPE, grouped-query
heads, a static KV cache per layer written at the step's position) -> RMSNorm -> SwiGLU MLP, a final RMSNorm and
the lm head. The caches are buffers the step mutates (index_copy_ and index assignment at an input position), so
gpuu keeps them on the device across executes; the prompt is prefilled one token per step, so no shape depends on
the data.

  python3 samples/llm/llama_decode.py [--new-tokens 64] [--d-model 256 --layers 4 ...]

exports the step, generates in gpuu and in PyTorch (a copy of the same model), and prints both token lists,
whether they agree, tokens/s for each (decode steps, one token each) and whether every cache is updated in
place. Needs the gpuu package on PYTHONPATH (<build>/bindings/python) and PyTorch. Weights are random
(torch.manual_seed), so the text is noise; what matters is that both runs pick the same tokens.
"""

import argparse
import copy
import dataclasses
import os
import sys
import tempfile
import time
from typing import Callable, List, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclasses.dataclass
class LlamaConfig:
    """The default is small enough for lavapipe (a CPU Vulkan driver)."""
    vocab: int = 256
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    max_len: int = 96
    ffn_hidden: int = 176  # about 8/3 d_model, as Llama sizes its SwiGLU
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    """RoPE on the last dim, in halves (the rotate_half form): (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.wq = nn.Linear(cfg.d_model, cfg.heads * hd, bias=False)
        self.wk = nn.Linear(cfg.d_model, cfg.kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.d_model, cfg.kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.heads * hd, cfg.d_model, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, cfg.kv_heads, cfg.max_len, hd))
        self.register_buffer("v_cache", torch.zeros(1, cfg.kv_heads, cfg.max_len, hd))

    def forward(self, x, position, cos, sin, mask):
        cfg, hd = self.cfg, self.cfg.head_dim
        q = self.wq(x).view(1, 1, cfg.heads, hd).transpose(1, 2)  # [1, heads, 1, hd]
        k = self.wk(x).view(1, 1, cfg.kv_heads, hd).transpose(1, 2)
        v = self.wv(x).view(1, 1, cfg.kv_heads, hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        # The two ways static caches are written (Hugging Face's, ExecuTorch's): index_copy_ and index assignment.
        self.k_cache.index_copy_(2, position, k)
        self.v_cache[:, :, position] = v
        y = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask, enable_gqa=True)
        return self.wo(y.transpose(1, 2).reshape(1, 1, cfg.heads * hd))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.d_model, cfg.ffn_hidden, bias=False)
        self.w3 = nn.Linear(cfg.d_model, cfg.ffn_hidden, bias=False)
        self.w2 = nn.Linear(cfg.ffn_hidden, cfg.d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x, position, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), position, cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class LlamaDecoder(nn.Module):
    """One decode step: forward(token_ids [1, 1] i64, position [1] i64) -> logits [1, vocab]; writes the
    token's k and v into every layer's caches at `position` and attends over positions 0..position."""

    def __init__(self, cfg: LlamaConfig = LlamaConfig(), seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        half = cfg.head_dim // 2
        self.register_buffer("inv_freq", 1.0 / cfg.rope_theta ** (torch.arange(half, dtype=torch.float32) / half))
        self.eval()

    def forward(self, token_ids, position):
        x = self.embed(token_ids)  # [1, 1, d_model]
        angles = position.to(torch.float32)[:, None] * self.inv_freq  # [1, head_dim / 2], from the input
        # In the model's dtype, so a half model (model.half()) writes half k and v into its half caches.
        cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
        mask = (torch.arange(self.cfg.max_len, device=position.device) <= position).view(1, 1, 1, self.cfg.max_len)
        for layer in self.layers:
            x = layer(x, position, cos, sin, mask)
        return self.lm_head(self.norm(x)).view(1, self.cfg.vocab)

    def cache_names(self) -> List[str]:
        return [name for name, _ in self.named_buffers() if name.endswith("_cache")]


def example_inputs():
    return (torch.tensor([[0]], dtype=torch.int64), torch.tensor([0], dtype=torch.int64))


def torch_step(model: LlamaDecoder) -> Callable[[int, int], np.ndarray]:
    """A decode step in PyTorch on `model` (its caches advance)."""
    def step(token: int, position: int) -> np.ndarray:
        with torch.no_grad():
            return model(torch.tensor([[token]]), torch.tensor([position])).numpy()
    return step


def gpuu_step(program) -> Callable[[int, int], np.ndarray]:
    """A decode step in a loaded gpuu program (its cache states advance on the device)."""
    def step(token: int, position: int) -> np.ndarray:
        (logits,) = program.run([np.array([[token]], dtype=np.int64), np.array([position], dtype=np.int64)])
        return logits
    return step


def generate(step: Callable[[int, int], np.ndarray], prompt_ids: Sequence[int], new_tokens: int) -> List[int]:
    """Greedy decoding from an empty cache: prefill one prompt token per step, then `new_tokens` argmax tokens.
    `step` is torch_step(model) or gpuu_step(program)."""
    logits = None
    for position, token in enumerate(prompt_ids):
        logits = step(token, position)
    out = []
    for position in range(len(prompt_ids), len(prompt_ids) + new_tokens):
        token = int(np.argmax(logits[0]))
        out.append(token)
        if len(out) < new_tokens:
            logits = step(token, position)
    return out


def export(model: LlamaDecoder, path, prefer: str = "vulkan_first", precision: str = "fp32"):
    """Writes the decode step of `model` to `path` under `prefer` (and gpuu.export's `precision`); returns the
    export report."""
    import gpuu
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    return gpuu.export(model, example_inputs(), spec, path, precision=precision)


def main():
    defaults = LlamaConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(LlamaConfig):
        parser.add_argument("--" + field.name.replace("_", "-"), type=field.type, default=getattr(defaults, field.name))
    parser.add_argument("--prompt", default="1,2,3,4,5", help="comma-separated prompt token ids")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prefer", default="vulkan_first", choices=["vulkan_first", "vgf_first"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="where to write the program (default: a temporary file)")
    args = parser.parse_args()
    try:
        import gpuu
    except ImportError as e:
        sys.exit(f"cannot import gpuu ({e}): set PYTHONPATH to <build>/bindings/python")

    cfg = LlamaConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(LlamaConfig)})
    prompt = [int(t) for t in args.prompt.split(",")]
    if len(prompt) + args.new_tokens > cfg.max_len:
        sys.exit(f"prompt ({len(prompt)}) + new tokens ({args.new_tokens}) exceed max_len {cfg.max_len}")
    model = LlamaDecoder(cfg, seed=args.seed)
    reference = copy.deepcopy(model)  # export leaves the module alone, but PyTorch's run must start clean anyway

    with tempfile.TemporaryDirectory() as tmp:
        path = args.out or os.path.join(tmp, "llama_decode.gpuu")
        t0 = time.perf_counter()
        report = export(model, path, args.prefer)
        print(f"exported {path} in {time.perf_counter() - t0:.1f} s: "
              f"{len(report['regions'])} regions ({', '.join(sorted({r['backend'] for r in report['regions']}))}), "
              f"states {[s['name'] for s in report['states']]}")
        steps = len(prompt) + args.new_tokens - 1
        with gpuu.load(path) as program:
            in_place = {name: program.session.state_in_place(name) for name in program.state_names}
            t0 = time.perf_counter()
            got = generate(gpuu_step(program), prompt, args.new_tokens)
            gpuu_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    want = generate(torch_step(reference), prompt, args.new_tokens)
    torch_s = time.perf_counter() - t0

    print(f"gpuu   : {got}")
    print(f"pytorch: {want}")
    print(f"identical: {got == want}")
    print(f"gpuu {steps / gpuu_s:.1f} tokens/s, pytorch {steps / torch_s:.1f} tokens/s "
          f"({steps} decode steps of one token: {len(prompt)} prompt + {args.new_tokens - 1} generated)")
    print(f"every cache state in place: {all(in_place.values())}"
          + ("" if all(in_place.values()) else f" (by copy: {[n for n, p in in_place.items() if not p]})"))
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
