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
