#!/usr/bin/env bash
# Builds the two fuzzers (clang, libFuzzer, ASan + UBSan over the whole build)
# into build-fuzz/ and runs each for RUNS executions (default 10 million),
# split over JOBS processes (default: the cores), starting from its seed
# corpus. Prints each fuzzer's total executions; any crash, leak or UB report
# stops it with the reproducer in build-fuzz/tests/fuzz/<fuzzer>-artifacts/.
#   tools/dev/fuzz.sh                 # build and run both
#   BUILD_ONLY=1 tools/dev/fuzz.sh    # just build (e.g. to run them elsewhere)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GPUU_FUZZ_BUILD_DIR:-$root/build-fuzz}
runs=${RUNS:-10000000}
jobs=${JOBS:-$(nproc)}
command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (apt-get install clang)" >&2; exit 1; }
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGPUU_BUILD_FUZZERS=ON -DGPUU_BUILD_TESTS=ON \
  -DGPUU_BUILD_PYTHON=OFF -DGPUU_BUILD_BENCHMARKS=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target program_loader_fuzzer vgf_decoder_fuzzer
[ -n "${BUILD_ONLY:-}" ] && exit 0
exec "$root/tools/dev/run_fuzzers.sh" "$build/tests/fuzz" "$runs" "$jobs"
