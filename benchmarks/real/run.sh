#!/usr/bin/env bash
# The real-size benchmark on the GPU machine, in one run from the repository root: export every case
# of real_models.py with gpuu (f32 and f16) there, time the programs with bench_suite
# (--programs-only: device-resident I/O, medians after warm-up, GPU time from timestamps), time
# PyTorch eager and CUDA-graph replay on the same GPU (torch_real.py), profile a few programs
# dispatch by dispatch, and merge everything into $OUT_DIR/real-<device>-<day>-<commit>.json.
#
# Here, beforehand (the GPU machine has neither a compiler's Vulkan headers nor gpuu's Python 3.12 wheel):
#   cmake --build build --target bench_suite profile_program
#   python3.12 -m venv /tmp/py312 && /tmp/py312/bin/pip install numpy scikit-build-core==1.1.2
#   /tmp/py312/bin/pip wheel --no-build-isolation --no-deps -w .bench/real .
#   strip -o .bench/real/bench_suite build/benchmarks/suite/bench_suite   (likewise profile_program)
#   cp benchmarks/real/*.py benchmarks/real/run.sh benchmarks/suite/torch_suite.py .bench/real/
# then carry .gl and .bench there and run, after the loader set-up (docs/GPU.md),
#   OUT_DIR=$OUT GPUU_COMMIT=<commit> bash .bench/real/run.sh
# Environment: BENCH (default .bench/real), OUT_DIR (default benchmarks/results), RUNS (50), WARMUP (10),
# CASES (f32 cases, default: all), F16_CASES (default: all; each as a half model, f16, and as the f32 model
# exported with precision="fp16", f32to16: F16_PRECISIONS), POLICY (vulkan_first), PROFILE (programs to
# profile dispatch by dispatch, comma-separated NAME_PREC), GPUU_COMMIT, F32 (0: no f32 exports),
# BACKEND_OPTION (ID:KEY=VALUE: bench_suite again under it, into gpuu-option.json).
set -euo pipefail
step() { echo "== $(date -u +%T) $*" >&2; }
bench=${BENCH:-.bench/real}
out_dir=${OUT_DIR:-benchmarks/results}
work=$(mktemp -d)
commit=${GPUU_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$out_dir"
step install
python3 -m pip install -q --no-index --no-deps --target "$work/site" "$bench"/gpuu-*.whl
# The quantized precisions (F16_PRECISIONS=...,int8,a16w8) quantize with torchao: carry its wheel beside gpuu's.
for w in "$bench"/torchao-*.whl; do [ -e "$w" ] && python3 -m pip install -q --no-index --no-deps --target "$work/site" "$w"; done
cases=()
[ -n "${CASES:-}" ] && cases=(--cases "$CASES")
f16_cases=()
[ -n "${F16_CASES:-}" ] && f16_cases=(--cases "$F16_CASES")
if [ "${F32:-1}" = 1 ]; then  # F32=0: the f16 programs alone (PyTorch's f32 times are still taken)
  step export f32
  PYTHONPATH="$work/site" python3 "$bench/export_real.py" "$work/programs" --policy "${POLICY:-vulkan_first}" \
    "${cases[@]}" --precisions f32 2>&1 | grep -v Warning
fi
step export f16
PYTHONPATH="$work/site" python3 "$bench/export_real.py" "$work/programs" --policy "${POLICY:-vulkan_first}" \
  "${f16_cases[@]}" --precisions "${F16_PRECISIONS:-f16,f32to16}" --log export-f16.json 2>&1 | grep -v Warning
step gpuu
"$bench/bench_suite" --programs-only --programs "$work/programs" --runs "${RUNS:-50}" --warmup "${WARMUP:-10}" \
  > "$out_dir/gpuu.json"
if [ -n "${BACKEND_OPTION:-}" ]; then  # the same programs again under a backend option (an A/B in one run)
  step gpuu "$BACKEND_OPTION"
  "$bench/bench_suite" --programs-only --programs "$work/programs" --runs "${RUNS:-50}" --warmup "${WARMUP:-10}" \
    --backend_option "$BACKEND_OPTION" > "$out_dir/gpuu-option.json"
fi
step torch
python3 "$bench/torch_real.py" --runs "${RUNS:-50}" --warmup "${WARMUP:-10}" "${cases[@]}" > "$out_dir/torch.json"
# Named as the other results are (device, day), with the commit: runs of one day stay apart.
device=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '_'))")
python3 "$bench/summarize_real.py" "$out_dir/gpuu.json" "$out_dir/torch.json" \
  "$out_dir/real-$device-${date:0:10}-$commit.json" \
  --commit "$commit" --date "$date" --export "$work/programs/export.json" "$work/programs/export-f16.json"
profile=${PROFILE:-}
for p in ${profile//,/ }; do
  "$bench/profile_program" "$work/programs/$p.gpuu" --runs 20 --warmup 5 > "$out_dir/profile-$p.json" || true
done
