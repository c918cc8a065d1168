"""Regenerates the msprobe interop fixture beside this file (README.md):

  dumpA/, dumpB/        one forward step of a small model, dumped by
                        lockstep's Python probe in tensor mode (.pt files,
                        its default); B's inputs are perturbed
  msprobe_compare.csv   msprobe's own compare of B (NPU) against A (bench)

Run with Debian's python3-torch, pandas, openpyxl, tqdm, rich, protobuf,
msprobe's source and a stub einops module (an empty einops.py):

  PYTHONPATH=MSPROBE/python:STUBS /usr/bin/python3 \\
      tests/data/msprobe_pt/make_fixture.py BUILD_DIR

MSPROBE is a checkout of github.com/Ascend/msprobe (commit 8ff00da3 made
the committed CSV); STUBS also needs matplotlib/{__init__,pyplot,patches}.py
defining pyplot.Figure and patches.Rectangle (msprobe imports them, compare
does not use them). Paths of this directory are rewritten to /data/run in
the CSV and in dump.json's dump_data_dir afterwards, and the CSV's
timestamped name becomes msprobe_compare.csv.
"""
import glob
import os
import shutil
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import lockstep_probe  # noqa: E402


def inputs(perturb):
    """Tensors of every dtype the probe writes; B's differ a little."""
    g = torch.Generator().manual_seed(0)
    f = {k: torch.randn(*s, generator=g) for k, s in
         [("x", (6, 8)), ("w1", (5, 8)), ("b1", (5,)), ("w2", (4, 5)), ("b2", (4,)),
          ("xb", (6, 8)), ("wb", (8, 4)), ("xh", (3, 7)), ("yh", (3, 7)),
          ("xd", (4, 6)), ("yd", (4, 6))]}
    i = {k: torch.randint(-50, 50, (9,), generator=g) for k in
         ["ia", "ib", "i32a", "i32b", "i16a", "i16b", "i8a", "i8b"]}
    u = {k: torch.randint(0, 15, (10,), generator=g) for k in ["ua", "ub"]}
    b = {k: torch.rand(11, generator=g) > 0.5 for k in ["ba", "bb"]}
    if perturb:
        p = torch.Generator().manual_seed(1)
        for k, v in f.items():
            f[k] = v * (1 + 1e-3 * torch.randn(v.shape, generator=p))
        for d in (i, u):
            for k, v in d.items():
                d[k] = v + (torch.arange(v.numel()) % 4 == 0).long()
        for k, v in b.items():
            b[k] = v ^ (torch.arange(v.numel()) % 5 == 0)
    t = dict(f, **i, **u, **b)
    t["xb"], t["wb"] = t["xb"].bfloat16(), t["wb"].bfloat16()
    t["xh"], t["yh"] = t["xh"].half(), t["yh"].half()
    t["xd"], t["yd"] = t["xd"].double(), t["yd"].double()
    for k, dt in [("i32", torch.int32), ("i16", torch.int16),
                  ("i8", torch.int8)]:
        t[k + "a"], t[k + "b"] = t[k + "a"].to(dt), t[k + "b"].to(dt)
    t["ua"], t["ub"] = t["ua"].to(torch.uint8), t["ub"].to(torch.uint8)
    return t


def step(t):
    h = torch.relu(F.linear(t["x"], t["w1"], t["b1"]))
    torch.tanh(F.linear(h, t["w2"], t["b2"]))
    torch.matmul(t["xb"], t["wb"])  # bfloat16
    torch.mul(t["xh"], t["yh"])     # float16
    torch.mul(t["xd"], t["yd"])     # float64
    for k in ["i", "i32", "i16", "i8", "u"]:
        torch.mul(t[k + "a"], t[k + "b"])
    torch.logical_xor(t["ba"], t["bb"])


def dump(path, perturb, lib):
    shutil.rmtree(path, ignore_errors=True)
    t = inputs(perturb)
    cfg = {"task": "tensor", "level": "L1", "dump_path": path}
    with torch.no_grad(), lockstep_probe.Probe(cfg, lib) as p:
        step(t)
        p.step()
    os.remove(os.path.join(path, "env.json"))  # this machine's, not needed


def run_msprobe(npu, bench, out):
    torch.Tensor.untyped_storage = lambda t: t.storage().untyped()
    from msprobe.pytorch.compare.pt_compare import pt_compare
    pt_compare({"npu_path": npu, "bench_path": bench,
                "is_print_compare_log": False}, out)
    return glob.glob(os.path.join(out, "compare_result_*.csv"))[0]


def main():
    lib = os.path.join(sys.argv[1], "lib", "liblockstep_py.so")
    for side, perturb in [("dumpA", False), ("dumpB", True)]:
        dump(os.path.join(HERE, side), perturb, lib)
    rank = os.path.join("step0", "rank0", "dump.json")
    with tempfile.TemporaryDirectory() as tmp:
        csv = run_msprobe(os.path.join(HERE, "dumpB", rank),
                          os.path.join(HERE, "dumpA", rank), tmp)
        with open(csv) as f:
            text = f.read().replace(HERE, "/data/run")
    with open(os.path.join(HERE, "msprobe_compare.csv"), "w") as f:
        f.write(text)
    for side in ["dumpA", "dumpB"]:  # dump_data_dir: no path of this machine
        path = os.path.join(HERE, side, rank)
        with open(path) as f:
            text = f.read().replace(HERE, "/data/run")
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
