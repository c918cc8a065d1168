"""The probe loaded into Debian's python3-torch dumps a Python training
loop; run by ctest as `/usr/bin/python3 tests/python/probe_test.py BUILD_DIR`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

BUILD = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import lockstep_probe  # noqa: E402


def train(dump, steps=2, fault=False, dumped=True, task="statistics",
          tensor_format=None, write_behind=True, **section):
    torch.manual_seed(0)
    w1 = torch.randn(16, 8, requires_grad=True)
    w2 = torch.randn(4, 16, requires_grad=True)
    opt = torch.optim.SGD([w1, w2], lr=0.1)
    x = torch.randn(32, 8)
    cfg = {"task": task, "level": "L1", "dump_path": dump}
    lib = os.path.join(BUILD, "lib", "liblockstep_py.so")
    with lockstep_probe.Probe(cfg, lib=lib, tensor_format=tensor_format,
                              write_behind=write_behind, **section) as p:
        for step in range(steps):
            opt.zero_grad()
            h = F.relu(F.linear(x, w1))
            if fault:
                h = h * (1 + 1e-3)
            else:
                h = h * 1.0
            loss = F.linear(h, w2).cos().sum()
            loss.backward()
            opt.step()
            assert (p.entries() > 0) == dumped
            p.step()
            if not write_behind and dumped:
                # step() returned once the step's dump.json was on disk.
                assert os.path.isfile(os.path.join(
                    dump, f"step{step}", "rank0", "dump.json")), step


def load(dump, step):
    with open(os.path.join(dump, f"step{step}", "rank0", "dump.json")) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as tmp:
    ref, tgt = os.path.join(tmp, "ref"), os.path.join(tmp, "tgt")
    train(ref)
    train(tgt, fault=True)
    d = load(ref, 1)
    names = list(d["data"])
    for want in ["Functional.linear.0.forward", "Functional.relu.0.forward",
                 "Functional.linear.1.forward", "Torch.cos.0.forward",
                 "Torch.cos.0.backward", "Functional.linear.0.backward"]:
        assert want in names, (want, names)
    assert names.index("Torch.cos.0.forward") < names.index("Torch.cos.0.backward")
    # dump.json written behind the training (the default) or before step()
    # returns: the same dump.
    sync = os.path.join(tmp, "sync")
    train(sync, write_behind=False)
    for step in (0, 1):
        assert load(sync, step) == load(ref, step), step
    # A probe never stopped: the interpreter's exit writes its steps.
    unstopped = os.path.join(tmp, "unstopped")
    script = (
        "import sys, torch; sys.path.insert(0, sys.argv[1]); "
        "import lockstep_probe; "
        "p = lockstep_probe.Probe(dump_path=sys.argv[2], lib=sys.argv[3]); "
        "p.start(); w = torch.randn(4, 4, requires_grad=True)\n"
        "for _ in range(2):\n"
        "    (w @ w).sum().backward(); p.step()\n")
    r = subprocess.run([sys.executable, "-c", script,
                        os.path.join(os.path.dirname(__file__), "..", "..",
                                     "python"), unstopped,
                        os.path.join(BUILD, "lib", "liblockstep_py.so")],
                       capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout, r.stderr)
    for step in (0, 1):
        assert "Torch.matmul.0.forward" in load(unstopped, step)["data"], step
    assert not os.path.exists(os.path.join(unstopped, "step2")), \
        os.listdir(unstopped)
    # The statistics are those of the tensor torch computed.
    out = d["data"]["Functional.linear.0.forward"]["output"][0]
    assert out["shape"] == [32, 16] and out["dtype"] == "torch.float32"
    # Errors surface as RuntimeError with lockstep's message.
    try:
        lockstep_probe.Probe({"task": "nope", "dump_path": tmp}).start()
        raise AssertionError("bad task accepted")
    except RuntimeError as e:
        assert "unknown task" in str(e), e
    # An unwritable dump path does not stop the training loop: start() warns
    # (UserWarning), step() and stop() do nothing.
    blocker = os.path.join(tmp, "a_file")
    with open(blocker, "w") as f:
        f.write("x")
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(os.path.join(blocker, "dump"), steps=2, dumped=False)
    msgs = [str(w.message) for w in caught]
    assert any("training continues" in m and blocker in m for m in msgs), msgs
    # A step's folder replaced, while the step runs, by a link to nowhere:
    # its dump.json cannot be created (ENOENT, a NotFound status). step()
    # warns, and the loop goes on, in either mode.
    for behind in (False, True):
        gone = os.path.join(tmp, f"gone_{behind}")
        lib = os.path.join(BUILD, "lib", "liblockstep_py.so")
        w = torch.randn(4, 4, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lockstep_probe.Probe(dump_path=gone, lib=lib,
                                      write_behind=behind) as p:
                for step in range(3):
                    (w @ w).sum().backward()
                    if step == 1:
                        step_dir = os.path.join(gone, "step1")
                        shutil.rmtree(step_dir, ignore_errors=True)
                        os.symlink(os.path.join(tmp, "nowhere"), step_dir)
                    p.step()
        msgs = [str(m.message) for m in caught]
        lost = "step1"
        assert any("training continues" in m and lost in m
                   for m in msgs), (behind, msgs)
    # lockstep compare finds the first divergent operator of the Python runs.
    summary = os.path.join(tmp, "cmp")
    r = subprocess.run([os.path.join(BUILD, "bin", "lockstep"), "compare", tgt, ref,
                        "-o", summary, "-q"], capture_output=True, text=True)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    with open(os.path.join(summary, "summary.json")) as f:
        s = json.load(f)
    # The fault changes mul's scalar argument (1.001 vs 1.0): the probe
    # records the Python number (not ATen's wrapped 0-dim tensor), and a
    # changed argument is a cause.
    first = s["first_divergence"]
    assert first["entry"] == "Torch.mul.0.forward", first
    assert first["reason"] == "argument", first
    assert first["detail"] == "argument 1: 1.001 vs 1.0", first
    # (torch 2.x's zero_grad sets the gradients to None: no zeros/zero_
    # entries, 94 rows; 1.13 has 117.)
    assert s["error"] > 0 and s["rows"] > 80, s
    # Tensor mode: one .pt file per tensor by default (torch.save's bytes,
    # which msprobe loads with torch.load), .npy files on request, or one
    # dump_tensor_data.pack per step, read by compare as the files are;
    # export gives msprobe's layout (.pt by default, .npy on request).
    lockstep = os.path.join(BUILD, "bin", "lockstep")
    pt = os.path.join(tmp, "pt")
    npy, packed = os.path.join(tmp, "npy"), os.path.join(tmp, "packed")
    train(pt, task="tensor")
    train(npy, task="tensor", tensor_format="npy")
    train(packed, task="tensor", tensor_format="pack")
    import numpy

    def files(dump):
        return sorted(os.listdir(os.path.join(dump, "step1", "rank0",
                                              "dump_tensor_data")))

    def data_names(dump):
        names = []

        def walk(v):
            if isinstance(v, dict):
                if isinstance(v.get("data_name"), str):
                    names.append(v["data_name"])
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        walk(load(dump, 1)["data"])
        return sorted(names)

    stems = [f[:-3] for f in files(pt)]
    assert len(stems) > 20 and all(f.endswith(".pt") for f in files(pt))
    assert data_names(pt) == files(pt), (data_names(pt), files(pt))
    assert files(npy) == [s + ".npy" for s in stems], files(npy)
    assert data_names(npy) == files(npy)
    data = os.path.join("step1", "rank0", "dump_tensor_data")
    for s in stems:
        t = torch.load(os.path.join(pt, data, s + ".pt"), map_location="cpu",
                       weights_only=True)
        a = numpy.load(os.path.join(npy, data, s + ".npy"))
        assert t.dtype == torch.from_numpy(a).dtype, (s, t.dtype, a.dtype)
        assert numpy.array_equal(t.numpy(), a, equal_nan=True), s
    rank = os.path.join(packed, "step1", "rank0")
    assert os.path.isfile(os.path.join(rank, "dump_tensor_data.pack"))
    assert not os.path.exists(os.path.join(rank, "dump_tensor_data"))
    exported = {}
    for fmt in ["pt", "npy"]:
        exported[fmt] = os.path.join(tmp, "exported_" + fmt)
        args = [lockstep, "export", packed, "-o", exported[fmt]]
        r = subprocess.run(args + (["--tensor-format", "npy"] if fmt == "npy"
                                   else []), capture_output=True, text=True)
        assert r.returncode == 0, (r.stdout, r.stderr)
        orig = pt if fmt == "pt" else npy
        assert files(exported[fmt]) == files(orig), fmt
        assert data_names(exported[fmt]) == files(orig), fmt
        for name in files(orig):  # the same bytes as the probe's own files
            with open(os.path.join(exported[fmt], data, name), "rb") as a, \
                    open(os.path.join(orig, data, name), "rb") as b:
                assert a.read() == b.read(), (fmt, name)
    for a in [packed, exported["pt"], exported["npy"], npy]:
        out = os.path.join(tmp, "cmp_" + os.path.basename(a))
        r = subprocess.run([lockstep, "compare", a, pt, "-o", out, "-q"],
                           capture_output=True, text=True)
        assert r.returncode == 0, (a, r.returncode, r.stdout, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        assert s["error"] == 0 and s["rows"] > 80, s
    # Shadow mode: sampled forward calls replayed in float64 as they run
    # (sample_rate goes into the "shadow" section); replay reads the checks.
    shadow = os.path.join(tmp, "shadow")
    train(shadow, task="shadow", sample_rate=0.5)
    fwd = {k: v for k, v in load(shadow, 1)["data"].items()
           if k.endswith(".forward")}
    checked = [v["shadow"] for v in fwd.values() if "shadow" in v]
    assert 0 < len(checked) < len(fwd), (len(checked), len(fwd))
    for records in checked:
        for r in records:
            assert r["verdict"] == "ok", records
    r = subprocess.run([lockstep, "replay", shadow, "-o",
                        os.path.join(tmp, "replay_shadow")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "no suspect" in r.stdout, (r.stdout, r.stderr)
    try:
        lockstep_probe.Probe(task="shadow", dump_path=tmp, sample_rate=2,
                             lib=os.path.join(BUILD, "lib",
                                              "liblockstep_py.so")).start()
        raise AssertionError("sample_rate 2 accepted")
    except RuntimeError as e:
        assert "sample_rate" in str(e), e
    # api_names "python": entries named after the Python call, as msprobe
    # names them, with the call's own arguments; the wrapped operators and
    # functions are restored at stop().
    add, layer_norm = torch.Tensor.__add__, F.layer_norm
    names_dump = os.path.join(tmp, "api_names")
    x, w, b = torch.randn(3, 4), torch.ones(4), torch.zeros(4)
    with lockstep_probe.Probe(task="statistics", dump_path=names_dump,
                              api_names="python",
                              lib=os.path.join(BUILD, "lib", "liblockstep_py.so")):
        y = x + 1.0
        y = x.add(y)
        y = torch.add(x, y)
        y = F.layer_norm(y, (4,), w, b, eps=1e-5)
        y = y / 2
    data = load(names_dump, 0)["data"]
    want = ["Tensor.__add__.0.forward", "Tensor.add.0.forward",
            "Torch.add.0.forward", "Functional.layer_norm.0.forward",
            "Tensor.__truediv__.0.forward"]
    assert [k for k in data if k in want] == want, list(data)
    ln = data["Functional.layer_norm.0.forward"]
    assert len(ln["input_args"]) == 4, ln["input_args"]  # as the call gave them
    assert list(ln["input_kwargs"]) == ["eps"], ln["input_kwargs"]
    assert data["Tensor.__add__.0.forward"]["input_args"][1] == {
        "type": "float", "value": 1.0}, data["Tensor.__add__.0.forward"]
    assert torch.Tensor.__add__ is add and F.layer_norm is layer_norm
    try:
        lockstep_probe.Probe(dump_path=tmp, api_names="msprobe")
        raise AssertionError("api_names 'msprobe' accepted")
    except ValueError as e:
        assert "api_names" in str(e), e
print("probe_test.py: OK")
