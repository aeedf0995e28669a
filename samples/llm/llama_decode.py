#!/usr/bin/env python3
"""A small Llama-style decoder that generates greedily in gpuu with its KV caches kept as program states.

One step is the exported program: token embedding, layers of RMSNorm -> attention (RoPE, grouped-query heads, a
static KV cache per layer written at the step's positions) -> RMSNorm -> SwiGLU MLP, a final RMSNorm and the lm
head on the step's last token. The caches are buffers the step mutates (index_copy_ and index assignment at input
positions), so gpuu keeps them on the device across executes. The step's token count is a dynamic dim (seq, 1 to
max_len): the prompt goes in one step (prefill), then each new token in a step of one (decode), all with one
program.

  python3 samples/llm/llama_decode.py [--new-tokens 64] [--prefill by_token] [--d-model 256 --layers 4 ...]

exports the step, generates in gpuu and in PyTorch (a copy of the same model, the same steps in eager), and prints
both token lists, whether they agree, prefill and decode tokens/s for each (after an untimed generation, which in
gpuu makes the program at both step lengths) and whether every cache is updated in place. Needs the gpuu package
on PYTHONPATH (<build>/bindings/python) and PyTorch. Weights are random (torch.manual_seed), so the text is
noise; what matters is that both runs pick the same tokens.
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

    def forward(self, x, positions, cos, sin, mask):
        cfg, hd, s = self.cfg, self.cfg.head_dim, x.shape[1]
        q = self.wq(x).view(1, s, cfg.heads, hd).transpose(1, 2)  # [1, heads, s, hd]
        k = self.wk(x).view(1, s, cfg.kv_heads, hd).transpose(1, 2)
        v = self.wv(x).view(1, s, cfg.kv_heads, hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        # The two ways static caches are written (Hugging Face's, ExecuTorch's): index_copy_ and index assignment.
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache[:, :, positions] = v
        y = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask, enable_gqa=True)
        return self.wo(y.transpose(1, 2).reshape(1, s, cfg.heads * hd))


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

    def forward(self, x, positions, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), positions, cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class LlamaDecoder(nn.Module):
    """One step: forward(token_ids [1, s] i64, positions [s] i64) -> logits [1, vocab] of the step's last token.
    Writes the s tokens' k and v into every layer's caches at `positions` and lets the token at positions[i]
    attend over cache positions 0..positions[i]. s is the prompt's length for a prefill and 1 for a decode step;
    the program exported with a dynamic seq dim takes both."""

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

    def forward(self, token_ids, positions):
        x = self.embed(token_ids)  # [1, s, d_model]
        angles = positions.to(torch.float32)[:, None] * self.inv_freq  # [s, head_dim / 2], from the input
        # In the model's dtype, so a half model (model.half()) writes half k and v into its half caches.
        cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
        # Causal over the cache: [1, 1, s, max_len], from the positions (not a constant folded at one length).
        cache_positions = torch.arange(self.cfg.max_len, device=positions.device)
        mask = (cache_positions[None, :] <= positions[:, None])[None, None]
        for layer in self.layers:
            x = layer(x, positions, cos, sin, mask)
        # Only the last token's logits: the next token's, and a shape that does not follow s.
        return self.lm_head(self.norm(x[:, -1]))

    def cache_names(self) -> List[str]:
        return [name for name, _ in self.named_buffers() if name.endswith("_cache")]


def step_inputs(tokens: Sequence[int], start: int):
    """A step's inputs: token_ids [1, s] and positions [s] (start, ..., start + s - 1), both i64 arrays."""
    return (np.array([tokens], dtype=np.int64), np.arange(start, start + len(tokens), dtype=np.int64))


def example_inputs(length: int = 2):
    """`length` tokens from position 0. The export records the step at other lengths too (dynamic_shapes); a
    session starts at this one (2 or more: PyTorch treats 0 and 1 specially), so the length of the prompts to come
    saves making the program at one more length."""
    return tuple(torch.from_numpy(x) for x in step_inputs([0] * length, 0))


def dynamic_shapes(cfg: LlamaConfig):
    """The step's one dim: the number of tokens it takes, 1 (decode) to max_len (a whole prompt)."""
    seq = torch.export.Dim("seq", min=1, max=cfg.max_len)
    return ({1: seq}, {0: seq})


# A step takes tokens at positions start, start + 1, ... and returns the last one's logits [1, vocab].
Step = Callable[[Sequence[int], int], np.ndarray]


def torch_step(model: LlamaDecoder) -> Step:
    """A step in PyTorch on `model` (its caches advance)."""
    def step(tokens: Sequence[int], start: int) -> np.ndarray:
        with torch.no_grad():
            return model(*(torch.from_numpy(x) for x in step_inputs(tokens, start))).numpy()
    return step


def gpuu_step(program) -> Step:
    """A step in a loaded gpuu program (its cache states advance on the device); run() follows the step's length,
    so a prefill and the decode steps after it run the program specialized at their seq."""
    def step(tokens: Sequence[int], start: int) -> np.ndarray:
        (logits,) = program.run(list(step_inputs(tokens, start)))
        return logits
    return step


PREFILLS = ("one_step", "by_token", "buckets")


def bucket_lengths(count: int) -> List[int]:
    """`count` as a sum of powers of two, largest first (13: 8, 4, 1)."""
    return [1 << bit for bit in reversed(range(count.bit_length())) if count >> bit & 1]


def generate(step: Step, prompt_ids: Sequence[int], new_tokens: int, prefill: str = "one_step") -> List[int]:
    """Greedy decoding from an empty cache: the prompt in one step (prefill "one_step"), one token per step
    ("by_token"), or in steps of powers of two, largest first ("buckets": 13 tokens as 8, 4 and 1; a session
    then meets at most log2(max_len) + 1 step lengths whatever the prompts, each specialized and recorded once,
    where one_step meets one per prompt length), then `new_tokens` argmax tokens, each fed back in a step of one
    token. `step` is torch_step(model) or gpuu_step(program)."""
    if prefill not in PREFILLS:
        raise ValueError(f"prefill {prefill!r} is not one of {', '.join(PREFILLS)}")
    if prefill == "one_step":
        logits = step(list(prompt_ids), 0)
    elif prefill == "buckets":
        start = 0
        for length in bucket_lengths(len(prompt_ids)):
            logits = step(list(prompt_ids[start:start + length]), start)
            start += length
    else:
        for position, token in enumerate(prompt_ids):
            logits = step([token], position)
    out = []
    for position in range(len(prompt_ids), len(prompt_ids) + new_tokens):
        token = int(np.argmax(logits[0]))
        out.append(token)
        if len(out) < new_tokens:
            logits = step([token], position)
    return out


def export(model: LlamaDecoder, path, prefer: str = "vulkan_first", precision: str = "fp32",
           example_length: int = 2):
    """Writes the step of `model`, with its dynamic seq dim, to `path` under `prefer` (and gpuu.export's
    `precision`), recorded at `example_length` tokens (example_inputs); returns the export report."""
    import gpuu
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    return gpuu.export(model, example_inputs(example_length), spec, path, precision=precision,
                       dynamic_shapes=dynamic_shapes(model.cfg))


def main():
    defaults = LlamaConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(LlamaConfig):
        parser.add_argument("--" + field.name.replace("_", "-"), type=field.type, default=getattr(defaults, field.name))
    parser.add_argument("--prompt", default="1,2,3,4,5", help="comma-separated prompt token ids")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prefill", default="one_step", choices=PREFILLS,
                        help="the prompt in one step (default), one token per step, or in steps of powers of two")
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
    if args.new_tokens < 1 or len(prompt) + args.new_tokens > cfg.max_len:
        sys.exit(f"new tokens ({args.new_tokens}) must be at least 1 and, with the prompt ({len(prompt)}), "
                 f"fit max_len {cfg.max_len}")
    model = LlamaDecoder(cfg, seed=args.seed)
    reference = copy.deepcopy(model)  # export leaves the module alone, but PyTorch's run must start clean anyway

    def timed_generation(step: Step, warm_up: Callable[[], None]):
        """The tokens, and seconds of the prefill step(s) and of the decode steps, of a generation after an
        untimed one (warm_up clears the caches between them)."""
        generate(step, prompt, 2, args.prefill)
        warm_up()
        seconds: List[float] = []

        def timed_step(tokens: Sequence[int], start: int) -> np.ndarray:
            t0 = time.perf_counter()
            logits = step(tokens, start)
            seconds.append(time.perf_counter() - t0)
            return logits
        tokens = generate(timed_step, prompt, args.new_tokens, args.prefill)
        prefill_steps = 1 if args.prefill == "one_step" else len(prompt)
        return tokens, sum(seconds[:prefill_steps]), sum(seconds[prefill_steps:])

    with tempfile.TemporaryDirectory() as tmp:
        path = args.out or os.path.join(tmp, "llama_decode.gpuu")
        t0 = time.perf_counter()
        report = export(model, path, args.prefer, example_length=max(2, len(prompt)))
        print(f"exported {path} in {time.perf_counter() - t0:.1f} s: "
              f"{len(report['regions'])} regions ({', '.join(sorted({r['backend'] for r in report['regions']}))}), "
              f"states {[s['name'] for s in report['states']]}, dims {report['dims']}")
        with gpuu.load(path) as program:
            got, gpuu_prefill_s, gpuu_decode_s = timed_generation(gpuu_step(program), program.reset_state)
            in_place = {name: program.session.state_in_place(name) for name in program.state_names}
    want, torch_prefill_s, torch_decode_s = timed_generation(
        torch_step(reference), lambda: [reference.get_buffer(name).zero_() for name in reference.cache_names()])

    decode_steps = args.new_tokens - 1
    how = "in one step" if args.prefill == "one_step" else "one token per step"
    print(f"gpuu   : {got}")
    print(f"pytorch: {want}")
    print(f"identical: {got == want}")
    for name, prefill_s, decode_s in (("gpuu", gpuu_prefill_s, gpuu_decode_s),
                                      ("pytorch", torch_prefill_s, torch_decode_s)):
        decode = f"{decode_steps / decode_s:.1f}" if decode_steps else "-"
        print(f"{name}: prefill {len(prompt) / prefill_s:.1f} tokens/s ({len(prompt)} prompt tokens {how}), "
              f"decode {decode} tokens/s ({decode_steps} steps of one token)")
    print(f"every cache state in place: {all(in_place.values())}"
          + ("" if all(in_place.values()) else f" (by copy: {[n for n, p in in_place.items() if not p]})"))
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
