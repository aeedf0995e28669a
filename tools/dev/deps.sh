#!/usr/bin/env bash
# Installs, from Debian's archive, whatever gpuu's build, tests and samples need
# and the machine lacks (the Python packages come from PyPI: python_env.sh). Extra package names may be passed as arguments.
set -euo pipefail
packages=(
  cmake ninja-build g++ make pkg-config binutils
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslc spirv-tools
  libgtest-dev libgmock-dev libflatbuffers-dev flatbuffers-compiler libffi-dev
  python3-dev python3-venv swig ccache
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "gpuu: installing missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# Another apt run (an unattended upgrade, say) may hold the lock: wait for it rather than fail.
lock_wait=(-o DPkg::Lock::Timeout=900)
$sudo apt-get "${lock_wait[@]}" update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock_wait[@]}" install -y -q --no-install-recommends "${missing[@]}"
