#!/usr/bin/env bash
# Configures and builds gpuu into build/ (or $GPUU_BUILD_DIR), with the Python
# bindings made for the project's environment (tools/dev/python_env.sh).
# Extra arguments go to the configure step, e.g. -DGPUU_BUILD_TESTS=OFF.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_BUILD_DIR:-$root/build}
python=$("$root/tools/dev/python_env.sh")
mkdir -p "$build"
build=$(cd "$build" && pwd)
# ccache, where installed, makes rebuilds cheap: in other checkouts of the tree,
# and the pip-install test's second build of the library (in a folder beside
# this one: tests/abi/check_pip_install.sh). Paths under the base folder are
# hashed relative to the build folder and the folder itself is not hashed, so
# build folders at the same depth share entries.
launcher=()
if command -v ccache >/dev/null; then
  base=$root
  until [ "$base" = / ] || [[ "$(dirname "$build")/" == "$base/"* ]]; do base=$(dirname "$base"); done
  ccache_launcher="env;CCACHE_BASEDIR=$base;CCACHE_NOHASHDIR=true;ccache"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$ccache_launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$ccache_launcher")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$python" "${launcher[@]}" "$@" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)"
