"""Dynamic sizes: torch.export Dims (gpuu.export's dynamic_shapes, or an ExportedProgram's own) become program dims
with bounds. One exported program runs at every size within them (at the bounds and in between, in any order,
back to sizes run before) and matches PyTorch there: a CNN with a dynamic batch, a transformer layer with dynamic
batch and sequence (its batch*seq flatten), under vulkan_first and vgf_first; a KV cache state carries over when
the sequence length changes (prefill several tokens, then decode one). Sizes beyond the bounds, inputs that
disagree on a dim, a fixed axis changed, an example outside the bounds, an unbounded Dim, a model whose graph
changes with the size and a constant folded from a size that is not the start of its value at the largest size
are each refused with an error naming the dim, the input, the bound or the node; one that is (a position table,
a rotary table, a causal mask of arange(seq)) is stored at the largest size and sliced. A program without dims
behaves as before."""

import json
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import gpuu
from gpuu.errors import InvalidArgumentError
from gpuu.fx_lowering import FrontendError

from arm_sdk import gpuu_inspect

TOL = 2e-5


def export(model, inputs, path, dynamic_shapes, prefer="vulkan_first"):
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    return gpuu.export(model, inputs, spec, path, dynamic_shapes=dynamic_shapes)


def torch_out(model, *inputs):
    with torch.no_grad():
        out = model(*inputs)
    return out.numpy() if isinstance(out, torch.Tensor) else [o.numpy() for o in out]


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 10)
        self.eval()

    def forward(self, x):
        y = nn.functional.max_pool2d(self.bn(self.conv(x)).relu(), 2)
        return self.fc(y.flatten(1)).softmax(-1)


class Encoder(nn.Module):
    """A transformer layer on [batch, seq, 32] with a padding mask [batch, seq]: attention, layer norm, MLP."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(32, 5)
        self.eval()

    def forward(self, x, mask):
        h = self.layer(x, src_key_padding_mask=mask)
        return self.head(h).sum(1)


def encoder_inputs(batch, seq, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, seq, 32, generator=g)
    mask = torch.zeros(batch, seq, dtype=torch.bool)
    mask[:, seq - 1:] = seq > 2  # the last position padded where a sequence has room for it
    return x, mask


@pytest.fixture(scope="module")
def cnn_program(tmp_path_factory):
    path = tmp_path_factory.mktemp("cnn") / "cnn.gpuu"
    model = SmallCnn()
    report = export(model, (torch.randn(1, 3, 8, 8),), path, ({0: Dim("batch", min=1, max=8)},))
    return model, path, report


def test_cnn_runs_at_every_batch_within_bounds(cnn_program):
    model, path, report = cnn_program
    assert report["dims"] == [{"name": "batch", "min": 1, "max": 8, "recorded_at": 2}]
    with gpuu.load(path) as program:
        with gpuu.core.Program(path=str(path)) as p:
            assert p.dims == [gpuu.core.Dim("batch", 1, 8, 2)]
        assert program.dims == {"batch": 2}
        for batch in [1, 8, 3, 1, 5, 8]:  # the bounds, in between, and back to sizes run before
            x = torch.randn(batch, 3, 8, 8)
            (y,) = program.run([x.numpy()])
            assert program.dims == {"batch": batch}
            assert program.inputs[0].shape == (batch, 3, 8, 8)
            assert program.outputs[0].shape == (batch, 10)
            np.testing.assert_allclose(y, torch_out(model, x), atol=TOL)


def test_inspect_shows_the_dims(cnn_program):
    _, path, _ = cnn_program
    text = subprocess.run([gpuu_inspect(), str(path)], check=True, capture_output=True, text=True).stdout
    assert "  batch  1 to 8, example 2" in text
    assert "x  f32 [batch,3,8,8]" in text
    listing = json.loads(subprocess.run([gpuu_inspect(), "--json", str(path)], check=True, capture_output=True,
                                        text=True).stdout)
    assert listing["dims"] == [{"name": "batch", "min": 1, "max": 8, "example": 2}]
    assert listing["format_version"]["minor"] == 1


def test_sizes_beyond_the_bounds_are_refused_and_the_session_stays_usable(cnn_program):
    model, path, _ = cnn_program
    with gpuu.load(path) as program:
        with pytest.raises(InvalidArgumentError, match=r"dim 'batch' = 9 \(input 'x' axis 0\) is above its bounds "
                                                       r"\[1, 8\]"):
            program.run([np.zeros((9, 3, 8, 8), np.float32)])
        with pytest.raises(InvalidArgumentError, match=r"dim 'batch' = 0 .* is below its bounds \[1, 8\]"):
            program.run([np.zeros((0, 3, 8, 8), np.float32)])
        with pytest.raises(InvalidArgumentError, match=r"input 'x' axis 3 is 9 but the program fixes it at 8"):
            program.run([np.zeros((2, 3, 8, 9), np.float32)])
        with pytest.raises(InvalidArgumentError, match=r"rank 4"):
            program.run([np.zeros((2, 3, 8), np.float32)])
        assert program.dims == {"batch": 2}
        x = torch.randn(4, 3, 8, 8)
        np.testing.assert_allclose(program.run([x.numpy()])[0], torch_out(model, x), atol=TOL)


@pytest.mark.parametrize("prefer", ["vulkan_first", "vgf_first"])
def test_transformer_layer_with_dynamic_batch_and_sequence(prefer, tmp_path):
    model = Encoder()
    batch, seq = Dim("batch", min=1, max=4), Dim("seq", min=1, max=24)
    report = export(model, encoder_inputs(2, 7), tmp_path / "enc.gpuu", ({0: batch, 1: seq}, {0: batch, 1: seq}),
                    prefer)
    assert [d["name"] for d in report["dims"]] == ["batch", "seq"]
    if prefer == "vgf_first":
        assert "VgfBackend" in {r["backend"] for r in report["regions"]}
    with gpuu.load(tmp_path / "enc.gpuu") as program:
        for b, s in [(2, 7), (1, 1), (4, 24), (3, 5), (1, 24), (4, 1), (2, 7)]:
            x, mask = encoder_inputs(b, s, seed=b * 100 + s)
            (y,) = program.run([x.numpy(), mask.numpy()])
            assert program.dims == {"batch": b, "seq": s}
            np.testing.assert_allclose(y, torch_out(model, x, mask), atol=1e-4, err_msg=f"batch {b}, seq {s}")
        x, mask = encoder_inputs(3, 5)
        with pytest.raises(InvalidArgumentError, match=r"dim 'batch' is 3 by input 'x' axis 0 but 2 by input "
                                                       r"'mask' axis 0"):
            program.run([x.numpy(), mask[:2].numpy()])


def test_exported_program_brings_its_dims(tmp_path):
    model = SmallCnn()
    x = torch.randn(3, 3, 8, 8)
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: Dim("batch", min=1, max=6)},))
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1)
    report = gpuu.export(ep, (x,), spec, tmp_path / "ep.gpuu")
    # torch.export keeps no Dim names: the dim is named after the input axis that takes it.
    assert report["dims"] == [{"name": "x_0", "min": 1, "max": 6, "recorded_at": 3}]
    report = gpuu.export(ep, (x,), spec, tmp_path / "named.gpuu", dynamic_shapes=({0: Dim("batch", min=1, max=6)},))
    assert report["dims"][0]["name"] == "batch"
    with gpuu.load(tmp_path / "ep.gpuu") as program:
        for batch in [6, 1, 4]:
            xb = torch.randn(batch, 3, 8, 8)
            np.testing.assert_allclose(program.run([xb.numpy()])[0], torch_out(model, xb), atol=TOL)
        with pytest.raises(InvalidArgumentError, match=r"dim 'x_0' = 7 .* above its bounds \[1, 6\]"):
            program.run([np.zeros((7, 3, 8, 8), np.float32)])


class Prefill(nn.Module):
    """A KV cache [1, 16, 8] written at the positions of the step's tokens (index_copy_), then read whole: a
    step of any length, prefill or decode, updates the cache in place."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.k = nn.Linear(8, 8)
        self.register_buffer("cache", torch.zeros(1, 16, 8))

    def forward(self, x, positions):
        self.cache.index_copy_(1, positions, self.k(x))
        scores = (x @ self.cache.transpose(1, 2)).softmax(-1)  # [1, seq, 16]
        return scores @ self.cache


def test_state_carries_over_when_the_sequence_length_changes(tmp_path):
    model = Prefill().eval()
    reference = Prefill().eval()
    seq = Dim("seq", min=1, max=16)
    x, pos = torch.randn(1, 4, 8), torch.arange(4)
    export(model, (x, pos), tmp_path / "prefill.gpuu", ({1: seq}, {0: seq}))
    with gpuu.load(tmp_path / "prefill.gpuu") as program:
        memory = program.memory()
        assert memory["states"] == 16 * 8 * 4
        start = 0
        for length in [5, 1, 1, 3, 1]:  # prefill 5 tokens, decode two, a chunk of 3, decode one
            x, pos = torch.randn(1, length, 8), torch.arange(start, start + length)
            (y,) = program.run([x.numpy(), pos.numpy()])
            want = torch_out(reference, x, pos)
            np.testing.assert_allclose(y, want, atol=TOL, err_msg=f"step of {length} at {start}")
            np.testing.assert_allclose(program.state("cache"), reference.cache.numpy(), atol=TOL)
            start += length
            # One cache and one set of buffers for every length: planned for seq 16 when the session began.
            assert planned_once(program.memory()) == planned_once(memory), f"after a step of {length}"


def planned_once(memory):
    """The figures a session holds once for all sizes (Session.memory): each size it keeps has its own
    delegates' small constants and scratch."""
    return {k: memory[k] for k in ("tensors", "states", "workspaces")}


def test_memory_is_planned_for_the_upper_bounds(cnn_program):
    model, path, report = cnn_program
    with gpuu.load(path) as program:
        planned = program.memory()
        # x [8, 3, 8, 8] and y [8, 10] in f32: the inputs' and outputs' buffers at batch 8.
        assert planned["tensors"] == (8 * 3 * 8 * 8 + 8 * 10) * 4
        assert planned["states"] == 0
        assert planned["workspaces"] > 0  # the convolutions' and the pooling's intermediates
        # The session keeps two sizes (the upper bounds' and the example's), each with its constants.
        per_size = planned["weights"] // 2
        assert per_size > 0 and planned["weights"] == 2 * per_size
        for batch in [1, 8, 3, 5, 2, 7]:  # more sizes than the session keeps (4)
            program.run([torch.randn(batch, 3, 8, 8).numpy()])
            memory = program.memory()
            assert planned_once(memory) == planned_once(planned), f"batch {batch}"
            assert memory["weights"] in {per_size * n for n in range(2, 5)}, f"batch {batch}"


def test_device_memory_limit_refuses_a_session_over_it(cnn_program):
    model, path, report = cnn_program
    with gpuu.load(path) as program:
        planned = program.memory()
    with pytest.raises(gpuu.OutOfMemoryError, match=r"the session needs .* of device memory \(\d+ bytes: weights "
                                                    r".*\) but device_memory_limit is 1\.0 KiB \(1024 bytes\)"):
        gpuu.load(path, device_memory_limit=1024)
    # The plan made before anything is allocated is what a session holds (both sizes it makes: the upper
    # bounds' and the example's): one byte less is refused by the plan, a limit of the sum fits.
    with pytest.raises(gpuu.OutOfMemoryError, match=rf"the session needs .* \({sum(planned.values())} bytes: "):
        gpuu.load(path, device_memory_limit=sum(planned.values()) - 1)
    with gpuu.load(path, device_memory_limit=sum(planned.values())) as program:
        assert program.memory() == planned
        (y,) = program.run([torch.randn(3, 3, 8, 8).numpy()])
        assert y.shape == (3, 10)


def test_export_refuses_what_cannot_vary(tmp_path):
    model = SmallCnn()
    with pytest.raises(FrontendError, match=r"input 'x' axis 0 is 9, outside dim 'batch''s bounds \[1, 8\]"):
        export(model, (torch.randn(9, 3, 8, 8),), tmp_path / "a.gpuu", ({0: Dim("batch", min=1, max=8)},))
    with pytest.raises(FrontendError, match=r"dim 'batch' has no upper bound"):
        export(model, (torch.randn(2, 3, 8, 8),), tmp_path / "b.gpuu", ({0: Dim("batch")},))

    class Branches(nn.Module):
        def forward(self, x):
            return x * 2 if x.shape[0] % 2 else x.relu() + 1

    with pytest.raises(FrontendError, match=r"structure changes with the dims"):
        export(Branches(), (torch.randn(2, 4),), tmp_path / "c.gpuu", ({0: Dim("n", min=1, max=8)},))

    class FoldedSpread(nn.Module):  # folded from the size, but not the start of the largest size's values
        def forward(self, x):
            return x + torch.linspace(0, 1, x.shape[1])

    with pytest.raises(FrontendError, match=r"constant '.*' is folded from the sizes, and its value is not the "
                                            r"start of its value at the largest sizes: gpuu cannot compute it"):
        export(FoldedSpread(), (torch.randn(2, 4),), tmp_path / "d.gpuu", ({1: Dim("n", min=2, max=8)},))


class PositionTables(nn.Module):
    """What language models fold from the sequence length (GPT-2's and BERT's position embeddings of
    arange(seq), a rotary cos/sin table, a causal mask): constants whose length follows the seq dim."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.pos = nn.Embedding(32, 16)
        self.attn = nn.Linear(16, 48)
        self.out = nn.Linear(16, 16)
        self.register_buffer("freq", 1.0 / 100 ** (torch.arange(0, 16, 2).float() / 16), persistent=False)

    def forward(self, x):
        s = x.shape[1]
        angles = torch.outer(torch.arange(s).float(), self.freq)
        cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
        h = x + self.pos(torch.arange(s))
        q, k, v = self.attn(h).chunk(3, -1)
        q = q * cos + torch.cat([-q[..., 8:], q[..., :8]], -1) * sin
        causal = torch.ones(s, s, dtype=torch.bool).tril()
        scores = (q @ k.transpose(1, 2) / 4).masked_fill(~causal, float("-inf"))
        return self.out(scores.softmax(-1) @ v)


@pytest.mark.parametrize("prefer", ["vulkan_first", "vgf_first"])
def test_tables_folded_from_the_sequence_length_follow_it(prefer, tmp_path):
    model = PositionTables().eval()
    g = torch.Generator().manual_seed(5)
    export(model, (torch.randn(2, 6, 16, generator=g),), tmp_path / "t.gpuu", ({1: Dim("seq", min=1, max=20)},),
           prefer)
    with gpuu.load(tmp_path / "t.gpuu") as program:
        for s in (6, 1, 20, 11, 2, 6):
            x = torch.randn(2, s, 16, generator=g)
            (y,) = program.run([x.numpy()])
            np.testing.assert_allclose(y, torch_out(model, x), atol=TOL, err_msg=f"seq {s}")


def test_program_without_dims_is_unchanged(tmp_path):
    model = SmallCnn()
    x = torch.randn(2, 3, 8, 8)
    report = export(model, (x,), tmp_path / "s.gpuu", None)
    assert "dims" not in report
    with gpuu.load(tmp_path / "s.gpuu") as program, gpuu.core.Program(path=str(tmp_path / "s.gpuu")) as p:
        assert p.dims == [] and program.dims == {}
        np.testing.assert_allclose(program.run([x.numpy()])[0], torch_out(model, x), atol=TOL)
        program.session.set_input_shapes([(2, 3, 8, 8)])  # the program's own shapes: accepted
        with pytest.raises(InvalidArgumentError, match=r"axis 0 is 3 but the program fixes it at 2"):
            program.run([np.zeros((3, 3, 8, 8), np.float32)])
