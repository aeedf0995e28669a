#!/usr/bin/env bash
# Runs the attention benchmark on the default Vulkan device and writes
# benchmarks/results/attention-<device>-<date>.json with the date and commit.
# On the GPU machine (no git, no build there): build here, carry the stripped
# binary and set BENCH_ATTENTION and GPUU_COMMIT; after the loader set-up of
# docs/GPU.md. With --torch (a python3 with CUDA PyTorch) PyTorch's
# F.scaled_dot_product_attention is timed on the same shapes, in the same run.
# Extra arguments go to bench_attention (--runs N, --quick for CPU devices).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
bench=${BENCH_ATTENTION:-$build/benchmarks/attention/bench_attention}
out_dir=${OUT_DIR:-$root/benchmarks/results}
commit=${GPUU_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
with_torch=0
if [ "${1:-}" = "--torch" ]; then with_torch=1; shift; fi
[ -x "$bench" ] || cmake --build "$build" --target bench_attention
tmp=$(mktemp -d)
"$bench" "$@" > "$tmp/gpuu.json"
if [ $with_torch -eq 1 ]; then
  python3 "$root/benchmarks/attention/torch_attention.py" > "$tmp/torch.json"
  python3 - "$tmp/gpuu.json" "$tmp/torch.json" > "$tmp/merged.json" <<'PY'
import json, sys
gpuu, torch = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ref = {(c["dtype"], c["len"], c["causal"]): c["us"] for c in torch["cases"]}
for c in gpuu["cases"]:
    c["torch_sdpa_us"] = ref.get((c["dtype"], c["len"], c["causal"]))
print(json.dumps(gpuu, indent=2))
PY
  mv "$tmp/merged.json" "$tmp/gpuu.json"
fi
. "$root/benchmarks/write_result.sh"
write_result attention attention "$tmp/gpuu.json"
