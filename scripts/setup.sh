#!/usr/bin/env bash
# Installs lockstep's build and test dependencies from Debian 12's packages
# (only the missing ones) and builds lockstep into build/, against Debian's
# LibTorch 1.13. Then, unless LOCKSTEP_TORCH2=0 (or targets are named), it
# makes a venv, .venv-torch2/, with torch 2.11.0 from PyPI
# (LOCKSTEP_TORCH2_VERSION to change it; installed while build/ compiles) and
# builds lockstep again into build-torch2/ against that torch's own
# TorchConfig.cmake: the libraries, the programs and the tests labelled
# `torch` (LOCKSTEP_TESTS_TORCH_ONLY; the other layers' code does not depend
# on the torch version). The wheel is a CUDA build: the probe's CUDA kernels
# compile with the toolkit's nvcc where one is installed.
# Usage: bash scripts/setup.sh [TARGET...]   (as root, or with sudo)
#        no target: build everything (tests, benchmarks, examples), twice;
#        e.g. `bash scripts/setup.sh lockstep lenet` builds only those, in
#        build/ (LOCKSTEP_TORCH2=1 to build them in build-torch2/ too).
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

T2ON=${LOCKSTEP_TORCH2:-$([ $# -eq 0 ] && echo 1 || echo 0)}
V=.venv-torch2
T2=${LOCKSTEP_TORCH2_VERSION:-2.11.0}
MSPROBE=26.2.0
pip_pid=""
if [ "$T2ON" = 1 ]; then
  # torch 2.x downloads (a few GB: the wheel and its nvidia-* packages)
  # while build/ compiles; its log is .venv-torch2/pip.log.
  [ -x $V/bin/python ] || /usr/bin/python3 -m venv $V
  # mindstudio-probe is msprobe, run live by tests/python/msprobe_live_test.py.
  if ! $V/bin/python -c "import torch, sys, importlib.util as u; sys.exit(torch.__version__.split('+')[0] != '$T2' or u.find_spec('msprobe') is None)" 2> /dev/null; then
    echo "[I] installing torch==$T2 and mindstudio-probe==$MSPROBE into $V in the background (a few GB, once)"
    $V/bin/pip install -q --disable-pip-version-check "torch==$T2" numpy "mindstudio-probe==$MSPROBE" > $V/pip.log 2>&1 &
    pip_pid=$!
  fi
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

[ "$T2ON" = 1 ] || exit 0
if [ -n "$pip_pid" ]; then
  if ! wait "$pip_pid"; then
    cat $V/pip.log >&2
    echo "[E] pip install torch==$T2 failed (above); LOCKSTEP_TORCH2=0 builds against LibTorch 1.13 alone" >&2
    exit 1
  fi
fi
TD=$($V/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')
gen=()
if [ ! -f build-torch2/CMakeCache.txt ] && command -v ninja > /dev/null; then gen=(-G Ninja); fi
if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=$PATH:/usr/local/cuda/bin
fi
# Caffe2_DIR beside Torch_DIR: Debian's LibTorch has a Caffe2Config.cmake of
# its own, which CMake would find first.
cmake -S . -B build-torch2 "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DTorch_DIR="$TD/Torch" -DCaffe2_DIR="$TD/Caffe2" \
  -DLOCKSTEP_PYTHON="$PWD/$V/bin/python" -DLOCKSTEP_BUILD_BENCH=OFF \
  -DLOCKSTEP_TESTS_TORCH_ONLY=ON
if [ $# -gt 0 ]; then
  cmake --build build-torch2 -j"$(nproc)" --target "$@"
else
  cmake --build build-torch2 -j"$(nproc)"
fi
