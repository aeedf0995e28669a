#!/usr/bin/env bash
# run_fuzzers.sh DIR RUNS JOBS: runs DIR/program_loader_fuzzer and
# DIR/vgf_decoder_fuzzer (with their seed corpora DIR/corpus, DIR/vgf-corpus)
# for RUNS executions each, as JOBS parallel processes of RUNS/JOBS runs, and
# prints the executions each completed. Exits non-zero on any finding.
set -euo pipefail
dir=$1 runs=$2 jobs=$3
per_job=$(( (runs + jobs - 1) / jobs ))
status=0
for pair in program_loader_fuzzer:corpus vgf_decoder_fuzzer:vgf-corpus; do
  fuzzer=${pair%%:*} seeds=$dir/${pair##*:}
  work=$dir/$fuzzer-work artifacts=$dir/$fuzzer-artifacts
  mkdir -p "$work" "$artifacts"
  pids=()
  for j in $(seq 1 "$jobs"); do
    "$dir/$fuzzer" -runs="$per_job" -seed="$j" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work" "$seeds" > "$dir/$fuzzer.$j.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  total=$(grep -h "stat::number_of_executed_units" "$dir/$fuzzer".*.log | awk '{s += $2} END {print s + 0}')
  echo "$fuzzer: $total executions in $jobs processes, $( [ $failed = 0 ] && echo 'no findings' || echo 'FINDINGS (see logs)')"
  [ $failed = 0 ] || { status=1; grep -l "ERROR\|SUMMARY" "$dir/$fuzzer".*.log | head -3; }
done
exit $status
