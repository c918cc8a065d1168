"""gpukit: lockstep's Python probe on a CUDA device.

Trains a small GPT-like transformer (the structure of tests/python/tiny_gpt.py
at d=128, 4 heads, 2 blocks, seq 64, batch 8, AdamW) with the probe started,
on the device and once on the CPU, and writes each run's dump under --out:

  gpu_fp32          statistics, L1, fp32, TF32 off, 2 steps
  gpu_tf32          the same with TF32 on
  gpu_bf16          the same under autocast(bfloat16), TF32 off
  gpu_tensor_fp32   tensor task, L1, 1 step (forward and backward, no
                    optimizer step), TF32 off
  gpu_tensor_tf32   tensor task, L1, 1 step, TF32 on
  cpu_fp32          statistics, L1, fp32, on the CPU, 2 steps

then times a step on the device with no probe, the statistics probe and the
md5 probe. results.json (beside the dumps) holds each run's losses, its
outcome, the dump's size, and the timings.

    python3 gpu_probe_run.py --lib build/lib/liblockstep_py.so \
        --pkg python --out OUT [--device cuda] [--only NAME,...]

--device cpu runs every case on the CPU (a dry run of this script: the
TF32 and autocast settings are then the CPU's no-ops or CPU autocast).
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import traceback

import torch


def import_tiny_gpt(pkg):
    """tests/python/tiny_gpt.py: beside this script (make_kit.sh copies it
    there, so that a baseline's sources need not have a device-aware one),
    else in this script's source tree, else in the tree that holds --pkg."""
    global tiny_gpt
    here = os.path.dirname(os.path.abspath(__file__))
    for d in [here, os.path.join(here, "..", "..", "tests", "python"),
              os.path.join(os.path.dirname(os.path.abspath(pkg)), "tests",
                           "python")]:
        if os.path.exists(os.path.join(d, "tiny_gpt.py")):
            sys.path.insert(0, d)
            break
    import tiny_gpt as module
    tiny_gpt = module


def knobs():
    """The issue's transformer: 2 blocks, d=128, 4 heads, seq 64, batch 8."""
    return tiny_gpt.Knobs(d=128, heads=4, blocks=2, seq=64, batch=8)


def batch(k, step, device):
    idx, tgt = tiny_gpt.batch(k, step)
    return idx.to(device), tgt.to(device)


def set_tf32(on):
    """TF32 for cuBLAS matmuls and cuDNN; says which API set it."""
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):  # PyTorch 2.9+: the newer switch
        try:
            m.fp32_precision = "tf32" if on else "ieee"
            torch.backends.cudnn.conv.fp32_precision = "tf32" if on else "ieee"
            return "fp32_precision=" + m.fp32_precision
        except Exception as e:  # fall back to the older flags
            print(f"  fp32_precision refused ({e}); allow_tf32 instead")
    m.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    return f"allow_tf32={m.allow_tf32}"


def tf32_effect(device):
    """Max relative error of a 512x512 float32 matmul on `device` against
    float64: ~1e-6 in IEEE fp32, ~1e-3 with TF32."""
    g = torch.Generator().manual_seed(5)
    a = torch.randn(512, 512, generator=g, dtype=torch.float64)
    b = torch.randn(512, 512, generator=g, dtype=torch.float64)
    ref = a @ b
    got = (a.float().to(device) @ b.float().to(device)).double().cpu()
    return float(((got - ref).abs().max() / ref.abs().max()).item())


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def train(k, device, steps, probe=None, bf16=False, optimize=True):
    torch.manual_seed(0)
    model = tiny_gpt.TinyGPT(k).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ctx = (torch.autocast(device_type=device, dtype=torch.bfloat16)
           if bf16 else contextlib.nullcontext())
    if probe is not None:
        probe.start()
    losses = []
    for s in range(steps):
        opt.zero_grad()
        idx, tgt = batch(k, s, device)
        with ctx:
            loss = model(idx, tgt)
        loss.backward()
        losses.append(loss.item())
        if optimize:
            opt.step()
        if probe is not None:
            probe.step()
    if probe is not None:
        probe.stop()
    sync(device)
    return losses


def dir_size(path):
    total, files = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += 1
    return total, files


def timing(k, device, lib, steps, results):
    """Median step time (ms) with no probe, the statistics probe and the
    md5 probe, STEPS timed steps each after one untimed step, in the order
    none, statistics, md5, none (the two plain runs show the drift)."""
    torch.manual_seed(0)
    model = tiny_gpt.TinyGPT(k).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = [batch(k, s, device) for s in range(steps + 1)]

    def run(probe):
        return tiny_gpt.timed_steps(model, opt, batches, probe,
                                    sync=lambda: sync(device))[1:]

    run(None)  # warm-up: allocator, cuBLAS handles, kernels
    run(None)
    out = {}
    for name in ["none", "statistics", "md5", "none_again"]:
        if name.startswith("none"):
            times = run(None)
        else:
            d = tempfile.mkdtemp(prefix="gpukit_cost_")
            cfg = {"task": "statistics", "level": "L1",
                   "dump_path": os.path.join(d, "dump")}
            if name == "md5":
                cfg["statistics"] = {"summary_mode": "md5"}
            p = lockstep_probe.Probe(cfg, lib=lib)
            p.start()
            times = run(p)
            p.stop()
            shutil.rmtree(d, ignore_errors=True)
        out[name] = {"median_ms": statistics.median(times) * 1e3,
                     "min_ms": min(times) * 1e3, "max_ms": max(times) * 1e3,
                     "steps": len(times)}
        print(f"  {name:11s} median {out[name]['median_ms']:8.2f} ms/step "
              f"(min {out[name]['min_ms']:.2f}, max {out[name]['max_ms']:.2f},"
              f" {len(times)} steps)", flush=True)
    base = out["none"]["median_ms"]
    for name in out:
        out[name]["ratio_to_none"] = out[name]["median_ms"] / base
    results["timing"] = out


def main():
    global lockstep_probe
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--pkg", required=True, help="folder holding lockstep_probe")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--timing-steps", type=int, default=10)
    ap.add_argument("--tensor-batch", type=int, default=8)
    a = ap.parse_args()
    sys.path.insert(0, a.pkg)
    import lockstep_probe  # noqa: F811
    import_tiny_gpt(a.pkg)

    dev = a.device
    os.makedirs(a.out, exist_ok=True)
    k = knobs()
    results = {"torch": torch.__version__, "cuda": torch.version.cuda,
               "device": (torch.cuda.get_device_name(0) if dev == "cuda"
                          else "cpu"),
               "model": {"d": k.d, "heads": k.heads, "blocks": k.blocks,
                         "seq": k.seq, "batch": k.batch, "vocab": k.vocab},
               "runs": {}}
    cuda = dev == "cuda"
    # name: (device, task, steps, tf32, bf16)
    cases = [
        ("gpu_fp32", dev, "statistics", 2, False, False),
        ("gpu_tf32", dev, "statistics", 2, True, False),
        ("gpu_bf16", dev, "statistics", 2, False, True),
        ("gpu_tensor_fp32", dev, "tensor", 1, False, False),
        ("gpu_tensor_tf32", dev, "tensor", 1, True, False),
        ("cpu_fp32", "cpu", "statistics", 2, False, False),
    ]
    only = set(filter(None, a.only.split(",")))
    results_path = os.path.join(
        a.out, "results_" + "_".join(sorted(only)) + ".json" if only
        else "results.json")
    for name, device, task, steps, tf32, bf16 in cases:
        if only and name not in only:
            continue
        r = {"device": device, "task": task, "steps": steps, "tf32": tf32,
             "autocast_bf16": bf16}
        t0 = time.perf_counter()
        try:
            if cuda:
                r["tf32_api"] = set_tf32(tf32)
                if device == "cuda":
                    r["matmul_rel_err_vs_fp64"] = tf32_effect(device)
            kk = knobs()
            optimize = True
            if task == "tensor":
                # Forward and backward only: the optimizer's ops (the
                # parameters, moments and gradients again) would be most
                # of the dump's size and add nothing to the replay.
                kk.batch = a.tensor_batch
                r["batch"] = kk.batch
                optimize = False
            r["optimizer_step"] = optimize
            dump = os.path.join(a.out, name)
            shutil.rmtree(dump, ignore_errors=True)
            probe = lockstep_probe.Probe({"task": task, "level": "L1",
                                          "dump_path": dump}, lib=a.lib)
            r["losses"] = train(kk, device, steps, probe=probe, bf16=bf16,
                               optimize=optimize)
            r["dump_bytes"], r["dump_files"] = dir_size(dump)
            # A dump.json with entries for every step.
            entries = []
            for st in range(steps):
                with open(os.path.join(dump, f"step{st}", "rank0",
                                       "dump.json")) as f:
                    entries.append(len(json.load(f)["data"]))
            r["entries"] = entries
            r["ok"] = all(n > 0 for n in entries)
        except Exception:
            r["ok"] = False
            r["error"] = traceback.format_exc()
            print(r["error"], flush=True)
        r["seconds"] = time.perf_counter() - t0
        results["runs"][name] = r
        print(f"{name}: ok={r['ok']} losses={r.get('losses')} "
              f"entries={r.get('entries')} "
              f"dump={r.get('dump_bytes', 0) / 1e6:.1f} MB in "
              f"{r.get('dump_files', 0)} files, {r['seconds']:.1f} s"
              + (f", matmul rel err {r['matmul_rel_err_vs_fp64']:.2e}"
                 if "matmul_rel_err_vs_fp64" in r else ""), flush=True)
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)
    if not only or "timing" in only:
        try:
            if cuda:
                set_tf32(False)
            print(f"timing on {dev} (fp32, TF32 off):", flush=True)
            timing(k, dev, a.lib, a.timing_steps, results)
        except Exception:
            results["timing_error"] = traceback.format_exc()
            print(results["timing_error"], flush=True)
    with open(results_path, "w") as f:
        json.dump(results, f, indent=1)
    ok = all(r["ok"] for r in results["runs"].values())
    print("ALL RUNS OK" if ok else "SOME RUNS FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
