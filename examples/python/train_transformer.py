"""Trains a small transformer under lockstep's probe, as a PyTorch user would.

    /usr/bin/python3 examples/python/train_transformer.py --level mix --dump dump_ref
    /usr/bin/python3 examples/python/train_transformer.py --level mix --dump dump_bf16 --fault attn-bf16
    build/bin/lockstep compare dump_bf16 dump_ref -o out

--level L0 dumps the modules (Module.<path>.<Class>.forward/backward.<n>)
and the parameter gradients, L1 every operator, mix both (with construct.json
naming each operator's module). Every dump has stack.json: the Python lines
of each call. --fault attn-bf16 computes the attention scores of block 1 in
bfloat16 (a mixed-precision bug); the compare names that softmax's inputs as
the first divergence.
"""
import argparse
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import lockstep_probe  # noqa: E402


class Attention(nn.Module):
    def __init__(self, d, heads, low_precision=False):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.low_precision = low_precision

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        if self.low_precision:
            q, k = q.to(torch.bfloat16), k.to(torch.bfloat16)
        scores = (q @ k.transpose(-2, -1)).float() / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, low_precision=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads, low_precision)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, blocks=2, seq=16,
                 fault_block=-1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(
            [Block(d, heads, low_precision=(i == fault_block))
             for i in range(blocks)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def train(dump, level="mix", task="statistics", steps=2, fault=None, seed=1,
          on_backward=None, probe_kwargs=None):
    """Trains `steps` steps, dumping into `dump`; returns the losses.
    on_backward(model, step): called after each backward."""
    lockstep_probe.seed_all(seed)
    torch.set_num_threads(1)
    model = TinyTransformer(fault_block=1 if fault == "attn-bf16" else -1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(seed)
    data = torch.randint(0, 64, (steps, 4, 17), generator=g)
    losses = []
    probe = lockstep_probe.Probe(task=task, level=level, dump_path=dump,
                                 model=model, **(probe_kwargs or {}))
    with probe:
        for s in range(steps):
            opt.zero_grad()
            logits = model(data[s, :, :-1])
            loss = F.cross_entropy(logits.reshape(-1, 64),
                                   data[s, :, 1:].reshape(-1))
            probe.save("loss", loss)  # any tensor, compared by name
            loss.backward()
            if on_backward is not None:
                on_backward(model, s)
            opt.step()
            losses.append(loss.item())
            probe.step()
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True, help="dump directory (new)")
    ap.add_argument("--level", default="mix", choices=["L0", "L1", "mix"])
    ap.add_argument("--task", default="statistics",
                    choices=["statistics", "md5", "tensor"])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--fault", choices=["attn-bf16"],
                    help="run with a mixed-precision bug")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    losses = train(a.dump, a.level, a.task, a.steps, a.fault, a.seed)
    print("losses:", " ".join(f"{x:.6f}" for x in losses))


if __name__ == "__main__":
    main()
