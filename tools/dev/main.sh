#!/usr/bin/env bash
# The main job: export the RFC's UnifiedVgfVulkanModel with the Python API
# (VGF -> Vulkan -> VGF), run it with gpuu-run on the default device, printing
# the delegates' init/execute lines, and report the error against PyTorch eager.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_BUILD_DIR:-$root/build}
out=${GPUU_E2E_DIR:-$build/e2e}
"$root/tools/dev/deps.sh"
"$root/tools/dev/build.sh"
# The interpreter the bindings were built for (the build found it, e.g. Debian's).
python=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
[ -n "$python" ] || { echo "main: the build found no Python for the bindings" >&2; exit 1; }
export PYTHONPATH=$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}

echo "== export (PyTorch -> gpuu program)"
"$python" "$root/samples/export_unified_vgf_vulkan_e2e.py" --out_dir "$out" --token vgf_vk_unified_e2e \
  --group_id 7 --prefer vgf_first --min_partition_size 1 --sync_mode timeline
echo "== backends in the file"
strings "$out/unified_vgf_vulkan.gpuu" | grep -oE 'VgfBackend|VulkanBackend' | sort | uniq -c
echo "== run (gpuu-run on the default device)"
"$build/tools/run/gpuu-run" --model_path "$out/unified_vgf_vulkan.gpuu" --input_list "$out/input0.bin" \
  --output_path "$out/output0.bin" --num_executions 100
echo "== error against PyTorch eager"
"$python" - "$out/output0.bin" "$out/expected0.bin" <<'PY'
import sys
import numpy as np
got = np.fromfile(sys.argv[1], dtype="<f4")
want = np.fromfile(sys.argv[2], dtype="<f4")
err = float(np.max(np.abs(got - want)))
print(f"max abs error vs PyTorch eager: {err:.3g} over {got.size} values")
sys.exit(0 if got.shape == want.shape and err < 1e-4 else 1)
PY
