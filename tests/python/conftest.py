"""Shared fixtures for the Python tests: the models under test, validation-layer policing, VGF runtime probe.

Run with PYTHONPATH=<build>/bindings/python (ctest's python_tests does).
"""

import functools
import importlib.util
import os
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu

SYNC_MODES = list(gpuu.core.SYNC_MODES)  # every sync mode the C ABI names


# ---- shards: ctest runs a long test file as several entries side by side ------

def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="I/N",
                     help="run the I-th of N contiguous slices of the collected tests (0-based)")


def pytest_collection_modifyitems(config, items):
    shard = config.getoption("--shard")
    if not shard:
        return
    index, count = (int(v) for v in shard.split("/"))
    # Contiguous slices keep tests that share a module fixture (one trace, one export) together.
    begin, end = len(items) * index // count, len(items) * (index + 1) // count
    config.hook.pytest_deselected(items=items[:begin] + items[end:])
    items[:] = items[begin:end]


# ---- the validation layer's messages fail the test that caused them ------------

_messages = []


def _log(level, component, message):
    _messages.append((level, component, message))
    # Keep gpuu's own diagnostics visible, as the default logger would.
    print(f"[gpuu {component}] {message}", file=sys.stderr)


@pytest.fixture(autouse=True)
def no_validation_messages():
    gpuu.set_log_callback(_log, "warn")
    del _messages[:]
    yield
    validation = [m for m in _messages if m[1] == "vulkan.validation"]
    gpuu.set_log_callback(None)
    assert not validation, "Vulkan validation messages:\n" + "\n".join(m[2] for m in validation)


class VgfInitLines:
    """Collects the delegates' "[VGF] init: ..." lines (with the path each took) while keeping the
    validation policing above: `with VgfInitLines() as lines: ...; lines.lines`."""

    def __enter__(self):
        self.lines = []

        def log(level, component, message):
            if component == "VGF" and message.startswith("init:"):
                self.lines.append(message)
            if level <= gpuu.gpuu_c.GPUU_LOG_WARN:
                _log(level, component, message)

        gpuu.set_log_callback(log, "info")
        return self

    def __exit__(self, *exc):
        gpuu.set_log_callback(_log, "warn")


# ---- the models ----------------------------------------------------------------

def _load_sample():
    """The RFC model comes from the sample script itself: the tests check what users run."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "export_unified_vgf_vulkan_e2e.py")
    spec = importlib.util.spec_from_file_location("export_unified_vgf_vulkan_e2e", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_sample = _load_sample()
UnifiedVgfVulkanModel = _sample.UnifiedVgfVulkanModel


def rfc_input():
    (x,) = _sample.example_inputs()
    return x


class SmallCnn(nn.Module):
    """conv -> batch norm -> relu -> max pool -> conv -> relu -> avg pool -> global pool -> linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=1, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.avg_pool2d(x, 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class Mlp(nn.Module):
    """linear -> layer_norm -> gelu (exact and tanh) -> linear, with a residual."""

    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = F.gelu(self.fc2(h), approximate="tanh")
        return x + self.fc3(h)


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block written the way real models are."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        dh = d // self.heads
        q = q.view(b, t, self.heads, dh).transpose(1, 2)
        k = k.view(b, t, self.heads, dh).transpose(1, 2)
        v = v.view(b, t, self.heads, dh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / dh ** 0.5
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        a, gate = self.fc1(self.ln2(x)).chunk(2, dim=-1)  # a gated MLP: GEGLU
        return x + self.fc2(F.gelu(gate) * a)


def seeded(model_cls, seed=0, **kwargs):
    """`model_cls` with random weights (and random batch-norm statistics), in eval mode."""
    torch.manual_seed(seed)
    model = model_cls(**kwargs)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model.eval()


def eager(model, *inputs):
    with torch.no_grad():
        out = model(*inputs)
    return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]


def export_traced(graph, spec, path, **partitioner_options):
    """gpuu.export's partition and write, for a graph from gpuu.frontend.from_torch: tests that export one
    model under several policies trace it once (tracing is most of an export's time). The explain report."""
    partitioner = gpuu.UnifiedGpuPartitioner(spec, **partitioner_options)
    result = partitioner.partition(graph)
    try:
        partitioner.write_program(result, path)
        return result.explain
    finally:
        result.partition.close()


# ---- does a session with a VGF delegate come up? -------------------------------

@functools.lru_cache(maxsize=None)
def vgf_runtime_problem():
    """None when a session of a program with a VGF delegate can be created here, else why not."""
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [1, 4])
        y = g.add_node("sin", "sin_0", [x])[0]
        y = g.add_node("cos", "cos_0", [y])[0]
        g.mark_output(y)
        spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1)
        partitioner = gpuu.UnifiedGpuPartitioner(spec)
        result = partitioner.partition(g)
        assert result.delegate_backends == ["VgfBackend"], result.region_strings()
        data = partitioner.write_program(result)
    try:
        with gpuu.Program(data=data) as program, gpuu.Session(program):
            pass
    except gpuu.GpuuError as e:
        return f"a VGF delegate cannot be initialised here yet ({type(e).__name__}: {e})"
    return None


@pytest.fixture
def vgf_runtime():
    """Fails the test, with the reason found at run time, unless VGF delegates run here (never a skip)."""
    problem = vgf_runtime_problem()
    assert problem is None, problem
