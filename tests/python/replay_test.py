"""`lockstep replay` on tensor dumps of the example transformer written by the
Python probe; run by ctest as
`/usr/bin/python3 tests/python/replay_test.py BUILD_DIR`.

- A clean fp32 step at L1 and at mix: no suspect; every operator call is
  replayed except those that return Python numbers (Tensor.item); module
  entries are skipped.
- The same step where the CPU kernel of aten::gelu is replaced (through
  torch.library, below autograd, so the probe and the dump see an ordinary
  gelu call) by the tanh approximation, as a device library might do: the
  first suspect is the first gelu call, and only gelu calls are suspect.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import warnings

import torch

BUILD = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
os.environ["LOCKSTEP_PY_LIB"] = os.path.join(BUILD, "lib", "liblockstep_py.so")
import train_transformer as tt  # noqa: E402

LOCKSTEP = os.path.join(BUILD, "bin", "lockstep")


def replay(dump, out):
    r = subprocess.run([LOCKSTEP, "replay", dump, "-o", out],
                       capture_output=True, text=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "replay.csv")) as f:
        rows = list(csv.DictReader(f))
    return r, summary, rows


def check_clean(tmp):
    for level in ["L1", "mix"]:
        dump = os.path.join(tmp, "clean_" + level)
        tt.train(dump, level=level, task="tensor", steps=1, fault=None, seed=1)
        r, s, rows = replay(dump, os.path.join(tmp, "out_clean_" + level))
        assert r.returncode == 0, r.stdout + r.stderr
        assert s["first_suspect"] is None, s["first_suspect"]
        n = s["counts"]
        assert n["entries"] == n["replayed"] + n["not_replayable"] + n["skipped"], n
        for row in rows:
            if row["Verdict"] == "not replayable":
                assert row["Op"] == "aten::item", row
            if row["Verdict"] == "skipped":
                assert row["Entry"].startswith("Module.") or \
                    row["Entry"].endswith(".debug"), row
        ops = {row["Op"] for row in rows if row["Verdict"] == "ok"}
        for op in ["aten::linear", "aten::layer_norm", "aten::gelu",
                   "aten::softmax.int", "aten::embedding", "aten::matmul"]:
            assert op in ops, (op, sorted(ops))
        # Backward entries (the probe's own VJPs) are replayed too.
        assert any(row["Entry"].endswith(".backward") and
                   row["Verdict"] == "ok" for row in rows)
        if level == "mix":
            assert n["skipped"] > 10, n
        print(f"clean {level}: {n['replayed']} of {n['entries']} entries "
              f"replayed, no suspect")


def check_gelu_kernel(tmp):
    lib = torch.library.Library("aten", "IMPL")

    def gelu_tanh(x, approximate="none"):
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * x * x * x)))

    with warnings.catch_warnings():  # "overriding a previously registered"
        warnings.simplefilter("ignore")
        lib.impl("gelu", gelu_tanh, "CPU")
    try:
        dump = os.path.join(tmp, "gelu")
        tt.train(dump, level="L1", task="tensor", steps=1, fault=None, seed=1)
    finally:
        del lib  # the real kernel again
    r, s, rows = replay(dump, os.path.join(tmp, "out_gelu"))
    assert r.returncode == 1, r.stdout + r.stderr
    first = s["first_suspect"]
    assert first["entry"] == "Functional.gelu.0.forward", first
    assert first["max_ulp"] > 10 * first["bound"], first
    suspects = {row["Op"] for row in rows if row["Verdict"] == "suspect"}
    assert suspects == {"aten::gelu"}, suspects
    print("gelu kernel with the tanh approximation: first suspect",
          first["entry"], f"({first['max_ulp']:.0f} ulp > {first['bound']:.0f})")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_clean(tmp)
        check_gelu_kernel(tmp)
    print("replay_test: ok")


if __name__ == "__main__":
    main()
