#!/bin/bash
# Device check 2: the probe's statistics cost on the GPU, before (src_old)
# and after (src_new) the device-style change, built and timed in one run.
# Usage (repository root, after bash scripts/gpu/make_kit.sh REV):
#   bash build-gpukit/gpu_cost.sh     results in $OUT; docs/gpu.md
set -u
K=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?}"
T0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - T0 ))s] $*"; }
PY=$(command -v python3)
# shellcheck source=kit_cmake.sh
. "$K/kit_cmake.sh"
TCMAKE=$("$PY" -c 'import torch;print(torch.utils.cmake_prefix_path)')
W=$PWD/build-gpudev
build() {  # name
  local S=$W/$1/src B=$W/$1/build
  mkdir -p "$S"; tar xzf "$K/src_$1.tar.gz" -C "$S"
  kit_configure "$S" "$B" "$TCMAKE/Torch" "$PY" > "$OUT/configure_$1.log" 2>&1
  echo "configure $1 exit $?"
  timeout 170 ninja -C "$B" -j8 lockstep_py > "$OUT/build_$1.log" 2>&1
  echo "build $1 exit $?"; grep -m5 "error:" "$OUT/build_$1.log"
}
stamp "build old and new (lockstep_py, -j8 each)"
nvidia-smi -L | head -1
build old > "$OUT/b_old.txt" 2>&1 &
build new > "$OUT/b_new.txt" 2>&1 &
wait
cat "$OUT/b_old.txt" "$OUT/b_new.txt"
stamp "timing, interleaved old/new/old/new"
for v in old new old new; do
  LIB=$W/$v/build/lib/liblockstep_py.so
  [ -f "$LIB" ] || { echo "no $LIB"; continue; }
  echo "--- $v"
  PYTHONUNBUFFERED=1 timeout 60 "$PY" "$K/gpu_probe_run.py" --lib "$LIB" \
    --pkg "$W/$v/src/python" --out "$W/dumps_$v" --device cuda --only timing \
    --timing-steps 20 2>&1 | grep -E "median|Error|error" | head -8
done
stamp "statistics dump with the new library (gpu_fp32, gpu_bf16)"
LIB=$W/new/build/lib/liblockstep_py.so
if [ -f "$LIB" ]; then
  PYTHONUNBUFFERED=1 timeout 60 "$PY" "$K/gpu_probe_run.py" --lib "$LIB" \
    --pkg "$W/new/src/python" --out "$W/dumps_new" --device cuda --only gpu_fp32,gpu_bf16 2>&1 | tail -4
  tar czf "$OUT/new_stats_dumps.tar.gz" -C "$W/dumps_new" . 2>/dev/null
fi
stamp done
