"""Choosing the VGF path on a device without VK_ARM_data_graph (plain lavapipe, validation on):
the backend option VgfBackend:data_graph_path, and vgf_path, its spelling before 0.6.

test_vgf_native.py covers the native path itself, under Arm's emulation layers.
"""

import numpy as np
import pytest
import torch

import gpuu
from conftest import UnifiedVgfVulkanModel, VgfInitLines, rfc_input


@pytest.fixture(scope="module")
def rfc_path(tmp_path_factory):
    model, x = UnifiedVgfVulkanModel().eval(), rfc_input()
    path = tmp_path_factory.mktemp("paths") / "rfc.gpuu"
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vgf_first", min_partition_size=1,
                                      shared_context_token="vgf_paths")
    gpuu.export(model, (x,), spec, path)
    with torch.no_grad():
        return path, x, model(x).numpy()


def _init_lines(path, x, **options):
    with VgfInitLines() as lines, gpuu.load(path, **options) as program:
        (got,) = program.run([x.numpy()])
    return got, lines.lines


def test_auto_runs_the_executor_and_says_why(rfc_path):
    path, x, want = rfc_path
    got, lines = _init_lines(path, x)
    assert len(lines) == 2, lines
    for line in lines:
        assert "path=executor (device 'llvmpipe" in line and "has no VK_ARM_data_graph" in line, line
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_forcing_the_native_path_without_the_extension_fails_naming_it(rfc_path):
    path, x, _ = rfc_path
    with pytest.raises(gpuu.UnsupportedError, match=r"VGF delegate 0: .*native VK_ARM_data_graph path.*no VK_ARM_data_graph"):
        gpuu.load(path, vgf_path="native")


def test_an_unknown_vgf_path_is_refused(rfc_path):
    path, _, _ = rfc_path
    with pytest.raises((ValueError, gpuu.InvalidArgumentError), match="VGF path"):
        gpuu.load(path, vgf_path="fastest")


def test_the_backend_option_chooses_the_executor_and_says_so(rfc_path):
    path, x, want = rfc_path
    got, lines = _init_lines(path, x, backend_options={"VgfBackend": {"data_graph_path": "executor"}})
    assert len(lines) == 2, lines
    for line in lines:
        assert "path=executor (the session asked for the executor)" in line, line
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_backend_option_forcing_native_fails_naming_why(rfc_path):
    path, _, _ = rfc_path
    with pytest.raises(gpuu.UnsupportedError, match=r"VGF delegate 0: .*native VK_ARM_data_graph path"):
        gpuu.load(path, backend_options={"VgfBackend": {"data_graph_path": "native"}})


def test_every_bad_backend_option_is_named_in_one_error(rfc_path):
    path, _, _ = rfc_path
    with pytest.raises(gpuu.InvalidArgumentError) as e:
        gpuu.load(path, backend_options={"NpuBackend": {"cores": "4"},
                                         "VgfBackend": {"path": "native", "data_graph_path": "fastest"}})
    message = str(e.value)
    assert "'NpuBackend:cores=4' names backend 'NpuBackend', which is not registered (registered: " in message
    assert "VgfBackend has no option 'path' (its options: data_graph_path)" in message
    assert "'fastest' is not one of auto, native, executor" in message


def test_vgf_path_still_works_and_a_conflict_is_refused(rfc_path):
    path, x, want = rfc_path
    got, lines = _init_lines(path, x, vgf_path="executor")
    assert all("the session asked for the executor" in line for line in lines) and len(lines) == 2, lines
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(gpuu.InvalidArgumentError, match="vgf_path native conflicts with "
                                                        "'VgfBackend:data_graph_path=executor'"):
        gpuu.load(path, vgf_path="native", backend_options={"VgfBackend": {"data_graph_path": "executor"}})


def test_backend_options_take_strings_only(rfc_path):
    path, _, _ = rfc_path
    with pytest.raises(TypeError, match=r"backend_options\['MtCpu'\]\['threads'\] must be a str, got int"):
        gpuu.load(path, backend_options={"MtCpu": {"threads": 2}})
    with pytest.raises(TypeError, match="backend_options must be a mapping"):
        gpuu.load(path, backend_options=[("VgfBackend", "data_graph_path", "native")])
