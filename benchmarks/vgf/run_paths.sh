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
layers=${LAYERS:-$("$root/.venv/bin/python" -c "import emulation_layer, os; print(os.path.join(os.path.dirname(emulation_layer.__file__), 'deploy'))")}
tmp=$(mktemp)
LD_LIBRARY_PATH=$layers/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} VK_LAYER_PATH=$layers/share/vulkan/explicit_layer.d \
  GPUU_VULKAN_LAYERS=VK_LAYER_ML_Graph_Emulation,VK_LAYER_ML_Tensor_Emulation \
  "$build/benchmarks/vgf/bench_vgf_paths" --runs "${RUNS:-50}" --warmup "${WARMUP:-5}" "$programs"/*.gpuu > "$tmp"
device=$(sed -n 's/.*"device": "\(.*\)".*/\1/p' "$tmp" | head -1 | tr ' /(),' '_____' | tr -s '_' | cut -c1-40)
mkdir -p "$out_dir"
out="$out_dir/vgf-paths-${device}-$(date -u +%Y-%m-%d).json"
{
  echo "{"
  echo "  \"benchmark\": \"vgf_native_vs_executor\","
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"commit\": \"$commit\","
  echo "  \"results\": $(cat "$tmp")"
  echo "}"
} > "$out"
rm -f "$tmp"
echo "wrote $out"
cat "$out"
