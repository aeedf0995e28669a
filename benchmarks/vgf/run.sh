#!/usr/bin/env bash
# Runs the VGF executor benchmark (fused against unfused) on the default
# Vulkan device and writes benchmarks/results/vgf-<device>-<date>.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out_dir=${OUT_DIR:-$root/benchmarks/results}
commit=${GPUU_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
[ -x "$build/benchmarks/vgf/bench_vgf" ] || cmake --build "$build" --target bench_vgf
tmp=$(mktemp)
"$build/benchmarks/vgf/bench_vgf" --runs "${RUNS:-100}" --warmup "${WARMUP:-10}" > "$tmp"
. "$root/benchmarks/write_result.sh"
write_result vgf_executor_fusion vgf "$tmp"
rm -f "$tmp"
