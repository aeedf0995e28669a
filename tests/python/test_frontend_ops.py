"""Per-op frontend tests: each ATen op gpuu newly maps, as a user writes it in a model, exported under vulkan_first
and vgf_first and run on the device against PyTorch eager; plus the frontend's error and fallback behaviour."""

import re

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu
from conftest import export_traced
from gpuu.frontend import FrontendError, from_torch


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _export_run(graph, inputs, prefer, path):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="frontend_ops")
    report = export_traced(graph, spec, path)
    with gpuu.load(path) as program:
        got = program.run([x.numpy() for x in inputs])
    return report, got


def _check(model, inputs, tmp_path, tol=1e-5, exact=False):
    with torch.no_grad():
        want = model(*inputs)
    want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
    with from_torch(model, inputs) as graph:  # traced once, exported under both policies
        for prefer in ("vulkan_first", "vgf_first"):
            report, got = _export_run(graph, inputs, prefer, tmp_path / f"{prefer}.gpuu")
            assert report["summary"]["backends"]["CpuFallback"]["nodes"] == 0, (prefer, report["nodes"])
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype, (prefer, g.shape, w.shape, g.dtype, w.dtype)
                if exact:
                    np.testing.assert_array_equal(g, w, err_msg=prefer)
                else:
                    np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=prefer)


torch.manual_seed(0)
X = torch.randn(2, 3, 5) * 0.9
POS = torch.rand(2, 3, 5) + 0.1
IMG = torch.randn(1, 4, 6, 6)

ELEMENTWISE = {
    "tan": (lambda x: torch.tan(x), X),
    "asin": (lambda x: torch.asin(x.clamp(-0.99, 0.99)), X),
    "acos": (lambda x: torch.acos(x.clamp(-0.99, 0.99)), X),
    "atan": (torch.atan, X),
    "sinh": (torch.sinh, X),
    "cosh": (torch.cosh, X),
    "asinh": (torch.asinh, X),
    "acosh": (lambda x: torch.acosh(x + 1.5), POS),
    "atanh": (lambda x: torch.atanh(x.clamp(-0.9, 0.9)), X),
    "expm1": (torch.expm1, X),
    "log1p": (torch.log1p, POS),
    "log2_log10_exp2": (lambda x: torch.log2(x) + torch.log10(x) + torch.exp2(x), POS),
    "round_trunc_sign": (lambda x: torch.round(x * 4) + torch.trunc(x * 3) + torch.sign(x), X),
    "round_decimals": (lambda x: torch.round(x, decimals=2), X),
    "atan2": (lambda x: torch.atan2(x, x.flip(-1)), X),
    "remainder_fmod": (lambda x: torch.remainder(x * 5, 1.5) + torch.fmod(x * 5, 1.5), X),
    "floor_divide": (lambda x: torch.floor_divide(x * 5, 1.5), X),
    "div_trunc": (lambda x: torch.div(x * 5, 1.5, rounding_mode="trunc"), X),
    "isnan_isinf": (lambda x: torch.where(torch.isnan(x.log()) | torch.isinf(1 / (x * 0)), 1.0, x), X),
    "logical": (lambda x: (torch.logical_and(x > 0, x < 0.5) ^ torch.logical_or(x < -1, x > 1)).float()
                + torch.logical_not(x > 0).float(), X),
    "square": (torch.square, X),
    "hardsigmoid_mish_softplus_elu": (lambda x: F.hardsigmoid(x) + F.mish(x) + F.softplus(x) + F.elu(x)
                                      + F.leaky_relu(x, 0.1) + F.silu(x) + F.hardtanh(x, -0.5, 0.5), X),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_op(name, tmp_path):
    fn, x = ELEMENTWISE[name]
    _check(Fn(fn), (x,), tmp_path, tol=2e-5)


# ATen ops that reach gpuu as one op (mapped as they are, or kept whole): gpuu op, model, inputs. Exported, the op is
# one node on the Vulkan backend (fused with the mul after it where its kernel fuses) and, denied to both GPU
# backends, one node on the CPU fallback; both runs must match PyTorch.
WHOLE = {
    "gelu": ("gelu", lambda x, y: F.gelu(x) * y, (X, POS)),
    "hardtanh": ("clamp", lambda x, y: F.hardtanh(x, -0.5, 0.5) * y, (X, POS)),
    "atan2": ("atan2", lambda x, y: torch.atan2(x, y) * y, (X, POS)),
    "logaddexp": ("logaddexp", lambda x, y: torch.logaddexp(x * 4, y) * y, (X, POS)),
}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_op_reaches_gpuu_whole_and_each_backend_matches_torch(name, tmp_path):
    op, fn, inputs = WHOLE[name]
    model = Fn(fn)
    with torch.no_grad():
        want = model(*inputs).numpy()
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1,
                                      shared_context_token="frontend_ops")
    for backend, deny in (("VulkanBackend", ()), ("CpuFallback", [("VulkanBackend", op), ("VgfBackend", op)])):
        path = tmp_path / f"{backend}.gpuu"
        report = gpuu.export(model, inputs, spec, path, deny=deny)
        assert [n["backend"] for n in report["nodes"] if n["op"] == op] == [backend], report["nodes"]
        with gpuu.load(path) as program:
            (got,) = program.run([x.numpy() for x in inputs])
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=backend)


INTEGER = {
    "index_arithmetic": lambda i: (i * 3 + 1) // 2 - i % 3,
    "remainder_negative": lambda i: torch.remainder(i - 5, 3) + torch.fmod(i - 5, 3),
    "bitwise": lambda i: (i & 6) | (i ^ 3),
    "compare_where": lambda i: torch.where(i > 4, i, -i).abs() + torch.sign(i - 4),
    "max_min_clamp": lambda i: torch.maximum(i, i.flip(-1)) + i.clamp(2, 7),
    "cumsum_argmax": lambda i: i.cumsum(-1) + i.argmax(-1, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(INTEGER))
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_op(name, dtype, tmp_path):
    i = torch.randint(0, 10, (3, 6), dtype=dtype)
    _check(Fn(INTEGER[name]), (i,), tmp_path, exact=True)


REDUCTIONS = {
    "amin_prod": lambda x: x.amin(1) + x.prod(-1, keepdim=True).sum(1),
    "any_all": lambda x: ((x > 0).any(-1) & (x > -2).all(-1)).float(),
    "argmax_argmin": lambda x: (x.argmax(1) - x.argmin(1) + x.argmax() + x.argmin(-1, keepdim=True).sum(1)).float(),
    "max_min_with_indices": lambda x: x.max(1).values + x.min(-1, keepdim=True)[1].float().sum(1),
    "cumsum": lambda x: x.cumsum(-1) + x.cumsum(0),
    "var_std": lambda x: x.var(1) + x.std(-1, keepdim=True).sum(1) + torch.var_mean(x, 1, correction=0)[0],
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction(name, tmp_path):
    _check(Fn(REDUCTIONS[name]), (X,), tmp_path, tol=2e-5)


SPATIAL = {
    "conv1d_bias_free": (nn.Conv1d(4, 6, 3, padding=1, bias=False), torch.randn(1, 4, 9)),
    "conv1d_strided_dilated": (nn.Conv1d(4, 4, 3, stride=2, dilation=2, groups=2), torch.randn(2, 4, 11)),
    "conv3d": (nn.Conv3d(2, 3, 3, padding=1), torch.randn(1, 2, 4, 5, 5)),
    "conv_transpose2d": (nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), IMG),
    "conv_transpose1d": (nn.ConvTranspose1d(4, 2, 4, stride=2), torch.randn(1, 4, 7)),
    "pool1d": (Fn(lambda x: F.max_pool1d(x, 3, 2, 1) + F.avg_pool1d(x, 3, 2, 1)), torch.randn(1, 4, 10)),
    "pool3d": (Fn(lambda x: F.max_pool3d(x, 2) + F.avg_pool3d(x, 2)), torch.randn(1, 2, 4, 4, 4)),
    "adaptive_uneven": (Fn(lambda x: F.adaptive_avg_pool2d(x, (4, 3))), torch.randn(1, 2, 7, 5)),
    "upsample_nearest": (Fn(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")), IMG),
    "upsample_nearest_size": (Fn(lambda x: F.interpolate(x, size=(9, 4), mode="nearest")), IMG),
    "upsample_nearest_exact": (Fn(lambda x: F.interpolate(x, size=(9, 4), mode="nearest-exact")), IMG),
    "upsample_bilinear": (Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), IMG),
    "upsample_bilinear_aligned": (Fn(lambda x: F.interpolate(x, size=(5, 11), mode="bilinear",
                                                              align_corners=True)), IMG),
    "upsample_linear1d": (Fn(lambda x: F.interpolate(x, scale_factor=3, mode="linear")), torch.randn(1, 2, 5)),
    "upsample_trilinear": (Fn(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")),
                           torch.randn(1, 2, 3, 3, 3)),
    "pad_modes": (Fn(lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect") + F.pad(x, (1, 2, 2, 1), mode="replicate")
                  + F.pad(x, (1, 2, 2, 1), mode="circular")), IMG),
    "pad_negative": (Fn(lambda x: F.pad(x, (-1, 2, 0, -2), value=0.5)), IMG),
    "expand_repeat_flip": (Fn(lambda x: x[:, :1].expand(-1, 4, -1, -1) + x.repeat(1, 2, 1, 1)[:, 2:6]
                              + x.flip(2, 3)), IMG),
    "embedding_index": (Fn(lambda x: x[:, torch.tensor([2, 0, 3])] + x[..., torch.tensor([[1], [4]]),
                                                                        torch.tensor([0, 5])].sum()), IMG),
    "slice_scatter": (Fn(lambda x: torch.slice_scatter(x, x[:, :, 1:3] * 2, 2, 1, 3)), IMG),
    "pixel_shuffle_roll": (Fn(lambda x: F.pixel_shuffle(x, 2).roll(1, -1)), IMG),
    "group_instance_norm": (nn.Sequential(nn.GroupNorm(2, 4), nn.InstanceNorm2d(4, affine=True)).eval(), IMG),
}


@pytest.mark.parametrize("name", sorted(SPATIAL))
def test_spatial_op(name, tmp_path):
    model, x = SPATIAL[name]
    torch.manual_seed(3)
    _check(model.eval(), (x,), tmp_path, tol=2e-5)


def test_bias_free_conv_regression(tmp_path):
    # Every conv followed by batch norm has no bias: this once failed when the program was written.
    model = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU()).eval()
    _check(model, (torch.randn(1, 3, 8, 8),), tmp_path)


def test_every_unmapped_op_is_listed_at_once():
    def model(x):
        a = torch.median(x, -1, keepdim=True).values
        b = torch.mode(x, -1, keepdim=True).values + torch.mode(x * 2, -1, keepdim=True).values
        return a + b + torch.kthvalue(x, 2, -1, keepdim=True).values

    with pytest.raises(FrontendError) as err:
        from_torch(Fn(model), (torch.randn(3, 5),))
    message = str(err.value)
    assert "3 ATen ops have no gpuu mapping" in message, message
    for op, count in (("aten.mode", 2), ("aten.median", 1), ("aten.kthvalue", 1)):
        assert re.search(rf"{re.escape(op)} \({count} nodes?, first '\w+'\)", message), (op, message)


def test_problems_of_several_nodes_are_reported_together():
    def model(x):
        y = F.avg_pool2d(x, 2, divisor_override=3)  # mapped, but this form is not supported
        return y, torch.kthvalue(x, 2, -1).values  # not mapped at all

    with pytest.raises(FrontendError) as err:
        from_torch(Fn(model), (torch.randn(1, 2, 4, 4),))
    message = str(err.value)
    assert message.startswith("2 problems exporting the model"), message
    assert "divisor_override" in message and "aten.kthvalue" in message


def test_a_node_no_gpu_backend_takes_falls_back_to_the_cpu_with_a_reason(tmp_path):
    # abs of an int8 tensor: gpuu maps it, only the CPU fallback runs it.
    model = Fn(lambda x: (x.to(torch.int8).abs().to(torch.float32) + 1).sin())
    x = torch.randint(-100, 100, (2, 8)).float()
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    report = gpuu.export(model, (x,), spec, tmp_path / "cpu.gpuu")
    cpu = [n for n in report["nodes"] if n["backend"] == "CpuFallback"]
    assert [n["op"] for n in cpu] == ["abs"], report["nodes"]
    reasons = " ".join(cpu[0]["why_not"].values())
    assert "i8" in reasons, cpu[0]
    with gpuu.load(tmp_path / "cpu.gpuu") as program:
        (got,) = program.run([x.numpy()])
    np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-6, atol=1e-6)


SORTS = {
    "topk_largest_last_axis": lambda x: torch.topk(x, 3),
    "topk_smallest_axis_1": lambda x: torch.topk(x, 2, dim=1, largest=False),
    "topk_whole_axis_0": lambda x: torch.topk(x, 2, dim=0),
    "sort_ascending": lambda x: torch.sort(x, dim=-1),
    "sort_descending_axis_1": lambda x: torch.sort(x, dim=1, descending=True),
    "argsort_ties_stable": lambda x: torch.sort(x.round(), dim=-1, stable=True),
    "topk_int": lambda x: torch.topk((x * 10).to(torch.int32), 2, dim=-1),
    "moe_routing": lambda x: (lambda w, i: (w.softmax(-1), i))(*torch.topk(x @ x.transpose(-1, -2), 2, dim=-1)),
}


@pytest.mark.parametrize("name", sorted(SORTS))
def test_topk_and_sort_match_torch(name, tmp_path):
    """topk and sort (values and indices) run as one topk node on the Vulkan backend (TOSA has no sort: vgf_first
    leaves it to Vulkan too), equal to PyTorch's (distinct values; ties, where asked to be stable, in index order as
    torch's stable sort)."""
    model, x = Fn(SORTS[name]), torch.randn(2, 4, 6) * 3
    with torch.no_grad():
        want = [w.numpy() for w in model(x)]
    for prefer in ("vulkan_first", "vgf_first"):
        spec = gpuu.UnifiedGpuCompileSpec(prefer=prefer, min_partition_size=1)
        report = gpuu.export(model, (x,), spec, tmp_path / f"{prefer}.gpuu")
        assert [n["backend"] for n in report["nodes"] if n["op"] == "topk"] == ["VulkanBackend"], report["nodes"]
        with gpuu.load(tmp_path / f"{prefer}.gpuu") as program:
            got = program.run([x.numpy()])
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (prefer, g.shape, w.shape, g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=prefer)


def test_topk_past_the_axis_is_refused_by_the_graph():
    g = gpuu.Graph()
    x = g.add_input("x", gpuu.core.DTYPE_F32, [2, 5])
    with pytest.raises(gpuu.InvalidArgumentError, match=r"attribute 'k' = 6 is out of range \[0, 5\]"):
        g.add_node("topk", "t", [x], {"k": 6, "axis": 1})


def _freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    angles = torch.outer(torch.arange(end), freqs).float()
    return torch.polar(torch.ones_like(angles), angles)


class ComplexRopeAttention(nn.Module):
    """Attention with rotary embeddings as Meta's Llama reference code writes them: view_as_complex, a product by
    precomputed complex frequencies (a buffer), view_as_real."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.qkv, self.out = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.register_buffer("freqs_cis", _freqs_cis(self.hd, 64), persistent=False)

    def rope(self, x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        f = self.freqs_cis[: x.shape[1]].view(1, x.shape[1], 1, xc.shape[-1])
        return torch.view_as_real(xc * f).flatten(3).type_as(x)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (y.view(b, t, self.heads, self.hd) for y in self.qkv(x).chunk(3, -1))
        q, k = self.rope(q), self.rope(k)
        y = F.scaled_dot_product_attention(*(z.transpose(1, 2) for z in (q, k, v)), is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


COMPLEX = {
    "llama_reference_rope": (ComplexRopeAttention(), torch.randn(2, 10, 32)),
    "add_sub_scale": (Fn(lambda x: torch.view_as_real((torch.view_as_complex(x) * 2.0 + torch.view_as_complex(x.flip(0)))
                                                      - torch.view_as_complex(x) * torch.view_as_complex(x))),
                      torch.randn(3, 4, 2)),
    "times_real_tensor": (Fn(lambda x, r: torch.view_as_real(torch.view_as_complex(x) * r)),
                          (torch.randn(3, 4, 2), torch.randn(4))),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_products_between_view_as_complex_and_view_as_real(name, tmp_path):
    model, x = COMPLEX[name]
    inputs = x if isinstance(x, tuple) else (x,)
    _check(model.eval(), inputs, tmp_path, tol=2e-5)


def test_other_complex_ops_are_refused_by_name():
    model = Fn(lambda x: torch.view_as_real(torch.view_as_complex(x).exp()))
    with pytest.raises(FrontendError, match=r"'exp' \(aten.exp.default\): a complex operand"):
        from_torch(model, (torch.randn(3, 2),))


class Bags(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        torch.manual_seed(1)
        self.bag = nn.EmbeddingBag(40, 8, **kw)

    def forward(self, *args):
        return self.bag(*args)


IDS, OFFSETS = torch.tensor([3, 9, 0, 0, 17, 39, 3, 21, 5, 5]), torch.tensor([0, 3, 3, 7])  # bag 1 is empty
BAGS = {
    "sum": (Bags(mode="sum"), (IDS, OFFSETS)),
    "mean_with_an_empty_bag": (Bags(mode="mean"), (IDS, OFFSETS)),
    "per_sample_weights": (Bags(mode="sum"), (IDS, OFFSETS, torch.rand(10))),
    "padding_idx": (Bags(mode="mean", padding_idx=0), (IDS, OFFSETS)),
    "include_last_offset": (Bags(mode="sum", include_last_offset=True), (IDS, torch.tensor([0, 2, 6, 10]))),
    "two_dimensional_ids": (Bags(mode="mean"), (IDS.view(5, 2),)),
    "max_with_an_empty_bag": (Bags(mode="max"), (IDS, OFFSETS)),
}


@pytest.mark.parametrize("name", sorted(BAGS))
def test_embedding_bag_matches_torch(name, tmp_path):
    """nn.EmbeddingBag (a recommender's sparse features) in its sum, mean and max forms, offsets given at run time."""
    model, inputs = BAGS[name]
    _check(model.eval(), inputs, tmp_path, tol=1e-6)


def test_embedding_bag_takes_other_ids_and_offsets_at_run_time(tmp_path):
    model = Bags(mode="mean").eval()
    spec = gpuu.UnifiedGpuCompileSpec(prefer="vulkan_first")
    gpuu.export(model, (IDS, OFFSETS), spec, tmp_path / "bag.gpuu")
    ids, offsets = torch.arange(1, 11), torch.tensor([0, 1, 5, 5])
    with gpuu.load(tmp_path / "bag.gpuu") as program:
        (got,) = program.run([ids.numpy(), offsets.numpy()])
    np.testing.assert_allclose(got, model(ids, offsets).detach().numpy(), rtol=1e-6, atol=1e-6)


CDIST = {
    "p2_direct": (lambda a, b: torch.cdist(a, b), (torch.randn(2, 7, 3), torch.randn(2, 9, 3))),
    "p2_matrix_product": (lambda a, b: torch.cdist(a, b), (torch.randn(2, 30, 5), torch.randn(2, 40, 5))),
    "p2_forced_product": (lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                          (torch.randn(6, 4), torch.randn(5, 4))),
    "p1": (lambda a, b: torch.cdist(a, b, p=1.0), (torch.randn(6, 4), torch.randn(5, 4))),
    "p_inf": (lambda a, b: torch.cdist(a, b, p=float("inf")), (torch.randn(6, 4), torch.randn(5, 4))),
    "p3": (lambda a, b: torch.cdist(a, b, p=3.0), (torch.randn(6, 4), torch.randn(5, 4))),
}


@pytest.mark.parametrize("name", sorted(CDIST))
def test_cdist_matches_torch(name, tmp_path):
    fn, inputs = CDIST[name]
    _check(Fn(fn), inputs, tmp_path, tol=2e-5)


class SegNetBlock(nn.Module):
    """SegNet's encoder-decoder step: a max pool's indices reused by max_unpool2d."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.enc, self.dec = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        y, where = F.max_pool2d(torch.relu(self.enc(x)), 2, return_indices=True)
        return self.dec(F.max_unpool2d(y * 2, where, 2, output_size=x.shape[-2:]))


POOL_INDICES = {
    "plain": (Fn(lambda x: F.max_pool2d(x, 2, return_indices=True)), torch.randn(2, 3, 6, 8)),
    "strided_padded_dilated_ceil": (Fn(lambda x: F.max_pool2d(x, 3, 2, padding=1, dilation=2, ceil_mode=True,
                                                              return_indices=True)), torch.randn(1, 2, 9, 10)),
    "ties_keep_the_first": (Fn(lambda x: F.max_pool2d(x.round(), 3, 1, return_indices=True)), torch.randn(1, 2, 6, 6)),
    "one_dimensional": (Fn(lambda x: F.max_pool1d(x, 3, 2, padding=1, return_indices=True)), torch.randn(2, 3, 11)),
    "segnet_unpool": (SegNetBlock(), torch.randn(1, 3, 8, 6)),
    "three_dimensional": (Fn(lambda x: F.max_pool3d(x, (2, 3, 2), (2, 2, 1), padding=(1, 1, 0), return_indices=True)),
                          torch.randn(2, 2, 5, 6, 7)),
    "three_dimensional_dilated_ceil": (Fn(lambda x: F.max_pool3d(x.round(), 2, 2, dilation=(1, 2, 1), ceil_mode=True,
                                                                 return_indices=True)), torch.randn(1, 3, 5, 7, 5)),
}


@pytest.mark.parametrize("name", sorted(POOL_INDICES))
def test_max_pool_indices_and_unpool_match_torch(name, tmp_path):
    """max_pool's indices (flat positions in each plane) exactly as torch's, and max_unpool2d putting values back."""
    model, x = POOL_INDICES[name]
    _check(model.eval(), (x,), tmp_path, tol=1e-5)


def test_in_place_and_view_ops_trace(tmp_path):
    class InPlace(nn.Module):
        def forward(self, x):
            y = x.clone()
            y.add_(1.0).mul_(2.0)
            y[:, 1:3] = 0.5  # a slice assignment: functionalized into slice_scatter
            z = y.as_strided((2, 3), (1, 2))
            return y.relu_(), z.t().contiguous().detach()

    _check(InPlace(), (torch.randn(2, 5),), tmp_path)


def test_exported_program_is_taken_as_the_rfc_flow(tmp_path):
    model = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4), nn.Hardswish(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2)).eval()
    x = torch.randn(1, 3, 8, 8)
    ep = torch.export.export(model, (x,))
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    traced = from_torch(ep)  # the ExportedProgram's own example inputs
    with traced:
        result = gpuu.UnifiedGpuPartitioner(spec).partition(traced)
        assert result.delegate_backends == ["VgfBackend"], (result.region_strings(), [n["why_not"] for n in result.explain["nodes"] if n["backend"] != "VgfBackend"])
        constants = {traced.graph.value_name(v) for v in range(traced.graph.value_count)
                     if traced.graph.value_is_constant(v)}
        assert "5.weight" in constants or "5.weight.T" in constants, constants
        result.partition.close()
    gpuu.export(ep, (x,), spec, tmp_path / "ep.gpuu")
    with gpuu.load(tmp_path / "ep.gpuu") as program:
        (got,) = program.run([x.numpy()])
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)


class FirstOutput(nn.Module):
    """Recurrent layers return (output, state): the output is what a model uses."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)[0]


MORE_LAYERS = {
    "lstm": (FirstOutput(nn.LSTM(6, 8, num_layers=2, batch_first=True)), (torch.randn(2, 5, 6),)),
    "gru": (FirstOutput(nn.GRU(6, 8, batch_first=True, bidirectional=True)), (torch.randn(2, 5, 6),)),
    "transformer_decoder": (nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True),
                            (torch.randn(1, 4, 16), torch.randn(1, 6, 16))),
    "bicubic": (Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")), (torch.randn(1, 2, 5, 5),)),
    "adaptive_max": (Fn(lambda x: F.adaptive_max_pool2d(x, 1) + F.adaptive_max_pool2d(x, 3).mean()),
                     (torch.randn(1, 2, 6, 6),)),
    "rmsnorm_einsum_unfold": (Fn(lambda x: F.rms_norm(x, (4,)).sum() + torch.einsum("nchw,nchw->nc", x, x).sum()
                                 + F.unfold(x, 2).sum()), (torch.randn(1, 3, 4, 4),)),
    "normalize_prelu": (nn.Sequential(nn.PReLU(3), Fn(lambda x: F.normalize(x, dim=1))), (torch.randn(2, 3, 4),)),
}


@pytest.mark.parametrize("name", sorted(MORE_LAYERS))
def test_more_layers(name, tmp_path):
    model, inputs = MORE_LAYERS[name]
    torch.manual_seed(5)
    _check(model.eval(), inputs, tmp_path, tol=2e-5)


class ChecksItsInputs(nn.Module):
    """A Hugging Face habit (BERT, BART, DeBERTa): Python reads the input's values to warn about padding, except
    while torch.compile or torch.export trace it. make_fx cannot give Python a value; torch.export can skip it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.embed, self.proj = nn.Embedding(10, 8), nn.Linear(8, 3)

    def forward(self, ids):
        if not torch.compiler.is_compiling() and bool((ids == 0).any()):
            print("padding without a mask")
        return self.proj(self.embed(ids)).relu()


def test_models_whose_python_reads_values_are_taken_through_torch_export(tmp_path):
    _check(ChecksItsInputs().eval(), (torch.tensor([[3, 1, 4, 1, 5, 9]]),), tmp_path)


class Branches(nn.Module):
    def forward(self, x):
        return x * 2 if x.sum() > 0 else x * 3


def test_control_flow_on_values_that_torch_export_refuses_too_names_both():
    with pytest.raises(FrontendError) as info:
        from_torch(Branches(), (torch.randn(4),))
    message = str(info.value)
    assert "data-dependent" in message and "make_fx:" in message and "torch.export:" in message, message


class MixtralSparseMoeBlock(nn.Module):
    """Hugging Face's Mixtral expert block as it computes (top-2 of 4 experts, each token's experts found with
    nonzero/where and summed with index_add_): shapes that follow the router's choices."""

    def __init__(self, width=16, experts=4):
        super().__init__()
        self.top_k = 2
        self.gate = nn.Linear(width, experts, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(width, 32), nn.SiLU(), nn.Linear(32, width))
                                     for _ in range(experts))

    def forward(self, hidden):
        batch, seq, width = hidden.shape
        x = hidden.view(-1, width)
        logits = self.gate(x)
        weights, chosen = torch.topk(F.softmax(logits, dim=1, dtype=torch.float), self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(x)
        mask = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        for e in torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero():
            slot, token = torch.where(mask[e].squeeze(0))
            out.index_add_(0, token, self.experts[e](x[token]) * weights[token, slot, None])
        return out.reshape(batch, seq, width), logits


class MoeLayer(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(8)
        self.norm, self.moe = nn.LayerNorm(16), MixtralSparseMoeBlock()

    def forward(self, x):
        y, _ = self.moe(self.norm(x))
        return x + y


@pytest.mark.parametrize("prefer", ["vulkan_first", "vgf_first"])
def test_a_sparse_expert_block_runs_densely_and_routes_every_input(prefer, tmp_path):
    """The block's data-dependent shapes cannot be traced; its dense form (gpuu.dense_moe) can, and the program
    routes each input's tokens itself: inputs other than the example's match eager too."""
    model = MoeLayer().eval()
    g = torch.Generator().manual_seed(9)
    example = torch.randn(2, 5, 16, generator=g)
    spec = gpuu.UnifiedGpuCompileSpec(prefer=prefer, min_partition_size=1)
    report = gpuu.export(model, (example,), spec, tmp_path / "moe.gpuu")
    assert report["summary"]["backends"]["CpuFallback"]["nodes"] == 0, report["nodes"]
    with gpuu.load(tmp_path / "moe.gpuu") as program:
        for x in (example, torch.randn(2, 5, 16, generator=g), torch.randn(2, 5, 16, generator=g) * 3):
            with torch.no_grad():
                want = model(x).numpy()
            np.testing.assert_allclose(program.run([x.numpy()])[0], want, rtol=1e-5, atol=1e-5)
