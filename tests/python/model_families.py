"""The model-family suite: small definitions of the patterns real vision, transformer and audio models are
built from, written here (no downloads), with random weights, in eval mode.

Each entry of FAMILIES is (constructor, input maker). Shapes are small so the
whole suite runs on lavapipe in CI, yet every pattern is the real one: bias-free
convs with batch norm, strided downsampling, depthwise convs, squeeze-excite,
channel shuffle, channels-last layer norm, multi-head attention, causal SDPA,
1-D convs, transposed convs and upsampling.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    """ResNet basic block with a strided 1x1 downsample."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = conv_bn(cin, cout, 3, stride, act=nn.ReLU)
        self.conv2 = conv_bn(cout, cout, 3)
        self.down = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return F.relu(self.conv2(self.conv1(x)) + self.down(x))


class ResNetStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2, act=nn.ReLU)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.pool(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class SqueezeExcite(nn.Module):
    def __init__(self, c, squeeze, act=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        self.fc1 = nn.Conv2d(c, squeeze, 1)
        self.act = act()
        self.fc2 = nn.Conv2d(squeeze, c, 1)
        self.gate = gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class InvertedResidual(nn.Module):
    """MobileNetV2 (ReLU6) or V3 (hardswish + squeeze-excite) inverted residual."""

    def __init__(self, cin, cout, expand, stride, v3=False):
        super().__init__()
        hidden = cin * expand
        act = nn.Hardswish if v3 else nn.ReLU6
        layers = [conv_bn(cin, hidden, 1, act=act), conv_bn(hidden, hidden, 3, stride, groups=hidden, act=act)]
        if v3:
            layers.append(SqueezeExcite(hidden, max(hidden // 4, 4)))
        layers.append(conv_bn(hidden, cout, 1))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2, act=nn.Hardswish)
        self.b1 = InvertedResidual(8, 8, 3, 1)
        self.b2 = InvertedResidual(8, 12, 3, 2)
        self.b3 = InvertedResidual(12, 12, 4, 1, v3=True)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(12, 16), nn.Hardswish(),
                                  nn.Linear(16, 5))

    def forward(self, x):
        return self.head(self.b3(self.b2(self.b1(self.stem(x)))))


class MBConv(nn.Module):
    """EfficientNet MBConv: SiLU, depthwise conv, squeeze-excite with a sigmoid gate."""

    def __init__(self, cin, cout, expand=4, stride=1):
        super().__init__()
        hidden = cin * expand
        self.expand = conv_bn(cin, hidden, 1, act=nn.SiLU)
        self.dw = conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.SiLU)
        self.se = SqueezeExcite(hidden, max(cin // 4, 2), act=nn.SiLU, gate=nn.Sigmoid)
        self.project = conv_bn(hidden, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.dw(self.expand(x))))
        return x + y if self.residual else y


class EfficientNetStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2, act=nn.SiLU)
        self.blocks = nn.Sequential(MBConv(8, 8), MBConv(8, 16, stride=2))
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


def channel_shuffle(x, groups):
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous().view(b, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, c):
        super().__init__()
        half = c // 2
        self.branch = nn.Sequential(conv_bn(half, half, 1, act=nn.ReLU), conv_bn(half, half, 3, groups=half),
                                    conv_bn(half, half, 1, act=nn.ReLU))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat((a, self.branch(b)), dim=1), 2)


class ShuffleNetStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2, act=nn.ReLU)
        self.units = nn.Sequential(ShuffleUnit(16), ShuffleUnit(16))

    def forward(self, x):
        return self.units(self.stem(x))


class ConvNeXtBlock(nn.Module):
    """7x7 depthwise conv, channels-last LayerNorm, inverted MLP with GELU, layer scale."""

    def __init__(self, c):
        super().__init__()
        self.dwconv = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.pw1 = nn.Linear(c, 4 * c)
        self.pw2 = nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.rand(c) * 0.5 + 0.25)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.gamma * self.pw2(F.gelu(self.pw1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 4, stride=4)
        self.blocks = nn.Sequential(ConvNeXtBlock(16), ConvNeXtBlock(16))

    def forward(self, x):
        return self.blocks(self.stem(x))


class ViTStyle(nn.Module):
    """Patch embedding, class token, position embedding, an nn.MultiheadAttention block and an
    nn.TransformerEncoderLayer."""

    def __init__(self, d=32, heads=4, patch=4, image=16):
        super().__init__()
        n = (image // patch) ** 2
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.1)
        self.ln = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.encoder = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, activation="gelu", batch_first=True,
                                                  norm_first=True)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        t = self.embed(x).flatten(2).transpose(1, 2)
        t = torch.cat((self.cls.expand(t.shape[0], -1, -1), t), dim=1) + self.pos
        h = self.ln(t)
        t = t + self.attn(h, h, h, need_weights=False)[0]
        t = self.encoder(t)
        return self.head(t[:, 0])


class GptBlock(nn.Module):
    """Pre-norm decoder block: causal scaled_dot_product_attention and a tanh-GELU MLP."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptStyle(nn.Module):
    """Token and position embeddings, two decoder blocks, a masked-fill causal mask variant, LM head."""

    def __init__(self, vocab=50, d=32, ctx=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.Sequential(GptBlock(d), GptBlock(d))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, x):
        positions = torch.arange(x.shape[1])
        return self.head(self.ln(self.blocks(self.tok(x) + self.pos(positions))))


class AudioStyle(nn.Module):
    """1-D convs with batch norm, strided 1-D conv, 1-D max and average pools, a GELU head."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 8, 9, stride=2, padding=4, bias=False), nn.BatchNorm1d(8), nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(8, 16, 5, padding=2, groups=2), nn.GELU(),
            nn.Conv1d(16, 16, 3, stride=2, padding=1, dilation=1), nn.ReLU(),
            nn.AvgPool1d(2))
        self.fc = nn.Linear(16, 6)

    def forward(self, x):
        return self.fc(self.net(x).mean(-1))


class UNetDecoderStyle(nn.Module):
    """Transposed-conv and nearest/bilinear upsampling paths concatenated with skips."""

    def __init__(self):
        super().__init__()
        self.down1 = conv_bn(3, 8, 3, 2, act=nn.ReLU)
        self.down2 = conv_bn(8, 16, 3, 2, act=nn.ReLU)
        self.up1 = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.fuse1 = conv_bn(16, 8, 3, act=nn.ReLU)
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse2 = nn.Conv2d(8 + 3, 8, 3, padding=1)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        s1 = self.down1(x)
        s2 = self.down2(s1)
        y = self.fuse1(torch.cat((self.up1(s2), s1), dim=1))
        y = torch.cat((self.up_nearest(y), x), dim=1)
        y = F.relu(self.fuse2(y))
        y = y + F.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False).repeat_interleave(2, 2)\
            .repeat_interleave(2, 3)
        return self.out(F.interpolate(y, size=(12, 12), mode="bilinear", align_corners=True))


FAMILIES = {
    "resnet": (ResNetStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "mobilenet": (MobileNetStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "efficientnet": (EfficientNetStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "shufflenet": (ShuffleNetStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "convnext": (ConvNeXtStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "vit": (ViTStyle, lambda b: torch.randn(b, 3, 16, 16)),
    "gpt": (GptStyle, lambda b: torch.randint(0, 50, (b, 8))),
    "audio": (AudioStyle, lambda b: torch.randn(b, 1, 64)),
    "unet": (UNetDecoderStyle, lambda b: torch.randn(b, 3, 16, 16)),
}


def make_family(name, seed=0):
    """Family `name` with random weights and random batch-norm statistics, in eval mode."""
    cls, _ = FAMILIES[name]
    torch.manual_seed(seed)
    model = cls()
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


def family_input(name, batch=1, seed=1):
    torch.manual_seed(seed)
    return FAMILIES[name][1](batch)
