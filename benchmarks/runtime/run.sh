#!/usr/bin/env bash
# Runs the runtime benchmark on the default Vulkan device and writes
# benchmarks/results/runtime-<device>-<date>.json with the date and commit.
# With --torch (on a machine whose python3 has CUDA PyTorch, e.g. the GPU
# machine) the same chain runs in PyTorch eager and CUDA-graph replay in the
# same run. BUILD_DIR defaults to build/; OUT_DIR to benchmarks/results.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out_dir=${OUT_DIR:-$root/benchmarks/results}
commit=${GPUU_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
with_torch=0
[ "${1:-}" = "--torch" ] && with_torch=1
[ -x "$build/benchmarks/runtime/bench_runtime" ] || cmake --build "$build" --target bench_runtime
tmp=$(mktemp -d)
"$build/benchmarks/runtime/bench_runtime" --runs "${RUNS:-200}" --warmup "${WARMUP:-20}" > "$tmp/gpuu.json"
torch_json=null
if [ $with_torch -eq 1 ]; then
  python3 "$root/benchmarks/runtime/torch_chain.py" --runs "${RUNS:-200}" --warmup "${WARMUP:-20}" > "$tmp/torch.json"
  torch_json=$(cat "$tmp/torch.json")
fi
device=$(sed -n 's/.*"device": "\(.*\)",/\1/p' "$tmp/gpuu.json" | head -1 | tr ' /(),' '_____' | tr -s '_' | cut -c1-40)
mkdir -p "$out_dir"
out="$out_dir/runtime-${device}-$(date -u +%Y-%m-%d).json"
{
  echo "{"
  echo "  \"benchmark\": \"runtime\","
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"commit\": \"$commit\","
  echo "  \"host_cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\","
  echo "  \"gpuu\": $(cat "$tmp/gpuu.json"),"
  echo "  \"torch\": $torch_json"
  echo "}"
} > "$out"
rm -rf "$tmp"
echo "wrote $out"
cat "$out"
