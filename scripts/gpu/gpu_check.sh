#!/bin/bash
# GPU device check: builds lockstep's Python probe (and lockstep-torch,
# lockstep) from src.tar.gz against the machine's PyTorch, runs
# gpu_probe_run.py on the GPU, and packs what comes back into $OUT:
#   check.log  this script's whole output     build.log  the build's output
#   stats_dumps.tar.gz   the statistics dumps, results.json, device replays
#   tensor_fp32.tar.gz / tensor_tf32.tar.gz   the tensor dumps
# Run from the repository root: bash build-gpukit/gpu_check.sh (after
# bash scripts/gpu/make_kit.sh; docs/gpu.md)
# Environment (for a dry run elsewhere): GK_PY (python), GK_TORCH_DIR (a
# TorchConfig.cmake folder), GK_JOBS, GK_BUDGET (seconds for the whole
# script), GK_CONFIGURE_ONLY=1, GK_DEVICE (cuda).
set -u
K=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?OUT must be set}"
T0=$(date +%s)
BUDGET=${GK_BUDGET:-395}
JOBS=${GK_JOBS:-16}
DEVICE=${GK_DEVICE:-cuda}
W=${GK_WORK:-$PWD/build-gpudev}   # ignored by .gitignore's /build-*/
# shellcheck source=kit_cmake.sh
. "$K/kit_cmake.sh"

stamp() { echo "=== [$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( T0 + BUDGET - $(date +%s) - ${1:-0} )); }

main() {
  stamp "environment"
  PY=${GK_PY:-$(command -v python3)}
  echo "python: $PY"; uname -a; (cat /etc/os-release | head -2) 2>/dev/null
  nvidia-smi -L 2>&1 | head -4
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
  (g++ --version | head -1; cmake --version | head -1; echo "ninja $(ninja --version)"; nvcc --version | tail -2) 2>&1
  "$PY" - <<'EOF' 2>&1
import os, sys, sysconfig, torch
print("python", sys.version.split()[0], "include", sysconfig.get_paths()["include"],
      "Python.h:", os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI)
print("torch dir", os.path.dirname(torch.__file__), "cmake", torch.utils.cmake_prefix_path)
print("cuda available", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
inc = os.path.join(os.path.dirname(torch.__file__), "include")
print("gloo headers in the wheel:", os.path.exists(os.path.join(inc, "gloo", "algorithm.h")))
EOF
  TCMAKE=$("$PY" -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null)

  stamp "sources"
  # Staged, then copied over the last tree only where they differ, so that
  # a second run on a warm machine rebuilds only what changed.
  rm -rf "$W/stage"; mkdir -p "$W/stage" "$W/src"
  tar xzf "$K/src.tar.gz" -C "$W/stage" || { echo "FATAL: src.tar.gz"; return 1; }
  # Device copy only: one object per source, so that each compile error
  # names its own file and one broken file stops no other.
  sed -i 's/UNITY_BUILD ON/UNITY_BUILD OFF/' "$W/stage/cmake/LockstepHelpers.cmake"
  [ -n "$(ls -A "$W/src")" ] || cp -a "$W/stage/." "$W/src/"
  (cd "$W/stage" && find . -type f) | while read -r f; do
    cmp -s "$W/stage/$f" "$W/src/$f" || { mkdir -p "$(dirname "$W/src/$f")"; cp "$W/stage/$f" "$W/src/$f"; }
  done
  echo "commit: $(cat "$K/src.commit" 2>/dev/null)"

  B=$W/build
  if [ -n "${GK_PREBUILT:-}" ]; then  # dry run: an existing build dir
    B=$GK_PREBUILT; LIB=$B/lib/liblockstep_py.so; echo "prebuilt: $B"; after_build; return
  fi

  stamp "configure"
  CONFIGURED=""
  if [ -f "$B/build.ninja" ]; then  # a second run on a warm machine
    CONFIGURED="the earlier run's configuration ($B)"
  elif [ -n "${GK_TORCH_DIR:-}" ] || [ -d "$TCMAKE/Torch" ]; then
    TD=${GK_TORCH_DIR:-$TCMAKE/Torch}
    echo "--- with Torch_DIR=$TD"
    if kit_configure "$W/src" "$B" "$TD" "$PY" > "$W/configure_real.log" 2>&1 &&
        grep -q "building the torch layer" "$W/configure_real.log"; then
      CONFIGURED="TorchConfig.cmake of the package"
    fi
    grep -iE "lockstep:|torch|cuda|warn|error" "$W/configure_real.log" | head -40
  fi
  echo "configured with: ${CONFIGURED:-NOTHING}"
  [ -n "$CONFIGURED" ] || return 1
  [ "${GK_CONFIGURE_ONLY:-0}" = 1 ] && return 0

  stamp "build (ninja -k 0 -j$JOBS lockstep_py lockstep-torch lockstep)"
  timeout "$(left 150)" ninja -C "$B" -k 0 -j"$JOBS" lockstep_py lockstep-torch lockstep \
    > "$OUT/build.log" 2>&1
  echo "ninja exit $?"
  summarize_build "$OUT/build.log"
  LIB=$B/lib/liblockstep_py.so
  if [ ! -f "$LIB" ]; then
    # Device copy only: leave out the torch-layer sources that failed and
    # build the probe library again, to see whether the probe needs them.
    BAD=$(grep -oE "FAILED: (\[code=[0-9]+\] )?CMakeFiles/lockstep_torch\.dir/src/torch/[a-z_0-9]+\.cc\.o" "$OUT/build.log" |
          sed 's|.*lockstep_torch\.dir/||; s|\.o$||' | sort -u)
    if [ -n "$BAD" ] && [ "$(left 150)" -gt 60 ]; then
      stamp "retry without: $BAD"
      for f in $BAD; do rm -f "$W/src/$f"; done
      timeout "$(left 140)" ninja -C "$B" -k 0 -j"$JOBS" lockstep_py > "$OUT/build2.log" 2>&1
      echo "ninja (retry) exit $?"
      summarize_build "$OUT/build2.log"
    fi
  fi
  for t in "$LIB" "$B/bin/lockstep-torch" "$B/bin/lockstep"; do
    if [ -f "$t" ]; then echo "BUILT $t"; else echo "NOT BUILT $t"; fi
  done
  [ -f "$LIB" ] || return 1
  after_build
}

# Loads the probe library, runs gpu_probe_run.py, replays the tensor dumps
# with the lockstep-torch built here.
after_build() {
  ldd "$LIB" | grep -E "torch|c10|mpfr|gmp|libz|python|not found" | sed 's/^/  /'
  "$PY" -c "import torch; torch.ops.load_library('$LIB'); print('loaded; status', torch.ops.lockstep.status())" 2>&1 | tail -3

  stamp "python runs on $DEVICE"
  rm -rf "$W/dumps"
  # One process per case: a crash in one loses no other.
  for c in gpu_fp32 gpu_tf32 gpu_bf16 gpu_tensor_fp32 gpu_tensor_tf32 cpu_fp32 timing; do
    t=$(left 45); [ "$t" -gt 100 ] && t=100
    [ "$t" -gt 10 ] || { echo "no time left for $c"; break; }
    PYTHONUNBUFFERED=1 timeout "$t" "$PY" "$K/gpu_probe_run.py" --lib "$LIB" \
      --pkg "$W/src/python" --out "$W/dumps" --device "$DEVICE" --tensor-batch 1 \
      --only "$c" 2>&1 | grep -v "^\s*$"
    echo "python $c exit ${PIPESTATUS[0]}"
  done

  if [ -f "$B/bin/lockstep-torch" ]; then
    for n in gpu_tensor_fp32 gpu_tensor_tf32; do
      [ -d "$W/dumps/$n" ] || continue
      [ "$(left 30)" -gt 10 ] || break
      stamp "lockstep-torch replay $n (built against this PyTorch)"
      timeout 40 "$B/bin/lockstep-torch" replay "$W/dumps/$n" -o "$W/dumps/device_replay_$n" -j 8 2>&1 | tail -12
      echo "replay exit ${PIPESTATUS[0]}"
    done
  fi
}

summarize_build() {
  echo "--- errors in $1 ($(grep -c "error:" "$1") 'error:' lines; first 60):"
  grep -E "error:|undefined reference|FAILED:" "$1" | head -60
  echo "--- tail:"; tail -5 "$1"
}

pack() {
  stamp "pack"
  if [ -d "$W/dumps" ]; then
    (cd "$W/dumps" && ls | grep -v "^gpu_tensor_" | xargs tar czf "$OUT/stats_dumps.tar.gz")
    for n in fp32 tf32; do
      [ -d "$W/dumps/gpu_tensor_$n" ] || continue
      f=$OUT/tensor_$n.tar.gz
      (cd "$W/dumps" && tar czf "$f" "gpu_tensor_$n")
      if [ "$(stat -c %s "$f")" -gt 16000000 ]; then
        rm -f "$f"; (cd "$W/dumps" && XZ_OPT="-6 -T0" tar cJf "$OUT/tensor_$n.tar.xz" "gpu_tensor_$n")
      fi
    done
  fi
  ls -la "$OUT"
  stamp "done"
}

{ main; echo "main exit $?"; pack; } 2>&1 | tee "$OUT/check.log"
