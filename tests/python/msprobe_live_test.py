"""Live msprobe beside lockstep's probe (issue 31, section 4): the transformer
of tiny_gpt.py trained twice, identically, two steps each: once dumped by
msprobe's PrecisionDebugger (mindstudio-probe, level L1, risk_level FOCUS,
its default), once by lockstep_probe with msprobe_apis=True (msprobe's names
of the Python API calls, their own arguments, and only the calls the
installed msprobe dumps).

1. Statistics, forward and backward: per step, the same forward entries in
   the same order, and every backward entry of msprobe's in lockstep's.
2. Tensors, forward only: `lockstep compare LOCKSTEP MSPROBE` passes, and
   msprobe's own compare (`msprobe compare -tp -gp`) reads lockstep's step 0
   and passes every row, none unpaired. (msprobe 26 names a process's
   folder proc<pid> without torch.distributed, lockstep rank0; its compare
   pairs only folders named alike, so lockstep's is copied as proc1.)
Backward rows are not compared: msprobe 26.2 on torch 2.11 records wrong
gradients for calls with an inner reshape (docs/probe.md#msprobe-names).

Run by ctest as `PYTHON tests/python/msprobe_live_test.py BUILD_DIR`; with
torch 1.x it prints "skipped: needs torch 2.x and mindstudio-probe" and
exits 0 (scripts/setup.sh installs mindstudio-probe into the torch 2.x venv
only); with torch 2.x, a missing msprobe is a failure.
"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_msprobe  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1])
LIB = os.path.join(BUILD, "lib", "liblockstep_py.so")
LOCKSTEP = os.path.join(BUILD, "bin", "lockstep")
STEPS = 2

RUN = r'''
import json, os, sys
sys.path.insert(0, sys.argv[4]); sys.path.insert(0, sys.argv[5])
import torch
from tiny_gpt import Knobs, TinyGPT, batch, use_kernels
who, out, lib, task, data_mode = sys.argv[1:4] + sys.argv[6:8]
k = Knobs()
torch.set_num_threads(1)
torch.manual_seed(0)
use_kernels(k)
model = TinyGPT(k)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
if who == "msprobe":
    from msprobe.pytorch import PrecisionDebugger
    with open(out + ".config.json", "w") as f:
        json.dump({"task": task, "dump_path": out, "level": "L1",
                   task: {"data_mode": [data_mode]}}, f)
    dbg = PrecisionDebugger(config_path=out + ".config.json")
    start, stop, step = dbg.start, dbg.stop, dbg.step
else:
    import lockstep_probe
    probe = lockstep_probe.Probe(task=task, dump_path=out, level="L1",
                                 data_mode=[data_mode], msprobe_apis=True, lib=lib)
    probe.start()
    start, stop, step = (lambda: None), (lambda: None), probe.step
for s in range(%d):
    start()
    opt.zero_grad()
    loss = model(*batch(k, s))
    loss.backward()
    opt.step()
    stop()
    step()
if who != "msprobe":
    probe.stop()
''' % STEPS


def entries(root, step):
    """The entry names of one step's dump.json, in order."""
    found = glob.glob(os.path.join(root, f"step{step}", "*", "dump.json"))
    assert len(found) == 1, (root, step, found)
    with open(found[0]) as f:
        return list(json.load(f)["data"])


def names_line_up(ms_root, our_root):
    failures = 0
    for step in range(STEPS):
        ms = entries(ms_root, step)
        ours = entries(our_root, step)
        fwd_ms = [e for e in ms if e.endswith(".forward")]
        fwd_ours = [e for e in ours if e.endswith(".forward")]
        if fwd_ms != fwd_ours:
            failures += 1
            only_ms = [e for e in fwd_ms if e not in fwd_ours]
            only_ours = [e for e in fwd_ours if e not in fwd_ms]
            print(f"FAIL step {step}: forward entries differ: msprobe only "
                  f"{only_ms[:8]}, lockstep only {only_ours[:8]}")
        else:
            print(f"ok   step {step}: the same {len(fwd_ms)} forward entries, in order")
        bwd_ms = [e for e in ms if e.endswith(".backward")]
        missing = [e for e in bwd_ms if e not in ours]
        extra = [e for e in ours if e.endswith(".backward") and e not in ms]
        if missing:
            failures += 1
            print(f"FAIL step {step}: msprobe's backward entries missing "
                  f"from lockstep's dump: {missing[:8]}")
        else:
            print(f"ok   step {step}: all {len(bwd_ms)} backward entries of "
                  f"msprobe's are in lockstep's ({len(extra)} more: {extra[:3]})")
    return failures


def lockstep_compare_passes(ours, ms, tmp):
    r = subprocess.run([LOCKSTEP, "compare", ours, ms, "-o", os.path.join(tmp, "out"), "-q"],
                       capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    verdict = lines[-1] if lines else r.stderr[-300:]
    ok = r.returncode == 0 and verdict.startswith("PASS")
    print(f"{'ok  ' if ok else 'FAIL'} lockstep compare of the tensor dumps: "
          f"exit {r.returncode}: {verdict}")
    return 0 if ok else 1


def msprobe_compare_passes(ours, ms, tmp):
    target = os.path.join(tmp, "as_proc", "step0")
    shutil.copytree(os.path.join(ours, "step0", "rank0"), os.path.join(target, "proc1"))
    out = os.path.join(tmp, "msprobe_out")
    msprobe = os.path.join(os.path.dirname(sys.executable), "msprobe")
    r = subprocess.run([msprobe, "compare", "-tp", target, "-gp", os.path.join(ms, "step0"),
                        "-o", out], capture_output=True, text=True)
    rows = []
    for path in glob.glob(os.path.join(out, "compare_result_*.csv")):
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    results = {}
    for row in rows:
        results[row.get("Result")] = results.get(row.get("Result"), 0) + 1
    unpaired = sum(1 for row in rows if row.get("Bench Name") in ("N/A", "", None))
    ok = r.returncode == 0 and rows and results == {"pass": len(rows)} and not unpaired
    print(f"{'ok  ' if ok else 'FAIL'} msprobe compare of lockstep's step 0 against "
          f"msprobe's: exit {r.returncode}, {len(rows)} rows {results}, {unpaired} unpaired")
    if not ok and r.returncode != 0:
        print(r.stdout[-1500:] + r.stderr[-1500:])
    return 0 if ok else 1


def main():
    code = live_msprobe.unmet()
    if code is not None:
        return code
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        dumps = {}
        for task, mode in (("statistics", "all"), ("tensor", "forward")):
            for who in ("msprobe", "lockstep"):
                dumps[who, task] = os.path.join(tmp, f"{who}_{task}")
                r = subprocess.run([sys.executable, "-c", RUN, who, dumps[who, task], LIB,
                                    HERE, os.path.join(HERE, "..", "..", "python"),
                                    task, mode], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"FAIL: the {who} {task} run: {r.stderr[-2000:]}")
                    return 1
        failures += names_line_up(dumps["msprobe", "statistics"],
                                  dumps["lockstep", "statistics"])
        failures += lockstep_compare_passes(dumps["lockstep", "tensor"],
                                            dumps["msprobe", "tensor"], tmp)
        failures += msprobe_compare_passes(dumps["lockstep", "tensor"],
                                           dumps["msprobe", "tensor"], tmp)
    print("msprobe live: " + ("FAIL" if failures else "the round trip passes"))
    return 1 if failures else 0


sys.exit(main())
