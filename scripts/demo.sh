#!/usr/bin/env bash
# The main job: sets up lockstep, trains LeNet-5 twice on the same seeded
# data — a reference run, and a target run whose second convolution
# silently runs in bfloat16 — dumps every operator of both with lockstep's
# probe, compares the dumps, prints the first divergent operator and writes
# the HTML report to demo_out/report/report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh lockstep lenet  # only what the demo runs
rm -rf demo_out
mkdir -p demo_out
echo "[I] training the reference run (fp32) with the probe on"
build/bin/lenet --steps 20 --seed 1 --dump demo_out/ref --log demo_out/ref_loss.csv > demo_out/ref.log
echo "[I] training the target run (conv2 silently in bf16) with the probe on"
build/bin/lenet --steps 20 --seed 1 --dump demo_out/target --fault conv2-bf16 \
  --log demo_out/target_loss.csv > demo_out/target.log
set +e
build/bin/lockstep compare demo_out/target demo_out/ref -o demo_out/report \
  --target-log demo_out/target_loss.csv --baseline-log demo_out/ref_loss.csv
rc=$?
set -e
echo "[I] lockstep compare exited with $rc (0 all pass, 1 divergence found)"
echo "[I] open demo_out/report/report.html in a browser (first divergence, table, loss curves);"
echo "[I] the CSVs and summary.json are beside it"
[ "$rc" -le 1 ]
