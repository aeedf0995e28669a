"""Program states from PyTorch: buffers a model mutates (a step counter, an EMA, KV caches written by slice
assignment, at a position a counter keeps, or shifted) become states kept across executes. Each model runs
several executes against PyTorch running the same module as often (outputs and every state after each), for
nn.Module and ExportedProgram, under vulkan_first, vgf_first and on the CPU fallback alone; two sessions of
one program keep their own; set_state, reset_state and their errors; the export report and gpuu-inspect list
the states; a program without state is unchanged."""

import copy
import json
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

import gpuu
from gpuu.errors import InvalidArgumentError, NotFoundError
from gpuu.frontend import FrontendError, from_torch

from arm_sdk import gpuu_inspect

H, L, D = 2, 6, 4  # heads, cache length, head dim


class Counter(nn.Module):
    """A step counter (i64, rank 0) that scales the input."""

    input_shapes = [(3,)]

    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.steps += 1
        return x * self.steps


class Ema(nn.Module):
    """An exponential moving average of the input, and a buffer that is read but never written (a constant)."""

    input_shapes = [(8,)]

    def __init__(self):
        super().__init__()
        self.register_buffer("ema", torch.linspace(-1, 1, 8))
        self.register_buffer("scale", torch.full((8,), 2.0))

    def forward(self, x):
        self.ema.mul_(0.75).add_(x * 0.25)
        return self.ema * self.scale


class SliceAssign(nn.Module):
    """A cache written at fixed places: a slice (slice_scatter) and one position (select_scatter)."""

    input_shapes = [(1, H, 1, D), (1, H, D)]

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, H, L, D))

    def forward(self, k, v):
        self.cache[:, :, 3:4] = k
        self.cache[:, :, 5] = v
        return self.cache.sum(dim=2)


class KvCache(nn.Module):
    """One decoding step: k and v go into the caches at the position a step counter keeps (a mask from the
    counter, so every execute writes another place), then attention over the positions written so far."""

    input_shapes = [(1, H, 1, D)] * 3

    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, H, L, D))
        self.register_buffer("v_cache", torch.zeros(1, H, L, D))
        self.register_buffer("position", torch.zeros((), dtype=torch.int64))

    def forward(self, q, k, v):
        at = (torch.arange(L) == self.position).view(1, 1, L, 1)
        self.k_cache.copy_(torch.where(at, k, self.k_cache))
        self.v_cache.copy_(torch.where(at, v, self.v_cache))
        written = (torch.arange(L) <= self.position).view(1, 1, 1, L)
        scores = torch.where(written, q @ self.k_cache.transpose(2, 3), torch.tensor(-1e9))
        self.position += 1
        return torch.softmax(scores, dim=-1) @ self.v_cache


class Rolling(nn.Module):
    """A cache that shifts left and takes the new entry at its end."""

    input_shapes = [(1, H, 1, D)]

    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.zeros(1, H, L, D))

    def forward(self, k):
        self.window.copy_(torch.cat([self.window[:, :, 1:], k], dim=2))
        return self.window.mean(dim=2)


def inputs_of(model, step):
    """The inputs of `model`'s execute `step` (shapes from its input_shapes), different at every step."""
    g = torch.Generator().manual_seed(100 + step)
    return tuple(torch.randn(*shape, generator=g) for shape in model.input_shapes)


def export(model, path, policy, exported=False):
    """Writes `model` (or its ExportedProgram) to `path` under `policy`: vulkan_first, vgf_first, or cpu (every
    node pinned to the CPU fallback); returns the export report."""
    example = inputs_of(model, 0)
    source = torch.export.export(copy.deepcopy(model), example) if exported else model
    prefer = "vgf_first" if policy == "vgf_first" else "vulkan_first"
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=prefer, min_partition_size=1)
    pins = None
    if policy == "cpu":
        with from_torch(source, example) as traced:
            pins = {n.name: "cpu" for n in traced.graph.nodes()}
    return gpuu.export(source, example, spec, path, pins=pins)


def run_against_pytorch(model, program, steps):
    """`steps` executes of `program` and of `model` (a fresh copy at export's state), compared after each."""
    reference = copy.deepcopy(model)
    assert program.state_names == [name for name, _ in reference.named_buffers() if name in program.state_names]
    for step in range(steps):
        inputs = inputs_of(model, step)
        got = program.run([x.numpy() for x in inputs])
        with torch.no_grad():
            want = reference(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"output after execute {step}")
        for name in program.state_names:
            np.testing.assert_allclose(program.state(name), getattr(reference, name).numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=f"state {name!r} after execute {step}")


STATE_NAMES = {Counter: ["steps"], Ema: ["ema"], SliceAssign: ["cache"], KvCache: ["k_cache", "v_cache", "position"],
               Rolling: ["window"]}


@pytest.mark.parametrize("model_class", [Counter, Ema, SliceAssign, KvCache, Rolling], ids=lambda c: c.__name__)
def test_vulkan_updates_every_state_in_place_as_pytorch_does(model_class, tmp_path):
    model = model_class()
    report = export(model, tmp_path / "m.gpuu", "vulkan_first")
    assert [s["name"] for s in report["states"]] == STATE_NAMES[model_class]
    with gpuu.load(tmp_path / "m.gpuu") as program:
        assert program.state_names == STATE_NAMES[model_class]
        for name in program.state_names:
            assert program.session.state_in_place(name), f"{name} is updated through a copy"
        run_against_pytorch(model, program, L + 1)
        stats = program.last_execute_stats()
        assert stats.host_copies == 0, "a state went through the host"


@pytest.mark.parametrize("model_class", [Ema, KvCache], ids=lambda c: c.__name__)
def test_exported_program_mutations_become_states(model_class, tmp_path):
    model = model_class()
    report = export(model, tmp_path / "ep.gpuu", "vulkan_first", exported=True)
    assert [s["name"] for s in report["states"]] == STATE_NAMES[model_class]
    with gpuu.load(tmp_path / "ep.gpuu") as program:
        assert len(program.outputs) == 1, "buffer mutations are no outputs"
        run_against_pytorch(model, program, 4)


@pytest.mark.parametrize("model_class", [Ema, KvCache], ids=lambda c: c.__name__)
def test_vgf_first_carries_states_by_copy(model_class, tmp_path):
    model = model_class()
    report = export(model, tmp_path / "m.gpuu", "vgf_first")
    backends = {r["backend"] for r in report["regions"]}
    assert "VgfBackend" in backends
    with gpuu.load(tmp_path / "m.gpuu") as program:
        run_against_pytorch(model, program, 4)


# A VGF region reads the state, a Vulkan region after it updates it (in place: nothing reads it later).
class ReadThenUpdate(nn.Module):
    input_shapes = [(8,)]

    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.linspace(0, 1, 8))

    def forward(self, x):
        y = torch.tanh(self.acc) * x
        self.acc.add_(x)
        return y


def test_vgf_region_reads_a_state_a_vulkan_region_updates(tmp_path):
    model = ReadThenUpdate()
    x = torch.randn(8)
    with from_torch(model, (x,)) as traced:
        updater = next(n.name for n in traced.graph.nodes() if n.op == "add")
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
    report = gpuu.export(model, (x,), spec, tmp_path / "m.gpuu", pins={updater: "vulkan"})
    (state,) = report["states"]
    readers = {report["regions"][r]["backend"] for r in state["read_by_regions"]}
    assert readers == {"VgfBackend", "VulkanBackend"}
    assert report["regions"][state["updated_by_region"]]["backend"] == "VulkanBackend"
    with gpuu.load(tmp_path / "m.gpuu") as program:
        assert program.session.state_in_place("acc")
        run_against_pytorch(model, program, 4)


@pytest.mark.parametrize("model_class", [Counter, SliceAssign], ids=lambda c: c.__name__)
def test_cpu_fallback_states(model_class, tmp_path):
    model = model_class()
    report = export(model, tmp_path / "m.gpuu", "cpu")
    assert {r["backend"] for r in report["regions"]} == {"CpuFallback"}
    with gpuu.load(tmp_path / "m.gpuu") as program:
        assert not program.session.state_in_place(0)
        run_against_pytorch(model, program, 3)


def test_sessions_of_one_program_keep_their_own_states(tmp_path):
    model = KvCache()
    export(model, tmp_path / "kv.gpuu", "vulkan_first")
    with gpuu.load(tmp_path / "kv.gpuu") as a, gpuu.load(tmp_path / "kv.gpuu") as b:
        run_against_pytorch(model, a, 3)
        assert a.state("position") == 3
        assert b.state("position") == 0 and not b.state("k_cache").any(), "b has not run"
        run_against_pytorch(model, b, 1)
        assert a.state("position") == 3, "b's execute leaves a's states alone"


def test_set_state_seeds_a_cache_and_reset_state_restores(tmp_path):
    model = KvCache()
    export(model, tmp_path / "kv.gpuu", "vulkan_first")
    seeded = KvCache()
    g = torch.Generator().manual_seed(7)
    seeded.k_cache.copy_(torch.randn(1, H, L, D, generator=g))
    seeded.v_cache.copy_(torch.randn(1, H, L, D, generator=g))
    seeded.position.fill_(2)
    with gpuu.load(tmp_path / "kv.gpuu") as program:
        program.run([x.numpy() for x in inputs_of(model, 0)])
        for name in program.state_names:
            program.set_state(name, getattr(seeded, name).numpy())
        run_against_pytorch(seeded, program, 3)
        program.reset_state()
        for name in program.state_names:
            np.testing.assert_array_equal(program.state(name), getattr(model, name).numpy())
        run_against_pytorch(model, program, 2)


def test_bad_state_calls_are_refused_and_the_program_stays_usable(tmp_path):
    model = Ema()
    export(model, tmp_path / "ema.gpuu", "vulkan_first")
    with gpuu.load(tmp_path / "ema.gpuu") as program:
        with pytest.raises(NotFoundError, match=r"no state named 'scale' \(the program's states: 'ema'\)"):
            program.state("scale")
        with pytest.raises(InvalidArgumentError, match=r"state 0 \('ema'\) is f32, got numpy float64"):
            program.set_state("ema", np.zeros(8))
        with pytest.raises(InvalidArgumentError, match=r"state 0 \('ema'\) has shape \[8\], got \[4\]"):
            program.set_state("ema", np.zeros(4, dtype=np.float32))
        with pytest.raises(InvalidArgumentError, match=r"state index 1 is out of range \(the program has 1 states\)"):
            program.state(1)
        run_against_pytorch(model, program, 2)


def test_export_leaves_the_module_alone_and_reports_states(tmp_path):
    model = KvCache()
    before = {name: b.clone() for name, b in model.named_buffers()}
    report = export(model, tmp_path / "kv.gpuu", "vulkan_first")
    for name, b in model.named_buffers():
        assert torch.equal(b, before[name]), f"export wrote into the module's {name}"
    by_name = {s["name"]: s for s in report["states"]}
    assert by_name["position"]["dtype"] == "i64" and by_name["position"]["shape"] == []
    assert by_name["k_cache"]["shape"] == [1, H, L, D]
    assert all(s["updated_by_region"] >= 0 and s["read_by_regions"] for s in report["states"])
    listing = json.loads(subprocess.run([gpuu_inspect(), "--json", str(tmp_path / "kv.gpuu")], check=True,
                                        capture_output=True, text=True).stdout)
    assert listing["format_version"]["major"] == 2
    assert [s["name"] for s in listing["states"]] == ["k_cache", "v_cache", "position"]


def test_a_program_without_state_is_as_before(tmp_path):
    model = nn.Sequential(nn.Linear(8, 4), nn.ReLU()).eval()
    x = torch.randn(2, 8)
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1)
    report = gpuu.export(model, (x,), spec, tmp_path / "plain.gpuu")
    assert report["states"] == []
    listing = json.loads(subprocess.run([gpuu_inspect(), "--json", str(tmp_path / "plain.gpuu")], check=True,
                                        capture_output=True, text=True).stdout)
    assert listing["format_version"] == {"major": 1, "minor": 0}
    with gpuu.load(tmp_path / "plain.gpuu") as program:
        assert program.state_names == []
        program.reset_state()  # nothing to reset
        (y,) = program.run([x.numpy()])
        np.testing.assert_allclose(y, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)


class IndexedCache(nn.Module):
    """A decoding step as Hugging Face's static cache and ExecuTorch's LLM exports write it: k and v go into the
    caches at a position given as an input (index_copy_ and index assignment: index_put), then attention over
    the whole cache."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, H, L, D))
        self.register_buffer("v_cache", torch.zeros(1, H, L, D))

    def forward(self, q, k, v, position):
        self.k_cache.index_copy_(2, position, k)
        self.v_cache[:, :, position] = v
        scores = q @ self.k_cache.transpose(2, 3)
        return torch.softmax(scores, dim=-1) @ self.v_cache


@pytest.mark.parametrize("policy", ["vulkan_first", "vgf_first"])
def test_a_cache_written_at_an_input_position_is_updated_in_place(policy, tmp_path):
    model = IndexedCache()
    reference = copy.deepcopy(model)

    def step_inputs(step):
        g = torch.Generator().manual_seed(200 + step)
        qkv = tuple(torch.randn(1, H, 1, D, generator=g) for _ in range(3))
        return (*qkv, torch.tensor([(3 * step) % L], dtype=torch.int64))

    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=policy, min_partition_size=1)
    report = gpuu.export(model, step_inputs(0), spec, tmp_path / "m.gpuu")
    assert [s["name"] for s in report["states"]] == ["k_cache", "v_cache"]
    with gpuu.load(tmp_path / "m.gpuu") as program:
        if policy == "vulkan_first":
            for name in program.state_names:
                assert program.session.state_in_place(name), f"{name} is updated through a copy"
        for step in range(L + 2):
            inputs = step_inputs(step)
            got = program.run([x.numpy() for x in inputs])
            with torch.no_grad():
                want = reference(*inputs)
            np.testing.assert_allclose(got[0], want.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"execute {step}")
            for name in program.state_names:
                np.testing.assert_allclose(program.state(name), getattr(reference, name).numpy(), rtol=1e-6,
                                           atol=1e-6, err_msg=f"state {name!r} after execute {step}")
        assert program.last_execute_stats().host_copies == 0, "a state went through the host"


class _CacheObject:
    """Key and value caches kept in lists by an object of their own, as Hugging Face's StaticCache keeps them."""

    def __init__(self, layers):
        self.keys = [torch.zeros(1, H, L, D) for _ in range(layers)]
        self.values = [torch.zeros(1, H, L, D) for _ in range(layers)]

    def update(self, layer, k, v, position):
        self.keys[layer].index_copy_(2, position, k)
        self.values[layer][:, :, position] = v
        return self.keys[layer], self.values[layer]


class CacheHeldElsewhere(nn.Module):
    """Two attention layers writing a cache object's tensors, which the module also registers as its buffers
    (transformers' TorchExportableModuleWithStaticCache does so): the writes go through the object, not the
    module's attributes."""

    def __init__(self):
        super().__init__()
        self.cache = _CacheObject(2)
        for i in range(2):
            self.register_buffer(f"key_cache_{i}", self.cache.keys[i], persistent=False)
            self.register_buffer(f"value_cache_{i}", self.cache.values[i], persistent=False)
        self.proj = nn.ModuleList(nn.Linear(D, 3 * D) for _ in range(2))

    def forward(self, x, position):
        for i, proj in enumerate(self.proj):
            q, k, v = proj(x).split(D, dim=-1)
            keys, values = self.cache.update(i, k, v, position)
            x = x + torch.softmax(q @ keys.transpose(2, 3), dim=-1) @ values
        return x


def cache_step_inputs(step):
    g = torch.Generator().manual_seed(300 + step)
    return torch.randn(1, H, 1, D, generator=g), torch.tensor([(2 * step) % L], dtype=torch.int64)


@pytest.mark.parametrize("policy", ["vulkan_first", "vgf_first"])
def test_a_cache_another_object_holds_too_becomes_states(policy, tmp_path):
    """make_fx cannot trace writes into a buffer that another object holds (functional_call swaps the module's
    entry only): gpuu.export takes such a model through torch.export's strict tracer instead, and the caches
    become states updated in place, as PyTorch updates them."""
    model = CacheHeldElsewhere()
    reference = copy.deepcopy(model)
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer=policy, min_partition_size=1)
    report = gpuu.export(model, cache_step_inputs(0), spec, tmp_path / "m.gpuu")
    names = ["key_cache_0", "value_cache_0", "key_cache_1", "value_cache_1"]
    assert sorted(s["name"] for s in report["states"]) == sorted(names)
    assert all(not t.any() for t in model.cache.keys + model.cache.values), "export wrote into the model's caches"
    with gpuu.load(tmp_path / "m.gpuu") as program:
        for step in range(L + 1):
            inputs = cache_step_inputs(step)
            (got,) = program.run([x.numpy() for x in inputs])
            with torch.no_grad():
                want = reference(*inputs)
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"execute {step}")
            for name in names:
                np.testing.assert_allclose(program.state(name), getattr(reference, name).numpy(), rtol=1e-5,
                                           atol=1e-5, err_msg=f"state {name!r} after execute {step}")


def test_an_exported_program_that_loses_its_cache_writes_is_refused_by_name(tmp_path):
    """Non-strict torch.export lifts the cache object's tensors as constants and keeps the writes into them (a
    program whose updates would be lost): refused, naming each constant and the way out; the strict export of
    the same model exports and runs."""
    model = CacheHeldElsewhere()
    example = cache_step_inputs(0)
    spec = gpuu.UnifiedGpuCompileSpec(prefer="vulkan_first")
    with torch.no_grad():
        lossy = torch.export.export(copy.deepcopy(model), example, strict=False)
    with pytest.raises(FrontendError) as refused:
        gpuu.export(lossy, example, spec, tmp_path / "lossy.gpuu")
    message = str(refused.value)
    assert "writes in place into 4 constant tensor(s)" in message and "lifted_tensor" in message, message
    assert "strict=True" in message, message
    assert not (tmp_path / "lossy.gpuu").exists()
    with torch.no_grad():
        strict = torch.export.export(copy.deepcopy(model), example, strict=True)
    gpuu.export(strict, example, spec, tmp_path / "strict.gpuu")
    with gpuu.load(tmp_path / "strict.gpuu") as program:
        (got,) = program.run([x.numpy() for x in example])
    with torch.no_grad():
        np.testing.assert_allclose(got, copy.deepcopy(model)(*example).numpy(), rtol=1e-5, atol=1e-5)
