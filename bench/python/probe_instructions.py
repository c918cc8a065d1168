"""Instructions the Python probe executes on the training thread per step,
counted by valgrind's callgrind: a deterministic figure for comparing two
builds of the probe, where the timings of probe_cost.py move by +-0.05 of
the step between runs on a shared machine.

Runs the issue's transformer (probe_cost.py's TinyGPT, L1 statistics) under
callgrind twice, for A and B steps, counting only inside the probe's
RecordFunction callbacks, its autograd hooks and Probe.step(), and prints
(count(B) - count(A)) / (B - A): the steady steps' instructions, without
the first steps' one-off work (stack capture, optimizer state) and without
start-up. The two runs go in parallel; each takes a few minutes (torch's
import under valgrind). Needs valgrind (apt-get install valgrind).

    /usr/bin/python3 bench/python/probe_instructions.py --lib build/lib/liblockstep_py.so [--steps 3,7] [--top 15]

Instructions are not time: memory traffic and the kernel's vector width
weigh differently. Use it to see what a change removes, and probe_cost.py
for what the step costs.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

# What callgrind counts: the probe's entry points on the training thread.
TOGGLES = ["*OnStart*", "*OnEnd*", "*CallHook*", "lockstep::ProbeImpl::Step*"]

WORKER = r"""
import os, sys, tempfile
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "python"))
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import lockstep_probe, tiny_gpt
model, opt, batches = tiny_gpt.issue_setup(int(sys.argv[2]))
d = tempfile.mkdtemp(dir=sys.argv[4])
p = lockstep_probe.Probe({"task": "statistics", "level": "L1",
                          "dump_path": os.path.join(d, "dump")},
                         lib=sys.argv[3] or None)
p.start()
tiny_gpt.timed_steps(model, opt, batches, p)
p.stop()
"""


def totals(path):
    """{function: instructions} and the program total of a callgrind file."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    per, total = {}, 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if m.group(2).startswith("PROGRAM TOTALS"):
            total = n
        else:
            per[m.group(2)] = per.get(m.group(2), 0) + n
    return per, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default="")
    ap.add_argument("--steps", default="3,7",
                    help="A,B: the two runs' step counts (B > A)")
    ap.add_argument("--top", type=int, default=15,
                    help="functions to list by their steady instructions")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.steps.split(","))
    if hi <= lo:
        sys.exit("--steps: B must be greater than A")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    work = tempfile.mkdtemp(prefix="lockstep_cg_")
    try:
        script = os.path.join(work, "worker.py")
        with open(script, "w") as f:
            f.write(WORKER)
        runs = []
        for n in (lo, hi):
            out = os.path.join(work, f"callgrind.{n}")
            cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                   f"--callgrind-out-file={out}"]
            cmd += [f"--toggle-collect={t}" for t in TOGGLES]
            cmd += [sys.executable, script, ROOT, str(n), a.lib, work]
            runs.append((out, subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True)))
        results = []
        for out, proc in runs:
            _, err = proc.communicate()
            if proc.returncode != 0:
                sys.exit(f"valgrind failed:\n{err[-2000:]}")
            results.append(totals(out))
        (per_lo, total_lo), (per_hi, total_hi) = results
        steps = hi - lo
        print(f"instructions per steady step inside the probe: "
              f"{(total_hi - total_lo) / steps / 1e6:.2f} M "
              f"(runs of {lo} and {hi} steps)")
        diff = {k: (per_hi.get(k, 0) - per_lo.get(k, 0)) / steps
                for k in set(per_hi) | set(per_lo)}
        for name, n in sorted(diff.items(), key=lambda x: -x[1])[:a.top]:
            print(f"  {n / 1e6:7.3f} M  {name[:110]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
