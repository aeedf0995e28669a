#!/usr/bin/env bash
# The main job: export the RFC's UnifiedVgfVulkanModel with the Python API
# (VGF -> Vulkan -> VGF), run it with gpuu-run on the default device, printing
# the delegates' init/execute lines (the VGF ones natively through
# VK_ARM_data_graph on Arm's emulation layers), and report the error against
# PyTorch eager.
# It builds only what it runs: `pip install .` puts the library, the SWIG
# module and the tools into the project's environment (.venv).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_BUILD_DIR:-$root/build}
out=${GPUU_E2E_DIR:-$build/e2e}
"$root/tools/dev/deps.sh"
python=$("$root/tools/dev/python_env.sh")
venv_bin=$(dirname "$python")

echo "== build and install gpuu into $(dirname "$venv_bin") (pip install .)"
# The environment's pinned scikit-build-core builds it; the build folder is kept, so a re-run is incremental.
"$python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  -Cbuild-dir="$build/pip" "$root"
export PATH=$venv_bin:$PATH

echo "== export (PyTorch -> gpuu program)"
python "$root/samples/export_unified_vgf_vulkan_e2e.py" --out_dir "$out" --token vgf_vk_unified_e2e \
  --group_id 7 --prefer vgf_first --min_partition_size 1 --sync_mode timeline
echo "== backends in the file"
gpuu-inspect "$out/unified_vgf_vulkan.gpuu" | grep -E '^ *(delegate|plan)|Backend' | head -20
# Arm's emulation layers (from the environment) give the default device
# VK_ARM_data_graph: the VGF regions then run natively as data-graph pipelines.
echo "== run (gpuu-run on the default device with Arm's emulation layers: VGF through VK_ARM_data_graph)"
(
  . "$root/tools/dev/arm_layers.sh" python
  gpuu-run --model_path "$out/unified_vgf_vulkan.gpuu" --input_list "$out/input0.bin" \
    --output_path "$out/output0.bin" --num_executions 100 --vgf_path native
)
echo "== error against PyTorch eager"
python - "$out/output0.bin" "$out/expected0.bin" <<'PY'
import sys
import numpy as np
got = np.fromfile(sys.argv[1], dtype="<f4")
want = np.fromfile(sys.argv[2], dtype="<f4")
err = float(np.max(np.abs(got - want)))
print(f"max abs error vs PyTorch eager: {err:.3g} over {got.size} values")
sys.exit(0 if got.shape == want.shape and err < 1e-4 else 1)
PY
