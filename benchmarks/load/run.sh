#!/usr/bin/env bash
# Issue 21's load and memory figures on this machine's default device (lavapipe here), from the repository root:
# builds gpuu if needed (tools/dev/build.sh), installs torchvision (pinned to the .venv's torch 2.11) into .venv if
# missing, then runs benchmarks/load/load_memory.py over resnet50, vit_b_16 and the GPT-2-small trunk under both
# policies, the VGF regions on gpuu's executor and natively through Arm's emulation layers, writing
# benchmarks/results/load-<device>-<day>-<commit>.json. Arguments go to load_memory.py (e.g. --cases resnet50_b1).
# Takes about 15 minutes on 2 cores, mostly exporting. On the GPU machine, benchmarks/device/session.sh's "load"
# part runs the same script from the carried wheel.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
compgen -G "build/bindings/python/gpuu/_gpuu_c*.so" >/dev/null || bash tools/dev/build.sh
py=.venv/bin/python
"$py" -c "import torchvision" 2>/dev/null || "$py" -m pip install -q --no-deps torchvision==0.26.0 pillow==12.0.0
work=${LOAD_WORK:-/tmp/gpuu_load_programs}
PYTHONPATH=build/bindings/python "$py" benchmarks/load/load_memory.py "$work" "$@"
