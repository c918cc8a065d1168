#!/usr/bin/env bash
# Installs lockstep's build and test dependencies from Debian 12's packages
# (only the missing ones) and builds lockstep into build/, against Debian's
# LibTorch 1.13. With LOCKSTEP_TORCH2=1 it also makes a venv,
# .venv-torch2/, with torch 2.11.0 from PyPI (LOCKSTEP_TORCH2_VERSION to
# change it) and builds lockstep again into build-torch2/ against that
# torch's own TorchConfig.cmake (a CUDA build: the probe's CUDA kernels
# compile with the toolkit's nvcc where one is installed). Opt-in until the
# whole suite passes against torch 2.x (README, "torch versions").
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

[ "${LOCKSTEP_TORCH2:-0}" = 1 ] || exit 0
# torch 2.x beside it. The wheel is a CUDA build of several GB (its
# nvidia-* packages); it runs on the CPU too.
V=.venv-torch2
T2=${LOCKSTEP_TORCH2_VERSION:-2.11.0}
[ -x $V/bin/python ] || /usr/bin/python3 -m venv $V
if ! $V/bin/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$T2')" 2> /dev/null; then
  echo "[I] installing torch==$T2 into $V (a few GB, once)"
  $V/bin/pip install -q --disable-pip-version-check "torch==$T2" numpy
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
  -DLOCKSTEP_PYTHON="$PWD/$V/bin/python" -DLOCKSTEP_BUILD_BENCH=OFF
if [ $# -gt 0 ]; then
  cmake --build build-torch2 -j"$(nproc)" --target "$@"
else
  cmake --build build-torch2 -j"$(nproc)"
fi
