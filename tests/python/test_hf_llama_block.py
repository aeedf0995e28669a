"""A decoder block written the way Hugging Face's Llama code writes it, exported as a user would.

Its RMSNorm casts to f32 and back (LlamaRMSNorm), its attention has separate q, k and v
projections and its MLP separate gate and up projections. On the Vulkan backend, in f32 and as a
half model: the output matches PyTorch, each RMSNorm is one row-norm dispatch, the q/k/v
projections and the gate/up projections each run as one GEMM whose results are read in place (read
from a profile of one run).
"""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu

D, HEADS, KV_HEADS, FFN, SEQ = 64, 4, 2, 160, 7
HEAD_DIM = D // HEADS


class LlamaRMSNorm(nn.Module):
    def __init__(self, size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class DecoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(D)
        self.q_proj = nn.Linear(D, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(D, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(D, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, D, bias=False)
        self.post_attention_layernorm = LlamaRMSNorm(D)
        self.gate_proj = nn.Linear(D, FFN, bias=False)
        self.up_proj = nn.Linear(D, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, D, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(h).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(h).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o_proj(y.transpose(1, 2).reshape(b, s, HEADS * HEAD_DIM))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def _block(half):
    torch.manual_seed(3)
    block = DecoderBlock().eval()
    with torch.no_grad():  # norm weights that are not all ones
        block.input_layernorm.weight.uniform_(0.5, 1.5)
        block.post_attention_layernorm.weight.uniform_(0.5, 1.5)
    return block.half() if half else block


@pytest.mark.parametrize("half", [False, True], ids=["f32", "f16"])
def test_hf_llama_block_runs_fused_and_matches_pytorch(half, tmp_path):
    block = _block(half)
    x = torch.randn(1, SEQ, D)
    with torch.no_grad():
        want = _block(False)(x).numpy()  # the f32 model as the reference for both
    dtype = torch.float16 if half else torch.float32
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1,
                                      shared_context_token="hf-llama-block")
    path = tmp_path / "block.gpuu"
    gpuu.export(block, (x.to(dtype),), spec, path)
    with gpuu.load(path, profile=True) as program:
        (got,) = program.run([x.to(dtype).numpy()])
        dispatches = [d for step in program.profile()["plan"] for d in step.get("dispatches", [])]
    atol = 3e-2 if half else 1e-4
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=0, atol=atol * max(1.0, float(np.abs(want).max())))

    kernels = [d["kernel"] for d in dispatches]
    norms = [k for k in kernels if k.startswith("layer_norm_rows")]
    assert len(norms) == 2, kernels  # each LlamaRMSNorm, its casts included, is one dispatch
    gemms = [d for d in dispatches if d["kernel"].startswith(("gemm", "gemv"))]
    # q/k/v as one GEMM, o, gate/up as one, down: four (a split-K reduction would add its own step).
    linear_labels = sorted({d["label"] for d in gemms})
    assert len(linear_labels) == 4, linear_labels
    assert sum(label.count("+linear") == 2 for label in linear_labels) == 1, linear_labels  # q+k+v
    assert sum(label.count("+linear") == 1 for label in linear_labels) == 1, linear_labels  # gate+up
    # The merged results are read in place: no projection's columns are copied out first (the half
    # model's SiLU chain starts with a cast, which reads the gate's columns as a view too).
    copies = [d["label"] for d in dispatches if d["kernel"] == "strided_copy" and d["label"].startswith("linear")]
    assert not copies, kernels
