"""Every backward entry the probe writes for a transformer step is the
call's own vector-Jacobian product (checked with torch.autograd.grad, see
backward_check.py); run by ctest as
`/usr/bin/python3 tests/python/backward_test.py BUILD_DIR`.
"""
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1]
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import backward_check  # noqa: E402
import lockstep_probe  # noqa: E402
import tiny_gpt  # noqa: E402

LIB = os.path.join(BUILD, "lib", "liblockstep_py.so")


def run(knobs, tmp):
    dump = os.path.join(tmp, "dump")
    cfg = {"task": "tensor", "level": "L1", "dump_path": dump}
    with lockstep_probe.Probe(cfg, LIB) as p:
        tiny_gpt.train(knobs, 1, probe=p)
    return os.path.join(dump, "step0", "rank0")


failed = False
for name, knobs in [
        ("gpt", tiny_gpt.Knobs()),
        ("gpt extra ops", tiny_gpt.Knobs(extra_ops=True, inplace_view=True,
                                         gelu="tanh", blocks=1)),
]:
    with tempfile.TemporaryDirectory() as tmp:
        problems, checked = backward_check.check_dump(run(knobs, tmp))
    print(f"{name}: {checked} backward entries checked, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    failed |= bool(problems) or checked < 20
sys.exit(1 if failed else 0)
