"""What torch 2.x training uses, dumped by the Python probe and compared
right (issue 31 section 3); run by ctest as
`PYTHON tests/python/torch2_features_test.py BUILD_DIR` with a torch 2.x
Python (with torch 1.x it prints "skipped: needs torch 2.x" and exits 0).

One function per feature, each on a tiny model for 2 steps:
1. F.scaled_dot_product_attention (causal) in a one-head-pair attention
   layer: the entries Functional.scaled_dot_product_attention.0.forward and
   .backward; the backward entry's statistics (Max, Min, Mean, Norm of the
   gradients of q, k and v, and of the output gradient it got) equal those
   of torch.autograd.grad of the same call on the same tensors, within
   |got - want| <= 1e-5 * (|want| + max|grad|) + 1e-7 (the same float32
   kernels; the probe sums Mean and Norm in another order and precision).
2. AdamW with foreach=True and with fused=True: two identical runs compare
   PASS; weight_decay 0.1 against 0.01 is a FAIL naming the optimizer call
   that takes the weight decay (_foreach_mul_ by 1 - lr*wd, _fused_adamw_'s
   weight_decay argument) in step 0, whose opt.step() applied it first, and
   the parameters that step 1's first linear reads differ.
3. torch.autocast("cpu", bfloat16) over the forward against float32: the
   first divergence is the first linear (layer_norm before it runs in
   float32 under autocast), reason dtype, in statistics and tensor tasks.
4. A torch.compile'd module (backend aot_eager: inductor needs minutes of
   C++ compiling here): with the probe started it runs eagerly, with a
   warning, so the dump holds its operators (Functional.linear,
   Functional.gelu, forward and backward) and a changed gelu is named; the
   compiler's stance is restored by stop(). Without that, the compiled
   region was one RecordFunction scope whose operators were dropped as
   nested calls: a dump without the model, comparing as PASS.
5. DistributedDataParallel over Gloo on loopback, 2 ranks, 1 KB buckets
   (one bucket in step 0, DDP's first iteration; 3 rebuilt buckets in step
   1), rank 1 with a relu kernel 2^-10 too large: each step's dump holds a
   Distributed.all_reduce entry per bucket (group [0, 1]); the origin
   across ranks is rank 1's Functional.relu.0.forward in step 0, reaching
   rank 0 through an all_reduce; two clean runs PASS.

`... torch2_features_test.py BUILD_DIR sdpa compile` runs only those items.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import torch

if int(torch.__version__.split(".")[0]) < 2:
    print("skipped: needs torch 2.x")
    sys.exit(0)

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
LIB = os.path.join(BUILD, "lib", "liblockstep_py.so")
LOCKSTEP = os.path.join(BUILD, "bin", "lockstep")
sys.path.insert(0, os.path.join(ROOT, "python"))
import lockstep_probe  # noqa: E402

torch.set_num_threads(1)
STEPS = 2


def probe(dump, task="statistics"):
    return lockstep_probe.Probe({"task": task, "level": "L1",
                                 "dump_path": dump}, lib=LIB)


def load(dump, step=0, rank=0):
    with open(os.path.join(dump, f"step{step}", f"rank{rank}",
                           "dump.json")) as f:
        return json.load(f)["data"]


def compare(target, baseline, out):
    r = subprocess.run([LOCKSTEP, "compare", target, baseline, "-o", out,
                        "-q"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return r.returncode, summary


# -- 1. scaled_dot_product_attention -----------------------------------------
class Attention(nn.Module):
    def __init__(self, c=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.seen = []  # (q, k, v, grad of the output) of each call

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = [z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in (q, k, v)]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        rec = [q.detach().clone(), k.detach().clone(), v.detach().clone()]
        y.register_hook(lambda g: rec.append(g.detach().clone()))
        self.seen.append(rec)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


def stats(t):
    t = t.double()
    return {"Max": float(t.max()), "Min": float(t.min()),
            "Mean": float(t.mean()), "Norm": float(t.norm())}


def assert_stats(entry, slot, want, what):
    assert slot and slot.get("type") == "torch.Tensor", (what, slot)
    assert slot["shape"] == list(want.shape), (what, slot["shape"])
    big = float(want.abs().max())
    for key, value in stats(want).items():
        tol = 1e-5 * (abs(value) + big) + 1e-7
        assert abs(slot[key] - value) <= tol, (
            f"{entry} {what} {key}: dumped {slot[key]!r}, autograd {value!r}")


def test_sdpa(tmp):
    dump = os.path.join(tmp, "sdpa")
    torch.manual_seed(0)
    model = Attention()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    with probe(dump) as p:
        for _ in range(STEPS):
            x = torch.randn(2, 5, 8, generator=gen)
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
            p.step()
    for step in range(STEPS):
        data = load(dump, step)
        name = "Functional.scaled_dot_product_attention.0"
        assert name + ".forward" in data and name + ".backward" in data, \
            sorted(data)
        assert not any("scaled_dot_product" in k and not k.startswith(name)
                       for k in data), sorted(data)  # no inner kernels
        fwd, bwd = data[name + ".forward"], data[name + ".backward"]
        q, k, v, gy = model.seen[step]
        args = fwd["input_args"]
        assert args[5] == {"type": "bool", "value": True}, args  # is_causal
        for i, t in enumerate((q, k, v)):
            assert_stats(name, args[i], t, f"forward input {i}")
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
        y = F.scaled_dot_product_attention(*leaves, is_causal=True)
        assert_stats(name, fwd["output"][0], y.detach(), "forward output")
        grads = torch.autograd.grad(y, leaves, gy)
        assert_stats(name, bwd["input"][0], gy, "backward input (grad y)")
        assert len(bwd["output"]) == 3, bwd["output"]
        for i, g in enumerate(grads):
            assert_stats(name, bwd["output"][i], g, f"grad of {'qkv'[i]}")
    return "forward and backward entries; grads of q, k, v match autograd"


# -- 2. AdamW foreach / fused ------------------------------------------------
def adamw_run(dump, weight_decay, **impl):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2,
                            weight_decay=weight_decay, **impl)
    gen = torch.Generator().manual_seed(1)
    with probe(dump) as p:
        for _ in range(STEPS):
            x, y = torch.randn(4, 8, generator=gen), torch.randn(4, 4, generator=gen)
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
            p.step()
    return dump


def test_adamw(tmp):
    seen = []
    for impl, decay_entry, detail in [
            ("foreach", "Aten._foreach_mul_.0.forward", "0.999 vs 0.9999"),
            ("fused", "Aten._fused_adamw_.0.forward", "0.1 vs 0.01")]:
        kw = {impl: True}
        base = adamw_run(os.path.join(tmp, impl + "_a"), 0.01, **kw)
        again = adamw_run(os.path.join(tmp, impl + "_b"), 0.01, **kw)
        other = adamw_run(os.path.join(tmp, impl + "_wd"), 0.1, **kw)
        names = list(load(base))
        assert decay_entry in names, names
        rc, summary = compare(again, base, os.path.join(tmp, impl + "_o1"))
        assert rc == 0 and not summary.get("first_divergence"), summary
        rc, summary = compare(other, base, os.path.join(tmp, impl + "_o2"))
        first = summary.get("first_divergence") or {}
        assert rc == 1, summary
        # opt.step() of step 0 applies the decay first: the call taking it
        # (by its scalar argument) is the first divergence.
        assert first.get("entry") == decay_entry, first
        assert first.get("step") == 0 and first.get("reason") == "argument", first
        assert detail in first.get("detail", ""), first
        assert first.get("drift") is False, first
        # ... and step 1's first linear reads the changed weight.
        w = [load(d, 1)["Functional.linear.0.forward"]["input_args"][1]
             for d in (base, other)]
        assert w[0]["Norm"] != w[1]["Norm"], w
        seen.append(f"{impl}: {first['entry']} step {first['step']} "
                    f"({first['detail']})")
    return "; ".join(seen)


# -- 3. autocast bfloat16 ----------------------------------------------------
def autocast_run(dump, task, autocast):
    torch.manual_seed(0)
    model = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 16), nn.GELU(),
                          nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(1)
    with probe(dump, task) as p:
        for _ in range(STEPS):
            x, y = torch.randn(4, 8, generator=gen), torch.randn(4, 4, generator=gen)
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                out = model(x)
            F.mse_loss(out.float(), y).backward()
            opt.step()
            p.step()
    return dump


def test_autocast(tmp):
    seen = []
    for task in ("statistics", "tensor"):
        base = autocast_run(os.path.join(tmp, task + "_fp32"), task, False)
        amp = autocast_run(os.path.join(tmp, task + "_bf16"), task, True)
        data = load(amp)
        assert data["Functional.layer_norm.0.forward"]["output"][0]["dtype"] \
            == "torch.float32", data["Functional.layer_norm.0.forward"]
        out = data["Functional.linear.0.forward"]["output"][0]
        assert out["dtype"] == "torch.bfloat16", out
        rc, summary = compare(amp, base, os.path.join(tmp, task + "_out"))
        first = summary.get("first_divergence") or {}
        assert rc == 1, summary
        assert first.get("entry") == "Functional.linear.0.forward", first
        assert first.get("step") == 0 and first.get("reason") == "dtype", first
        seen.append(f"{task}: {first['entry']} ({first['reason']}, "
                    f"drift {first.get('drift')})")
    return "; ".join(seen)


# -- 4. torch.compile --------------------------------------------------------
class Mlp(nn.Module):
    def __init__(self, approximate):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)
        self.approximate = approximate

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))


def compile_run(dump, approximate, warm):
    import torch._dynamo.eval_frame as eval_frame
    torch.manual_seed(0)
    model = Mlp(approximate)
    compiled = torch.compile(model, backend="aot_eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(1)
    if warm:  # compiled before the probe starts
        compiled(torch.randn(4, 8)).sum().backward()
        opt.zero_grad()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with probe(dump) as p:
            for _ in range(STEPS):
                x, y = torch.randn(4, 8, generator=gen), torch.randn(4, 4, generator=gen)
                opt.zero_grad()
                F.mse_loss(compiled(x), y).backward()
                opt.step()
                p.step()
    said = [str(w.message) for w in caught if "torch.compile" in str(w.message)]
    assert len(said) == 1 and "eagerly" in said[0], [str(w.message) for w in caught]
    assert eval_frame._stance.stance == "default", eval_frame._stance
    return dump, compiled


def test_compile(tmp):
    base, _ = compile_run(os.path.join(tmp, "compiled"), "none", warm=True)
    tanh, compiled = compile_run(os.path.join(tmp, "compiled_tanh"), "tanh",
                                 warm=False)
    for dump in (base, tanh):
        for step in range(STEPS):
            data = load(dump, step)
            for name in ("Functional.linear.0", "Functional.gelu.0",
                         "Functional.linear.1"):
                for d in ("forward", "backward"):
                    assert f"{name}.{d}" in data, (dump, step, sorted(data))
            assert not any(k.startswith("Torch.detach") for k in data), \
                sorted(data)  # no traced (fake) calls
    again, _ = compile_run(os.path.join(tmp, "compiled_again"), "none",
                           warm=False)
    rc, summary = compare(again, base, os.path.join(tmp, "compile_o1"))
    assert rc == 0 and not summary.get("first_divergence"), summary
    rc, summary = compare(tanh, base, os.path.join(tmp, "compile_o2"))
    first = summary.get("first_divergence") or {}
    assert rc == 1 and first.get("entry") == "Functional.gelu.0.forward", summary
    # After stop() the module is compiled again (a compiled region runs).
    with torch.autograd.profiler.profile() as prof:
        compiled(torch.randn(4, 8))
    assert any("Compiled Region" in e.name for e in prof.function_events), \
        [e.name for e in prof.function_events][:10]
    return (f"eager ops dumped, one warning; changed gelu named "
            f"{first['entry']} ({first['reason']})")


# -- 5. DistributedDataParallel ----------------------------------------------
WORLD, FAULT_RANK = 2, 1


def ddp_worker(rank, dump, store, fault_rank):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if rank == fault_rank:
        lib = torch.library.Library("aten", "IMPL")  # noqa: F841 (kept alive)

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
            self.fc1 = nn.Linear(4 * 6 * 6, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv(x)), 2)
            return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))

    torch.manual_seed(0)
    model = DDP(Net(), bucket_cap_mb=0.001)  # 1 KB: several buckets
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    p = lockstep_probe.Probe(dump_path=dump, task="statistics", level="L1",
                             lib=LIB)
    p.start()
    for _ in range(STEPS):
        x = torch.randn(8, 1, 14, 14, generator=gen)
        y = torch.randint(0, 10, (8,), generator=gen)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        p.step()
    p.stop()
    if rank == 0:  # step 0's bucket sizes; the buckets rebuilt for step 1
        log = model._get_ddp_logging_data()
        with open(dump + ".buckets", "w") as f:
            json.dump({"step0": log.get("bucket_sizes"), "step1": len(
                model.reducer._get_zeros_like_grad_buckets())}, f)
    dist.destroy_process_group()


def ddp_run(tmp, name, fault_rank):
    dump = os.path.join(tmp, name)
    store = os.path.join(tmp, name + ".store")
    procs = [subprocess.Popen([sys.executable, __file__, BUILD, "--ddp-worker",
                               str(r), dump, store, str(fault_rank)])
             for r in range(WORLD)]
    for p in procs:
        assert p.wait(timeout=240) == 0, f"{name}: a rank failed"
    return dump


def test_ddp(tmp):
    base = ddp_run(tmp, "ddp_base", -1)
    target = ddp_run(tmp, "ddp_fault", FAULT_RANK)
    with open(base + ".buckets") as f:
        buckets = json.load(f)
    # Step 0 reduces all gradients in one bucket (DDP's first iteration);
    # from step 1 on, in the buckets rebuilt by bucket_cap_mb.
    assert buckets["step1"] >= 3, buckets
    rc, summary = compare(target, base, os.path.join(tmp, "ddp_out"))
    assert rc == 1, summary
    problems = []
    # The reducer's all_reduce of each bucket (c10d::allreduce_, called from
    # AccumulateGrad's post hook, inside the autograd engine's
    # evaluate_function scope) must be dumped, as dist.all_reduce is.
    seen = {}
    for step in range(STEPS):
        data = load(base, step, 1)
        seen[step] = [k for k in data if k.startswith("Distributed.")]
        if not any("all_reduce" in k for k in seen[step]):
            problems.append(f"step {step} rank 1: no Distributed.all_reduce "
                            f"entry for DDP's buckets (entries: {sorted(data)})")
        groups = [data[k]["input_kwargs"].get("group", {}).get("group_ranks")
                  for k in seen[step] if k.endswith(".forward")]
        if any(g != [0, 1] for g in groups):
            problems.append(f"step {step}: group_ranks {groups}")
    origin = summary.get("origin") or {}
    if (origin.get("rank"), origin.get("step"), origin.get("entry")) != \
            (FAULT_RANK, 0, "Functional.relu.0.forward"):
        problems.append(f"origin {origin.get('line', origin)}, want rank 1, "
                        "step 0, Functional.relu.0.forward")
    reached = {hop["rank"] for hop in origin.get("path", [])}
    if 0 not in reached or not any("all_reduce" in hop["entry"]
                                   for hop in origin.get("path", [])):
        problems.append(f"path {origin.get('path')}: not reaching rank 0 "
                        "through an all_reduce")
    again = ddp_run(tmp, "ddp_again", -1)
    rc, summary2 = compare(again, base, os.path.join(tmp, "ddp_out2"))
    if rc != 0:
        problems.append(f"two clean runs: {summary2.get('first_divergence')}")
    assert not problems, problems
    return (f"buckets {buckets}; Distributed entries {seen}; "
            f"origin: {origin.get('line')}")


def main():
    only = sys.argv[2:]  # optional: names of the items to run
    failed = []
    for name, fn in [("sdpa", test_sdpa), ("adamw", test_adamw),
                     ("autocast", test_autocast), ("compile", test_compile),
                     ("ddp", test_ddp)]:
        if only and name not in only:
            continue
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                said = fn(tmp)
                print(f"{name}: ok ({time.time() - t0:.1f} s): {said}",
                      flush=True)
            except AssertionError as e:
                failed.append(name)
                print(f"{name}: FAILED ({time.time() - t0:.1f} s): {e!r}",
                      flush=True)
    if failed:
        print("torch2_features_test: failed:", " ".join(failed))
        sys.exit(1)
    print("torch2_features_test: ok")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--ddp-worker":
        ddp_worker(int(sys.argv[3]), sys.argv[4], sys.argv[5],
                   int(sys.argv[6]))
    else:
        main()
