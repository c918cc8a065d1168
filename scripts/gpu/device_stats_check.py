"""gpukit: the probe's CUDA statistics kernel (src/torch/cuda/device_stats.cu)
against float64 references computed by torch on the same GPU.

For float32, float16 and bfloat16 tensors of many sizes (1 element to 2^24
+ 3, around the vector width and the one-block limit), at aligned and
misaligned addresses (a slice from element 1), dense and transposed, with
NaN, +-inf, both infinities, all equal, tiny and huge values:

  max, min   equal to x.double().max()/min() (NaN where x has a NaN)
  sum        |kernel - ref| <= 2 n eps64 sum|x|  (double accumulation in
             another order: n additions, each off by eps64/2 of a partial
             sum bounded by sum|x|; the reference's own error fits in it)
  sum of sq  the same bound with sum x^2
  bits       two launches on the same tensor give the same bits

and the CRC-32 kernel (src/torch/cuda/device_crc.cu) against zlib.crc32 of
the tensor's bytes on the host, for every dtype and lengths from 1 byte to
over 1 GB, dense, sliced and transposed.

    python3 device_stats_check.py --lib build/lib/liblockstep_py.so

Prints one line per failure and a total; exit 1 on any failure.
"""
import argparse
import math
import sys
import zlib

import torch

EPS64 = 2.0 ** -52


def cases(device):
    g = torch.Generator(device="cpu").manual_seed(3)
    sizes = [1, 2, 3, 7, 8, 9, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097,
             8191, 8192, 8193, 65537, 1 << 20, (1 << 24) + 3]
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for n in sizes:
            x = torch.randn(n + 1, generator=g) * 3 + 0.25
            yield f"{dtype} n={n} aligned", x[:n].to(dtype).to(device)
            yield f"{dtype} n={n} from element 1", x.to(dtype).to(device)[1:]
        base = torch.randn(300, 257, generator=g)
        yield f"{dtype} transposed", base.to(dtype).to(device).t()
        yield f"{dtype} every other column", base.to(dtype).to(device)[:, ::2]
        for name, fill in (("nan", float("nan")), ("+inf", float("inf")),
                           ("-inf", float("-inf"))):
            for at in (0, 5000, 99999):
                x = torch.randn(100000, generator=g)
                x[at] = fill
                yield f"{dtype} {name} at {at}", x.to(dtype).to(device)
        x = torch.randn(10000, generator=g)
        x[3], x[9000] = float("inf"), float("-inf")
        yield f"{dtype} +inf and -inf", x.to(dtype).to(device)
        yield f"{dtype} all equal", torch.full((12345,), -2.5, dtype=dtype, device=device)
        yield f"{dtype} all zero", torch.zeros(777, dtype=dtype, device=device)
        tiny = torch.finfo(dtype).tiny
        yield f"{dtype} subnormal and tiny", (torch.rand(5000, generator=g) * tiny).to(dtype).to(device)
        big = torch.finfo(dtype).max
        yield f"{dtype} near max", (torch.rand(5000, generator=g) * big * 0.9).to(dtype).to(device)
        x = torch.randn(1 << 20, generator=g)
        yield f"{dtype} cancelling", torch.cat([x, -x]).to(dtype).to(device)
    yield "float32 1e8 elements", torch.randn(100_000_000, device=device)


def check(name, x, got, again, failures):
    ref = x.double()
    finite = torch.isfinite(ref)
    has_nan = bool(torch.isnan(ref).any())
    want_max = float("nan") if has_nan else float(ref.max())
    want_min = float("nan") if has_nan else float(ref.min())
    mx, mn, s, sq = (float(v) for v in got)
    problems = []

    def same(u, v):
        return (u == v) or (math.isnan(u) and math.isnan(v))

    if not same(mx, want_max):
        problems.append(f"max {mx!r} vs {want_max!r}")
    if not same(mn, want_min):
        problems.append(f"min {mn!r} vs {want_min!r}")
    n = x.numel()
    if bool(finite.all()):
        want_s = float(ref.sum())
        want_sq = float((ref * ref).sum())
        bound_s = 2 * n * EPS64 * float(ref.abs().sum())
        bound_sq = 2 * n * EPS64 * want_sq
        if abs(s - want_s) > bound_s:
            problems.append(f"sum {s!r} vs {want_s!r} (bound {bound_s:.3g})")
        if abs(sq - want_sq) > bound_sq:
            problems.append(f"sum of squares {sq!r} vs {want_sq!r} (bound {bound_sq:.3g})")
    else:
        want_s = float(ref.sum())  # nan or +-inf, as IEEE sums give
        if not same(s, want_s):
            problems.append(f"sum {s!r} vs {want_s!r}")
        want_sq = float((ref * ref).sum())
        if not same(sq, want_sq):
            problems.append(f"sum of squares {sq!r} vs {want_sq!r}")
    if not torch.equal(got.view(torch.int64), again.view(torch.int64)):
        problems.append(f"two launches differ: {got.tolist()} vs {again.tolist()}")
    if problems:
        failures.append(name)
        print(f"FAIL {name}: " + "; ".join(problems), flush=True)


def host_crc(x):
    return zlib.crc32(x.contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())


def crc_cases(device, total, failures):
    g = torch.Generator().manual_seed(9)
    tensors = []
    for n in [1, 2, 3, 5, 8, 15, 16, 17, 63, 64, 65, 255, 256, 4095, 4096, 4097,
              65535, 65537, 1 << 20, (1 << 22) + 7]:
        tensors.append((f"uint8 n={n}", torch.randint(0, 256, (n,), generator=g, dtype=torch.uint8)))
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64,
                  torch.int64, torch.int32, torch.bool):
        base = (torch.randn(333, 77, generator=g) * 100)
        base = base > 0 if dtype == torch.bool else base.to(dtype)
        tensors.append((f"{dtype} 333x77", base))
        tensors.append((f"{dtype} transposed", base.t()))
        tensors.append((f"{dtype} rows 1..", base[1:]))
        tensors.append((f"{dtype} 0-dim", base[3, 4].clone()))
    tensors.append(("float32 2^28+5 elements", torch.randn((1 << 28) + 5, generator=g)))
    for name, x in tensors:
        total += 1
        try:
            xd = x.to(device)  # keeps the strides of a transposed tensor
            got = torch.ops.lockstep.device_crc(xd)
            want = host_crc(xd)
            again = torch.ops.lockstep.device_crc(xd)
            if got != want or again != got:
                failures.append("crc " + name)
                print(f"FAIL crc {name}: {got:08x} (again {again:08x}) vs zlib {want:08x}", flush=True)
        except Exception as e:  # noqa: BLE001 (reported and counted)
            failures.append("crc " + name)
            print(f"FAIL crc {name}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
    return total, failures


def probe_cases(a, total, failures):
    """The probe in md5 mode on torch.stack of 150 small tensors of mixed
    dtypes (batched, several launches) and two large ones: each input's md5
    against zlib and its Max/Min against torch."""
    import json
    import os
    import tempfile
    sys.path.insert(0, a.pkg)
    import lockstep_probe
    g = torch.Generator().manual_seed(11)
    small = []
    for i in range(150):
        dtype = (torch.float32, torch.bfloat16, torch.float16)[i % 3]
        small.append((torch.randn(1 + (i * 37) % 700, generator=g) * (i + 1)).to(dtype).to(a.device))
    groups = [small, [torch.randn(3_000_000, generator=g).to(a.device),
                      torch.randn(5, generator=g).to(a.device)]]
    with tempfile.TemporaryDirectory() as tmp:
        p = lockstep_probe.Probe({"task": "statistics", "level": "L1", "dump_path": tmp,
                                  "statistics": {"summary_mode": "md5"}}, lib=a.lib)
        p.start()
        for grp in groups:
            for dtype in (torch.float32, torch.bfloat16, torch.float16):
                torch.cat([t for t in grp if t.dtype == dtype] or [grp[0]])
        p.step()
        p.stop()
        with open(os.path.join(tmp, "step0", "rank0", "dump.json")) as f:
            data = json.load(f)["data"]
    seen = 0
    for name, e in data.items():
        if not name.startswith("Torch.cat."):
            continue
        grp_i, dt_i = divmod(int(name.split(".")[2]), 3)
        dtype = (torch.float32, torch.bfloat16, torch.float16)[dt_i]
        tensors = [t for t in groups[grp_i] if t.dtype == dtype] or [groups[grp_i][0]]
        for t, d in zip(tensors, e["input_args"][0]):
            total += 1
            seen += 1
            want = f"{host_crc(t):08x}"
            ok = d.get("md5") == want and d.get("Max") == float(t.double().max()) \
                and d.get("Min") == float(t.double().min())
            if not ok:
                failures.append(f"probe {name}")
                print(f"FAIL probe {name}: md5 {d.get('md5')} vs {want}, Max {d.get('Max')} "
                      f"vs {float(t.double().max())}", flush=True)
    if seen < 150:
        failures.append("probe: too few tensors in the dump")
        print(f"FAIL probe: {seen} tensors in the dump, 152 wanted", flush=True)
    return total, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--pkg", help="folder holding lockstep_probe: also check "
                    "the probe's batched small tensors in an md5 dump")
    a = ap.parse_args()
    torch.ops.load_library(a.lib)
    failures = []
    total = 0
    for name, x in cases(a.device):
        total += 1
        try:
            got = torch.ops.lockstep.device_stats(x)
            again = torch.ops.lockstep.device_stats(x)
            check(name, x, got, again, failures)
        except Exception as e:  # noqa: BLE001 (reported and counted)
            failures.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
    total, failures = crc_cases(a.device, total, failures)
    if a.pkg:
        total, failures = probe_cases(a, total, failures)
    # Kernel timing against the bandwidth of a copy of the same tensor.
    if a.device == "cuda":
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(1 << 27, device=a.device).to(dtype)
            y = torch.empty_like(x)
            for f, label in ((lambda: torch.ops.lockstep.device_stats(x), "stats"),
                             (lambda: torch.ops.lockstep.device_crc(x), "crc"),
                             (lambda: y.copy_(x), "copy")):
                f()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(20):
                    f()
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end) / 20
                moved = x.nbytes * (2 if label == "copy" else 1)
                print(f"  {label} {dtype} {x.numel()} elements: {ms:.3f} ms, "
                      f"{moved / ms / 1e6:.0f} GB/s (bytes read"
                      f"{' and written' if label == 'copy' else ''})", flush=True)
    print(f"device_stats_check: {total - len(failures)} of {total} passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
