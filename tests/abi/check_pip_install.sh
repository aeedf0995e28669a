#!/usr/bin/env bash
# `pip install <source>` into a fresh virtual environment, as a Python user
# would: the build backend fetches its own build requirements from PyPI,
# compiles the library, the SWIG module and the tools, and installs them; the
# package then runs a program and the tools run from the environment's bin/.
# Build settings come from the test's own build (tests/abi/CMakeLists.txt): the
# CMake build folder (a fresh one, beside that build), the build type, the
# compiler launchers and the compilers, so that with ccache the compiles hit
# its entries.
set -euo pipefail
python=$1 src=$2 work=$3 cmake_build=$4 build_type=$5 c_launcher=${6:-} cxx_launcher=${7:-}
c_compiler=${8:-} cxx_compiler=${9:-}
rm -rf "$work" "$cmake_build" && mkdir -p "$work"
"$python" -m venv "$work/venv"
settings=(--config-settings=build-dir="$cmake_build")
[ -z "$build_type" ] || settings+=(--config-settings=cmake.build-type="$build_type")
[ -z "$c_launcher" ] || settings+=(--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER="$c_launcher")
[ -z "$cxx_launcher" ] || settings+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER="$cxx_launcher")
[ -z "$c_compiler" ] || settings+=(--config-settings=cmake.define.CMAKE_C_COMPILER="$c_compiler")
[ -z "$cxx_compiler" ] || settings+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER="$cxx_compiler")
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "${settings[@]}" "$src" > "$work/pip.log" 2>&1 ||
  { tail -40 "$work/pip.log"; exit 1; }
rm -rf "$cmake_build"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import importlib.metadata

import numpy as np
import gpuu
from gpuu import gpuu_c

assert gpuu.__file__.startswith(__import__("sys").prefix), gpuu.__file__
# One version: the wheel's metadata (pyproject.toml reads gpuu.h), gpuu.__version__ and the header's macros.
header = "%d.%d.%d" % (gpuu_c.GPUU_VERSION_MAJOR, gpuu_c.GPUU_VERSION_MINOR, gpuu_c.GPUU_VERSION_PATCH)
assert importlib.metadata.version("gpuu") == gpuu.__version__ == header, (
    importlib.metadata.version("gpuu"), gpuu.__version__, header)
with gpuu.Graph() as g:
    x = g.add_input("x", np.float32, [8])
    g.mark_output(g.add_node("sin", "sin_0", [x])[0])
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1)
    partitioner = gpuu.UnifiedGpuPartitioner(spec)
    result = partitioner.partition(g)
    partitioner.write_program(result, "sin.gpuu")
    result.partition.close()
values = np.linspace(-3, 3, 8, dtype=np.float32)
with gpuu.load("sin.gpuu") as program:
    (y,) = program.run([values])
np.testing.assert_allclose(y, np.sin(values), rtol=1e-6, atol=1e-6)
print("pip-installed gpuu ran sin on", gpuu.enumerate_devices()[0][0])
PY
# Whole outputs first: grep -q on a pipe would end the writer early (SIGPIPE under pipefail).
inspect=$("$work/venv/bin/gpuu-inspect" sin.gpuu)
ops=$("$work/venv/bin/gpuu-inspect" --ops)
usage=$("$work/venv/bin/gpuu-run" --help)
grep -q "VulkanBackend: 1 delegate" <<< "$inspect" || { echo "gpuu-inspect: $inspect"; exit 1; }
grep -q '^| `conv2d`' <<< "$ops" || { echo "gpuu-inspect --ops: $ops"; exit 1; }
grep -q model_path <<< "$usage" || { echo "gpuu-run --help: $usage"; exit 1; }
echo "pip install: package and tools work from a fresh environment"
