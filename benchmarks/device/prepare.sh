#!/usr/bin/env bash
# Here (no GPU): everything benchmarks/device/session.sh needs on the GPU machine, into .bench/ (carried with
# .gl, 64 MiB at most in all: docs/GPU.md): bench_gemm, bench_int8_gemm, bench_attention, bench_suite,
# profile_program, vulkan_quant_test, the GEMM tests (vulkan_gemm_test, vulkan_gemm_split_test,
# vulkan_gemm_epilogue_test) and the attention, convolution and norm tests from build/, stripped and packed into
# bin.tar.xz (a fifth of their size: the embedded SPIR-V compresses well; session.sh unpacks them into
# .bench/bin), a gpuu wheel for the GPU machine's Python 3.12, torchao's wheel (int8 and weight-only schemes), and
# the benchmark scripts. Run from the repository root after tools/dev/build.sh; prints the folder's size.
# Env: PY312 (a Python 3.12; default: pyenv's 3.12.*), TORCHAO_WHEEL (default: downloaded, torchao==0.17.0).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=.bench
grep -qx '/.bench/' .git/info/exclude 2>/dev/null || echo /.bench/ >> .git/info/exclude
rm -rf "$out" && mkdir -p "$out/bin" "$out/real"
cmake --build build --target bench_dispatch bench_gemm bench_int8_gemm bench_attention bench_suite profile_program vulkan_quant_test \
  vulkan_gemm_test vulkan_gemm_split_test vulkan_gemm_epilogue_test vulkan_attention_test vulkan_conv_pool_test \
  vulkan_reduce_norm_test >/dev/null
for b in benchmarks/runtime/bench_dispatch benchmarks/gemm/bench_gemm benchmarks/gemm/bench_int8_gemm benchmarks/attention/bench_attention \
         benchmarks/suite/bench_suite benchmarks/runtime/profile_program tests/kernels/vulkan_quant_test \
         tests/kernels/vulkan_gemm_test tests/kernels/vulkan_gemm_split_test tests/kernels/vulkan_gemm_epilogue_test \
         tests/kernels/vulkan_attention_test tests/kernels/vulkan_conv_pool_test \
         tests/kernels/vulkan_reduce_norm_test; do
  strip -o "$out/bin/$(basename $b)" "build/$b"
done
tar -C "$out" -cJf "$out/bin.tar.xz" bin && rm -rf "$out/bin"
py312=${PY312:-$(ls -d ~/.pyenv/versions/3.12.*/bin/python 2>/dev/null | head -1)}
[ -x "$py312" ] || { echo "prepare: no Python 3.12 (set PY312)" >&2; exit 1; }
venv=/tmp/gpuu-py312-venv
[ -x $venv/bin/pip ] || { "$py312" -m venv $venv && $venv/bin/pip install -q numpy scikit-build-core 'cmake<4' ninja; }
# The wheel builds from a clean copy of HEAD (uncommitted changes are not measured).
tree=$(mktemp -d) && git worktree add -q --detach "$tree" HEAD
# The cooperative-matrix-2 kernels need Arm's glslc (the scenario runner's, in the project's environment).
coopmat2_glslc=$("$(tools/dev/python_env.sh)" -c \
  "import os, scenario_runner; print(os.path.join(os.path.dirname(scenario_runner.__file__), 'binaries', 'bin', 'glslc'))")
$venv/bin/pip wheel -q --no-build-isolation --no-deps -C build-dir=/tmp/gpuu-wheel-build \
  -C cmake.define.GPUU_COOPMAT2_GLSLC="$coopmat2_glslc" -w "$out/real" "$tree"
git worktree remove --force "$tree"
if [ -n "${TORCHAO_WHEEL:-}" ]; then
  cp "$TORCHAO_WHEEL" "$out/real/"
else
  $venv/bin/pip download -q --no-deps torchao==0.17.0 -d "$out/real"
fi
cp benchmarks/real/*.py benchmarks/real/run.sh benchmarks/suite/torch_suite.py benchmarks/suite/suite_models.py "$out/real/"
git rev-parse --short HEAD > "$out/commit"
du -sh "$out"
