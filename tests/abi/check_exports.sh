#!/usr/bin/env bash
# libgpuu.so must export exactly the functions of the ABI manifest
# (bindings/c/gpuu_abi.json, generated from gpuu.h): the one list of them.
set -euo pipefail
lib=$1 python=$2 manifest=$3
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
listed=$("$python" -c 'import json, sys; print("\n".join(f["name"] for f in json.load(open(sys.argv[1]))["functions"]))' \
  "$manifest" | sort)
if [ "$exported" != "$listed" ]; then
  echo "libgpuu.so's exports and $manifest differ (< exported only, > manifest only):"
  diff <(echo "$exported") <(echo "$listed") || true
  exit 1
fi
echo "OK: $(echo "$exported" | wc -l) functions exported, as the manifest lists"
