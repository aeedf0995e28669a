"""Arm's ML SDK for Vulkan as the test oracle: finding its tools and running them.

The tools come from the wheels tools/dev/requirements.txt pins (0.11.0), installed
in the environment of the running interpreter: ai-ml-sdk-vgf-library (vgf_dump),
ai-ml-sdk-scenario-runner (scenario-runner), ai-ml-sdk-model-converter
(model-converter) and ai-ml-emulation-layer-for-vulkan (the layers that give any
Vulkan device VK_ARM_data_graph and VK_ARM_tensors). A missing tool fails the
test that needs it, naming the package; nothing here skips.

The emulation layers and Debian's Vulkan loader (1.3.239): asked for device
extensions without a layer name, that loader lists the driver's and the
*implicit* layers' extensions only, and Arm's scenario runner enables just what
it finds there, so with the layers enabled the documented way
(VK_INSTANCE_LAYERS) the graph layer refuses vkCreateDevice ("requires
extension: VK_ARM_tensors"). emulation_env() therefore declares the package's
two layers as implicit layers, in a folder of the test's own, from the
package's explicit manifests (library paths made absolute, switched on by an
environment variable): the graph layer's manifest in $XDG_CONFIG_HOME and the
tensor layer's in $XDG_DATA_HOME, which the loader searches in that order, so
that the graph layer sits above the tensor layer as Arm requires.

The scenario runner runs without the Khronos validation layer: Debian's (1.3.239)
predates VK_ARM_tensors / VK_ARM_data_graph and, under the emulation layers,
reports on the layers' own internal pipelines. gpuu's side of every comparison
keeps it (ctest sets GPUU_VALIDATION=1 for these tests).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from typing import Dict, List, Optional

# Tool -> (the Python package that ships it, its binary inside the package, its console script, the pip package).
_TOOLS = {
    "vgf_dump": ("vgf_lib", "vgf_dump", "vgf_dump", "ai-ml-sdk-vgf-library"),
    "scenario_runner": ("scenario_runner", "scenario-runner", "scenario_runner", "ai-ml-sdk-scenario-runner"),
    "model_converter": ("model_converter", "model-converter", "model_converter", "ai-ml-sdk-model-converter"),
}

ENABLE_VARIABLE = "GPUU_ARM_EMULATION_LAYERS"


class MissingTool(AssertionError):
    """An Arm tool the test needs is not installed (a failure, never a skip)."""


def _package_dir(package: str) -> Optional[str]:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def tool(name: str) -> str:
    """Path of Arm's tool `name` (vgf_dump, scenario_runner, model_converter) in this interpreter's environment."""
    package, binary, script, wheel = _TOOLS[name]
    looked = []
    root = _package_dir(package)
    if root:
        path = os.path.join(root, "binaries", "bin", binary)
        looked.append(path)
        if os.access(path, os.X_OK):
            return path
    for folder in (os.path.join(sys.prefix, "bin"), os.path.dirname(sys.executable)):
        path = os.path.join(folder, script)
        looked.append(path)
        if os.access(path, os.X_OK):
            return path
    raise MissingTool(f"Arm's {name} is not installed for {sys.executable} (looked at {', '.join(looked)}): "
                      f"pip install {wheel}==0.11.0 (tools/dev/python_env.sh installs tools/dev/requirements.txt)")


def emulation_deploy_dir() -> str:
    """The emulation layer package's deploy folder (lib/ and share/vulkan/explicit_layer.d/)."""
    root = _package_dir("emulation_layer")
    if root is None:
        raise MissingTool(f"Arm's emulation layer is not installed for {sys.executable}: "
                          "pip install ai-ml-emulation-layer-for-vulkan==0.11.0")
    deploy = os.path.join(root, "deploy")
    manifests = os.path.join(deploy, "share", "vulkan", "explicit_layer.d")
    if not os.path.isdir(manifests):
        raise MissingTool(f"the emulation layer package at {root} has no {manifests}")
    return deploy


def emulation_env(workdir: str) -> Dict[str, str]:
    """The environment for a process that should see Arm's emulation layers (see the module docstring)."""
    deploy = emulation_deploy_dir()
    manifests = os.path.join(deploy, "share", "vulkan", "explicit_layer.d")
    homes = {"VK_LAYER_ML_Graph_Emulation": os.path.join(workdir, "vk_config"),
             "VK_LAYER_ML_Tensor_Emulation": os.path.join(workdir, "vk_data")}
    found = set()
    for entry in sorted(os.listdir(manifests)):
        with open(os.path.join(manifests, entry)) as f:
            manifest = json.load(f)
        layer = manifest["layer"]
        if layer["name"] not in homes:
            continue
        found.add(layer["name"])
        library = layer["library_path"]
        if not os.path.isabs(library):
            library = os.path.join(deploy, "lib", os.path.basename(library))
        layer["library_path"] = library
        layer["enable_environment"] = {ENABLE_VARIABLE: "1"}
        layer["disable_environment"] = {ENABLE_VARIABLE + "_OFF": "1"}
        folder = os.path.join(homes[layer["name"]], "vulkan", "implicit_layer.d")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, entry), "w") as f:
            json.dump(manifest, f, indent=2)
    missing = set(homes) - found
    if missing:
        raise MissingTool(f"the emulation layer package lacks the manifests of {sorted(missing)} in {manifests}")
    env = dict(os.environ)
    for name in ("VK_INSTANCE_LAYERS", "GPUU_VULKAN_LAYERS", "VK_LOADER_LAYERS_ENABLE"):
        env.pop(name, None)
    env["XDG_CONFIG_HOME"] = homes["VK_LAYER_ML_Graph_Emulation"]
    env["XDG_DATA_HOME"] = homes["VK_LAYER_ML_Tensor_Emulation"]
    env[ENABLE_VARIABLE] = "1"
    lib = os.path.join(deploy, "lib")
    env["LD_LIBRARY_PATH"] = lib + (os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def _run(argv: List[str], what: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, (f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
                                  f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}")
    return done


def vgf_dump(vgf_path: str) -> dict:
    """Arm's vgf_dump of the file, parsed."""
    return json.loads(_run([tool("vgf_dump"), "-i", vgf_path, "-o", "-"], "Arm's vgf_dump").stdout)


def scenario_template(vgf_path: str) -> dict:
    """The scenario template Arm's vgf_dump writes for the file."""
    return json.loads(_run([tool("vgf_dump"), "-i", vgf_path, "-o", "-", "--scenario-template"],
                           "Arm's vgf_dump --scenario-template").stdout)


def run_scenario(scenario_path: str, workdir: str, dry_run: bool = False) -> subprocess.CompletedProcess:
    """Runs Arm's scenario runner on the scenario (relative paths: beside it) under the emulation layers."""
    argv = [tool("scenario_runner"), "--scenario", scenario_path]
    if dry_run:
        argv.append("--dry-run")
    done = _run(argv, "Arm's scenario runner", env=emulation_env(workdir))
    # The runner can log an error and still exit 0: an error line fails the test too.
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line or "[Error]" in line]
    assert not errors, f"Arm's scenario runner reported errors for {scenario_path}:\n" + "\n".join(errors)
    return done


# The TOSA.001000.1 extended instruction set: instruction number -> operator (its grammar's order, 0..65).
TOSA_OPERATORS = (
    "ARGMAX", "AVG_POOL2D", "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "FFT2D", "MATMUL", "MAX_POOL2D", "RFFT2D",
    "TRANSPOSE_CONV2D", "CLAMP", "ERF", "SIGMOID", "TANH", "ADD", "ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND",
    "BITWISE_OR", "BITWISE_XOR", "INTDIV", "LOGICAL_AND", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "LOGICAL_OR",
    "LOGICAL_XOR", "MAXIMUM", "MINIMUM", "MUL", "POW", "SUB", "TABLE", "ABS", "BITWISE_NOT", "CEIL", "CLZ", "COS",
    "EXP", "FLOOR", "LOG", "LOGICAL_NOT", "NEGATE", "RECIPROCAL", "RSQRT", "SIN", "SELECT", "EQUAL", "GREATER",
    "GREATER_EQUAL", "REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM", "CONCAT",
    "PAD", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE", "GATHER", "SCATTER", "RESIZE", "CAST", "RESCALE")


def spirv_module(vgf_path: str, spv_path: str) -> bytes:
    """The SPIR-V of the file's module 0, as Arm's vgf_dump extracts it (--dump-spirv)."""
    _run([tool("vgf_dump"), "-i", vgf_path, "-o", spv_path, "--dump-spirv", "0"], "Arm's vgf_dump --dump-spirv")
    with open(spv_path, "rb") as f:
        return f.read()


def tosa_ops(spirv: bytes):
    """The TOSA operators of a graph module, in order, each as (operator, its result's element type), and the
    element types of every tensor type the module declares. Element types are "i8", "i32", "f32", "bool", ...:
    integers by width (TOSA's integers are signless; SPIR-V's signedness bit is not looked at)."""
    import numpy as np

    words = np.frombuffer(spirv, "<u4")
    assert len(words) >= 5 and words[0] == 0x07230203, "not a SPIR-V module"
    scalars, tensors, ops, tosa_set = {}, {}, [], None
    i = 5
    while i < len(words):
        count, opcode = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        assert count > 0 and i + count <= len(words), f"malformed SPIR-V at word {i}"
        w = [int(v) for v in words[i + 1:i + count]]
        if opcode == 11:  # OpExtInstImport: result id, name
            name = np.array(w[1:], "<u4").tobytes().split(b"\0")[0].decode()
            if name == "TOSA.001000.1":
                tosa_set = w[0]
        elif opcode == 20:  # OpTypeBool
            scalars[w[0]] = "bool"
        elif opcode == 21:  # OpTypeInt: result id, width, signedness
            scalars[w[0]] = f"i{w[1]}"
        elif opcode == 22:  # OpTypeFloat: result id, width (, encoding)
            scalars[w[0]] = f"f{w[1]}" if len(w) == 2 else f"f{w[1]}:{w[2]}"
        elif opcode == 4163:  # OpTypeTensorARM: result id, element type (, rank, shape)
            tensors[w[0]] = scalars[w[1]]
        elif opcode == 12 and tosa_set is not None and w[2] == tosa_set:  # OpExtInst: type, id, set, number
            ops.append((TOSA_OPERATORS[w[3]], tensors.get(w[0], "?")))
        i += count
    assert tosa_set is not None, "the module imports no TOSA.001000.1 instruction set"
    return ops, set(tensors.values())


def model_converter(mlir_path: str, vgf_path: str) -> None:
    """Arm's model converter: TOSA MLIR text -> .vgf."""
    _run([tool("model_converter"), "--input", mlir_path, "--output", vgf_path], "Arm's model converter")
    assert os.path.isfile(vgf_path), f"Arm's model converter wrote no {vgf_path}"


def gpuu_inspect() -> str:
    """gpuu-inspect: beside the gpuu package's build tree (<build>/tools/inspect), in this environment, or on PATH."""
    import gpuu

    package = os.path.dirname(os.path.abspath(gpuu.__file__))
    candidates = [os.path.join(package, "..", "..", "..", "tools", "inspect", "gpuu-inspect"),
                  os.path.join(sys.prefix, "bin", "gpuu-inspect")]
    on_path = shutil.which("gpuu-inspect")
    if on_path:
        candidates.append(on_path)
    for path in candidates:
        if os.access(path, os.X_OK):
            return os.path.normpath(path)
    raise MissingTool("gpuu-inspect not found (looked at " + ", ".join(os.path.normpath(c) for c in candidates) + ")")


def gpuu_dump(vgf_path: str) -> dict:
    """gpuu's own decoding of the file in vgf_dump's JSON view (gpuu-inspect --dump-vgf, VGF library 0.11)."""
    return json.loads(_run([gpuu_inspect(), "--dump-vgf", vgf_path], "gpuu-inspect --dump-vgf").stdout)


def mlir_dense(array) -> str:
    """An MLIR dense elements literal for a float array: nested brackets, one level per dimension."""
    import numpy as np

    a = np.asarray(array, np.float32)
    if a.ndim == 0:
        return f"{float(a):.8e}"
    return "[" + ", ".join(mlir_dense(sub) for sub in a) + "]"


if __name__ == "__main__":
    # By hand: python tests/python/arm_sdk.py SCENARIO.json [runner options] runs Arm's scenario
    # runner under the emulation layers, set up as the tests do (manifests in a temporary folder).
    import tempfile

    if len(sys.argv) < 2:
        sys.exit("usage: arm_sdk.py SCENARIO.json [scenario runner options]")
    with tempfile.TemporaryDirectory(prefix="gpuu_arm_") as scratch:
        sys.exit(subprocess.run([tool("scenario_runner"), "--scenario"] + sys.argv[1:],
                                env=emulation_env(scratch)).returncode)


def native_layers_enabled() -> bool:
    """True in a process ctest started with Arm's layers for gpuu (GPUU_VULKAN_LAYERS): the native path runs."""
    return "VK_LAYER_ML_Graph_Emulation" in os.environ.get("GPUU_VULKAN_LAYERS", "")
