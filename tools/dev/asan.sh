#!/usr/bin/env bash
# Every C and C++ test under AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, on the default Vulkan device with the validation
# layer: installs what is missing, builds everything (Debug, instrumented; the
# "asan" presets) into build-asan/, runs every ctest entry but those labelled
# python (the interpreter is not instrumented), then counts the sanitizer reports: ASan's and LSan's each go to a file in
# <build>/sanitizer-reports/ (so a child process's report or one in an expected
# failure counts too), UBSan's to the test's output (GCC's UBSan runtime beside
# ASan ignores log_path), counted from ctest's log. Any report fails the run.
# tests/sanitizer/ holds the run-time settings and the third-party suppressions.
#   tools/dev/asan.sh                  # build and run all
#   tools/dev/asan.sh -R vulkan_gemm   # extra arguments go to ctest
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-asan  # the presets' binary directory
start=$SECONDS
"$root/tools/dev/deps.sh"
python=$("$root/tools/dev/python_env.sh")
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cd "$root"
mkdir -p "$build"
cmake --preset asan -DPython3_EXECUTABLE="$python" "${launcher[@]}" > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build --preset asan -j "$(nproc)"

reports=$build/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"
export ASAN_OPTIONS=log_path=$reports/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}
status=0
ctest --preset asan -j "$(nproc)" "$@" || status=$?
asan=$(find "$reports" -type f | wc -l)
for f in "$reports"/*; do
  if [ -f "$f" ]; then echo "== $f"; cat "$f"; fi
done
ubsan=$(grep -c "runtime error:" "$build/Testing/Temporary/LastTest.log" || true)
echo "asan: $asan ASan/LSan report(s) (in $reports), $ubsan UBSan report(s); ctest exit $status;" \
  "$((SECONDS - start)) s in all"
[ "$asan" -eq 0 ] && [ "$ubsan" -eq 0 ] && [ "$status" -eq 0 ]
