#!/usr/bin/env bash
# Sets up (scripts/setup.sh), builds and runs every test with CTest: once
# against Debian's LibTorch 1.13 (build/), once against torch 2.x from PyPI
# (build-torch2/; LOCKSTEP_TORCH2=0 leaves it out). Exits non-zero if either
# run fails; both run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rc=0
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 900) || rc=1
if [ "${LOCKSTEP_TORCH2:-1}" != 0 ]; then
  echo "[I] the same tests against torch $(.venv-torch2/bin/python -c 'import torch; print(torch.__version__)')"
  (cd build-torch2 && ctest --output-on-failure -j"$(nproc)" --timeout 900) || rc=1
fi
exit $rc
