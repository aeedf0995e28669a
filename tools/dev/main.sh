#!/usr/bin/env bash
# The main job at this stage: build and install the SDK, build the C sample
# against the installed tree with pkg-config alone, and run it: the sample
# creates its own Vulkan device, registers it with gpuu and resolves it with
# lookup_only, as a delegate would.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_BUILD_DIR:-$root/build}
"$root/tools/dev/deps.sh"
"$root/tools/dev/build.sh"
prefix=$build/install
cmake --install "$build" --prefix "$prefix" > "$build/install.log"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
make -s -C "$root/samples/c" inject_device
mv "$root/samples/c/inject_device" "$build/inject_device"
echo "gpuu installed in $prefix; running samples/c/inject_device (built with pkg-config --cflags --libs gpuu):"
LD_LIBRARY_PATH=$(pkg-config --variable=libdir gpuu) "$build/inject_device"
