"""gpukit: the probe's cost on a GPT-2-small-size model (issue 31, section 5).

GPT-2 small: 12 blocks, d=768, 12 heads, vocab 50257, context 1024 (124M
parameters); F.scaled_dot_product_attention (causal), tanh GELU, a head tied
to the token embedding; batch 8 x 1024 tokens under torch.autocast(bfloat16),
AdamW (PyTorch's default implementation on the device: foreach on CUDA).

One process times, in this order, each after 2 untimed steps of its own:

  none            no probe
  stats_kernel    lockstep statistics, L1, the probe's CUDA kernel
  stats_aten      the same with LOCKSTEP_DEVICE_KERNELS=0 (ATen reductions)
  md5             lockstep md5 (CRC-32 of each tensor's bytes)
  none_again      no probe (the drift of the plain step)
  stats_kernel_again

and writes the medians into OUT/gpt2_cost.json. `--mode msprobe` (a process
of its own: msprobe wraps torch's API for good) times msprobe's
PrecisionDebugger, task statistics, L1, on the same model and batches.

`--check` also runs one step twice from the same weights, with the kernel
and with the ATen reductions, and compares every forward statistic of the
two dump.json files (Max/Min equal; Mean/Norm relative difference).

    python3 gpt2_cost.py --lib build/lib/liblockstep_py.so --pkg python \
        --out OUT [--device cuda] [--steps 8] [--small] [--check]

--small (d=64, 2 blocks, vocab 512, context 64, batch 2) is a dry run for a
CPU.
"""
import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.attn_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.attn_proj(y)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class GPT(nn.Module):
    def __init__(self, vocab, ctx, d, heads, blocks):
        super().__init__()
        self.vocab = vocab
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * blocks) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for b in self.blocks:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, self.vocab), targets.view(-1))


def shape(small):
    if small:
        return dict(vocab=512, ctx=64, d=64, heads=4, blocks=2, batch=2)
    return dict(vocab=50257, ctx=1024, d=768, heads=12, blocks=12, batch=8)


def setup(a):
    s = shape(a.small)
    torch.manual_seed(0)
    model = GPT(s["vocab"], s["ctx"], s["d"], s["heads"], s["blocks"]).to(a.device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(4):
        data = torch.randint(0, s["vocab"], (s["batch"], s["ctx"] + 1), generator=g)
        batches.append((data[:, :-1].contiguous().to(a.device),
                        data[:, 1:].contiguous().to(a.device)))
    n_params = sum(p.numel() for p in model.parameters())
    return s, model, opt, batches, n_params


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def one_step(model, opt, idx, tgt, device, hooks):
    """One training step; hooks (begin, end) wrap it (a debugger's)."""
    hooks[0]()
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = model(idx, tgt)
    loss.backward()
    opt.step()
    hooks[1]()
    return loss


def timed(model, opt, batches, device, hooks, steps, warm=2, enqueue=None):
    """Each step's time, device synchronized before and after. enqueue, a
    list, gets the time each step took to queue its work before the step's
    end hook (the CPU side: the launches and the probe's callbacks)."""
    times = []
    start = time.perf_counter()
    for s in range(warm + steps):
        if len(times) >= 2 and time.perf_counter() - start > 30:
            break  # a slow mode: two timed steps are enough
        idx, tgt = batches[s % len(batches)]
        sync(device)
        t0 = time.perf_counter()
        marks = []
        one_step(model, opt, idx, tgt, device,
                 (hooks[0], lambda: (marks.append(time.perf_counter()), hooks[1]())))
        sync(device)
        if s >= warm:
            times.append(time.perf_counter() - t0)
            if enqueue is not None:
                enqueue.append(marks[0] - t0)
    return times


def lockstep_hooks(lockstep_probe, lib, dump, summary_mode):
    cfg = {"task": "statistics", "level": "L1", "dump_path": dump}
    if summary_mode == "md5":
        cfg["statistics"] = {"summary_mode": "md5"}
    p = lockstep_probe.Probe(cfg, lib=lib)
    p.start()
    return p, (lambda: None, p.step)


def dump_size(path):
    total = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += 1
    return total, files


def entries_per_step(dump):
    out = []
    s = 0
    while True:
        f = os.path.join(dump, f"step{s}", "rank0", "dump.json")
        if not os.path.exists(f):
            return out
        with open(f) as fh:
            out.append(len(json.load(fh)["data"]))
        s += 1


def summary(times):
    ms = [t * 1e3 for t in times]
    return {"median_ms": statistics.median(ms), "min_ms": min(ms),
            "max_ms": max(ms), "steps": len(ms)}


def run_lockstep(a, out):
    sys.path.insert(0, a.pkg)
    import lockstep_probe
    s, model, opt, batches, n_params = setup(a)
    out.update(model=s, parameters=n_params)
    print(f"model: {n_params / 1e6:.1f}M parameters, {s}", flush=True)
    timed(model, opt, batches, a.device, (lambda: None, lambda: None), 3, warm=0)
    modes = ["none", "stats_kernel", "stats_aten", "md5", "none_again",
             "stats_kernel_again"]
    for mode in modes:
        if a.only and mode not in a.only.split(","):
            continue
        tmp = tempfile.mkdtemp(prefix="gpt2_cost_")
        try:
            t0 = time.perf_counter()
            enq = []
            if mode.startswith("none"):
                times = timed(model, opt, batches, a.device,
                              (lambda: None, lambda: None), a.steps, enqueue=enq)
                r = summary(times)
            else:
                os.environ["LOCKSTEP_DEVICE_KERNELS"] = "0" if mode == "stats_aten" else "1"
                dump = os.path.join(tmp, "dump")
                p, hooks = lockstep_hooks(lockstep_probe, a.lib, dump,
                                          "md5" if mode == "md5" else "statistics")
                times = timed(model, opt, batches, a.device, hooks, a.steps,
                              enqueue=enq)
                p.stop()
                r = summary(times)
                r["dump_bytes"], r["dump_files"] = dump_size(dump)
                r["entries"] = entries_per_step(dump)[:3]
            r["seconds"] = time.perf_counter() - t0
            r["enqueue_median_ms"] = statistics.median(enq) * 1e3
            out["modes"][mode] = r
            print(f"  {mode:19s} median {r['median_ms']:8.2f} ms/step (min "
                  f"{r['min_ms']:.2f}, max {r['max_ms']:.2f}, {r['steps']} steps; "
                  f"queued in {r['enqueue_median_ms']:.2f} ms)"
                  + (f", {r['entries'][0]} entries a step" if r.get("entries") else ""),
                  flush=True)
        except Exception:
            out["modes"][mode] = {"error": traceback.format_exc()}
            print(out["modes"][mode]["error"], flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    base = out["modes"].get("none", {}).get("median_ms")
    if base:
        for r in out["modes"].values():
            if "median_ms" in r:
                r["ratio_to_none"] = r["median_ms"] / base
    if a.check:
        out["check"] = check_kernel_vs_aten(a, model, opt, batches, lockstep_probe)
    if a.profile:
        out["profile"] = {}
        for mode in ["none", "stats_kernel", "md5"]:
            try:
                out["profile"][mode] = profile_step(a, model, opt, batches,
                                                    lockstep_probe, mode)
            except Exception:
                out["profile"][mode] = {"error": traceback.format_exc()}
            r = dict(out["profile"][mode])
            top = r.pop("top_kernels", [])
            print(f"  profile {mode}: {r}", flush=True)
            for n, c, ms in top:
                print(f"      {ms:8.3f} ms {c:5d}x {n}", flush=True)


def profile_step(a, model, opt, batches, lockstep_probe, mode):
    """One step under torch.profiler: the GPU's kernel time (all, and the
    probe's own kernels), its busy span, and the CPU time spent in kernel
    launches (long when the launch queue is full: the GPU is behind)."""
    from torch.profiler import ProfilerActivity, profile
    tmp = tempfile.mkdtemp(prefix="gpt2_prof_")
    p = None
    hooks = (lambda: None, lambda: None)
    if mode != "none":
        os.environ["LOCKSTEP_DEVICE_KERNELS"] = "1"
        p, hooks = lockstep_hooks(lockstep_probe, a.lib, os.path.join(tmp, "d"),
                                  "md5" if mode == "md5" else "statistics")
    timed(model, opt, batches, a.device, hooks, 2, warm=0)
    sync(a.device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        one_step(model, opt, *batches[0], a.device, hooks)
        sync(a.device)
        wall = time.perf_counter() - t0
    if p is not None:
        p.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    kern, probe_kern, launches = [], [], []
    by_name = {}
    for e in prof.events():
        dur = e.time_range.elapsed_us()
        if str(e.device_type).endswith("CUDA"):
            kern.append((e.time_range.start, e.time_range.end))
            k = by_name.setdefault(e.name[:90], [0, 0.0])
            k[0] += 1
            k[1] += dur / 1e3
            if "StatsKernel" in e.name or "CrcKernel" in e.name:
                probe_kern.append(dur)
        elif e.name.startswith("cudaLaunchKernel"):
            launches.append(dur)
    busy = sum(e - s for s, e in kern)
    span = (max(e for _, e in kern) - min(s for s, _ in kern)) if kern else 0
    return {"wall_ms": wall * 1e3, "kernels": len(kern),
            "kernel_ms": busy / 1e3, "kernel_span_ms": span / 1e3,
            "probe_kernels": len(probe_kern), "probe_kernel_ms": sum(probe_kern) / 1e3,
            "launches": len(launches), "launch_ms": sum(launches) / 1e3,
            "launch_max_us": max(launches) if launches else 0,
            "top_kernels": sorted(([n, c, round(ms, 3)] for n, (c, ms) in by_name.items()),
                                  key=lambda x: -x[2])[:25]}


def check_kernel_vs_aten(a, model, opt, batches, lockstep_probe):
    """Forward and backward of one batch from the same weights with each
    reduction; every tensor statistic of the forward entries compared (the
    backward's may differ run to run: SDPA's backward on CUDA is not
    deterministic)."""
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    dumps = {}
    tmp = tempfile.mkdtemp(prefix="gpt2_check_")
    for mode in ["1", "0"]:
        model.load_state_dict(state)
        os.environ["LOCKSTEP_DEVICE_KERNELS"] = mode
        dump = os.path.join(tmp, "k" + mode)
        p, hooks = lockstep_hooks(lockstep_probe, a.lib, dump, "statistics")
        idx, tgt = batches[0]
        # Forward and backward only: the optimizer's state would differ.
        model.zero_grad(set_to_none=True)
        with torch.autocast(device_type=a.device, dtype=torch.bfloat16):
            loss = model(idx, tgt)
        loss.backward()
        p.step()
        p.stop()
        with open(os.path.join(dump, "step0", "rank0", "dump.json")) as f:
            dumps[mode] = json.load(f)["data"]
    res = {"entries": 0, "tensors": 0, "max_min_equal": 0, "max_min_differ": 0,
           "worst_mean_rel": 0.0, "worst_norm_rel": 0.0, "worst": None,
           "entries_differ": sorted(set(dumps["1"]) ^ set(dumps["0"]))[:10]}

    def walk(x, y, where):
        if isinstance(x, dict) and "Max" in x and isinstance(y, dict):
            res["tensors"] += 1
            same = all(x.get(k) == y.get(k) or (x.get(k) != x.get(k) and y.get(k) != y.get(k))
                       for k in ("Max", "Min"))
            res["max_min_equal" if same else "max_min_differ"] += 1
            for k, key in (("Mean", "worst_mean_rel"), ("Norm", "worst_norm_rel")):
                u, v = x.get(k), y.get(k)
                if isinstance(u, float) and isinstance(v, float) and math.isfinite(u) and math.isfinite(v):
                    rel = abs(u - v) / max(abs(v), 1e-300)
                    if rel > res[key]:
                        res[key] = rel
                        res["worst"] = f"{where} {k}: {u!r} vs {v!r}"
        elif isinstance(x, dict) and isinstance(y, dict):
            for k in x:
                if k in y:
                    walk(x[k], y[k], where + "." + k)
        elif isinstance(x, list) and isinstance(y, list):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{where}.{i}")

    for name, e in dumps["1"].items():
        if name.endswith(".forward") and name in dumps["0"]:
            res["entries"] += 1
            walk(e, dumps["0"][name], name)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"  check kernel vs ATen: {res}", flush=True)
    return res


def run_msprobe(a, out):
    from msprobe.pytorch import PrecisionDebugger
    s, model, opt, batches, n_params = setup(a)
    out.update(model=s, parameters=n_params)
    tmp = tempfile.mkdtemp(prefix="gpt2_msprobe_")
    cfg = {"task": "statistics", "dump_path": os.path.join(tmp, "dump"),
           "rank": [], "step": [], "level": "L1", "async_dump": a.async_dump,
           "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                          "summary_mode": "statistics"}}
    cfg_path = os.path.join(tmp, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    timed(model, opt, batches, a.device, (lambda: None, lambda: None), 3, warm=0)
    plain = timed(model, opt, batches, a.device, (lambda: None, lambda: None), a.steps)
    out["modes"]["none"] = summary(plain)
    debugger = PrecisionDebugger(config_path=cfg_path)

    def end():
        debugger.stop()
        debugger.step()

    t0 = time.perf_counter()
    times = timed(model, opt, batches, a.device, (debugger.start, end), a.steps)
    r = summary(times)
    r["seconds"] = time.perf_counter() - t0
    r["dump_bytes"], r["dump_files"] = dump_size(cfg["dump_path"])
    r["ratio_to_none"] = r["median_ms"] / out["modes"]["none"]["median_ms"]
    name = "msprobe_async" if a.async_dump else "msprobe"
    out["modes"][name] = r
    for m in ("none", name):
        print(f"  {m:19s} median {out['modes'][m]['median_ms']:8.2f} ms/step", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--pkg")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--mode", default="lockstep", choices=["lockstep", "msprobe"])
    ap.add_argument("--async-dump", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
           "mode": a.mode, "modes": {}}
    try:
        (run_msprobe if a.mode == "msprobe" else run_lockstep)(a, out)
    except Exception:
        out["error"] = traceback.format_exc()
        print(out["error"], flush=True)
    name = "gpt2_cost.json" if a.mode == "lockstep" else (
        "gpt2_msprobe_async.json" if a.async_dump else "gpt2_msprobe.json")
    with open(os.path.join(a.out, name), "w") as f:
        json.dump(out, f, indent=1)
    return 1 if "error" in out else 0


if __name__ == "__main__":
    sys.exit(main())
