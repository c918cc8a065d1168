#!/bin/bash
# GPU device check 3 (issue 31, section 5): builds the Python probe from
# src.tar.gz against the machine's PyTorch, checks the CUDA statistics
# kernel against float64 references (device_stats_check.py), times the
# probe on a GPT-2-small-size model (gpt2_cost.py: plain, statistics with
# the kernel and with ATen's reductions, md5) and msprobe's
# PrecisionDebugger on the same model where its wheels were carried (.whl/).
# Results in $OUT: gpt2.log (this script's output), build.log,
# gpt2_cost.json, gpt2_msprobe.json.
# Run from the repository root: bash build-gpukit/gpu_gpt2.sh (after
# bash scripts/gpu/make_kit.sh; docs/gpu.md). GK_SKIP_CHECK=1 and
# GK_SKIP_MSPROBE=1 leave those parts out; GK_GPT2_ARGS replaces --check.
set -u
K=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?OUT must be set}"
T0=$(date +%s)
JOBS=${GK_JOBS:-16}
W=${GK_WORK:-$PWD/build-gpudev}
# shellcheck source=kit_cmake.sh
. "$K/kit_cmake.sh"
stamp() { echo "=== [$(( $(date +%s) - T0 ))s] $*"; }

main() {
  PY=$(command -v python3)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  stamp "sources and configure"
  mkdir -p "$W/src"
  tar xzf "$K/src.tar.gz" -C "$W/src" || { echo "FATAL: src.tar.gz"; return 1; }
  echo "commit: $(cat "$K/src.commit" 2>/dev/null)"
  TCMAKE=$("$PY" -c 'import torch;print(torch.utils.cmake_prefix_path)')
  B=$W/build
  kit_configure "$W/src" "$B" "$TCMAKE/Torch" "$PY" > "$OUT/configure.log" 2>&1
  echo "configure exit $?"; grep -E "lockstep:" "$OUT/configure.log"
  stamp "build lockstep_py (-j$JOBS)"
  timeout 240 ninja -C "$B" -j"$JOBS" lockstep_py > "$OUT/build.log" 2>&1
  echo "ninja exit $?"; grep -E "error|FAILED" "$OUT/build.log" | head -30
  LIB=$B/lib/liblockstep_py.so
  [ -f "$LIB" ] || return 1
  if [ -z "${GK_SKIP_CHECK:-}" ]; then
    stamp "device_stats_check"
    PYTHONUNBUFFERED=1 timeout 120 "$PY" "$K/device_stats_check.py" --lib "$LIB" \
      --pkg "$W/src/python"
    echo "device_stats_check exit $?"
  fi
  stamp "gpt2_cost (lockstep)"
  # GK_GPT2_ARGS: other arguments (--profile, --only MODES); default --check
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 timeout 300 "$PY" "$K/gpt2_cost.py" --lib "$LIB" \
    --pkg "$W/src/python" --out "$OUT" --steps 8 ${GK_GPT2_ARGS:---check}
  echo "gpt2_cost exit $?"
  if [ -z "${GK_SKIP_MSPROBE:-}" ] && ls .whl/mindstudio_probe-*.whl > /dev/null 2>&1; then
    stamp "gpt2_cost (msprobe)"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -3
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 200 "$PY" "$K/gpt2_cost.py" \
      --out "$OUT" --mode msprobe --steps 5 2>&1 | grep -v "^\s*$" | tail -25
    echo "msprobe exit ${PIPESTATUS[0]}"
  fi
  stamp done
}

main 2>&1 | tee "$OUT/gpt2.log"
