"""The kept msprobe fixtures, made again by the installed msprobe (issue 31,
section 4: "regenerate the kept msprobe fixtures with the live package").

Two folders of tests/data were written by msprobe HEAD (commit 8ff00da3)
on Debian's torch 1.13, because the 1.13 suite has no msprobe to run. Here,
with torch 2.x and mindstudio-probe from PyPI, they are made again and
checked against what is kept:

1. msprobe_pt: msprobe's own compare of lockstep's .pt dumps
   (`msprobe compare -tp dumpB -gp dumpA`) gives the rows of the kept
   msprobe_compare.csv, in order, with the same six metrics in every cell
   (within 1e-12 + 1e-9 |x|: the last printed digit).
2. msprobe_transformer: make_fixture.py run on the installed msprobe gives
   the same entries, in the same order, with the same tensors (dtype, shape,
   requires_grad) as the kept clean/ and fault/ dumps; on the fresh dumps
   `lockstep replay` names `Tensor.__matmul__.2.forward` in fault and
   nothing in clean, and `lockstep compare clean fault` names it too.

Run by ctest as `PYTHON tests/python/msprobe_fixtures_live_test.py BUILD_DIR`;
with torch 1.x it prints "skipped: needs torch 2.x and mindstudio-probe" and
exits 0; with torch 2.x, a missing msprobe is a failure.
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_msprobe  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
BUILD = os.path.abspath(sys.argv[1])
LOCKSTEP = os.path.join(BUILD, "bin", "lockstep")
METRICS = ["Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
           "One Thousandth Err Ratio", "Five Thousandths Err Ratio"]
FAULT = "Tensor.__matmul__.2.forward"


def same_cell(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= 1e-12 + 1e-9 * abs(y)


def msprobe_pt(tmp):
    """Live msprobe compare of lockstep's .pt dumps against the kept CSV."""
    root = os.path.join(DATA, "msprobe_pt")
    out = os.path.join(tmp, "msprobe_pt")
    msprobe = os.path.join(os.path.dirname(sys.executable), "msprobe")
    r = subprocess.run(
        [msprobe, "compare",
         "-tp", os.path.join(root, "dumpB", "step0", "rank0", "dump.json"),
         "-gp", os.path.join(root, "dumpA", "step0", "rank0", "dump.json"),
         "-o", out], capture_output=True, text=True)
    live = glob.glob(os.path.join(out, "compare_result_*.csv"))
    if r.returncode != 0 or len(live) != 1:
        print(f"FAIL msprobe compare of msprobe_pt: exit {r.returncode}, "
              f"{len(live)} tables\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return 1
    with open(live[0]) as f:
        now = list(csv.DictReader(f))
    with open(os.path.join(root, "msprobe_compare.csv")) as f:
        kept = list(csv.DictReader(f))
    names = [x["NPU Name"] for x in now]
    if names != [x["NPU Name"] for x in kept]:
        print(f"FAIL msprobe_pt: live rows {names[:4]}... ({len(names)}) are "
              f"not the kept rows ({len(kept)})")
        return 1
    differ = [(x["NPU Name"], m, x[m], y[m]) for x, y in zip(now, kept)
              for m in METRICS if not same_cell(x[m], y[m])]
    for d in differ[:10]:
        print("FAIL msprobe_pt: %s %s live %s, kept %s" % d)
    print(f"{'FAIL' if differ else 'ok  '} msprobe_pt: live msprobe compare "
          f"gives {len(now)} rows x {len(METRICS)} metrics, "
          f"{len(differ)} cells unlike the kept CSV")
    return 1 if differ else 0


def dump_json(root):
    found = glob.glob(os.path.join(root, "step0", "proc*", "dump.json"))
    if len(found) != 1:
        raise SystemExit(f"FAIL {root}: {len(found)} dump.json files")
    with open(found[0]) as f:
        return json.load(f)["data"]


def layout(value):
    """What a dumped argument is, without its numbers."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            return ("tensor", value.get("dtype"), tuple(value.get("shape", [])),
                    value.get("requires_grad"))
        return tuple(sorted((k, layout(v)) for k, v in value.items()
                            if k not in ("data_name", "Max", "Min", "Mean",
                                         "Norm", "md5", "value")))
    if isinstance(value, list):
        return tuple(layout(v) for v in value)
    return type(value).__name__


def replay_names(dump, out):
    r = subprocess.run([LOCKSTEP, "replay", dump, "-o", out, "-q"],
                       capture_output=True, text=True)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    first = s["first_suspect"]
    return r.returncode, s["counts"], first and first["entry"]


def msprobe_transformer(tmp):
    """make_fixture.py on the installed msprobe, against the kept dumps."""
    fresh = os.path.join(tmp, "transformer")
    os.makedirs(fresh)
    r = subprocess.run([sys.executable, os.path.join(DATA, "msprobe_transformer",
                                                     "make_fixture.py"),
                        "--out", fresh], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL make_fixture.py: exit {r.returncode}\n{r.stderr[-3000:]}")
        return 1
    failures = 0
    for variant in ("clean", "fault"):
        now = dump_json(os.path.join(fresh, variant))
        kept = dump_json(os.path.join(DATA, "msprobe_transformer", variant))
        same_names = list(now) == list(kept)
        unlike = [k for k in kept if k in now and layout(now[k]) != layout(kept[k])]
        ok = same_names and not unlike
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} msprobe_transformer {variant}: "
              f"{len(now)} entries live, {len(kept)} kept, same order "
              f"{same_names}; {len(unlike)} with other tensors {unlike[:3]}")
    rc_clean, counts, clean_first = replay_names(os.path.join(fresh, "clean"),
                                                 os.path.join(tmp, "r_clean"))
    rc_fault, _, fault_first = replay_names(os.path.join(fresh, "fault"),
                                            os.path.join(tmp, "r_fault"))
    ok = (clean_first is None and rc_clean == 0 and fault_first == FAULT
          and rc_fault == 1 and counts["replayed"] > 0)
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} replay of the fresh dumps: clean "
          f"{clean_first or 'no suspect'} (exit {rc_clean}, {counts['replayed']} "
          f"replayed), fault {fault_first} (exit {rc_fault})")
    r = subprocess.run([LOCKSTEP, "compare", os.path.join(fresh, "clean"),
                        os.path.join(fresh, "fault"), "-o",
                        os.path.join(tmp, "cmp"), "-q"], capture_output=True, text=True)
    with open(os.path.join(tmp, "cmp", "summary.json")) as f:
        fd = (json.load(f).get("first_divergence") or {}).get("entry")
    ok = r.returncode == 1 and fd == FAULT
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} compare clean fault: exit {r.returncode}, "
          f"first divergence {fd}")
    return failures


def main():
    code = live_msprobe.unmet()
    if code is not None:
        return code
    with tempfile.TemporaryDirectory(prefix="msprobe_fixtures_live_") as tmp:
        failures = msprobe_pt(tmp) + msprobe_transformer(tmp)
    print("msprobe fixtures live: " + ("FAIL" if failures else
                                       "the kept fixtures are what msprobe makes now"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
