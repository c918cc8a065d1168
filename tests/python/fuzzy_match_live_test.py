"""`lockstep compare --fuzzy-match` pairs rows as the installed msprobe's
`-fm` does (mindstudio-probe 26: rows by name alone, in queues; see
include/lockstep/compare/fuzzy_match.h), on every pair of
tests/data/msprobe_fuzzy and on the small made-up pairs of its pairs.py.

msprobe 26.2 writes a usable fuzzy table only in md5 and tensor mode: in
plain statistics mode its table loses a column and every row comes out
unpaired (or it stops on a "Length mismatch"). So statistics dumps are given
to both tools with an md5 sum added to every tensor (md5 mode); the pairing
does not look at values.

  PYTHON tests/python/fuzzy_match_live_test.py BUILD_DIR [FIXTURES]

With torch 1.x it prints "skipped: needs torch 2.x and mindstudio-probe"
(scripts/setup.sh installs msprobe into the torch 2.x venv only).
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "msprobe_fuzzy")
sys.path.insert(0, DATA)
from pairs import made_up_pairs, pairs, plain  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_msprobe  # noqa: E402


def md5_mode(path, out):
    """dump.json at path with "md5" added to every tensor that has neither
    an md5 nor a data_name: msprobe 26 then writes a whole fuzzy table."""
    with open(path) as f:
        dump = json.load(f)
    added = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("type") == "torch.Tensor" and "md5" not in v and "data_name" not in v:
                v["md5"] = "00000000"
                added.append(1)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(dump.get("data", {}))
    if not added:  # md5 or tensor mode already: the dump as it is
        return path
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(dump, f)
    return out


def pairing(csv_path):
    with open(csv_path, newline="") as f:
        return [(r["NPU Name"], r["Bench Name"]) for r in csv.DictReader(f)]


def one_pair(name, target, baseline, lockstep, msprobe, tmp):
    t = md5_mode(plain(target, tmp), os.path.join(tmp, "t", "dump.json"))
    b = md5_mode(plain(baseline, tmp), os.path.join(tmp, "b", "dump.json"))
    ms = subprocess.run([msprobe, "compare", "-tp", t, "-gp", b, "-o",
                         os.path.join(tmp, "ms"), "-fm"],
                        capture_output=True, text=True)
    table = glob.glob(os.path.join(tmp, "ms", "compare_result_*.csv"))
    if not table:
        tail = (ms.stdout + ms.stderr).strip().splitlines()[-1:]
        print(f"FAIL {name}: msprobe wrote no table (exit {ms.returncode}): {tail}")
        return 1
    ours = subprocess.run([lockstep, "compare", t, b, "-o", os.path.join(tmp, "ls"),
                           "--fuzzy-match", "-q"], capture_output=True, text=True)
    if ours.returncode not in (0, 1):
        print(f"FAIL {name}: lockstep exited {ours.returncode}:\n{ours.stderr}")
        return 1
    want = pairing(table[0])
    got = pairing(glob.glob(os.path.join(tmp, "ls", "compare_result_*.csv"))[0])
    bad = [(w, o) for w, o in zip(want, got) if w != o]
    if len(want) != len(got) or bad:
        print(f"FAIL {name}: {len(got)} rows, msprobe {len(want)}; "
              f"{len(bad)} differ, first: {bad[:3]}")
        return 1
    unpaired = sum(1 for _, x in want if x == "N/A")
    print(f"ok   {name}: {len(want)} rows as msprobe pairs them ({unpaired} unpaired)")
    return 0


def main():
    code = live_msprobe.unmet()
    if code is not None:
        return code
    lockstep = os.path.join(sys.argv[1], "bin", "lockstep")
    msprobe = os.path.join(os.path.dirname(sys.executable), "msprobe")
    fixtures = sys.argv[2] if len(sys.argv) > 2 else None
    failed = 0
    with tempfile.TemporaryDirectory() as made:
        todo = {**pairs(fixtures), **made_up_pairs(made)}
        for name, (target, baseline) in todo.items():
            with tempfile.TemporaryDirectory() as tmp:
                failed += one_pair(name, target, baseline, lockstep, msprobe, tmp)
    print(f"fuzzy match: {len(todo) - failed} of {len(todo)} pairs as the "
          f"installed msprobe pairs them")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
