#!/usr/bin/env bash
# libgpuu.so must export exactly the functions gpuu.h declares (GPUU_API), and
# the manifest in bindings/c must list the same set.
set -euo pipefail
lib=$1 header=$2 manifest=$3
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
declared=$(grep -oE '^GPUU_API [^;(]*\(' "$header" | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort)
listed=$(grep -v '^#' "$manifest" | sed '/^$/d' | sort)
status=0
foreign=$(echo "$exported" | grep -v '^gpuu_' || true)
if [ -n "$foreign" ]; then echo "exported symbols outside gpuu_*:"; echo "$foreign"; status=1; fi
if [ "$exported" != "$declared" ]; then
  echo "exports and header differ (< exported only, > declared only):"
  diff <(echo "$exported") <(echo "$declared") || true
  status=1
fi
if [ "$declared" != "$listed" ]; then
  echo "header and $manifest differ (< header only, > manifest only):"
  diff <(echo "$declared") <(echo "$listed") || true
  status=1
fi
[ $status -eq 0 ] && echo "OK: $(echo "$exported" | wc -l) gpuu_* functions exported, matching gpuu.h and the manifest"
exit $status
