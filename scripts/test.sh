#!/usr/bin/env bash
# Sets up (scripts/setup.sh), builds and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
