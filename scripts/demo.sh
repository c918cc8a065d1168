#!/usr/bin/env bash
# The main job: sets up lockstep, compares two example runs and writes the
# reports to demo_out/. The baseline is an fp32 run, the target the same run
# with the linear layer's output rounded through fp16 (dumps written by
# msprobe, shipped in examples/msprobe_toy/); the report also shows the two
# runs' loss curves (examples/curves/), and `lockstep curve` compares them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -rf demo_out
set +e
build/bin/lockstep compare examples/msprobe_toy/target examples/msprobe_toy/baseline -o demo_out \
  --target-log examples/curves/target.csv --baseline-log examples/curves/baseline.csv
rc=$?
build/bin/lockstep curve examples/curves/baseline.csv examples/curves/target.csv --tol-rel 0.01 -o demo_out/curves
set -e
echo "[I] lockstep compare exited with $rc (0 all pass, 1 divergence found)"
echo "[I] open demo_out/report.html in a browser (the table, the plot, the loss curves);"
echo "[I] CSV and summary.json are beside it; demo_out/curves/curve.html has the loss-curve comparison"
[ "$rc" -le 1 ]
