"""The Python probe with a model: module entries (L0, mix), parameter
gradients, construct.json, stack.json and the Python API's behaviour; run by
ctest as `/usr/bin/python3 tests/python/module_test.py BUILD_DIR`.

The module entries are checked against PyTorch's own hooks: a module's
backward entry against register_full_backward_hook's grad_output, its
parameters_grad against the .grad torch computed.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import warnings

import torch

BUILD = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
os.environ["LOCKSTEP_PY_LIB"] = os.path.join(BUILD, "lib", "liblockstep_py.so")
import lockstep_probe  # noqa: E402
import train_transformer as tt  # noqa: E402

EXAMPLE = os.path.abspath(tt.__file__)


def load(dump, step, name="dump.json"):
    with open(os.path.join(dump, f"step{step}", "rank0", name)) as f:
        return json.load(f)


def close(a, b, rel=1e-5):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def line_of(path, text):
    """The 1-based number of the line of `path` that contains `text`."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(f"{text!r} not in {path}")


def check_levels(tmp):
    grads, outs = {}, {}

    def on_backward(model, step):
        if step == 0:
            for name, p in model.named_parameters():
                grads[name] = p.grad.norm().item()

    dumps, losses = {}, {}
    for level in ["L0", "mix", "L1"]:
        dumps[level] = os.path.join(tmp, level)
        losses[level] = tt.train(dumps[level], level=level,
                                 on_backward=on_backward)
    d0 = load(dumps["L0"], 0)["data"]
    dm = load(dumps["mix"], 0)["data"]
    d1 = load(dumps["L1"], 0)["data"]
    # L0: modules only, named as msprobe names them (the root left out).
    assert d0 and all(n.startswith("Module.") or n.endswith(".debug")
                      for n in d0), list(d0)[:5]
    for want in ["Module.tok.Embedding.forward.0",
                 "Module.blocks.0.Block.forward.0",
                 "Module.blocks.1.attn.Attention.forward.0",
                 "Module.blocks.1.attn.qkv.Linear.forward.0",
                 "Module.blocks.0.mlp.Sequential.forward.0",
                 "Module.blocks.0.mlp.1.GELU.forward.0",
                 "Module.head.Linear.forward.0",
                 "Module.blocks.1.attn.qkv.Linear.backward.0",
                 "Module.blocks.1.attn.qkv.Linear.parameters_grad.0",
                 "Module.ln.LayerNorm.parameters_grad.0"]:
        assert want in d0, (want, list(d0))
        assert want in dm, (want, "mix")
        assert want not in d1, (want, "L1")
    assert not any(n.startswith("Module.TinyTransformer") for n in d0)
    # L1 and mix: the operators.
    for want in ["Functional.linear.0.forward", "Functional.softmax.0.forward",
                 "Functional.layer_norm.0.forward",
                 "Functional.linear.0.backward"]:
        assert want in d1 and want in dm, want
        assert want not in d0, want
    # save(): the loss as "loss.0.debug", its statistics torch's.
    for d in (d0, dm, d1):
        e = d["loss.0.debug"]
        assert e["shape"] == [] and close(e["Max"], losses["L1"][0]), e
    # A module entry's inputs, outputs and parameters.
    e = d0["Module.blocks.1.attn.qkv.Linear.forward.0"]
    assert e["input_args"][0]["shape"] == [4, 16, 32], e["input_args"]
    assert e["output"][0]["shape"] == [4, 16, 96], e["output"]
    assert set(e["parameters"]) == {"weight", "bias"}, e["parameters"]
    assert e["parameters"]["weight"]["shape"] == [96, 32]
    # parameters_grad equals the gradient torch computed (step 0).
    for module, param in [("blocks.1.attn.qkv", "weight"), ("ln", "bias"),
                          ("tok", "weight"), ("blocks.0.mlp.2", "bias")]:
        cls = {"tok": "Embedding", "ln": "LayerNorm"}.get(module, "Linear")
        g = d0[f"Module.{module}.{cls}.parameters_grad.0"][param][0]
        assert close(g["Norm"], grads[f"{module}.{param}"]), (module, g)
    # The module's backward entry is its own VJP: its input is the gradient
    # of the module's output, as register_full_backward_hook sees it.
    tt_model_hooks(tmp, d0)
    # mix: construct.json names each operator's module and each module's.
    c = load(dumps["mix"], 0, "construct.json")
    assert c["Module.blocks.1.attn.qkv.Linear.forward.0"] == \
        "Module.blocks.1.attn.Attention.forward.0", c
    assert c["Module.blocks.1.attn.Attention.forward.0"] == \
        "Module.blocks.1.Block.forward.0"
    assert c["Module.blocks.1.Block.forward.0"] is None
    softmax_parent = c["Functional.softmax.1.forward"]
    assert softmax_parent == "Module.blocks.1.attn.Attention.forward.0", \
        softmax_parent
    # L1: no construct.json parents to give (msprobe's is empty).
    assert not os.path.exists(
        os.path.join(dumps["L1"], "step0", "rank0", "construct.json"))
    return dumps


def tt_model_hooks(tmp, d0):
    """Runs the model once more with torch's module backward hooks and
    compares with the probe's Module.*.backward entries of step 0."""
    seen = {}
    lockstep_probe.seed_all(1)
    model = tt.TinyTransformer()
    for path, m in model.named_modules():
        if path in ("blocks.1.attn.qkv", "blocks.0.mlp.2", "head"):
            def hook(mod, gin, gout, path=path):
                seen[path] = gout[0].norm().item()
            m.register_full_backward_hook(hook)
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, 64, (2, 4, 17), generator=g)
    logits = model(data[0, :, :-1])
    torch.nn.functional.cross_entropy(
        logits.reshape(-1, 64), data[0, :, 1:].reshape(-1)).backward()
    for path, cls in [("blocks.1.attn.qkv", "Linear"),
                      ("blocks.0.mlp.2", "Linear"), ("head", "Linear")]:
        e = d0[f"Module.{path}.{cls}.backward.0"]
        assert close(e["input"][0]["Norm"], seen[path], 1e-4), \
            (path, e["input"][0], seen[path])


def where(frame):
    """(path, line, function) of a stack.json frame string."""
    head = frame.split(", \n", 1)[0]
    assert head.startswith("File "), frame
    path, line, func = head[5:].rsplit(", ", 2)
    assert line.startswith("line ") and func.startswith("in "), frame
    return os.path.normpath(path), int(line[5:]), func[3:]


def check_stacks(dumps):
    # stack.json names the user's lines: the operator inside the model and
    # the module call both point at the example's source.
    qkv_line = line_of(EXAMPLE, "self.qkv(x).split")
    softmax_line = line_of(EXAMPLE, "F.softmax(scores")
    for level in ["mix", "L1", "L0"]:
        stacks = load(dumps[level], 0, "stack.json")
        by_name = {}
        for group in stacks.values():
            for name in group[0]:
                by_name[name] = group[1]
        if level != "L0":
            frames = by_name["Functional.softmax.1.forward"]
            # Innermost first: torch's F.softmax, then the user's line.
            assert "torch/nn/functional.py" in frames[0], frames[0]
            assert where(frames[1]) == (EXAMPLE, softmax_line, "forward"), \
                frames[1]
            assert frames[1].endswith(
                "\n y = F.softmax(scores, dim=-1) @ v"), frames[1]
            assert not any("lockstep_probe" in f for f in frames), frames
        if level != "L1":
            frames = by_name["Module.blocks.1.attn.qkv.Linear.forward.0"]
            # torch's module call first, then the line that called it.
            assert any(where(f) == (EXAMPLE, qkv_line, "forward")
                       for f in frames[:4]), frames
            assert not any("lockstep_probe" in f or "torch/_ops.py" in f
                           for f in frames), frames
        # Every forward entry of each step has its stack; backward ones none
        # (as msprobe); a name in both steps (the same call) the same one.
        for step in [0, 1]:
            st = by_name if step == 0 else {
                n: g[1] for g in load(dumps[level], 1, "stack.json").values()
                for n in g[0]}
            data = load(dumps[level], step)["data"]
            fwd = {n for n in data if ".forward" in n}
            assert fwd == set(st), (level, step, fwd ^ set(st))
            for n in set(st) & set(by_name):
                assert st[n] == by_name[n], (level, n)


def check_compare(tmp, dumps):
    fault = os.path.join(tmp, "fault")
    tt.train(fault, level="mix", fault="attn-bf16")
    out = os.path.join(tmp, "cmp")
    r = subprocess.run([os.path.join(BUILD, "bin", "lockstep"), "compare",
                        fault, dumps["mix"], "-o", out, "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    with open(os.path.join(out, "summary.json")) as f:
        first = json.load(f)["first_divergence"]
    # The bf16 cast the fault inserted in block 1's attention.
    assert first["entry"].startswith("Tensor.to."), first
    # The saved loss is a row of its own (step 0: the same in both runs).
    rows = []
    for name in os.listdir(out):
        if name.startswith("compare_result_step0"):
            with open(os.path.join(out, name)) as f:
                rows += [line for line in f if line.startswith("loss.0.debug,")]
    assert len(rows) == 1 and ",pass," in rows[0], rows


def check_interrupted_forward(tmp):
    """A module whose forward raises (and the loop catches it) leaves no
    open call behind: the next step's operators get their true parents."""
    class Flaky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Linear(4, 4)
            self.fail = True

        def forward(self, x):
            y = self.inner(x)
            if self.fail:
                raise ValueError("boom")
            return y

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.flaky = Flaky()
            self.after = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.after(self.flaky(x))

    net = Net()
    dump = os.path.join(tmp, "interrupted")
    with lockstep_probe.Probe(level="mix", dump_path=dump, model=net) as p:
        try:
            net(torch.randn(3, 4))
        except ValueError:
            pass
        p.step()
        net.flaky.fail = False
        net(torch.randn(3, 4)).sum().backward()
        p.step()
    c = load(dump, 1, "construct.json")
    assert c["Module.after.Linear.forward.0"] is None, c
    assert c["Module.flaky.Flaky.forward.0"] is None, c
    assert c["Functional.linear.1.forward"] == \
        "Module.after.Linear.forward.0", c


def check_api(tmp):
    # Keyword arguments: a misspelling names the key meant.
    try:
        lockstep_probe.Probe(dump_pth=tmp)
        raise AssertionError("misspelled keyword accepted")
    except TypeError as e:
        assert "dump_pth" in str(e) and "did you mean 'dump_path'" in str(e), e
    try:
        lockstep_probe.Probe({"levle": "L1", "dump_path": tmp})
        raise AssertionError("misspelled key accepted")
    except ValueError as e:
        assert "did you mean 'level'" in str(e), e
    try:
        lockstep_probe.Probe({"statistics": {"scoep": []}})
        raise AssertionError("misspelled section key accepted")
    except ValueError as e:
        assert "did you mean 'scope'" in str(e), e
    # A config file given as a pathlib.Path, overridden by keywords.
    cfg = pathlib.Path(tmp) / "config.json"
    cfg.write_text(json.dumps({"task": "statistics", "level": "L1",
                               "dump_path": "never_used"}))
    dump = pathlib.Path(tmp) / "api"
    p = lockstep_probe.Probe(cfg, dump_path=dump, level="L0", step=[0])
    assert p.config["dump_path"] == str(dump) and p.level == "L0", p.config
    # A section key given with task md5 goes where md5's section is read
    # ("statistics"): the scope below leaves only the two entries it names.
    lim = dump / "md5_scope"
    with lockstep_probe.Probe(task="md5", dump_path=lim,
                              scope=["Torch.exp.0.forward",
                                     "Torch.exp.1.forward"]) as p:
        torch.ones(2).sin().exp().exp().cos()
        p.step()
    assert p.config["statistics"]["scope"][0] == "Torch.exp.0.forward"
    with open(lim / "step0" / "rank0" / "dump.json") as f:
        names = list(json.load(f)["data"])
    assert names == ["Torch.exp.0.forward", "Torch.exp.1.forward"], names
    # One probe per object: a second start raises, and stopping a probe that
    # is not started leaves the started one recording.
    a = lockstep_probe.Probe(task="statistics", dump_path=dump / "a")
    b = lockstep_probe.Probe(task="statistics", dump_path=dump / "b")
    with a:
        try:
            b.start()
            raise AssertionError("two probes started")
        except RuntimeError as e:
            assert "another Probe" in str(e), e
        b.stop()
        x = torch.ones(3).exp()
        assert a.entries() > 0 and a.started and not b.started
        assert a.current_step == 0 and a.rank == 0, (a.current_step, a.rank)
        a.step()
        assert a.current_step == 1
    assert not a.started and a.current_step is None
    assert os.path.exists(dump / "a" / "step0" / "rank0" / "dump.json")
    assert not os.path.exists(dump / "b")
    # A dump path holding an earlier dump is refused (runs would mix).
    try:
        lockstep_probe.Probe(task="statistics", dump_path=dump / "a").start()
        raise AssertionError("reused dump path accepted")
    except RuntimeError as e:
        assert "earlier dump" in str(e), e
    # Warnings point at the user's line, not the wrapper's.
    blocker = os.path.join(tmp, "a_file")
    with open(blocker, "w") as f:
        f.write("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        q = lockstep_probe.Probe(dump_path=os.path.join(blocker, "d"))
        q.start()  # warns: the dump cannot be written
        q.stop()
    assert caught and all(w.filename == os.path.abspath(__file__)
                          for w in caught), [(w.filename, str(w.message))
                                             for w in caught]
    # seed_all: the same numbers again.
    lockstep_probe.seed_all(7)
    r1 = torch.randn(4)
    lockstep_probe.seed_all(7)
    assert torch.equal(r1, torch.randn(4))
    assert x.sum() > 0


with tempfile.TemporaryDirectory() as tmp:
    dumps = check_levels(tmp)
    check_stacks(dumps)
    check_compare(tmp, dumps)
    check_interrupted_forward(tmp)
    check_api(tmp)
print("module_test.py: OK")
