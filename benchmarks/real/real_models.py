"""The models of the real-size benchmark (benchmarks/real/run.sh): what users run, at the sizes they run them.

Shared by export_real.py (gpuu's exports) and torch_real.py (PyTorch eager and CUDA-graph replay), so both
time the same module with the same weights: torchvision's networks with random weights (no download),
a GPT-2-small trunk and an MLP written here, every one seeded.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class GptBlock(nn.Module):
    """GPT-2's pre-norm decoder block: causal scaled_dot_product_attention and a tanh-GELU MLP.

    The same block as the test families' GPT (tests/python/model_families.py), repeated here because
    the GPU machine is given benchmarks/real/ alone (run.sh's header)."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptTrunk(nn.Module):
    """GPT-2 small's 12 blocks (d 768, 12 heads) and final norm, on hidden states."""

    def __init__(self, layers=12, d=768, heads=12):
        super().__init__()
        self.blocks = nn.Sequential(*[GptBlock(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(self.blocks(x))


def mlp():
    return nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))


def _torchvision(name):
    import torchvision  # on the GPU machine; imported only for its cases
    return getattr(torchvision.models, name)(weights=None)


# name -> (model builder, input shape)
CASES = {
    "resnet50_b1": (lambda: _torchvision("resnet50"), (1, 3, 224, 224)),
    "resnet50_b8": (lambda: _torchvision("resnet50"), (8, 3, 224, 224)),
    "resnet18_b1": (lambda: _torchvision("resnet18"), (1, 3, 224, 224)),
    "mobilenet_v3_large_b1": (lambda: _torchvision("mobilenet_v3_large"), (1, 3, 224, 224)),
    "efficientnet_b0_b1": (lambda: _torchvision("efficientnet_b0"), (1, 3, 224, 224)),
    "convnext_tiny_b1": (lambda: _torchvision("convnext_tiny"), (1, 3, 224, 224)),
    "vit_b_16_b1": (lambda: _torchvision("vit_b_16"), (1, 3, 224, 224)),
    "gpt2_trunk_s128": (GptTrunk, (1, 128, 768)),
    "gpt2_trunk_b4_s512": (GptTrunk, (4, 512, 768)),
    "mlp1024_b1": (mlp, (1, 1024)),
}


def make_case(name, seed=0):
    """Case `name` as (model in eval mode, f32 input on the CPU), the same weights and input every call."""
    build, shape = CASES[name]
    torch.manual_seed(seed)
    model = build().eval()
    for m in model.modules():  # batch norm with non-trivial statistics, as a trained network has
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    with torch.no_grad():  # torchvision's ViT starts its head at zero: an all-zero output compares nothing
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
    torch.manual_seed(seed + 1)
    return model, torch.randn(*shape)
