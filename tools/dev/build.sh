#!/usr/bin/env bash
# Configures and builds gpuu into build/ (or $GPUU_BUILD_DIR), with the Python
# bindings made for the project's environment (tools/dev/python_env.sh).
# Extra arguments go to the configure step, e.g. -DGPUU_BUILD_TESTS=OFF.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_BUILD_DIR:-$root/build}
python=$("$root/tools/dev/python_env.sh")
mkdir -p "$build"
# ccache, where installed, makes rebuilds in other checkouts of the tree cheap.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$python" "${launcher[@]}" "$@" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
