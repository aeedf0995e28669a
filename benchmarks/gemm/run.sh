#!/usr/bin/env bash
# Runs the GEMM benchmark on the default Vulkan device and writes
# benchmarks/results/gemm-<device>-<date>.json with the date and commit.
# With --torch (on a machine whose python3 has CUDA PyTorch, e.g. the GPU
# machine) the same cases run in PyTorch in the same run, and the JSON gets
# gpuu / PyTorch ratios. BENCH_GEMM names the binary (default
# $BUILD_DIR/benchmarks/gemm/bench_gemm, BUILD_DIR defaulting to build/);
# OUT_DIR defaults to benchmarks/results. Extra arguments after --torch go to
# bench_gemm (--size, --runs, --quick for CPU devices).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
bench=${BENCH_GEMM:-$build/benchmarks/gemm/bench_gemm}
out_dir=${OUT_DIR:-$root/benchmarks/results}
commit=${GPUU_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
with_torch=0
if [ "${1:-}" = "--torch" ]; then with_torch=1; shift; fi
[ -x "$bench" ] || cmake --build "$build" --target bench_gemm
tmp=$(mktemp -d)
"$bench" "$@" > "$tmp/gpuu.json"
torch_json=null
if [ $with_torch -eq 1 ]; then
  python3 "$root/benchmarks/gemm/torch_gemm.py" > "$tmp/torch.json"
  torch_json=$(cat "$tmp/torch.json")
fi
device=$(sed -n 's/.*"device": "\(.*\)",/\1/p' "$tmp/gpuu.json" | head -1 | tr ' /(),' '_____' | tr -s '_' | cut -c1-40)
mkdir -p "$out_dir"
out="$out_dir/gemm-${device}-$(date -u +%Y-%m-%d).json"
python3 - "$tmp/gpuu.json" "$tmp/torch.json" "$commit" > "$out" <<'PY'
import json, sys, datetime, os
gpuu = json.load(open(sys.argv[1]))
torch = json.load(open(sys.argv[2])) if os.path.exists(sys.argv[2]) else None
ratios = {}
if torch:
    ref = {c["name"]: c for c in torch["cases"]}
    for c in gpuu["cases"]:
        base = ref.get(c["name"]) or ref.get(c["name"].rsplit("_", 1)[0])
        if base:
            ratios[c["name"]] = round(c["tflops"] / base["tflops"], 3)
print(json.dumps({"benchmark": "gemm", "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "commit": sys.argv[3], "gpuu": gpuu, "torch": torch,
                  "gpuu_over_torch_tflops": ratios}, indent=2))
PY
rm -rf "$tmp"
echo "wrote $out"
cat "$out"
