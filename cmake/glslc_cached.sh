#!/usr/bin/env bash
# glslc through a cache of its outputs, as ccache is for the C++ compiles:
#   glslc_cached.sh CACHE_DIR GLSLC ARGS... -o OUT
# The key is what decides the SPIR-V: glslc's version, its flags (not the
# include folders or file names) and the preprocessed source less its #line
# markers (which name paths). So a fresh clone, another build folder or the
# pip-install test's second build takes the ~280 shaders (most of a build's
# time on 2 cores) from the cache. Preprocessing only (-E), no -o, or a cache
# folder that cannot be made: glslc runs as if called directly. A failed
# compile is never stored; its messages come from glslc itself.
set -euo pipefail
cache=$1 glslc=$2
shift 2
out="" flags=() inputs=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    -E) exec "$glslc" "$@" ;;
    -o) out=${args[i + 1]}; i=$((i + 1)) ;;
    -I) inputs+=(-I "${args[i + 1]}"); i=$((i + 1)) ;;
    -*) flags+=("${args[i]}"); inputs+=("${args[i]}") ;;
    *) inputs+=("${args[i]}") ;;
  esac
done
if [ -z "$out" ] || ! mkdir -p "$cache" 2>/dev/null; then exec "$glslc" "$@"; fi

if ! preprocessed=$("$glslc" -E "${inputs[@]}" 2>/dev/null); then exec "$glslc" "$@"; fi
key=$({
  "$glslc" --version
  printf '%s\n' "${flags[@]}"
  grep -v '^#line ' <<< "$preprocessed"
} | sha256sum | cut -c1-40)
entry=$cache/$key.spv
if [ -s "$entry" ]; then
  cp "$entry" "$out"
  touch "$entry"  # recently used: kept by the pruning below
  exit 0
fi
"$glslc" "$@"
tmp=$(mktemp "$cache/.$key.XXXXXX") && cp "$out" "$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$entry" || rm -f "${tmp:-}"
# Entries unused for 30 days go (each build touches the ones it takes).
find "$cache" -maxdepth 1 -name '*.spv' -mtime +30 -delete 2>/dev/null || true
