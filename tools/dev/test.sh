#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what is missing, builds
# (tests included), and runs every test (gtest and pytest through ctest, on
# the default Vulkan device, with the Khronos validation layer where it is
# installed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/dev/deps.sh"
"$root/tools/dev/build.sh" -DGPUU_BUILD_TESTS=ON
ctest --test-dir "${GPUU_BUILD_DIR:-$root/build}" --output-on-failure -j 2
