#!/usr/bin/env bash
# The main job: sets up lockstep, compares two example runs and writes the
# reports to demo_out/. The baseline is an fp32 run, the target the same run
# with the linear layer's output rounded through fp16 (dumps written by
# msprobe, shipped in examples/msprobe_toy/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -rf demo_out
set +e
build/bin/lockstep compare examples/msprobe_toy/target examples/msprobe_toy/baseline -o demo_out
rc=$?
set -e
echo "[I] lockstep compare exited with $rc (0 all pass, 1 divergence found)"
echo "[I] open demo_out/report.html in a browser; CSV and summary.json are beside it"
[ "$rc" -le 1 ]
