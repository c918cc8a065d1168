"""Data-parallel training in real processes (torch.distributed, Gloo on
loopback), dumped by the Python probe, and `lockstep compare` naming the
rank where a divergence started; run by ctest as
`/usr/bin/python3 tests/python/dist_origin_test.py BUILD_DIR`.

Each of 4 ranks trains a small LeNet-style CNN on its own batch for 2 steps;
gradients are averaged with dist.all_reduce (recorded by the probe as
Distributed.all_reduce entries, with their group). The target run differs
from the baseline in one operator on rank 2: its CPU kernel of aten::relu
returns results 2^-10 too large (replaced through torch.library, below
autograd, so the dump shows an ordinary relu call). From the first
all_reduce on, every rank's gradients and weights differ; compare must
name rank 2's Functional.relu.0.forward as the origin, not rank 0's
all_reduce, and say the difference reached the other ranks through the
all_reduce.
"""
import json
import os
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
WORLD = 4
FAULT_RANK = 2


def worker(rank, dump, store, fault_rank):
    import warnings

    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F

    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ["LOCKSTEP_PY_LIB"] = os.path.join(BUILD, "lib",
                                                 "liblockstep_py.so")
    import lockstep_probe

    torch.set_num_threads(1)
    if rank == fault_rank:
        lib = torch.library.Library("aten", "IMPL")

        def relu_off(x):
            return torch.clamp_min(x, 0) * (1 + 2 ** -10)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.impl("relu", relu_off, "CPU")
    dist.init_process_group("gloo", init_method="file://" + store,
                            rank=rank, world_size=WORLD)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.fc = nn.Linear(4 * 6 * 6, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv(x)), 2)
            return self.fc(torch.flatten(x, 1))

    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    probe = lockstep_probe.Probe(dump_path=dump, task="statistics",
                                 level="L1")
    probe.start()
    for _ in range(2):
        x = torch.randn(8, 1, 14, 14, generator=gen)
        y = torch.randint(0, 10, (8,), generator=gen)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= WORLD
        opt.step()
        probe.step()
    probe.stop()
    dist.destroy_process_group()


def run(tmp, name, fault_rank):
    dump = os.path.join(tmp, name)
    store = os.path.join(tmp, name + ".store")
    procs = [subprocess.Popen([sys.executable, __file__, BUILD, "--worker",
                               str(r), dump, store, str(fault_rank)])
             for r in range(WORLD)]
    for p in procs:
        assert p.wait(timeout=240) == 0, f"{name}: a rank failed"
    return dump


def main():
    with tempfile.TemporaryDirectory() as tmp:
        base = run(tmp, "baseline", -1)
        target = run(tmp, "target", FAULT_RANK)
        with open(os.path.join(base, "step0", "rank1", "dump.json")) as f:
            data = json.load(f)["data"]
        ar = data["Distributed.all_reduce.0.forward"]
        assert ar["input_kwargs"]["group"]["group_ranks"] == [0, 1, 2, 3], ar
        assert len([k for k in data if k.startswith("Distributed.")]) == 4
        out = os.path.join(tmp, "out")
        r = subprocess.run([os.path.join(BUILD, "bin", "lockstep"), "compare",
                            target, base, "-o", out],
                           capture_output=True, text=True)
        assert r.returncode == 1, r.stdout + r.stderr
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        origin = summary["origin"]
        assert origin is not None, summary
        assert origin["rank"] == FAULT_RANK, origin
        assert origin["step"] == 0, origin
        assert origin["entry"] == "Functional.relu.0.forward", origin
        reached = {hop["rank"] for hop in origin["path"]}
        assert reached >= {0, 1, 3}, origin["path"]
        assert any("all_reduce" in hop["entry"] for hop in origin["path"])
        # The same run twice: no divergence, no origin.
        again = run(tmp, "again", -1)
        r2 = subprocess.run([os.path.join(BUILD, "bin", "lockstep"),
                             "compare", again, base, "-o",
                             os.path.join(tmp, "out2")],
                            capture_output=True, text=True)
        assert r2.returncode == 0, r2.stdout + r2.stderr
        print("origin:", origin["rank"], origin["entry"], "reached",
              sorted(reached))
    print("dist_origin_test: ok")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--worker":
        worker(int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        main()
