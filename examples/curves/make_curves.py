#!/usr/bin/env python3
"""Writes the two example loss logs (CSV): a baseline, and a target whose
loss drifts up from step 1200 and whose loss scale halves at step 1500 --
the shape of a precision problem that lockstep curve finds."""
import math
import random

random.seed(1)
with open("baseline.csv", "w") as f, open("target.csv", "w") as g:
    f.write("step,loss,loss_scale\n")
    g.write("step,loss,loss_scale\n")
    for s in range(0, 2000, 10):
        loss = 3 * math.exp(-s / 600) + 0.5 + 0.02 * random.random()
        drift = 0.0 if s < 1200 else (s - 1200) / 4000
        f.write(f"{s},{loss},65536\n")
        g.write(f"{s},{loss * (1 + drift)},{65536 if s < 1500 else 32768}\n")
