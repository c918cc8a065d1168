"""A MindSpore dump against a PyTorch one, compared by lockstep and by the
installed msprobe (mindstudio-probe 26's ms_compare, its `-am` and `-cm`):
the same rows paired, row for row, with the same Result and the same
statistics. The dumps are msprobe's own test inputs
(tests/fixtures/msprobe/cross_framework).

msprobe's MindSpore compare is imported without its package __init__, which
needs MindSpore itself (not installed; the compare does not use it).
Not compared: the NPU/Bench Dtype and Tensor Shape of outputs that are None
(msprobe 26.2 writes N/A, lockstep and the msprobe of the kept fixture
tables None). Numbers are compared to 1e-9 relative: the msprobe that wrote
the kept fixture tables (HEAD 8ff00da3) re-parses each statistic with
pandas' fast float parser before subtracting, and lockstep reproduces that
(tests/integration/msprobe_parity_test.cc); msprobe 26.2 subtracts the
values as read, so a Mean diff can differ from the 13th digit on.

  PYTHON tests/python/cross_framework_live_test.py BUILD_DIR FIXTURES

With torch 1.x it prints "skipped: needs torch 2.x and mindstudio-probe".
"""
import csv
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_msprobe  # noqa: E402

MS_COMPARE = r'''
import os, sys, types
import msprobe
pkg = types.ModuleType("msprobe.mindspore")
pkg.__path__ = [os.path.join(os.path.dirname(msprobe.__file__), "mindspore")]
sys.modules["msprobe.mindspore"] = pkg
from msprobe.mindspore.compare.ms_compare import ms_compare
npu, bench, out, mapping, value = sys.argv[1:6]
ms_compare({"npu_path": npu, "bench_path": bench, "is_print_compare_log": False},
           out, **{mapping: True if value == "-" else value})
'''
SKIP_NONE = {"NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape"}
CELL_MAP = """\
network_with_loss.module.language_model.encoder.layers.0.attention.ParallelAttention: module.module.language_model.encoder.layers.0.self_attention.ParallelAttention
network_with_loss.module: module.module
input_norm.FusedRMSNorm: input_norm.RMSNorm
"""


def table(folder):
    found = glob.glob(os.path.join(folder, "compare_result_*.csv"))
    if len(found) != 1:
        return None
    with open(found[0], newline="") as f:
        return list(csv.DictReader(f))


def same(a, b):
    if a == b:
        return True
    try:
        x, y = float(a.rstrip("%")), float(b.rstrip("%"))
    except ValueError:
        return False
    return abs(x - y) <= 1e-9 * abs(y)


def one(name, ms, pt, mapping, value, flags, lockstep, tmp):
    r = subprocess.run([sys.executable, "-c", MS_COMPARE, os.path.join(ms, "dump.json"),
                        os.path.join(pt, "dump.json"), os.path.join(tmp, "ms"),
                        mapping, value], capture_output=True, text=True)
    want = table(os.path.join(tmp, "ms"))
    if r.returncode != 0 or want is None:
        print(f"FAIL {name}: msprobe exit {r.returncode}\n{r.stderr[-2000:]}")
        return 1
    ours = subprocess.run([lockstep, "compare", ms, pt, "-o", os.path.join(tmp, "ls"),
                           "-q"] + flags, capture_output=True, text=True)
    got = table(os.path.join(tmp, "ls"))
    if ours.returncode not in (0, 1) or got is None:
        print(f"FAIL {name}: lockstep exit {ours.returncode}\n{ours.stderr}")
        return 1
    if len(want) != len(got):
        print(f"FAIL {name}: {len(got)} rows, msprobe {len(want)}")
        return 1
    differ = []
    for w, g in zip(want, got):
        for col, value in w.items():
            if col in g and not same(g[col], value) and not (
                    col in SKIP_NONE and value == "N/A" and g[col] == "None"):
                differ.append((w["NPU Name"], col, value, g[col]))
    for d in differ[:10]:
        print("FAIL %s: %s %s: msprobe %r, lockstep %r" % ((name,) + d))
    paired = sum(1 for w in want if w["Bench Name"] != "N/A")
    print(f"{'FAIL' if differ else 'ok  '} {name}: {len(want)} rows, {paired} paired "
          f"by msprobe; {len(differ)} cells unlike")
    return 1 if differ else 0


def main():
    code = live_msprobe.unmet()
    if code is not None:
        return code
    lockstep = os.path.join(sys.argv[1], "bin", "lockstep")
    root = os.path.join(sys.argv[2], "msprobe", "cross_framework")
    ms, pt = os.path.join(root, "mindspore"), os.path.join(root, "pytorch")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        cm = os.path.join(tmp, "cell_mapping.yaml")
        with open(cm, "w") as f:
            f.write(CELL_MAP)
        for name, mapping, value, flags in [
                ("-am (built-in API mapping)", "api_mapping", "-", ["-am"]),
                ("-cm (cell mapping)", "cell_mapping", cm, ["-cm", cm])]:
            work = os.path.join(tmp, mapping)
            os.makedirs(work)
            failed += one(name, ms, pt, mapping, value, flags, lockstep, work)
    print("cross framework: " + ("FAIL" if failed else "lockstep's tables are msprobe's"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
