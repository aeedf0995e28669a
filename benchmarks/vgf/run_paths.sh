#!/usr/bin/env bash
# VGF native path (VK_ARM_data_graph through Arm's emulation layers) against
# gpuu's TOSA executor, per VGF region of the RFC model and the model-family
# suite: writes benchmarks/results/vgf-paths-<device>-<date>.json.
# PROGRAMS=<dir> reuses exported programs (the GPU machine has no exporter);
# LAYERS=<emulation layer deploy dir> when the project's .venv is not here.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out_dir=${OUT_DIR:-$root/benchmarks/results}
commit=${GPUU_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
[ -x "$build/benchmarks/vgf/bench_vgf_paths" ] || cmake --build "$build" --target bench_vgf_paths
programs=${PROGRAMS:-}
if [ -z "$programs" ]; then
  programs=$(mktemp -d)
  python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" | head -1)
  PYTHONPATH=$build/bindings/python "$python" "$root/benchmarks/vgf/export_programs.py" "$programs" > /dev/null
fi
tmp=$(mktemp)
. "$root/tools/dev/arm_layers.sh" "$root/.venv/bin/python"
"$build/benchmarks/vgf/bench_vgf_paths" --runs "${RUNS:-50}" --warmup "${WARMUP:-5}" "$programs"/*.gpuu > "$tmp"
. "$root/benchmarks/write_result.sh"
write_result vgf_native_vs_executor vgf-paths "$tmp"
rm -f "$tmp"
