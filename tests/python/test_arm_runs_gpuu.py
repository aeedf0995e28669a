"""Arm runs gpuu: every standalone .vgf gpuu writes runs in Arm's scenario runner, with gpuu's scenario JSON.

For each op family of arm_suite and both export flows (gpuu.export_vgf and
`gpuu-inspect --extract-vgf`), the scenario JSON gpuu wrote beside each .vgf is
checked against Arm's scenario schema (the wheel ships no JSON schema, and its
headers, scenario_runner/*.hpp, describe the C++ structures, not the JSON keys:
the rules below are those of the scenario runner's JSON specification, docs
json.rst of ai-ml-sdk-scenario-runner 0.11, checked against the keys the 0.11
binary knows), compared with the scenario template Arm's own vgf_dump derives
from the file, dry-run by the runner, then run as written (only the input .npy
placeholders are replaced with random data). Its outputs must equal gpuu's own
outputs for the same inputs (gpuu.load_vgf of the same file).

The scenario runner runs under Arm's emulation layers *without* the Khronos
validation layer (Debian's 1.3.239 does not know VK_ARM_tensors /
VK_ARM_data_graph and reports on the layers' internal pipelines; see arm_sdk);
gpuu's runs keep it.
"""

import contextlib
import json
import os

import numpy as np
import pytest

import gpuu

import arm_sdk
import arm_suite

# The scenario schema (scenario runner 0.11): resource and command kinds, per kind its keys.
RESOURCE_KINDS = {"image", "tensor", "buffer", "raw_data", "graph", "shader", "memory_barrier", "buffer_barrier",
                  "tensor_barrier", "image_barrier"}
COMMAND_KINDS = {"dispatch_compute", "dispatch_graph", "dispatch_vgf", "dispatch_barrier", "mark_boundary",
                 "frame_boundary", "dispatch_spirv_graph", "dispatch_data_graph", "dispatch_fragment",
                 "dispatch_optical_flow"}
TENSOR_KEYS = {"required": {"uid", "dims", "format", "shader_access"},
               "optional": {"src", "dst", "alias_target", "tiling"}}
BUFFER_KEYS = {"required": {"uid", "size", "shader_access"}, "optional": {"src", "dst"}}
GRAPH_KEYS = {"required": {"uid", "src"},
              "optional": {"specialization_constants_map", "shader_substitutions", "push_constants_size"}}
DISPATCH_VGF_KEYS = {"required": {"graph_ref", "bindings"},
                     "optional": {"push_constants", "implicit_barrier", "shader_substitutions"}}
BINDING_KEYS = {"required": {"set", "id", "resource_ref"}, "optional": {"lod", "descriptor_type"}}
SHADER_ACCESS = {"readonly", "writeonly", "readwrite"}
TENSOR_FORMATS = {"VK_FORMAT_R8_BOOL_ARM", "VK_FORMAT_R8_UINT", "VK_FORMAT_R8_SINT", "VK_FORMAT_R16_UINT",
                  "VK_FORMAT_R16_SINT", "VK_FORMAT_R32_UINT", "VK_FORMAT_R32_SINT", "VK_FORMAT_R64_SINT",
                  "VK_FORMAT_R16_SFLOAT", "VK_FORMAT_R32_SFLOAT"}


def _keys(obj, rule, where):
    assert isinstance(obj, dict), f"{where}: an object expected, got {obj!r}"
    missing = rule["required"] - set(obj)
    unknown = set(obj) - rule["required"] - rule["optional"]
    assert not missing, f"{where}: missing required keys {sorted(missing)}"
    assert not unknown, f"{where}: keys Arm's schema does not have {sorted(unknown)}"


def _one_kind(item, kinds, where):
    assert isinstance(item, dict) and len(item) == 1, f"{where}: one {{kind: object}} expected, got {item!r}"
    (kind, body), = item.items()
    assert kind in kinds, f"{where}: unknown kind {kind!r}"
    return kind, body


def check_scenario_schema(scenario, scenario_dir):
    """Arm's scenario rules; returns {uid: (kind, body)}."""
    assert isinstance(scenario, dict) and set(scenario) == {"resources", "commands"}, sorted(scenario)
    resources = {}
    for i, item in enumerate(scenario["resources"]):
        kind, body = _one_kind(item, RESOURCE_KINDS, f"resources[{i}]")
        where = f"resources[{i}].{kind}"
        rule = {"tensor": TENSOR_KEYS, "buffer": BUFFER_KEYS, "graph": GRAPH_KEYS}.get(kind)
        assert rule, f"{where}: gpuu writes only tensor, buffer and graph resources"
        _keys(body, rule, where)
        assert isinstance(body["uid"], str) and body["uid"], where
        assert body["uid"] not in resources, f"{where}: uid {body['uid']!r} is not unique"
        resources[body["uid"]] = (kind, body)
        if kind == "tensor":
            assert body["format"] in TENSOR_FORMATS, f"{where}: format {body['format']} is no tensor format"
            assert body["dims"] and all(isinstance(d, int) and d > 0 for d in body["dims"]), where
        if kind == "buffer":
            assert isinstance(body["size"], int) and body["size"] > 0, where
        if kind in ("tensor", "buffer"):
            assert body["shader_access"] in SHADER_ACCESS, where
            assert ("src" in body) != ("dst" in body), f"{where}: gpuu's tensors are inputs (src) or outputs (dst)"
            path = body.get("src") or body.get("dst")
            assert isinstance(path, str) and path.endswith(".npy"), where
            if "src" in body:
                assert os.path.isfile(os.path.join(scenario_dir, path)), f"{where}: src {path} was not written"
        if kind == "graph":
            assert os.path.isfile(os.path.join(scenario_dir, body["src"])), f"{where}: no {body['src']}"
    assert scenario["commands"], "no command"
    for i, item in enumerate(scenario["commands"]):
        kind, body = _one_kind(item, COMMAND_KINDS, f"commands[{i}]")
        where = f"commands[{i}].{kind}"
        assert kind == "dispatch_vgf", f"{where}: gpuu writes dispatch_vgf commands"
        _keys(body, DISPATCH_VGF_KEYS, where)
        assert resources.get(body["graph_ref"], ("",))[0] == "graph", f"{where}: graph_ref names no graph"
        seen = set()
        for k, b in enumerate(body["bindings"]):
            _keys(b, BINDING_KEYS, f"{where}.bindings[{k}]")
            assert isinstance(b["set"], int) and b["set"] >= 0 and isinstance(b["id"], int) and b["id"] >= 0
            assert resources.get(b["resource_ref"], ("",))[0] in ("tensor", "buffer"), b
            assert (b["set"], b["id"]) not in seen, f"{where}: set {b['set']} binding {b['id']} bound twice"
            seen.add((b["set"], b["id"]))
    return resources


def check_against_vgf(scenario, resources, vgf_path):
    """The scenario binds exactly the file's model inputs and outputs, as Arm's own template does."""
    dump = arm_sdk.vgf_dump(vgf_path)
    template = arm_sdk.scenario_template(vgf_path)
    mrt = dump["resources"]
    seq = dump["model_sequence"]
    (command,) = scenario["commands"]
    bindings = {(b["set"], b["id"]): resources[b["resource_ref"]][1] for b in command["dispatch_vgf"]["bindings"]}
    ours = {}
    for slot in seq["inputs"] + seq["outputs"]:
        matches = [body for (s, i), body in bindings.items() if i == slot["binding"]]
        assert len(matches) == 1, f"model slot {slot} is bound {len(matches)} times"
        body = matches[0]
        r = mrt[slot["mrt_index"]]
        if "dims" in body:
            assert body["dims"] == r["shape"] and body["format"] == r["vk_format"], (body, r)
        ours[slot["binding"]] = (body.get("dims"), body.get("format"), body["shader_access"])
    assert len(bindings) == len(ours)
    # Arm's template: dispatch_graph with the same binding numbers, shapes, formats and access.
    arm_resources = {next(iter(r.values()))["uid"]: next(iter(r.values())) for r in template["resources"]}
    (arm_command,) = [c for c in template["commands"] if "dispatch_graph" in c]
    theirs = {}
    for b in arm_command["dispatch_graph"]["bindings"]:
        body = arm_resources[b["resource_ref"]]
        theirs[b["id"]] = (body.get("dims"), body.get("format"), body["shader_access"])
    if all(v[0] is not None for v in theirs.values()):
        assert ours == theirs, f"gpuu's bindings {ours} differ from Arm's template {theirs}"
    else:
        assert set(ours) == set(theirs), (ours, theirs)


def _random_like(placeholder, rng):
    if placeholder.dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, placeholder.shape).astype(placeholder.dtype)
    if placeholder.dtype.kind == "b":
        return rng.integers(0, 2, placeholder.shape).astype(bool)
    return rng.integers(-8, 8, placeholder.shape).astype(placeholder.dtype)


def _close(vgf_path, uid, theirs, mine):
    np.testing.assert_allclose(theirs, mine, rtol=1e-5, atol=1e-5,
                               err_msg=f"{vgf_path}: output {uid}, Arm's scenario runner vs gpuu")


def run_and_compare(vgf_path, workdir, make_input=_random_like, compare=_close, runtime_options=None, dry_run=True,
                    keep=None):
    """Runs the .vgf's scenario in Arm's scenario runner (a dry run first, unless dry_run is False) and the file in
    gpuu (gpuu.load_vgf with `runtime_options`), on the same inputs (make_input(placeholder, rng) per input);
    compare(vgf_path, uid, theirs, mine) per output. `keep`, a contextlib.ExitStack, keeps gpuu's session open
    until it closes (its compiled pipelines then serve a later load of the same TOSA). Returns {input uid: array}."""
    scenario_path = vgf_path[:-4] + ".json"
    scenario_dir = os.path.dirname(vgf_path)
    with open(scenario_path) as f:
        scenario = json.load(f)
    resources = check_scenario_schema(scenario, scenario_dir)
    check_against_vgf(scenario, resources, vgf_path)
    if dry_run:
        dry = arm_sdk.run_scenario(scenario_path, workdir, dry_run=True)
        assert "deprecated" not in dry.stdout + dry.stderr, dry.stdout + dry.stderr

    rng = np.random.default_rng(1)
    inputs, outputs = {}, {}
    for uid, (kind, body) in resources.items():
        if "src" in body and kind != "graph":
            path = os.path.join(scenario_dir, body["src"])
            placeholder = np.load(path)
            assert not placeholder.any(), f"{path}: the placeholder input is not zeros"
            if kind == "tensor":
                assert list(placeholder.shape) == body["dims"], (path, placeholder.shape, body["dims"])
            inputs[uid] = make_input(placeholder, rng)
            np.save(path, inputs[uid])
        elif "dst" in body:
            outputs[uid] = os.path.join(scenario_dir, body["dst"])
            if os.path.exists(outputs[uid]):
                os.remove(outputs[uid])
    done = arm_sdk.run_scenario(scenario_path, workdir)
    assert "deprecated" not in done.stdout + done.stderr, done.stdout + done.stderr

    with contextlib.ExitStack() as own:
        program = (keep or own).enter_context(gpuu.load_vgf(vgf_path, **(runtime_options or {})))
        assert [i.name for i in program.inputs] == list(inputs), (program.inputs, list(inputs))
        assert [o.name for o in program.outputs] == list(outputs), (program.outputs, list(outputs))
        ours = program.run([inputs[i.name] for i in program.inputs])
    for (uid, path), mine in zip(outputs.items(), ours):
        assert os.path.isfile(path), f"Arm's scenario runner wrote no {path}"
        theirs = np.load(path)
        if theirs.dtype != mine.dtype or theirs.shape != mine.shape:  # a storage buffer comes back as bytes
            theirs = np.frombuffer(theirs.tobytes(), mine.dtype).reshape(mine.shape)
        compare(vgf_path, uid, theirs, mine)
    return inputs


@pytest.mark.parametrize("case", arm_suite.CASES)
def test_arm_scenario_runner_runs_gpuu_exports(case, tmp_path):
    files = arm_suite.export_case(case, str(tmp_path))
    for flow in ("export_vgf", "extract_vgf"):
        for vgf_path in files[flow]:
            run_and_compare(vgf_path, str(tmp_path / "emulation"))


def test_missing_scenario_input_is_reported(tmp_path):
    files = arm_suite.export_case("elementwise", str(tmp_path))
    vgf_path = files["extract_vgf"][0]
    os.remove(vgf_path[:-4] + ".input_0.npy")
    with pytest.raises(AssertionError, match="scenario runner"):
        arm_sdk.run_scenario(vgf_path[:-4] + ".json", str(tmp_path / "emulation"))
