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
    with lockstep_probe.Probe(cfg, lib=LIB) as p:
        tiny_gpt.train(knobs, 1, probe=p)
    return os.path.join(dump, "step0", "rank0")


failed = False
for name, knobs in [
        ("gpt", tiny_gpt.Knobs()),
        ("gpt extra ops", tiny_gpt.Knobs(extra_ops=True, inplace_view=2.0, scale_grad_block0_proj=2.0,
                                         gelu="tanh", blocks=1)),
]:
    with tempfile.TemporaryDirectory() as tmp:
        problems, checked = backward_check.check_dump(run(knobs, tmp))
    print(f"{name}: {checked} backward entries checked, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    failed |= bool(problems) or checked < 20

# LeNet-5 trained by C++ (build/bin/lenet): the same check on its dump; with
# the demo's fault (conv2 computed in bfloat16 by a kernel of its own) the
# faulted conv2d's entry keeps its three input gradients.
import json  # noqa: E402
import subprocess  # noqa: E402

for fault in ["none", "conv2-bf16"]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(BUILD, "bin", "lenet"), "--steps", "1",
                        "--task", "tensor", "--dump", tmp, "--fault", fault],
                       check=True, stdout=subprocess.DEVNULL)
        rank = os.path.join(tmp, "step0", "rank0")
        problems, checked = backward_check.check_dump(rank)
        with open(os.path.join(rank, "dump.json")) as f:
            conv = json.load(f)["data"]["Functional.conv2d.1.backward"]
    if fault != "none":
        # Rebuilt in float32, the bf16 kernel's gradients differ: only the
        # faulted call's own check may fail.
        problems = [p for p in problems if not p.startswith("Functional.conv2d.1:")]
    shapes = [o and o["shape"] for o in conv["output"]]
    print(f"lenet --fault {fault}: {checked} backward entries checked, "
          f"{len(problems)} problems; conv2d.1 backward output shapes {shapes}")
    for p in problems:
        print("  " + p)
    failed |= bool(problems) or checked < 10 or len(shapes) != 3 or None in shapes
sys.exit(1 if failed else 0)
