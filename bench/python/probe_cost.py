"""Cost of the Python probe on a small transformer, as a ratio to the plain
training step measured in the same run.

The model is tests/python/tiny_gpt.py's TinyGPT at 2 blocks, d=128, 4
heads, seq 64, batch 8, AdamW, 1 intra-op thread (the issue's setting). Each
repetition runs STEPS steps of every case in a shuffled order (the probe is
started before and stopped after its case's steps), and the medians of the
per-step times over the repetitions are compared. OpenBLAS runs one thread
too (OPENBLAS_NUM_THREADS=1 unless set): its idle workers otherwise spin on
the core the probe's writer thread needs.

    /usr/bin/python3 bench/python/probe_cost.py [--reps 7] [--steps 20]
        [--dump-root /dev/shm] [--lib build/lib/liblockstep_py.so]
        [--clock wall|thread] [--cases none,statistics,statistics-sync,md5]

Prints one line per case: the median step in ms and the ratio to the plain
step ("no probe"). Dumps go under --dump-root (tmpfs by default, so that
the disk is not what is measured) and are removed after each case.
"""
import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "python"))

# One thread in all: torch's intra-op pool (tiny_gpt.issue_setup) and
# OpenBLAS's own, whose idle workers spin on sched_yield and take the second
# core from the probe's writer thread (read when OpenBLAS loads, so before
# torch).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import lockstep_probe  # noqa: E402
import tiny_gpt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dump-root", default="/dev/shm")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall: perf_counter; thread: the training thread's "
                    "CPU time (time.thread_time), which leaves out the time "
                    "other processes take the core: steadier on a shared "
                    "machine, blind to work the probe moves to other threads")
    ap.add_argument("--cases", default="none,statistics,md5",
                    help="comma-separated: none, statistics, md5, tensor, "
                    "shadow, shadow@R (sample_rate R); a case ending in "
                    "-sync writes each dump.json before step() returns "
                    "(write_behind=False) instead of behind the training")
    a = ap.parse_args()

    model, opt, batches = tiny_gpt.issue_setup(a.steps)

    clock = time.perf_counter if a.clock == "wall" else time.thread_time

    def run_steps(probe):
        return tiny_gpt.timed_steps(model, opt, batches, probe, clock)

    cases = a.cases.split(",")
    per_case = {c: [] for c in cases}
    run_steps(None)  # warm-up: allocator, kernels
    rng = random.Random(1)
    for rep in range(a.reps):
        order = cases[:]
        rng.shuffle(order)
        for c in order:
            if c == "none":
                times = run_steps(None)
            else:
                c_task = c.removesuffix("-sync")
                behind = c_task == c
                d = tempfile.mkdtemp(prefix="lockstep_cost_", dir=a.dump_root)
                cfg = {"task": c_task, "level": "L1",
                       "dump_path": os.path.join(d, "dump")}
                if c_task.startswith("shadow"):
                    # shadow@0.1: every tenth call replayed in float64.
                    rate = float(c_task.partition("@")[2] or 1)
                    cfg = {"task": "shadow", "level": "L1",
                           "shadow": {"sample_rate": rate},
                           "dump_path": os.path.join(d, "dump")}
                if c_task == "md5":
                    # summary_mode belongs in the task's section (at the
                    # top level it was ignored: statistics ran instead).
                    cfg = {"task": "statistics", "level": "L1",
                           "statistics": {"summary_mode": "md5"},
                           "dump_path": os.path.join(d, "dump")}
                p = lockstep_probe.Probe(cfg, lib=a.lib, write_behind=behind)
                p.start()
                times = run_steps(p)
                p.stop()
                shutil.rmtree(d)
            # The first step of a window pays for starting: leave it out.
            per_case[c].append(statistics.median(times[1:]))
    base = statistics.median(per_case["none"]) if "none" in per_case else None
    print(f"tiny_gpt d=128 seq=64 batch=8 blocks=2, {a.reps} reps x "
          f"{a.steps} steps, dumps under {a.dump_root}, {a.clock} clock")
    for c in cases:
        m = statistics.median(per_case[c])
        ratio = f"{m / base:.2f}x" if base else "-"
        spread = f"{min(per_case[c]) * 1e3:.2f}-{max(per_case[c]) * 1e3:.2f}"
        print(f"{c:16s} {m * 1e3:8.2f} ms/step (reps {spread})  {ratio}")


if __name__ == "__main__":
    main()
