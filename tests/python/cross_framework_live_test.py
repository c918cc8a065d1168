"""A MindSpore dump against a PyTorch one, compared by lockstep and by the
installed msprobe (mindstudio-probe 26's ms_compare, its `-am`, `-am FILE`
with six mapping files, `-cm`, and `-lm` with and without its rule file):
the same rows paired, row for row, with the same Result and the same
statistics. The dumps are msprobe's own test inputs
(tests/fixtures/msprobe/cross_framework).

msprobe's MindSpore compare is imported without its package __init__, which
needs MindSpore itself (not installed; the compare does not use it).
Not compared: the NPU/Bench Dtype and Tensor Shape of outputs that are None
(msprobe 26.2 writes N/A, lockstep and the msprobe of the kept fixture
tables None). msprobe's docs show a mapping file layout that msprobe 26.2
crashes on; lockstep reads it, and its table is checked against msprobe's
for the same mapping in the layout msprobe reads. Numbers are compared to 1e-9 relative: the msprobe that wrote
the kept fixture tables (HEAD 8ff00da3) re-parses each statistic with
pandas' fast float parser before subtracting, and lockstep reproduces that
(tests/integration/msprobe_parity_test.cc); msprobe 26.2 subtracts the
values as read, so a Mean diff can differ from the 13th digit on.

  PYTHON tests/python/cross_framework_live_test.py BUILD_DIR FIXTURES DATA

(DATA: tests/data, for msprobe's layer-mapping inputs.)

With torch 1.x it prints "skipped: needs torch 2.x and mindstudio-probe".
"""
import csv
import glob
import os
import shutil
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


FA = "- ms_api: Functional.flash_attention_score\n  pt_api: NPU.npu_fusion_attention\n"
# User API mapping files (-am FILE), in the layout msprobe reads (a list,
# ms_output/pt_output).
API_MAPS = {
    "output": FA + "  ms_args: [0, 1, 2]\n  pt_args: [0, 1, 2]\n"
                   "  ms_output: [0]\n  pt_output: [0]\n",
    # permuted positions, a kwarg by name, a kwarg to a position
    "permuted": FA + "  ms_args: [0, 1, 2, attn_mask, pre_tokens]\n"
                     "  pt_args: [1, 0, 2, atten_mask, 3]\n"
                     "  ms_output: [0, 1, 2, 3]\n  pt_output: [0, 1, 2, 3]\n",
    # unequal lists: the first entry is skipped, the second used
    "unequal": FA + "  ms_args: [0, 1]\n  pt_args: [0]\n  ms_output: [0]\n"
                    "  pt_output: [0]\n- ms_api: Mint.cos\n  pt_api: Torch.cos\n"
                    "  ms_args: [0]\n  pt_args: [0]\n  ms_output: [0]\n  pt_output: [0]\n",
    # an API one dump lacks: the entry is skipped
    "absent": "- ms_api: Functional.not_in_dump\n  pt_api: NPU.npu_fusion_attention\n"
              "  ms_args: [0]\n  pt_args: [0]\n",
    # a cell path as the API
    "cell": "- ms_api: Cell.network_with_loss\n  pt_api: Module.module\n"
            "  ms_args: [0]\n  pt_args: [0]\n  ms_output: [0, 1]\n  pt_output: [0, 1]\n",
    # swapped inputs of one API
    "swapped": "- ms_api: Tensor.__add__\n  pt_api: Tensor.__add__\n"
               "  ms_args: [1, 0]\n  pt_args: [0, 1]\n  ms_output: [0]\n  pt_output: [0]\n",
}
# What msprobe's docs show, on which msprobe 26.2 crashes (one entry without
# "- ", the key ms_outputs): lockstep reads it as API_MAPS["output"].
DOCUMENTED = ("ms_api: Functional.flash_attention_score\npt_api: NPU.npu_fusion_attention\n"
              "ms_args: [0, 1, 2]\npt_args: [0, 1, 2]\nms_outputs: [0]\npt_outputs: [0]\n")


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
        cases = [("-am (built-in API mapping)", "api_mapping", "-", ["-am"]),
                 ("-cm (cell mapping)", "cell_mapping", cm, ["-cm", cm])]
        for key, text in list(API_MAPS.items()) + [("documented", DOCUMENTED)]:
            with open(os.path.join(tmp, key + ".yaml"), "w") as f:
                f.write(text)
            theirs = os.path.join(tmp, ("output" if key == "documented" else key) + ".yaml")
            cases.append((f"-am FILE ({key})", "api_mapping", theirs,
                          ["-am", os.path.join(tmp, key + ".yaml")]))
        cases = [c + (ms, pt) for c in cases]
        # -lm: msprobe's own layer-mapping inputs (set A: one entry a side;
        # set B: the cross-framework dumps with set A's construct.json and
        # stack.json, as msprobe's tests pair them), with and without rules.
        set_a = os.path.join(sys.argv[3], "layer_mapping", "msprobe_A")
        set_b = os.path.join(tmp, "set_b")
        for side, dump in (("mindspore", ms), ("pytorch", pt)):
            os.makedirs(os.path.join(set_b, side))
            shutil.copy(os.path.join(dump, "dump.json"), os.path.join(set_b, side))
            for f in ("construct.json", "stack.json"):
                shutil.copy(os.path.join(set_a, side, f), os.path.join(set_b, side))
        rules = os.path.join(set_a, "layer_mapping.yaml")
        for label, root in (("A", set_a), ("B", set_b)):
            sides = (os.path.join(root, "mindspore"), os.path.join(root, "pytorch"))
            cases.append((f"-lm FILE (set {label})", "layer_mapping", rules,
                          ["-lm", rules]) + sides)
            cases.append((f"-lm (set {label}, no file)", "layer_mapping", "-", ["-lm"]) + sides)
        for k, (name, mapping, value, flags, ms, pt) in enumerate(cases):
            work = os.path.join(tmp, f"case{k}")
            os.makedirs(work)
            failed += one(name, ms, pt, mapping, value, flags, lockstep, work)
    print("cross framework: " + ("FAIL" if failed else "lockstep's tables are msprobe's"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
