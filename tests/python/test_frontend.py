"""The torch.fx frontend: ATen ops to gpuu ops, constants and folding, multi-output ops, and errors naming the node."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu
from gpuu.frontend import FrontendError, from_torch


def ops_of(fn, *inputs, **kwargs):
    with from_torch(fn, inputs, **kwargs) as traced:
        return [n.op for n in traced.graph.nodes()]


def run_on_vulkan(fn, *inputs, rtol=1e-5, atol=1e-5, pins=None):
    """Traces fn, runs it on Vulkan (CPU for `pins`), compares with eager."""
    with torch.no_grad():
        want = fn(*inputs)
    want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
    with from_torch(fn, inputs) as traced:
        spec = gpuu.UnifiedGpuCompileSpec(vgf=None, prefer="vulkan_first", min_partition_size=1)
        partitioner = gpuu.UnifiedGpuPartitioner(spec, pins=pins)
        data = partitioner.write_program(partitioner.partition(traced))
    with gpuu.Program(data=data) as program, gpuu.Session(program) as session:
        for i, x in enumerate(inputs):
            session.set_input(i, x.numpy())
        session.execute()
        got = [session.get_output(i) for i in range(len(session.outputs))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def test_inputs_take_the_forward_parameter_names_and_nodes_their_op_names():
    class Two(nn.Module):
        def forward(self, image, mask):
            return image * mask

    with from_torch(Two(), (torch.ones(2, 2), torch.ones(2, 2))) as traced:
        assert traced.input_names == ["image", "mask"]
        assert [n.name for n in traced.graph.nodes()] == ["mul_0"]
        assert traced.output_names == ["mul_0:0"]
        assert traced.node_map["mul"] == ["mul_0"]


def test_parameters_and_buffers_become_named_constants():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
    with from_torch(model, (torch.randn(2, 4),)) as traced:
        g = traced.graph
        constants = {g.value_name(v): g.value_shape(v) for v in range(g.value_count) if g.value_is_constant(v)}
        # addmm(bias, x, t(weight)) becomes linear(x, weight, bias): the transpose folds away.
        assert constants == {"0.weight": (3, 4), "0.bias": (3,)}
        assert [n.op for n in g.nodes()] == ["linear", "relu"]


def test_computations_on_constants_fold_at_trace_time():
    class Masked(nn.Module):
        def forward(self, x):
            t = x.shape[-1]
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            return x.masked_fill(mask, -1e4).softmax(-1)

    assert ops_of(Masked(), torch.randn(2, 5, 5)) == ["where", "softmax"]
    run_on_vulkan(Masked(), torch.randn(2, 5, 5))


def test_scalars_become_constants_of_the_tensor_dtype():
    def f(x, n):
        return (x * 0.5 + 2) / 3, n + 1, n * 2.5  # the last promotes i32 to f32

    x, n = torch.randn(3, 4), torch.arange(6, dtype=torch.int32).reshape(2, 3)
    with from_torch(f, (x, n)) as traced:
        g = traced.graph
        assert [nd.op for nd in g.nodes()] == ["mul", "add", "div", "add", "cast", "mul"]
        scalars = {tuple(g.value_shape(v)): g.value_dtype(v) for v in g.node(g.node_id("add_1")).inputs
                   if g.value_is_constant(v)}
        assert scalars == {(1, 1): gpuu.gpuu_c.GPUU_DTYPE_I32}
    # The i32 add runs on the CPU: the Vulkan backend has no i32 add kernel yet, although the
    # partitioner offers i32 ops to it.
    run_on_vulkan(f, x, n, pins={"add_1": "cpu"})


def test_shape_unpacking_views_split_chunk_and_cat():
    def f(x):
        b, t, d = x.shape
        a, c = x.chunk(2, dim=-1)
        p, q, r = x.split([1, 2, d - 3], dim=2)
        y = torch.cat([c, a], dim=-1).view(b * t, d).t()
        return y, torch.cat([r, q, p], -1).reshape(b, -1), x.unbind(1)[2]

    run_on_vulkan(f, torch.randn(2, 3, 8))


def test_permute_expand_repeat_select_slice_pad():
    def f(x, row):
        y = x.permute(0, 2, 1)[:, 1:, ::2]
        z = row.expand(3, 4) + x[0, :, :4].repeat(1, 1)
        w = F.pad(x, (1, 2, 0, 1), value=0.25)
        return y, z, w, x.select(2, -1), row.unsqueeze(0).repeat(2, 1, 2)

    run_on_vulkan(f, torch.randn(2, 3, 5), torch.randn(1, 4))


def test_reductions_and_comparisons():
    def f(x):
        m = x.mean(dim=(1, 2), keepdim=True)
        s = x.sum(-1)
        mx = x.amax(dim=0)
        v, _ = x.max(dim=1)
        return torch.where(x > m, x, m), s, mx, v, (x <= 0.1), x.sum()

    run_on_vulkan(f, torch.randn(3, 4, 5), rtol=1e-5, atol=1e-5)


def test_each_composite_is_kept_whole_with_a_lowering_or_decomposed_not_both():
    from gpuu import aten_ops
    from gpuu.frontend import decomposition_table

    kept, decomposed = set(aten_ops.KEPT_WHOLE), set(aten_ops.DECOMPOSED)
    assert not kept & decomposed, sorted(kept & decomposed)
    assert not [op for op in kept if op not in aten_ops.LOWERINGS]
    table = decomposition_table()
    assert not [op for op in table if getattr(op, "overloadpacket", op).__name__ in kept]


def test_activations():
    def f(x):
        return (F.silu(x), F.hardtanh(x, -0.5, 0.5), F.leaky_relu(x, 0.1), torch.tanh(x), torch.sigmoid(x),
                F.relu6(x * 4), torch.erf(x), torch.exp(x), torch.rsqrt(x.abs() + 1), torch.clamp(x, min=-0.2),
                x.pow(2), x.floor(), x.ceil(), F.hardswish(x), torch.log_softmax(x, -1))

    run_on_vulkan(f, torch.randn(4, 6), rtol=1e-5, atol=2e-5)


def test_integer_division_modes():
    def f(x, y):
        return torch.div(x, y, rounding_mode="floor"), torch.div(x, y, rounding_mode="trunc"), x / y

    x = torch.tensor([[7.0, -7.0, 5.5, -5.5]])
    run_on_vulkan(f, x, torch.full((1, 4), 2.0))


def test_embedding_and_index_ops():
    emb = nn.Embedding(10, 4).eval()

    def f(ids, x):
        return emb(ids), torch.index_select(x, 0, ids[0]), torch.gather(x, 1, torch.tensor([[0, 2], [1, 1]]))

    run_on_vulkan(f, torch.tensor([[1, 3], [9, 0]]), torch.randn(10, 3))


def test_multiple_outputs_and_repeated_outputs():
    def f(x):
        y = x + 1
        return y, y, x

    with from_torch(f, (torch.randn(2),)) as traced:
        assert len(traced.output_names) == 3 and len(set(traced.output_names)) == 3


def test_unsupported_op_error_names_node_and_target():
    def f(x):
        return torch.kthvalue(x, 2).values

    with pytest.raises(FrontendError) as info:
        from_torch(f, (torch.randn(3),))
    assert "'kthvalue'" in str(info.value) and "aten.kthvalue" in str(info.value)


def test_unused_outputs_of_multi_output_ops_are_fine_but_used_ones_are_named():
    def uses_indices(x):
        return F.adaptive_max_pool2d(x, 2, return_indices=True)[1].float()

    with pytest.raises(FrontendError, match="indices of aten.adaptive_max_pool2d"):
        from_torch(uses_indices, (torch.randn(1, 1, 4, 4),))
    assert ops_of(lambda x: F.max_pool2d(x, 2, return_indices=True)[0], torch.randn(1, 1, 4, 4)) == ["max_pool2d"]


def test_training_mode_batch_norm_is_refused_with_advice():
    model = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)).train()
    with pytest.raises(FrontendError, match=r"eval\(\)"):
        from_torch(model, (torch.randn(2, 1, 3, 3),))


def _trained_batch_norms(model: nn.Module) -> nn.Module:
    """`model` in eval mode with batch-norm statistics and affine parameters away from 0 and 1, as trained."""
    torch.manual_seed(5)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.uniform_(m.bias, -0.5, 0.5)
    return model.eval()


def test_eval_batch_norm_folds_into_the_convolution_before_it():
    # Into the weight per output channel and the bias, with or without a bias before, grouped too.
    model = _trained_batch_norms(nn.Sequential(
        nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, groups=8), nn.BatchNorm2d(8)))
    x = torch.randn(2, 3, 9, 9)
    with from_torch(model, (x,)) as traced:
        g = traced.graph
        assert [n.op for n in g.nodes()] == ["conv2d", "relu", "conv2d"]
        constants = {g.value_name(v) for v in range(g.value_count) if g.value_is_constant(v)}
        assert not any("running" in name for name in constants), constants
    run_on_vulkan(model, x, rtol=1e-4, atol=1e-5)


def test_batch_norm_stays_an_affine_map_where_it_cannot_fold():
    class Unfoldable(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)
            self.up, self.bn_up = nn.ConvTranspose2d(3, 4, 2, stride=2), nn.BatchNorm2d(4)
            self.bn_in = nn.BatchNorm2d(3)

        def forward(self, x):
            y = self.conv(x)  # read by the batch norm and by the add: the batch norm cannot change it
            return self.bn(y) + y, self.bn_up(self.up(x)), self.bn_in(x)

    model = _trained_batch_norms(Unfoldable())
    x = torch.randn(1, 3, 5, 5)
    ops = ops_of(model, x)
    assert ops.count("mul") == 3 and ops.count("conv2d") == 1 and ops.count("conv_transpose2d") == 1, ops
    run_on_vulkan(model, x, rtol=1e-4, atol=1e-5)


def test_residual_block_with_a_downsample_runs_one_dispatch_per_convolution(tmp_path):
    # resnet's downsample block: both batch norms fold, so the add of both branches and the ReLU go into one
    # convolution's store (once two multiply-add chains met in that add, a dispatch of its own).
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16)
            self.down, self.bn_down = nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)) + self.bn_down(self.down(x)))

    model, x = _trained_batch_norms(Block()), torch.randn(1, 8, 12, 12)
    with torch.no_grad():
        want = model(x).numpy()
    path = tmp_path / "block.gpuu"
    gpuu.export(model, (x,), gpuu.UnifiedGpuCompileSpec(vgf=None, prefer="vulkan_first", min_partition_size=1),
                path)
    with gpuu.load(path, profile=True) as program:
        (got,) = program.run([x.numpy()])
        labels = [d["label"] for step in program.profile()["plan"] for d in step.get("dispatches", [])]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(labels) == 2 and any("add" in label and "relu" in label for label in labels), labels


def test_unsupported_dtypes_are_named():
    with pytest.raises(FrontendError, match="float64"):
        from_torch(lambda x: x + 1, (torch.randn(2, dtype=torch.float64),))


def test_gpuu_refusals_name_the_fx_node():
    # A 3-D transposed convolution has no gpuu op: the refusal names the fx node.
    conv = nn.ConvTranspose3d(1, 1, 1).eval()
    with pytest.raises(FrontendError, match="fx node 'convolution'.*3-D transposed convolution"):
        from_torch(conv, (torch.randn(1, 1, 2, 2, 2),))


def test_random_ops_are_not_baked_in():
    with pytest.raises(FrontendError, match="random"):
        from_torch(lambda x: x + torch.rand(3), (torch.randn(3),))


class SharedEmbedding(nn.Module):
    """T5's layout: an embedding module registered at the top and again inside the encoder that uses it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.shared = nn.Embedding(20, 8)
        self.encoder = nn.Sequential(self.shared, nn.ReLU(), nn.Linear(8, 4))

    def forward(self, ids):
        return self.encoder(ids)


def test_tracing_leaves_a_shared_weight_as_it_was_and_traces_again():
    """functional_call under functionalization left a traced tensor in place of a weight registered twice, and
    the next trace (a dim's recordings: T5's encoder) failed inside PyTorch."""
    model = SharedEmbedding().eval()
    weight = model.shared.weight
    for n in (5, 6):
        with from_torch(model, (torch.randint(0, 20, (1, n)),)):
            pass
        assert model.shared.weight is weight and model.encoder[0].weight is weight
