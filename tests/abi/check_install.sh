#!/usr/bin/env bash
# Installs the SDK into a scratch prefix, then builds and runs consumers that
# see only the installed tree: the C sample through pkg-config alone, and a
# CMake project through find_package(gpuu). $CC, where set, compiles both (a
# sanitizer build sets it: its consumers must link the sanitizer runtime first).
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
libdir=$(pkg-config --variable=libdir gpuu)
test -f "$prefix/include/gpuu.h"
test -f "$libdir/cmake/gpuu/gpuuConfig.cmake"
readelf -d "$libdir/libgpuu.so" | grep -q 'SONAME.*\[libgpuu.so.0.2\]' || { echo "SONAME is not libgpuu.so.0.2"; exit 1; }

make -s -C "$src/samples/c" -f Makefile inject_device OUT="$work" CC="${CC:-cc}" >/dev/null
mv "$src/samples/c/inject_device" "$work/inject_device"
out=$(LD_LIBRARY_PATH=$libdir "$work/inject_device")
echo "$out"
echo "$out" | grep -q "same as the application's: yes"

mkdir -p "$work/consumer"
cat > "$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(gpuu_consumer C)
find_package(gpuu 0.3 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE gpuu::gpuu)
# The installed package's version, to compare with the library's own.
target_compile_definitions(consumer PRIVATE GPUU_PACKAGE_VERSION="${gpuu_VERSION}")
CM
cat > "$work/consumer/main.c" <<'C'
#include <gpuu.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  printf("find_package(gpuu %s) consumer sees gpuu %s\n", GPUU_PACKAGE_VERSION, gpuu_version_string());
  return (gpuu_version() >> 22) == GPUU_VERSION_MAJOR && strcmp(gpuu_version_string(), GPUU_PACKAGE_VERSION) == 0 ? 0 : 1;
}
C
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/consumer.log"
cmake --build "$work/consumer/build" >> "$work/consumer.log"
seen=$(LD_LIBRARY_PATH=$libdir "$work/consumer/build/consumer")
echo "$seen"
modversion=$(pkg-config --modversion gpuu)
grep -q "sees gpuu $modversion\$" <<< "$seen" || { echo "pkg-config says gpuu $modversion"; exit 1; }
