"""Scatter-style writes from PyTorch: index_put (x[i] = v, KV-cache updates, index_copy/index_add/index_fill), scatter,
scatter_add, scatter_reduce, index_reduce and put, each exported under vulkan_first, vgf_first (the VGF backend on
gpuu's TOSA executor here) and onto the CPU fallback, and run against PyTorch eager; a KV-cache decoder step at
several positions; and the refusals.

gpuu has two ops for them: scatter (an index per element) and index_put (rows along one axis); each takes the
reduction as an attribute."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu
from conftest import export_traced
from gpuu.frontend import FrontendError, from_torch
from test_frontend_ops import Fn  # a function of tensors as a module

SCATTER_OPS = ("scatter", "index_put")


def _spec(prefer):
    return gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1,
                                      shared_context_token="scatter_ops")


# Where a case's scatter-style nodes run: vulkan_first and vgf_first (on VGF where the TOSA form fits), and with
# both GPU backends denied them, the CPU fallback.
WAYS = {
    "vulkan_first": ("vulkan_first", ()),
    "vgf_first": ("vgf_first", ()),
    "cpu_fallback": ("vulkan_first", [(b, op) for b in ("VulkanBackend", "VgfBackend") for op in SCATTER_OPS]),
}


def _run_ways(model, inputs, tmp_path, vgf_first_on="VulkanBackend", tol=1e-5):
    """Each way's outputs must match PyTorch's, its scatter-style nodes where the way puts them (vgf_first:
    `vgf_first_on`; None: a form that needs none, a where() for a computed mask)."""
    with torch.no_grad():
        want = model(*[x.clone() for x in inputs])
    want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
    placed = {}
    with from_torch(model, inputs) as graph:
        for way, (prefer, deny) in WAYS.items():
            path = tmp_path / f"{way}.gpuu"
            report = export_traced(graph, _spec(prefer), path, deny=deny)
            placed[way] = [n["backend"] for n in report["nodes"] if n["op"] in SCATTER_OPS]
            with gpuu.load(path) as program:
                got = program.run([x.numpy() for x in inputs])
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype, (way, g.shape, w.shape, g.dtype, w.dtype)
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=way)
    if vgf_first_on is None:
        assert placed == {way: [] for way in WAYS}, placed
        return
    assert placed["vulkan_first"] and set(placed["vulkan_first"]) == {"VulkanBackend"}, placed
    assert set(placed["cpu_fallback"]) == {"CpuFallback"}, placed
    assert set(placed["vgf_first"]) == {vgf_first_on}, placed


torch.manual_seed(0)
CACHE = torch.randn(1, 2, 8, 4)
X = torch.randn(4, 5)


def _set_positions(c, v, p):
    c = c.clone()
    c[:, :, p] = v
    return c


def _set_mask(x, m, v):
    x = x.clone()
    x[m] = v
    return x


def _add_at(x, i, v):
    x = x.clone()
    x[i] += v  # functionalized into index_put(accumulate=False) of x[i] + v
    return x


I64 = torch.int64
I32 = torch.int32

VGF, VK, WHERE = "VgfBackend", "VulkanBackend", None

# name: (fn, inputs, where vgf_first puts the write: on VGF where TOSA's SCATTER takes it, else on Vulkan)
INDEX_PUT = {
    # The KV-cache forms: positions as a tensor input, one or several, int64 (TOSA has no i64: Vulkan) or int32.
    "kv_setitem_one_i64": (_set_positions, (CACHE, torch.randn(1, 2, 1, 4), torch.tensor([3])), VK),
    "kv_setitem_one_i32": (_set_positions, (CACHE, torch.randn(1, 2, 1, 4), torch.tensor([6], dtype=I32)), VGF),
    "kv_setitem_three_i32": (_set_positions, (CACHE, torch.randn(1, 2, 3, 4), torch.tensor([7, 0, 2], dtype=I32)),
                             VGF),
    "kv_setitem_negative": (_set_positions, (CACHE, torch.randn(1, 2, 2, 4), torch.tensor([-1, 1], dtype=I32)), VGF),
    "kv_setitem_broadcast": (_set_positions, (CACHE, torch.randn(4), torch.tensor([1, 5])), VK),
    "kv_index_copy": (lambda c, v, p: c.clone().index_copy_(2, p, v), (CACHE, torch.randn(1, 2, 2, 4),
                                                                      torch.tensor([5, 1])), VK),
    "int_cache": (_set_positions, (torch.randint(-50, 50, (1, 2, 8, 4), dtype=I32),
                                   torch.randint(-50, 50, (1, 2, 1, 4), dtype=I32), torch.tensor([2], dtype=I32)),
                  VGF),
    "rows_two_dims": (lambda x, i, j, v: torch.index_put(x, (i, j), v), (torch.randn(3, 4, 5), torch.tensor([2, 0]),
                                                                          torch.tensor([1, 3]), torch.randn(2, 5)),
                      VK),
    "dims_apart": (lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v),
                   (torch.randn(3, 4, 5), torch.tensor([0, 2]), torch.tensor([1, -1]), torch.randn(2, 4)), VK),
    "accumulate_duplicates_i64": (lambda x, i, v: x.index_put((i,), v, accumulate=True),
                                  (X, torch.tensor([0, 0, 2, 0]), torch.randn(4, 5)), VK),
    "accumulate_duplicates_i32": (lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v, True),
                                  (X, torch.tensor([4, 1, 4], dtype=I32), torch.randn(4, 3)), VK),
    "add_at_rows": (_add_at, (X, torch.tensor([3, 1]), torch.randn(2, 5)), VK),
    "mask_computed": (lambda x, v: _set_mask(x, x > 0, v), (X, torch.tensor(1.5)), WHERE),
    "mask_computed_rows": (lambda x, v: _set_mask(x, x[:, 0] > 0, v), (X, torch.randn(5)), WHERE),
    "mask_accumulate": (lambda x, v: x.index_put((x < 0,), v, accumulate=True), (X, torch.tensor(2.0)), WHERE),
    "mask_constant": (lambda x, v: _set_mask(x, torch.tensor([True, False, True, False]), v),
                      (X, torch.randn(2, 5)), VK),
    "index_add": (lambda x, i, s: x.index_add(0, i, s, alpha=2), (X, torch.tensor([0, 0, 2]), torch.randn(3, 5)),
                  VK),
    "index_fill": (lambda x, i: x.index_fill(1, i, -1.0), (X, torch.tensor([0, 2])), VK),
    "put_wraps_negatives": (lambda x, i, v: x.put(i, v), (X, torch.tensor([0, 7, -2]), torch.randn(3)), VK),
    "put_accumulate": (lambda x, i, v: x.put(i, v, accumulate=True), (X, torch.tensor([5, 5, 19]), torch.randn(3)),
                       VK),
    "fold_col2im": (lambda x: F.fold(x, (4, 4), 2), (torch.randn(1, 8, 9),), VK),
}


@pytest.mark.parametrize("name", sorted(INDEX_PUT))
def test_index_put_forms(name, tmp_path):
    fn, inputs, vgf_first_on = INDEX_PUT[name]
    _run_ways(Fn(fn), inputs, tmp_path, vgf_first_on)


IDX = torch.tensor([[0, 1, 2, 0, 3], [0, 0, 0, 3, 3], [2, 2, 1, 1, 0]])
SCATTER = {
    "src": lambda x, s: x.scatter(0, IDX[:1], s),
    "src_larger_than_index": lambda x, s: x.scatter(1, torch.tensor([[4], [0], [2]]), s),
    "value": lambda x, s: x.scatter(1, torch.tensor([[0, 4], [1, 1], [4, 3], [2, 0]]), 2.5) + s[0, 0],
    "int32_index": lambda x, s: x.scatter(0, IDX[:1].to(I32), s),
    "reduce_add": lambda x, s: x.scatter(0, IDX, s, reduce="add"),
    "reduce_multiply": lambda x, s: x.scatter(0, IDX, s, reduce="multiply"),
    "scatter_add": lambda x, s: x.scatter_add(0, IDX, s),
    "scatter_add_last_axis": lambda x, s: x.scatter_add(-1, IDX + 1, s),
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_scatter_forms(name, tmp_path):
    _run_ways(Fn(SCATTER[name]), (X, torch.randn(3, 5)), tmp_path)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_and_index_reduce(reduce, include_self, tmp_path):
    def model(x, s, i):
        at = torch.tensor([3, 0, 3])
        rows = x.index_add(0, at, s) if reduce == "sum" else x.index_reduce(0, at, s, reduce, include_self=include_self)
        return x.scatter_reduce(0, IDX, s, reduce, include_self=include_self), rows, i.scatter_reduce(
            1, IDX.t().contiguous()[:4, :2], i[:, :2] * 3, reduce, include_self=include_self)

    ints = torch.randint(-9, 9, (4, 5), dtype=I32)
    _run_ways(Fn(model), (X, torch.randn(3, 5), ints), tmp_path)


class DecoderStep(nn.Module):
    """One decoding step of a single attention layer over a static KV cache, updated in its two usual spellings:
    the key cache with index_copy_ (Hugging Face's StaticCache), the value cache with an index assignment."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x, k_cache, v_cache, pos):
        b, t, _ = x.shape

        def split(y):
            return y.view(b, t, self.heads, self.head_dim).transpose(1, 2)

        k_cache = k_cache.clone()
        k_cache.index_copy_(2, pos, split(self.k(x)))
        v_cache = v_cache.clone()
        v_cache[:, :, pos] = split(self.v(x))
        seen = torch.arange(k_cache.shape[2])[None, :] <= pos[:, None]  # each new token sees the rows up to its own
        y = F.scaled_dot_product_attention(split(self.q(x)), k_cache, v_cache, attn_mask=seen)
        return self.o(y.transpose(1, 2).reshape(b, t, -1)), k_cache, v_cache


@pytest.mark.parametrize("prefer", ["vulkan_first", "vgf_first"])
def test_kv_cache_decoder_step_matches_torch_at_every_position(prefer, tmp_path):
    torch.manual_seed(7)
    model = DecoderStep().eval()
    length, shape = 6, (1, 2, 6, 8)
    k_cache, v_cache = torch.zeros(shape), torch.zeros(shape)
    xs = torch.randn(length, 1, 1, 16)
    report = gpuu.export(model, (xs[0], k_cache, v_cache, torch.tensor([0])), _spec(prefer), tmp_path / "step.gpuu")
    assert sorted(n["op"] for n in report["nodes"] if n["op"] in SCATTER_OPS) == ["index_put", "index_put"]
    assert not [n for n in report["nodes"] if n["backend"] == "CpuFallback"], report["nodes"]
    want_k, want_v = k_cache, v_cache
    with gpuu.load(tmp_path / "step.gpuu") as program:
        for pos in range(length):  # a decode loop: each step's caches feed the next
            p = torch.tensor([pos])
            with torch.no_grad():
                want, want_k, want_v = model(xs[pos], want_k, want_v, p)
            got, k_cache_np, v_cache_np = program.run([xs[pos].numpy(), k_cache.numpy(), v_cache.numpy(), p.numpy()])
            np.testing.assert_allclose(got, want.numpy(), rtol=2e-5, atol=2e-5, err_msg=f"position {pos}")
            np.testing.assert_allclose(k_cache_np, want_k.numpy(), rtol=2e-5, atol=2e-5, err_msg=f"position {pos}")
            np.testing.assert_allclose(v_cache_np, want_v.numpy(), rtol=2e-5, atol=2e-5, err_msg=f"position {pos}")
            k_cache, v_cache = torch.from_numpy(k_cache_np), torch.from_numpy(v_cache_np)
        assert torch.count_nonzero(k_cache[:, :, :length].abs().sum(-1)) == 2 * length  # every row written


# ---- refusals ---------------------------------------------------------------------------

def test_a_computed_mask_with_one_value_per_masked_element_is_refused_clearly():
    with pytest.raises(FrontendError) as err:
        from_torch(Fn(lambda x, v: _set_mask(x, x > 0, v)), (X, torch.randn(int((X > 0).sum()))))
    message = str(err.value)
    assert "index_put with a computed boolean mask" in message and "depends on the data" in message, message


def test_a_computed_mask_beside_other_indices_is_refused_clearly():
    with pytest.raises(FrontendError) as err:
        from_torch(Fn(lambda x, i: torch.ops.aten.index_put(x, [i, x[0] > 0], torch.tensor(1.0))),
                   (X, torch.tensor([1])))
    assert "computed boolean mask beside other indices is not supported" in str(err.value), str(err.value)


def test_a_slice_assignment_at_a_tensor_offset_is_refused_naming_the_scalar_read():
    """x[:, s:s+2] = v with s a tensor needs s as a Python number: torch.export reads it with .item(), which gpuu
    graphs (tensors only) do not take; make_fx cannot trace it at all. index_copy_ / x[:, pos] = v take it as a
    tensor instead."""

    class SliceAtTensor(nn.Module):
        def forward(self, x, s, v):
            i = s.item()
            torch._check(i >= 0)
            torch._check(i + 2 <= x.shape[1])
            x = x.clone()
            x[:, i:i + 2] = v
            return x

    inputs = (X, torch.tensor(1), torch.randn(4, 2))
    ep = torch.export.export(SliceAtTensor(), inputs)
    with pytest.raises(FrontendError) as err:
        from_torch(ep, inputs)
    assert "aten._local_scalar_dense" in str(err.value), str(err.value)


def test_graph_builder_refuses_bad_scatter_nodes_naming_the_problem():
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [4, 3])
        rows = g.add_constant("rows", np.array([1, 4], dtype=np.int64))
        v = g.add_input("v", np.float32, [2, 3])
        with pytest.raises(gpuu.GpuuError) as err:
            g.add_node("index_put", "put", [x, rows, v], {"axis": 0})
        assert "node 'put' (index_put): input 1 (index 'rows') is a constant holding 4 at [1], out of range for " \
               "axis 0" in str(err.value), str(err.value)
        ok_rows = g.add_constant("ok_rows", np.array([1, 2], dtype=np.int64))
        with pytest.raises(gpuu.GpuuError) as err:
            g.add_node("index_put", "put", [x, ok_rows, v], {"axis": 0, "reduce": "add"})
        assert "attribute 'reduce' must be \"none\", \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"add\"" \
            in str(err.value), str(err.value)
