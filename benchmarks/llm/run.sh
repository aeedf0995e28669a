#!/usr/bin/env bash
# The LLM prefill and decode benchmark on the GPU machine, from the repository root: installs the gpuu wheel
# found in WHEEL_DIR (the first argument) into a temporary site folder, then runs bench_decode.py for each size of
# SIZES in each precision of PRECISIONS, writing $OUT_DIR/llm_decode-<size>-<device>-<day>-<commit>.json.
# The programs are exported there, into a temporary folder under /tmp (a 1b f32 program is 6 GB), and
# removed after each precision. After the Vulkan loader set-up of /work/shared/docs/GPU.md:
#   OUT_DIR=$OUT GPUU_COMMIT=<commit> bash benchmarks/llm/run.sh .whl
# Environment: OUT_DIR (default benchmarks/results), SIZES ("125m 1b"), PRECISIONS (f32,f16), PROMPT_TOKENS (16),
# PREFILL (one_step: the prompt in one step; by_token), PREFILL_REPEATS (5), DECODE_STEPS (64), WARMUP (10),
# SPIN_S (1: seconds of GPU work before each runner), POLICY (vulkan_first), PYTHON (python3), GPUU_COMMIT.
# Seen on an H100 with a decode-only step: about 1 minute for 125m and 3 to 4 for 1b, mostly building the model,
# exporting it and loading it twice; the step with a dynamic seq dim is recorded at four lengths to export and
# made at three lengths per load, which takes longer (not yet measured there). Each step prints its start time.
set -euo pipefail
step() { echo "== $(date -u +%T) $*" >&2; }
wheel_dir=${1:?usage: run.sh WHEEL_DIR (the folder holding gpuu-*.whl)}
python=${PYTHON:-python3}
out_dir=${OUT_DIR:-benchmarks/results}
commit=${GPUU_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
work=$(mktemp -d /tmp/gpuu_llm.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir"
step install
"$python" -m pip install -q --no-index --no-deps --target "$work/site" "$wheel_dir"/gpuu-*.whl
device=$("$python" -c "import torch
print(torch.cuda.get_device_name().replace(' ', '_') if torch.cuda.is_available() else 'lavapipe_cpu')")
status=0
for size in ${SIZES:-125m 1b}; do
  step "bench_decode $size"
  # A size that fails (a runner's error is in its JSON; f32 tokens unlike PyTorch's) does not stop the next.
  PYTHONPATH="$work/site" "$python" benchmarks/llm/bench_decode.py --size "$size" \
    --precisions "${PRECISIONS:-f32,f16}" --prompt-tokens "${PROMPT_TOKENS:-16}" \
    --prefill "${PREFILL:-one_step}" --prefill-repeats "${PREFILL_REPEATS:-5}" \
    --decode-steps "${DECODE_STEPS:-64}" --warmup "${WARMUP:-10}" --spin-s "${SPIN_S:-1}" \
    --policy "${POLICY:-vulkan_first}" --commit "$commit" --work-dir "$work/programs" \
    --out "$out_dir/llm_decode-$size-$device-$(date -u +%F)-$commit.json" || status=1
done
step done
exit $status
