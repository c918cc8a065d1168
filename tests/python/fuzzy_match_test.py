"""`lockstep compare --fuzzy-rule 1.2.2` pairs rows as msprobe 1.2.2's fuzzy
match does, on every pair of tests/data/msprobe_fuzzy (msprobe's tables kept
as expected/*.csv). The default rule, msprobe 26's, is checked against the
live msprobe by fuzzy_match_live_test.py.

  /usr/bin/python3 tests/python/fuzzy_match_test.py BUILD_DIR [FIXTURES]

FIXTURES (tests/fixtures) adds msprobe's own dumps; without it only the
transformer pairs run. Exits 1 on the first pair that differs, printing the
rows that differ.
"""
import csv
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "msprobe_fuzzy")
sys.path.insert(0, DATA)
from pairs import pairs, plain  # noqa: E402


def pairing(csv_path):
    with open(csv_path, newline="") as f:
        return [(r["NPU Name"], r["Bench Name"]) for r in csv.DictReader(f)]


def main():
    build = sys.argv[1]
    fixtures = sys.argv[2] if len(sys.argv) > 2 else None
    lockstep = os.path.join(build, "bin", "lockstep")
    failed = 0
    todo = pairs(fixtures)
    for name, (target, baseline) in todo.items():
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run = subprocess.run(
                [lockstep, "compare", plain(target, tmp), plain(baseline, tmp),
                 "-o", out, "--fuzzy-rule", "1.2.2"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if run.returncode not in (0, 1):
                print(f"{name}: lockstep exited {run.returncode}:\n{run.stdout}")
                failed += 1
                continue
            ours = pairing(glob.glob(os.path.join(out, "compare_result_*.csv"))[0])
        want = pairing(os.path.join(DATA, "expected", name + ".csv"))
        bad = [(w, o) for w, o in zip(want, ours) if w != o]
        if len(want) != len(ours) or bad:
            failed += 1
            print(f"{name}: {len(ours)} rows, msprobe {len(want)}; "
                  f"{len(bad)} differ, first: {bad[:3]}")
        else:
            unmatched = sum(1 for _, b in want if b == "N/A")
            print(f"{name}: {len(want)} rows as msprobe pairs them "
                  f"({unmatched} unmatched)")
    print(f"fuzzy match: {len(todo) - failed} of {len(todo)} pairs as msprobe 1.2.2")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
