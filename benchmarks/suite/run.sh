#!/usr/bin/env bash
# The benchmark suite in one run, from the repository root: bench_suite (gpuu)
# and torch_suite.py (PyTorch eager and CUDA-graph replay) on the same cases,
# merged by summarize.py into $OUT_DIR/summary-h100.json, the raw JSON beside
# it in $OUT_DIR/suite-raw-<date>/. The programs come from export_programs.py,
# run beforehand where gpuu's Python package is (the GPU machine has none).
#
#   benchmarks/suite/run.sh [--small]
#
# --small: bench_suite's small sizes, for lavapipe; writes summary-small.json.
#
# On the H100 machine (no exporter, no git there): here, build bench_suite and export,
#   cmake --build build --target bench_suite
#   PYTHONPATH=build/bindings/python .venv/bin/python benchmarks/suite/export_programs.py
#   strip -o .bench/suite/bench_suite build/benchmarks/suite/bench_suite
#   cp benchmarks/suite/*.py benchmarks/suite/run.sh .bench/suite/
# then carry .gl and .bench there and, from the repository root, after the loader set-up
# (docs/GPU.md): BENCH_SUITE=.bench/suite/bench_suite bash .bench/suite/run.sh
# Environment: BENCH_SUITE (the binary; default build/benchmarks/suite/bench_suite),
# PROGRAMS (default .bench/suite/programs), OUT_DIR (default benchmarks/results),
# PYTHON (default python3; TORCH=0 skips PyTorch), RUNS, WARMUP, GPUU_COMMIT
# (default: the export step's commit.txt in PROGRAMS, else git).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
small=()
[ "${1:-}" = "--small" ] && small=(--small)
bin=${BENCH_SUITE:-build/benchmarks/suite/bench_suite}
programs=${PROGRAMS:-.bench/suite/programs}
out_dir=${OUT_DIR:-benchmarks/results}
python=${PYTHON:-python3}
commit=${GPUU_COMMIT:-$(cat "$programs/commit.txt" 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)}
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
raw=$out_dir/suite-raw-$(date -u +%Y-%m-%d)
summary=$out_dir/summary-h100.json
[ ${#small[@]} -gt 0 ] && summary=$out_dir/summary-small.json
mkdir -p "$raw"
[ -x "$bin" ] || { echo "run.sh: no bench_suite at $bin (cmake --build build --target bench_suite)" >&2; exit 1; }
ls "$programs"/*.gpuu > /dev/null || { echo "run.sh: no programs in $programs (export_programs.py)" >&2; exit 1; }

"$bin" "${small[@]}" --runs "${RUNS:-100}" --warmup "${WARMUP:-10}" --programs "$programs" > "$raw/gpuu.json"
torch_json=-
if [ "${TORCH:-1}" != 0 ]; then
  "$python" "$here/torch_suite.py" "${small[@]}" --runs "${RUNS:-100}" --warmup "${WARMUP:-10}" > "$raw/torch.json"
  torch_json=$raw/torch.json
fi
"$python" "$here/summarize.py" "$raw/gpuu.json" "$torch_json" "$summary" --commit "$commit" --date "$date" \
  --raw "$raw"
