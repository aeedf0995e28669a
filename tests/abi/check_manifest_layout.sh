#!/usr/bin/env bash
# The C compiler must agree with the ABI manifest: every struct size, alignment,
# field offset and size, enum value, constant and prototype, as _Static_asserts.
set -euo pipefail
python=$1 cc=$2 root=$3 out=$4
"$python" "$root/bindings/c/gen_manifest.py" --manifest "$root/bindings/c/gpuu_abi.json" --asserts "$out"
"$cc" -std=gnu11 -Wall -Werror -fsyntax-only -I "$root/include" "$out"
echo "OK: $(grep -c _Static_assert "$out") facts of the manifest hold for $cc"
