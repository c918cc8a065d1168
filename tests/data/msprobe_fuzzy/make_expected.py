"""Regenerates expected/*.csv by running msprobe 1.2.2's compare with fuzzy
matching (see README.md). Needs msprobe's source tree on PYTHONPATH, pandas
and openpyxl:

  PYTHONPATH=MSTT/debug/accuracy_tools:STUBS /usr/bin/python3 make_expected.py FIXTURES

FIXTURES is tests/fixtures. Writes expected/<pair>.csv beside this file.
"""
import csv
import glob
import os
import sys
import tempfile

import pandas as pd
from msprobe.pytorch.compare.pt_compare import compare

from pairs import HERE, pairs, plain

def main():
    fixtures = sys.argv[1]
    for name, (target, baseline) in pairs(fixtures).items():
        with tempfile.TemporaryDirectory() as tmp:
            compare({"npu_json_path": plain(target, tmp),
                     "bench_json_path": plain(baseline, tmp),
                     "is_print_compare_log": False},
                    os.path.join(tmp, "out"), fuzzy_match=True)
            table = glob.glob(os.path.join(tmp, "out", "*.xlsx"))[0]
            df = pd.read_excel(table, keep_default_na=False)
        with open(os.path.join(HERE, "expected", name + ".csv"), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["NPU Name", "Bench Name"])
            for a, b in zip(df["NPU Name"], df["Bench Name"]):
                w.writerow([a, b if b not in ("", "nan") else "N/A"])


if __name__ == "__main__":
    main()
