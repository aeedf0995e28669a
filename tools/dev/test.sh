#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what is missing, builds,
# and runs every test (gtest through ctest, on the default Vulkan device, with
# the Khronos validation layer where it is installed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/dev/deps.sh"
"$root/tools/dev/build.sh"
ctest --test-dir "${GPUU_BUILD_DIR:-$root/build}" --output-on-failure -j 2
