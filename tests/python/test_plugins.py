"""Backend plugins from Python: the list of backends and loading the MtCpu sample."""
import os

import pytest

import gpuu

SAMPLE_DIR = os.environ["GPUU_SAMPLE_PLUGIN_DIR"]  # set by ctest: a missing one is a failure


def test_built_in_backends_come_first():
    backends = gpuu.list_backends()
    assert backends[0] == gpuu.BackendInfo("VulkanBackend", 1, None)
    assert backends[1].id == "VgfBackend" and backends[1].plugin_path is None


def test_load_plugins_registers_the_sample_once():
    before = len(gpuu.list_backends())
    assert gpuu.load_plugins(SAMPLE_DIR) == 1
    mtcpu = gpuu.list_backends()[before]
    assert mtcpu.id == "MtCpu" and mtcpu.version == 1
    assert mtcpu.plugin_path.endswith("/Gpuu_MtCpu_backend.so")
    assert gpuu.load_plugins([SAMPLE_DIR]) == 0


def test_a_refused_path_raises_with_every_refusal():
    with pytest.raises(gpuu.InvalidArgumentError) as e:
        gpuu.load_plugins(["/no/such/dir", "relative"])
    assert "/no/such/dir: does not exist" in str(e.value)
    assert "relative: not an absolute path" in str(e.value)


RUN_IN_FRESH_PROCESS = """
import json
import sys
import numpy as np
import gpuu
backend_options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
with gpuu.load(sys.argv[1], backend_options=backend_options) as program:
    np.save(sys.argv[3], program.run([np.load(sys.argv[2])])[0])
"""


def test_a_model_partitioned_to_the_plugin_runs_from_its_program_file(tmp_path):
    """The user's flow: a PyTorch model partitioned to the MtCpu plugin (and Vulkan),
    written under the plugin's id, then run by a fresh process that finds the plugin
    only through GPUU_BACKEND_PATH; the result matches PyTorch eager."""
    import subprocess
    import sys

    import numpy as np
    import torch

    gpuu.load_plugins(SAMPLE_DIR)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8),
                                torch.nn.Sigmoid()).eval()
    x = torch.randn(4, 16)
    path = tmp_path / "mlp.gpuu"
    spec = gpuu.UnifiedGpuCompileSpec(vgf=None, min_partition_size=1)
    explain = gpuu.export(model, (x,), spec, path, backends=["MtCpu", "VulkanBackend"])
    backends = [r["backend"] for r in explain["regions"]]
    assert "MtCpu" in backends, explain["regions"]
    assert "VulkanBackend" in backends, explain["regions"]  # sigmoid: MtCpu does not take it
    with gpuu.Program(path=str(path)) as program:
        assert "MtCpu" in program.delegates

    np.save(tmp_path / "x.npy", x.numpy())
    env = dict(os.environ, GPUU_BACKEND_PATH=SAMPLE_DIR)
    subprocess.run([sys.executable, "-c", RUN_IN_FRESH_PROCESS, str(path), str(tmp_path / "x.npy"),
                    str(tmp_path / "y.npy")], env=env, check=True)
    got = np.load(tmp_path / "y.npy")
    with torch.no_grad():
        want = model(x).numpy()
    assert np.max(np.abs(got - want)) < 1e-5

    # The plugin's load-time option (plugin API 1.1) reaches its init: a value it
    # takes runs as before, one it refuses fails the session, naming it.
    subprocess.run([sys.executable, "-c", RUN_IN_FRESH_PROCESS, str(path), str(tmp_path / "x.npy"),
                    str(tmp_path / "y2.npy"), '{"MtCpu": {"threads": "2"}}'], env=env, check=True)
    assert np.max(np.abs(np.load(tmp_path / "y2.npy") - want)) < 1e-5
    run = subprocess.run([sys.executable, "-c", RUN_IN_FRESH_PROCESS, str(path), str(tmp_path / "x.npy"),
                          str(tmp_path / "y3.npy"), '{"MtCpu": {"threads": "many"}}'], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "option threads 'many' is not auto or 1..64" in run.stderr, run.stderr

    # Without the plugin the same file is refused, naming the backend it needs.
    env.pop("GPUU_BACKEND_PATH")
    run = subprocess.run([sys.executable, "-c", RUN_IN_FRESH_PROCESS, str(path), str(tmp_path / "x.npy"),
                          str(tmp_path / "z.npy")], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert "'MtCpu'" in run.stderr, run.stderr
