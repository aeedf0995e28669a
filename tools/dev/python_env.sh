#!/usr/bin/env bash
# Makes the project's Python environment from the first Python 3.10+ found
# (python3 on PATH, then /usr/bin/python3) and installs
# tools/dev/requirements.txt into it, all pinned. Prints its interpreter.
#
# Where: $GPUU_VENV when set; else `.venv` in the checkout. A `.venv` that is
# not there yet becomes a link to an environment shared by every checkout on
# the machine, named by the requirements' hash
# (${GPUU_VENV_CACHE:-${XDG_CACHE_HOME:-~/.cache}/gpuu}/venv-<hash>): the
# pinned set is ~5 GB (PyTorch's CUDA wheels), ~2 minutes to install, and a
# fresh clone need not install it again. New requirements, a new hash: a new
# environment, and the link moves to it. A stamp holding the hash, written
# last, marks an environment complete, so a re-run is instant and an
# interrupted install is redone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
requirements=$root/tools/dev/requirements.txt
want=$(sha256sum "$requirements" | cut -d' ' -f1)

complete() { [ -x "$1/bin/python" ] && [ "$(cat "$1/.gpuu-requirements" 2>/dev/null)" = "$want" ]; }

base_python() {
  for candidate in "$(command -v python3 || true)" /usr/bin/python3; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "python_env: no Python 3.10+ with venv and ensurepip found (apt-get install python3-venv)" >&2
  return 1
}

# install VENV: makes (or completes) the environment at VENV.
install() {
  local venv=$1 base
  base=$(base_python)
  echo "gpuu: making $venv from $base and installing tools/dev/requirements.txt" >&2
  [ -x "$venv/bin/python" ] || "$base" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  echo "$want" > "$venv/.gpuu-requirements"
}

venv=${GPUU_VENV:-$root/.venv}
if complete "$venv"; then
  echo "$venv/bin/python"
  exit 0
fi
# An explicit GPUU_VENV, or a .venv of the checkout's own (a folder): installed in place.
if [ -n "${GPUU_VENV:-}" ] || { [ -d "$venv" ] && [ ! -L "$venv" ]; }; then
  install "$venv"
  echo "$venv/bin/python"
  exit 0
fi

cache=${GPUU_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuu}
shared=$cache/venv-${want:0:16}
mkdir -p "$cache"
# One installer at a time (two checkouts' test runs may start together); the
# others wait, then find it complete.
exec 9> "$shared.lock"
flock 9
complete "$shared" || install "$shared"
flock -u 9
ln -sfn "$shared" "$venv"
echo "$venv/bin/python"
