#!/usr/bin/env bash
# Makes the project-local Python environment, $GPUU_VENV (default .venv), from
# the first Python 3.10+ found (python3 on PATH, then /usr/bin/python3) and
# installs tools/dev/requirements.txt into it, all pinned. Prints the venv's
# interpreter. A stamp holding the requirements' hash makes a re-run instant.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${GPUU_VENV:-$root/.venv}
requirements=$root/tools/dev/requirements.txt
stamp=$venv/.gpuu-requirements
want=$(sha256sum "$requirements" | cut -d' ' -f1)

if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$venv/bin/python"
  exit 0
fi

base=""
for candidate in "$(command -v python3 || true)" /usr/bin/python3; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  if "$candidate" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    base=$candidate
    break
  fi
done
if [ -z "$base" ]; then
  echo "python_env: no Python 3.10+ with venv and ensurepip found (apt-get install python3-venv)" >&2
  exit 1
fi

echo "gpuu: making $venv from $base and installing tools/dev/requirements.txt" >&2
[ -x "$venv/bin/python" ] || "$base" -m venv "$venv" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
echo "$want" > "$stamp"
echo "$venv/bin/python"
