#!/usr/bin/python3
"""Writes the checkpoint test files for tests/format/checkpoint_test.cc,
tests/compare/checkpoint_compare_test.cc, tests/cli/checkpoint_cli_test.cc
and the example in docs/compare.md.

Run with Debian's torch (1.13): /usr/bin/python3 tests/data/checkpoint/make_checkpoints.py
- a.pt: a small model's state_dict (tied weights: head.weight is
  embed.weight; two buffers that are views of one storage, one with an
  offset and strides; fp16 and bf16 parameters; BatchNorm's int64
  num_batches_tracked).
- b.pt: the same model with fc.weight changed a little, fc.bias of another
  shape, half_p removed and new_p added (the target of the examples).
- nested.pt: {"model": a's state_dict, "optimizer": Adam's state_dict after
  one step, "epoch": 3, "lr": 0.001, "tag": "run-a", "best": None,
  "flag": True}.
For each, <name>.tsv lists what a reader must return, one line per name in
flattened order: name, "tensor" or "value", dtype (torch's name or Python's
type), shape (comma-separated), and the values (tensor elements in C order
as Python float reprs; a value as Python's repr).
"""
import os

import torch
from torch import nn

OUT = os.path.dirname(os.path.abspath(__file__))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight  # tied
        self.half_p = nn.Parameter(torch.randn(3).half())
        self.bf_p = nn.Parameter(torch.randn(2, 3).bfloat16())
        base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        self.register_buffer("view_rows", base[1:, ::2])  # offset 6, (6, 2)
        self.register_buffer("view_t", base.t())  # same storage


def flatten(obj, prefix, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)) and any(
            isinstance(x, (dict, list, tuple, torch.Tensor)) for x in obj):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out.append((prefix, obj))


def write_tsv(name, obj):
    items = []
    flatten(obj, "", items)
    with open(os.path.join(OUT, name + ".tsv"), "w") as f:
        for key, v in items:
            if isinstance(v, torch.Tensor):
                vals = ",".join(repr(float(x)) for x in
                                v.detach().float().reshape(-1).tolist())
                shape = ",".join(str(d) for d in v.shape)
                f.write(f"{key}\ttensor\t{v.dtype}\t{shape}\t{vals}\n")
            else:
                kind = type(v).__name__  # a tuple reads as a list
                r = repr(list(v)) if isinstance(v, tuple) else repr(v)
                f.write(f"{key}\tvalue\t{kind}\t\t{r}\n")


def save(name, obj):
    torch.save(obj, os.path.join(OUT, name + ".pt"))
    write_tsv(name, obj)


def main():
    torch.manual_seed(0)
    net = Net()
    a = net.state_dict()
    save("a", a)
    b = {k: v.clone() for k, v in a.items()}
    b["fc.weight"] = a["fc.weight"] + 0.05
    b["fc.bias"] = torch.zeros(5)
    del b["half_p"]
    b["new_p"] = torch.ones(2)
    save("b", b)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randint(0, 10, (5,))
    net.head(net.fc(net.embed(x))).float().sum().backward()
    opt.step()
    save("nested", {"model": a, "optimizer": opt.state_dict(), "epoch": 3,
                    "lr": 0.001, "tag": "run-a", "best": None, "flag": True})


if __name__ == "__main__":
    main()
