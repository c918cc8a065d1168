"""Checks a tensor-mode dump's backward entries against PyTorch's autograd.

For every forward entry F = f(x1..xn) with a backward entry B, the call is
rebuilt from the dumped inputs (tensors from their .pt/.npy files, other
arguments from dump.json) through torch.ops.aten, and
torch.autograd.grad(f's outputs, x_i, grad_outputs=B["input"]) must equal
B["output"] (its vector-Jacobian product), with None exactly where x_i needs
no gradient. Also: every forward entry whose outputs need a gradient and
reach the loss has a backward entry, and shapes line up.

Tolerance: |got - want| <= 1e-5 * max(|want|) + 1e-6 elementwise (both are
float32 on the same CPU kernels; sums of several nodes' gradients may be
added in another order).

check_dump(dir) returns a list of problems (empty: all good) and a count of
checked entries.
"""
import json
import os

import numpy as np
import torch

# Operators whose result cannot be rebuilt from their dumped inputs.
RANDOM = {"dropout", "native_dropout", "rand", "randn", "randint", "bernoulli_"}


# msprobe API names that are not the ATen operator's name.
ATEN = {"cross_entropy": "cross_entropy_loss"}


def _value(v, data_dir):
    if v is None:
        return None
    if isinstance(v, list):
        return [_value(x, data_dir) for x in v]
    if v.get("type") == "torch.Tensor":
        path = os.path.join(data_dir, v["data_name"])
        if path.endswith(".pt"):  # the probe's default: torch.save's format
            return torch.load(path, map_location="cpu", weights_only=True)
        arr = np.load(path)
        return torch.from_numpy(np.array(arr, copy=True, order="C"))  # keeps 0-d
    if v.get("type") == "torch.device":
        return torch.device(v["value"])
    if v.get("type") == "torch.dtype":  # "torch.bfloat16"
        return getattr(torch, v["value"].removeprefix("torch."))
    return v.get("value")


def _flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            out += _flat(y)
        return out
    return []


def _dumped_grads(slots, data_dir):
    """The tensor-input gradients of a backward entry, flattened (None kept)."""
    out = []
    for s in slots:
        if isinstance(s, list):
            out += [_value(x, data_dir) for x in s]
        else:
            out.append(_value(s, data_dir))
    return out


def _close(got, want):
    tol = 1e-5 * float(want.abs().max()) + 1e-6 if want.numel() else 0
    diff = (got.double() - want.double()).abs()
    if diff.numel() and float(diff.max()) > tol:
        i = int(diff.argmax())
        return (f"max diff {float(diff.max()):.3g} at flat index {i} "
                f"(got {float(got.flatten()[i]):.6g}, "
                f"want {float(want.flatten()[i]):.6g}, tol {tol:.3g})")
    return None


def _rebuild(api, fwd, data_dir):
    """Runs the call again on leaves; returns (leaves, outputs)."""
    args = [_value(a, data_dir) for a in fwd["input_args"]]
    leaves = []

    def leaf(t):
        if not isinstance(t, torch.Tensor):
            return t
        t = t.clone()
        if t.is_floating_point():
            t.requires_grad_(True)
        leaves.append(t)
        # In-place operators write into their first argument: give them a
        # non-leaf copy so the leaf's gradient is the call's.
        return t.clone() if api.endswith("_") and len(leaves) == 1 else t

    def walk(a):
        if isinstance(a, list) and any(isinstance(x, torch.Tensor) for x in a):
            return [leaf(x) for x in a]
        return leaf(a)

    args = [walk(a) for a in args]
    return leaves, _flat(_call(ATEN.get(api, api), args))


def _call(api, args):
    """Calls aten::api with the arguments as RecordFunction lists them (all
    positionally, keyword-only ones included), trying each overload."""
    packet = getattr(torch.ops.aten, api)
    errors = []
    for name in packet.overloads():
        schema = getattr(packet, name)._schema
        if len(schema.arguments) != len(args):
            continue
        pos = [a for s, a in zip(schema.arguments, args) if not s.kwarg_only]
        kw = {s.name: a for s, a in zip(schema.arguments, args) if s.kwarg_only}
        try:
            return getattr(packet, name)(*pos, **kw)
        except (RuntimeError, TypeError) as e:
            errors.append(f"{name}: {str(e).splitlines()[0][:120]}")
    raise RuntimeError(f"no overload of aten::{api} takes these arguments: {errors}")


def _check_entry(name, api, fwd, bwd, data_dir):
    grads_out = [_value(g, data_dir) for g in bwd["input"]]
    dumped_in = _dumped_grads(bwd["output"], data_dir)
    leaves, outs = _rebuild(api, fwd, data_dir)
    if len(outs) != len(grads_out):
        return [f"{name}: {len(grads_out)} output gradients for {len(outs)} outputs"]
    if len(leaves) != len(dumped_in):
        return [f"{name}: {len(dumped_in)} input gradients for {len(leaves)} tensor inputs"]
    problems = []
    for j, (o, g) in enumerate(zip(outs, grads_out)):
        if g is not None and tuple(g.shape) != tuple(o.shape):
            problems.append(f"{name}: input.{j} shape {tuple(g.shape)} vs output {tuple(o.shape)}")
    pairs = [(o, g) for o, g in zip(outs, grads_out) if g is not None and o.requires_grad]
    wanted = [t for t in leaves if t.requires_grad]
    want = [None] * len(leaves)
    if pairs and wanted:
        got = torch.autograd.grad([o for o, _ in pairs], wanted,
                                  [g.to(o.dtype) for o, g in pairs], allow_unused=True)
        it = iter(got)
        want = [next(it) if t.requires_grad else None for t in leaves]
    needs = [t.get("requires_grad", False) if isinstance(t, dict) else False
             for t in _flat_dicts(fwd["input_args"])]
    for i, (d, w) in enumerate(zip(dumped_in, want)):
        if d is None:
            if needs[i] and w is not None and float(w.abs().max()) > 0:
                problems.append(f"{name}: output.{i} is None, autograd gives a gradient")
            continue
        if not needs[i]:
            problems.append(f"{name}: output.{i} given for an input that needs no gradient")
            continue
        if w is None:
            w = torch.zeros_like(d)
        if tuple(d.shape) != tuple(w.shape):
            problems.append(f"{name}: output.{i} shape {tuple(d.shape)} vs {tuple(w.shape)}")
            continue
        bad = _close(d, w.to(d.dtype))
        if bad:
            problems.append(f"{name}: output.{i}: {bad}")
    return problems


def _flat_dicts(args):
    out = []
    for a in args:
        if isinstance(a, dict) and a.get("type") == "torch.Tensor":
            out.append(a)
        elif isinstance(a, list) and any(isinstance(x, dict) and x.get("type") == "torch.Tensor" for x in a):
            out += a
    return out


def _needs_backward(fwd):
    return any(isinstance(o, dict) and o.get("requires_grad")
               for o in _flat_dicts(fwd.get("output", [])))


def check_dump(dump_dir, expect_missing=()):
    """dump_dir: a step/rank dir of a tensor-mode L1 dump."""
    with open(os.path.join(dump_dir, "dump.json")) as f:
        data = json.load(f)["data"]
    data_dir = os.path.join(dump_dir, "dump_tensor_data")
    problems, checked = [], 0
    backward_began = False
    for name, fwd in data.items():
        # Forward entries after the backward began are the optimizer's (no
        # graph); only the forward pass's calls need backward entries.
        backward_began |= name.endswith(".backward")
        if not name.endswith(".forward") or backward_began:
            continue
        base = name[: -len(".forward")]
        api = base.split(".")[1]
        bwd = data.get(base + ".backward")
        if bwd is None:
            if _needs_backward(fwd) and base not in expect_missing:
                problems.append(f"{base}: no backward entry")
            continue
        if api in RANDOM and any(isinstance(a, dict) and a.get("value", 0) not in (0, 0.0, False)
                                 for a in fwd["input_args"][1:2]):
            continue
        try:
            problems += _check_entry(base, api, fwd, bwd, data_dir)
        except Exception as e:  # a call we cannot rebuild is a problem too
            problems.append(f"{base}: cannot rebuild: {type(e).__name__}: {e}")
        checked += 1
    return problems, checked
