#!/usr/bin/env bash
# Installs lockstep's build and test dependencies from Debian 12's packages
# (only the missing ones) and builds lockstep into build/.
# Usage: bash scripts/setup.sh [TARGET...]   (as root, or with sudo)
#        no target: build everything (tests, benchmarks, examples);
#        e.g. `bash scripts/setup.sh lockstep lenet` builds only those.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake ninja-build pkg-config zlib1g-dev rapidjson-dev libxlsxwriter-dev libcli11-dev libjemalloc-dev
      libmpfr-dev libgtest-dev libgmock-dev libbenchmark-dev openmpi-bin libopenmpi-dev
      libtorch-dev libgloo-dev libopenblas0-pthread python3-torch python3-dev python3-pip python3-venv chromium)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "[I] installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Ninja starts compiling a library's sources before the libraries below it
# are archived (Make builds target by target): about a fifth faster on two
# cores. An existing build/ keeps the generator it was made with.
gen=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja > /dev/null; then gen=(-G Ninja); fi
cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
