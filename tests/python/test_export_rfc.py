"""The RFC's export example: the file holds both delegates, the sample script's outputs, and its numerics."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuu

from conftest import SYNC_MODES, UnifiedVgfVulkanModel, eager, rfc_input

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLE = os.path.join(ROOT, "samples", "export_unified_vgf_vulkan_e2e.py")


def rfc_spec(**overrides):
    fields = dict(vgf=gpuu.VgfCompileSpec(), vulkan_compile_options={}, shared_context_token="vgf_vk_unified_e2e",
                  shared_context_mode="lookup_or_create", shared_sync_mode="timeline", shared_group_id=7,
                  min_partition_size=1, prefer="vgf_first")
    fields.update(overrides)
    return gpuu.UnifiedGpuCompileSpec(**fields)


@pytest.fixture(scope="module")
def rfc_program(tmp_path_factory):
    path = tmp_path_factory.mktemp("rfc") / "unified_vgf_vulkan.gpuu"
    report = gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(), path)
    return path, report


def test_exported_file_contains_both_backend_names(rfc_program):
    path, _ = rfc_program
    data = path.read_bytes()
    assert b"VgfBackend" in data and b"VulkanBackend" in data


def test_exported_program_has_the_vgf_vulkan_vgf_delegates(rfc_program):
    path, report = rfc_program
    with gpuu.Program(path=str(path)) as program:
        assert program.delegates == ["VgfBackend", "VulkanBackend", "VgfBackend"]
    assert [r["backend"] for r in report["regions"]] == ["VgfBackend", "VulkanBackend", "VgfBackend"]


def test_exported_delegates_carry_the_shared_keys_and_token(rfc_program):
    path, _ = rfc_program
    data = path.read_bytes()
    for key in gpuu.export_api.SHARED_KEYS:
        assert key.encode() in data, key
    assert b"vgf_vk_unified_e2e" in data


def test_export_writes_the_same_bytes_twice(tmp_path):
    a, b = tmp_path / "a.gpuu", tmp_path / "b.gpuu"
    gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(), a)
    gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(), str(b))
    assert a.read_bytes() == b.read_bytes()


def test_sample_script_writes_program_input_and_expected(tmp_path):
    out = tmp_path / "unified_gpu"
    cmd = [sys.executable, SAMPLE, "--out_dir", str(out), "--token", "vgf_vk_unified_e2e", "--group_id", "7",
           "--prefer", "vgf_first", "--min_partition_size", "1", "--sync_mode", "timeline"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "VgfBackend -> VulkanBackend -> VgfBackend" in done.stdout
    program = (out / "unified_vgf_vulkan.gpuu").read_bytes()
    assert b"VgfBackend" in program and b"VulkanBackend" in program
    x = np.fromfile(out / "input0.bin", dtype="<f4")
    np.testing.assert_array_equal(x, rfc_input().numpy().ravel())
    expected = np.fromfile(out / "expected0.bin", dtype="<f4")
    np.testing.assert_array_equal(expected, eager(UnifiedVgfVulkanModel(), rfc_input())[0].ravel())


def test_export_vgf_writes_one_standalone_vgf_per_vgf_region(tmp_path):
    paths = gpuu.export_vgf(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(), tmp_path / "vgf")
    assert [os.path.basename(p) for p in paths] == ["0.vgf", "2.vgf"]  # delegates 0 and 2 of VGF, Vulkan, VGF
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(4) == b"VGF1"
        with open(p[:-len(".vgf")] + ".json") as f:
            scenario = json.load(f)  # a scenario for Arm's runner sits beside each file
        graphs = [r["graph"]["src"] for r in scenario["resources"] if "graph" in r]
        assert graphs == [os.path.basename(p)]
    assert gpuu.export_vgf(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(prefer="vulkan_first"),
                           tmp_path / "none") == []


def test_export_writes_extra_and_per_backend_specs(tmp_path):
    """extra_shared_compile_specs reach every delegate after the six shared keys,
    backend_compile_specs only that backend's; the file still runs."""
    import json
    import subprocess

    from arm_sdk import gpuu_inspect

    spec = rfc_spec(extra_shared_compile_specs=(gpuu.CompileSpec("app_build", b"42"),),
                    backend_compile_specs={"vulkan": (gpuu.CompileSpec("vulkan_note", b"fast"),)})
    path = tmp_path / "x.gpuu"
    gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), spec, path)
    info = json.loads(subprocess.run([gpuu_inspect(), "--json", str(path)], check=True, capture_output=True,
                                     text=True).stdout)
    seen = set()
    for d in info["delegates"]:
        keys = [s["key"] for s in d["compile_specs"]]
        assert keys[6] == "app_build", keys
        assert ("vulkan_note" in keys) == (d["backend_id"] == "VulkanBackend"), (d["backend_id"], keys)
        seen.add(d["backend_id"])
    assert seen == {"VgfBackend", "VulkanBackend"}
    run_and_compare(path, "timeline")


def test_export_refuses_bad_extra_specs_by_name(tmp_path):
    spec = rfc_spec(backend_compile_specs={"NoSuchBackend": (gpuu.CompileSpec("k", b"v"),)})
    with pytest.raises(gpuu.InvalidArgumentError, match="NoSuchBackend"):
        gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), spec, tmp_path / "x.gpuu")
    assert not (tmp_path / "x.gpuu").exists()
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_colour"):
        spec = rfc_spec(extra_shared_compile_specs=(gpuu.CompileSpec("gpu_shared_colour", b"red"),))
        gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), spec, tmp_path / "y.gpuu")


# ---- numerics ----------------------------------------------------------------

def run_and_compare(path, sync_mode, rtol=1e-5, atol=1e-5):
    want = eager(UnifiedVgfVulkanModel(), rfc_input())[0]
    with gpuu.load(path, sync_mode=sync_mode) as program:
        assert program.sync_mode == sync_mode
        (got,) = program.run([rfc_input().numpy()])
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_rfc_model_on_vulkan_matches_eager(tmp_path, sync_mode):
    path = tmp_path / "rfc_vulkan.gpuu"
    gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(prefer="vulkan_first"), path)
    run_and_compare(path, sync_mode)


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_rfc_model_on_vulkan_and_cpu_matches_eager(tmp_path, sync_mode):
    # gather goes to the CPU: Vulkan -> CPU -> Vulkan, with host hand-offs both ways.
    path = tmp_path / "rfc_vulkan_cpu.gpuu"
    report = gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(prefer="vulkan_first"), path,
                         pins={"gather_0": "cpu"})
    assert [r["backend"] for r in report["regions"]] == ["VulkanBackend", "CpuFallback", "VulkanBackend"]
    run_and_compare(path, sync_mode)


@pytest.mark.parametrize("sync_mode", SYNC_MODES)
def test_rfc_model_vgf_vulkan_vgf_matches_eager(rfc_program, sync_mode, vgf_runtime):
    path, _ = rfc_program
    run_and_compare(path, sync_mode)


def test_rfc_model_with_default_min_size_runs_cpu_vulkan_vgf(tmp_path, vgf_runtime):
    path = tmp_path / "rfc_min3.gpuu"
    report = gpuu.export(UnifiedVgfVulkanModel().eval(), (rfc_input(),), rfc_spec(min_partition_size=3), path)
    assert [r["backend"] for r in report["regions"]] == ["CpuFallback", "VulkanBackend", "VgfBackend"]
    run_and_compare(path, "timeline")
