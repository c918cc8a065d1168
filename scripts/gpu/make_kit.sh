#!/usr/bin/env bash
# Packs what a GPU machine without network (PyTorch, CUDA, CMake and ninja,
# but no Debian -dev packages) needs to build lockstep's probe against its
# own PyTorch, into build-gpukit/ (ignored by git):
#   deps/            rapidjson, zlib, MPFR and GMP headers and libraries
#                    (Debian 12 packages, unpacked with dpkg -x)
#   src.tar.gz       the sources of HEAD (src_new.tar.gz: the same)
#   src_old.tar.gz   the sources of BASELINE (default HEAD~1), for
#                    gpu_cost.sh's before/after timing
#   gpu_check.sh, gpu_cost.sh, gpu_gpt2.sh, kit_cmake.sh, gpu_probe_run.py,
#   gpt2_cost.py, device_stats_check.py, tiny_gpt.py
# Usage: bash scripts/gpu/make_kit.sh [BASELINE]     (docs/gpu.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
K=build-gpukit
BASELINE=${1:-HEAD~1}
mkdir -p "$K/debs" "$K/deps"
PKGS=(rapidjson-dev zlib1g-dev zlib1g libmpfr-dev libmpfr6 libgmp-dev libgmp10)
missing=()
for p in "${PKGS[@]}"; do
  ls "$K/debs/${p}_"*.deb > /dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  (cd "$K/debs" && apt-get download "${missing[@]}")
fi
for d in "$K"/debs/*.deb; do dpkg -x "$d" "$K/deps"; done
# Absolute links (libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13, which
# the GPU machine's own zlib does not have) point into the kit instead.
find "$K/deps" -type l | while read -r l; do
  t=$(readlink "$l")
  case "$t" in
    /*) [ -e "$K/deps$t" ] &&
          ln -sfn "$(realpath --relative-to="$(dirname "$l")" "$K/deps$t")" "$l" ;;
  esac
done
# What a build of lockstep_py, lockstep-torch and lockstep reads, and the
# model gpu_probe_run.py trains (tests/python/tiny_gpt.py).
FILES=(CMakeLists.txt cmake include src python tests/testing tests/python/tiny_gpt.py)
git archive --format=tar.gz -o "$K/src.tar.gz" HEAD "${FILES[@]}"
cp "$K/src.tar.gz" "$K/src_new.tar.gz"
git archive --format=tar.gz -o "$K/src_old.tar.gz" "$BASELINE" "${FILES[@]}"
git rev-parse --short HEAD > "$K/src.commit"
cp scripts/gpu/gpu_check.sh scripts/gpu/gpu_cost.sh scripts/gpu/kit_cmake.sh \
  scripts/gpu/gpu_probe_run.py scripts/gpu/gpu_gpt2.sh scripts/gpu/gpt2_cost.py \
  scripts/gpu/device_stats_check.py \
  tests/python/tiny_gpt.py "$K/"
echo "kit in $K/: HEAD $(cat "$K/src.commit"), baseline $(git rev-parse --short "$BASELINE"); $(du -sh "$K" | cut -f1)"
