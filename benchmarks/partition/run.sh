#!/bin/bash
# Partition benchmark: builds gpuu_partition_bench, times gpuu's engine on a
# synthetic 100,000-node DAG, times gpuu and torch.fx's CapabilityBasedPartitioner
# on the same DAGs at sizes fx can handle, and writes
# benchmarks/results/partition-<date>.json.
#
# Environment: BUILD_DIR (default build-partition), FX_SIZES (default
# "1000 2000 4000 8000"), BIG_NODES (100000), RUNS (15), FX_RUNS (5),
# FX_TIMEOUT seconds per fx size (900), FX_MAX_RSS_MB (12000: fx runs under
# this memory limit). torch.fx is not run at 100,000 nodes: its partitioner
# stores every node's ancestor set, O(n^2) memory (billions of entries here).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-partition}
PY=/usr/bin/python3  # Debian's interpreter: the one with torch 1.13
FX_SIZES=${FX_SIZES:-"1000 2000 4000 8000"}
BIG=${BIG_NODES:-100000}
RUNS=${RUNS:-15}
FX_RUNS=${FX_RUNS:-5}
FX_TIMEOUT=${FX_TIMEOUT:-900}
FX_MAX_RSS_MB=${FX_MAX_RSS_MB:-12000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null
ninja -C "$BUILD" -j2 gpuu_partition_bench
BENCH=$BUILD/benchmarks/partition/gpuu_partition_bench

for policy in vgf_first vulkan_first auto; do
  echo "gpuu $policy, $BIG nodes" >&2
  "$BENCH" --nodes "$BIG" --runs "$RUNS" --warmup 3 --policy "$policy" | tee "$TMP/gpuu-$BIG-$policy.json"
done

for n in $FX_SIZES; do
  echo "gpuu and torch.fx, $n nodes" >&2
  "$BENCH" --nodes "$n" --runs "$RUNS" --warmup 3 --policy vgf_first --write-graph "$TMP/graph-$n.txt" \
    | tee "$TMP/gpuu-$n-vgf_first.json"
  # A memory cap keeps fx's quadratic ancestor sets from starving the machine.
  if (ulimit -v $((FX_MAX_RSS_MB * 1024)); timeout "$FX_TIMEOUT" "$PY" "$HERE/fx_partition_bench.py" \
        "$TMP/graph-$n.txt" --runs "$FX_RUNS" --warmup 1 > "$TMP/fx-$n.json"); then
    cat "$TMP/fx-$n.json"
  else
    echo "{\"status\": \"failed, timed out after ${FX_TIMEOUT}s or exceeded ${FX_MAX_RSS_MB} MB\"}" > "$TMP/fx-$n.json"
    cat "$TMP/fx-$n.json"
  fi
done

"$PY" "$HERE/make_report.py" --tmp "$TMP" --big "$BIG" --sizes "$FX_SIZES" --root "$ROOT" \
  --fx-big-status "not run: CapabilityBasedPartitioner keeps each node's full ancestor set (O(n^2) memory, ~5e9 set entries for a 100,000-node chain); see common_sizes for the sizes both could do" \
  --out "$ROOT/benchmarks/results/partition-$(date -u +%Y-%m-%d).json" > /dev/null
echo "wrote $ROOT/benchmarks/results/partition-$(date -u +%Y-%m-%d).json" >&2
