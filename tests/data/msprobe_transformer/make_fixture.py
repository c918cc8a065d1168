"""Regenerates the msprobe tensor dumps of this folder (see README.md).

Runs msprobe's own PyTorch dumper (PrecisionDebugger, task "tensor") on one
training step (forward + backward) of a small copy of the TinyTransformer of
examples/python/train_transformer.py, once in fp32 ("clean") and once with a
silent bfloat16 fault in one attention-score matmul ("fault"), then rewrites
the machine's absolute paths in the JSON files to neutral ones.

    /usr/bin/python3 tests/data/msprobe_transformer/make_fixture.py \
        --msprobe /path/to/msprobe/python [--out DIR] [--level L1]

--msprobe is the `python/` folder of an msprobe source checkout
(Ascend/msprobe); nothing of it is copied here. With torch < 2 the script
adds the two shims msprobe needs (Tensor.untyped_storage, and stub modules
for einops/matplotlib when they are not installed; msprobe imports them for
features not used here).
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

VOCAB, D, HEADS, SEQ, BATCH = 50, 16, 2, 8, 2
SEED = 1
PROC = re.compile(r"proc[0-9]+")
PROC_B = re.compile(rb"proc[0-9]+")


# ---------------------------------------------------------------- the run
def run_variant(variant, dump_path, level, risk_level, blocks, msprobe_python):
    """One process, one dump: variant is "clean" or "fault"."""
    import torch
    if not hasattr(torch.Tensor, "untyped_storage"):  # torch 1.x shim
        torch.Tensor.untyped_storage = lambda t: t.storage().untyped()
    import torch.nn as nn
    import torch.nn.functional as F

    fault = {"on": False}
    if variant == "fault":
        # Installed before msprobe wraps the Tensor API, so msprobe's wrapper
        # of Tensor.__matmul__ calls this function: the dumped entry records
        # the fp32 inputs and an fp32 output that went through bfloat16. The
        # calls inside are nested in a dumped call, which msprobe does not
        # dump. The rounding is straight-through (the gradient passes it
        # unchanged), and the result comes out of _unsafe_view of a [B, M, N]
        # product as the real 4-d matmul's does, so the autograd node msprobe
        # hooks for the backward entry is the same kind (UnsafeViewBackward0)
        # and the backward entry has the same layout as in the clean dump.
        orig_matmul = torch.Tensor.__matmul__

        def matmul_maybe_bf16(self, other):
            if not fault["on"]:
                return orig_matmul(self, other)
            out_shape = self.shape[:-1] + other.shape[-1:]
            prod = torch.bmm(self.reshape(-1, *self.shape[-2:]),
                             other.reshape(-1, *other.shape[-2:]))
            prod = prod + (prod.bfloat16().float() - prod).detach()
            return torch.ops.aten._unsafe_view(prod, out_shape)

        torch.Tensor.__matmul__ = matmul_maybe_bf16

    class Attention(nn.Module):
        def __init__(self, d, heads, faulty=False):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.faulty = faulty

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            fault["on"] = self.faulty
            try:
                scores = q @ k.transpose(-2, -1)
            finally:
                fault["on"] = False
            scores = scores / math.sqrt(d // self.heads)
            mask = torch.ones(t, t, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self, d, heads, faulty=False):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention(d, heads, faulty)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                     nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class TinyTransformer(nn.Module):
        def __init__(self, vocab, d, heads, blocks, seq, fault_block=-1):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList(
                [Block(d, heads, faulty=(i == fault_block))
                 for i in range(blocks)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            pos = torch.arange(idx.shape[1])
            x = self.tok(idx) + self.pos(pos)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    # the fault is in the attention scores of the last block
    model = TinyTransformer(VOCAB, D, HEADS, blocks, SEQ,
                            fault_block=blocks - 1 if variant == "fault"
                            else -1)
    g = torch.Generator().manual_seed(SEED)
    data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g)

    if msprobe_python:
        sys.path.insert(0, msprobe_python)
    from msprobe.pytorch import PrecisionDebugger

    cfg = {"task": "tensor", "dump_path": dump_path, "rank": [], "step": [],
           "level": level, "async_dump": False, "risk_level": risk_level,
           "tensor": {"scope": [], "list": [], "data_mode": ["all"]}}
    cfg_path = os.path.join(os.path.dirname(dump_path), "config.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    debugger = PrecisionDebugger(config_path=cfg_path)

    debugger.start(model=model)
    inputs = data[:, :-1]
    targets = data[..., 1:]
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    debugger.stop()
    debugger.step()
    print(f"{variant}: loss {loss.item():.9f}")


# ---------------------------------------------------------------- driver
def make_shims(tmp):
    """Stub modules for msprobe imports that are unused here."""
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(%r) else 1)"
    shim = os.path.join(tmp, "shims")
    os.makedirs(shim)
    if subprocess.call([sys.executable, "-c", code % "einops"]) != 0:
        with open(os.path.join(shim, "einops.py"), "w") as f:
            f.write("def rearrange(*a, **k):\n"
                    "    raise NotImplementedError('einops stub')\n")
    if subprocess.call([sys.executable, "-c", code % "matplotlib"]) != 0:
        os.makedirs(os.path.join(shim, "matplotlib"))
        for name, text in (("__init__", ""),
                           ("pyplot", "Figure = object\nRectangle = object\n"),
                           ("patches", "Rectangle = object\n")):
            with open(os.path.join(shim, "matplotlib", name + ".py"), "w") as f:
                f.write(text)
    return shim


def neutralize(root, replacements):
    """Rewrites absolute paths inside every JSON file under root."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".json"):
                continue
            path = os.path.join(dirpath, name)
            with open(path) as f:
                text = f.read()
            for old, new in replacements:
                text = text.replace(old, new)
            with open(path, "w") as f:
                f.write(text)


def same_tree(a, b):
    """True when the two dump trees hold byte-identical files once the
    process id msprobe puts in folder names and in dump_data_dir
    (proc<pid>) is masked."""
    def files(root):
        out = {}
        for dirpath, _, names in os.walk(root):
            for n in names:
                path = os.path.join(dirpath, n)
                out[PROC.sub("proc*", os.path.relpath(path, root))] = path
        return out

    def content(path):
        with open(path, "rb") as f:
            data = f.read()
        return PROC_B.sub(b"proc*", data) if path.endswith(".json") else data

    fa, fb = files(a), files(b)
    return fa.keys() == fb.keys() and all(
        content(fa[k]) == content(fb[k]) for k in fa)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--msprobe", default="",
                    help="the python/ folder of an msprobe source checkout "
                    "(default: the installed mindstudio-probe)")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--level", default="L1", choices=["L1", "mix"])
    ap.add_argument("--risk-level", default="ALL",
                    choices=["ALL", "FOCUS", "CORE"],
                    help="msprobe's risk_level: ALL dumps every wrapped API "
                    "(msprobe's default FOCUS drops view/transpose/split/...)")
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--run", help=argparse.SUPPRESS)  # internal: one variant
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    a = ap.parse_args()
    msprobe_python = os.path.abspath(a.msprobe) if a.msprobe else ""
    if a.run:
        run_variant(a.run, a.dump, a.level, a.risk_level, a.blocks,
                    msprobe_python)
        return

    tmp = tempfile.mkdtemp(prefix="msprobe_fixture_")
    try:
        shim = make_shims(tmp)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [p for p in [shim, msprobe_python, env.get("PYTHONPATH")] if p])
        for variant in ("clean", "clean2", "fault"):
            work = os.path.join(tmp, variant)
            os.makedirs(work)
            subprocess.check_call(
                [sys.executable, os.path.abspath(__file__), "--msprobe",
                 msprobe_python, "--level", a.level,
                 "--risk-level", a.risk_level, "--blocks", str(a.blocks),
                 "--run", variant.rstrip("2"),
                 "--dump", os.path.join(work, "dump")], env=env, cwd=work)
        for variant in ("clean", "clean2", "fault"):
            work = os.path.join(tmp, variant)
            neutralize(work, [
                (work, "/data/run/" + variant.rstrip("2")),
                (os.path.abspath(__file__), "/data/run/make_fixture.py"),
            ] + ([(msprobe_python, "/opt/msprobe/python")]
                 if msprobe_python else []))
        identical = same_tree(os.path.join(tmp, "clean", "dump"),
                              os.path.join(tmp, "clean2", "dump"))
        print("clean2 byte-identical to clean (JSON and .pt):", identical)
        for variant in ("clean", "fault") + (() if identical else ("clean2",)):
            dst = os.path.join(a.out, variant)
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(os.path.join(tmp, variant, "dump"), dst)
            shutil.copy(os.path.join(tmp, variant, "config.json"),
                        os.path.join(a.out, variant + "_config.json"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
