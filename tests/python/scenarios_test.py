"""The divergence scenario suite: pairs of runs with one known change each
(two Python transformers, GPT-like and LLaMA-style, through the Python
probe, LeNet-5 through the C++
probe), dumped in statistics and tensor mode; `lockstep compare TARGET
BASELINE` with no flags must name the changed operator, and the controls
must pass. Run by ctest as
`PYTHON tests/python/scenarios_test.py BUILD_DIR [NAME...]` (PYTHON: the one
whose torch the probe library in BUILD_DIR is built for)
(with LOCKSTEP_FIXTURES=tests/fixtures for msprobe's dumps, which are then
required); prints one line per case and the hit rate.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1])
ONLY = sys.argv[2:]
LIB = os.path.join(BUILD, "lib", "liblockstep_py.so")
LOCKSTEP = os.path.join(BUILD, "bin", "lockstep")
LENET = os.path.join(BUILD, "bin", "lenet")
STEPS = "2"

# name: (baseline knobs, target knobs, acceptable first divergences; None:
# the compare must pass; "no culprit": it passes, or fails saying the runs
# drift apart without naming an operator; "none named": no first divergence,
# a WARNING at most)
GPT = {
    "control": ({}, {}, None),
    "argument gelu approximate": ({}, {"gelu": "tanh"}, {"Functional.gelu.0.forward"}),
    "argument layer_norm eps": ({}, {"ln_eps": 1e-2}, {"Functional.layer_norm.0.forward"}),
    "dropout left on": ({}, {"dropout": 0.1}, {"Functional.dropout.0.forward"}),
    "softmax kernel in bfloat16": ({}, {"softmax_kernel": "bf16"}, {"Functional.softmax.0.forward"}),
    # An inserted op that returns its input changes no number: listed (a
    # WARNING for the unmatched rows), not named.
    "inserted op x*1.0": ({}, {"insert_mul_one": True}, "none named"),
    "inserted x*1.0, then gelu tanh": ({}, {"insert_mul_one": True, "gelu": "tanh"},
                                       {"Functional.gelu.0.forward"}),
    "inserted round trip through fp16": ({}, {"insert_fp16_cast": True},
                                         {"Tensor.half.0.forward", "Tensor.to.0.forward",
                                          "Torch._to_copy.0.forward"}),
    "decomposed gelu": ({}, {"decomposed_gelu": True},
                        {"Functional.gelu.0.forward", "Torch.mul.0.forward",
                         "Torch.div.1.forward", "Torch.erf.0.forward"}),
    "changed initialisation": ({}, {"init_scale_block1_fc": 1.5}, {"Functional.linear.6.forward"}),
    # Block 1 under autocast: its first linear computes in bfloat16 (the
    # output's dtype changes; its statistics, in bfloat16, barely move).
    "autocast over block 1": ({}, {"autocast_block1": True}, {"Functional.linear.4.forward"}),
    # One weight element x1.001: far below fp32's rounding floor norm-wise.
    "changed parameter element": ({}, {"nudge_block1_fc": 1.001}, {"Functional.linear.6.forward"}),
    # The hook is on the tensor that linear.1 returns and dropout.1 (p=0)
    # passes through as is: the change is between add.2 and dropout.1.
    "gradient hook": ({}, {"scale_grad_block0_proj": 2.0},
                      {"Functional.linear.1.backward", "Functional.dropout.1.backward"}),
    "in-place op on a view": ({"inplace_view": 1.0}, {"inplace_view": 2.0}, {"Tensor.mul_.0.forward"}),
    "fp16 saturation in gelu": ({"act_scale": 1e6}, {"act_scale": 1e6, "gelu_kernel": "fp16_saturate"},
                                {"Functional.gelu.0.forward"}),
    "nan from softmax": ({"att_scale": 1e5}, {"att_scale": 1e5, "softmax_kernel": "naive"},
                         {"Functional.softmax.0.forward"}),
    # Both runs in bfloat16; the target's mm/bmm/addmm sum their products in
    # another order (as another device's kernels would): rounding noise in
    # every op after the first linear, which must not be named.
    "noisy bf16 kernels (control)": ({"dtype": "bf16"}, {"dtype": "bf16", "mm_kernel": "fp32_sum"},
                                     "no culprit"),
    "noisy bf16 kernels, layer norm ignores eps": (
        {"dtype": "bf16"}, {"dtype": "bf16", "mm_kernel": "fp32_sum", "ln_kernel": "eps_1e-2"},
        {"Functional.layer_norm.0.forward"}),
}

# The LLaMA-style model (tiny_llama.py) under the same rules; its knobs
# are added to each side's.
L = {"arch": "llama"}
LLAMA = {
    "llama control": ({}, {}, None),
    "llama rmsnorm eps": ({}, {"rms_eps": 1e-5}, {"Torch.add.0.forward", "Tensor.__add__.0.forward"}),
    # `base ** x`: msprobe names it; torch 1.13's ATen makes the base a
    # tensor first (Tensor.to.0 takes it, its value on each side).
    "llama rotary base": ({}, {"rope_base": 500000.0},
                          {"Torch.pow.0.forward", "Tensor.__rpow__.0.forward", "Tensor.to.0.forward"}),
    "llama activation gelu for silu": ({}, {"act": "gelu"},
                                       {"Functional.silu.0.forward", "Functional.gelu.0.forward"}),
    "llama changed parameter element": ({}, {"nudge_block1_fc": 1.001}, {"Functional.linear.11.forward"}),
    "llama changed initialisation": ({}, {"init_scale_block1_fc": 1.5}, {"Functional.linear.11.forward"}),
    "llama autocast over block 1": ({}, {"autocast_block1": True}, {"Functional.linear.7.forward"}),
    # A dtype-only difference: the frequencies' arange in float64.
    "llama rotary in float64": ({}, {"rope_dtype": "fp64"},
                                {"Torch.arange.0.forward", "Tensor.__truediv__.0.forward"}),
    # AdamW's decoupled weight decay, `param.mul_(1 - lr * wd)`, is the
    # first call of the optimizer whose argument differs.
    "llama weight decay": ({}, {"weight_decay": 0.1}, {"Tensor.mul_.0.forward"}),
    # clip_grad_norm_'s first call (the gradients' norms), in the target only.
    "llama gradient clipping": ({}, {"clip_grad": 0.01},
                                {"Torch.norm.0.forward", "Torch._foreach_norm.0.forward",
                                 "Aten._foreach_norm.0.forward"}),
    # The causal mask filled with finfo.min for -inf: the softmax after it
    # gives the same numbers, masked_fill's value argument is the change.
    "llama mask fill value": ({}, {"mask_value": "min"}, {"Tensor.masked_fill.0.forward"}),
    "llama bf16 noisy kernels (control)": ({"dtype": "bf16"}, {"dtype": "bf16", "mm_kernel": "fp32_sum"},
                                           "no culprit"),
}
GPT.update({name: (dict(L, **b), dict(L, **t), want) for name, (b, t, want) in LLAMA.items()})


class ForwardOfStep0:
    """A layer's forward entry in step 0 (lenet --dtype fp16 rounds every
    activation, its input data included: a forward layer op that shows it is
    the answer, not the loss's `item()` read after the whole step)."""

    def __contains__(self, first):
        e = first["entry"]
        return e.startswith("Functional.") and e.endswith(".forward") and first["step"] == 0


# name: (baseline lenet args, target lenet args, acceptable)
LENET_CASES = {
    "lenet control": ([], [], None),
    "lenet conv2 in bfloat16": ([], ["--fault", "conv2-bf16"], {"Functional.conv2d.1.forward"}),
    "lenet fp16 vs fp32": ([], ["--dtype", "fp16"], ForwardOfStep0()),
}
# msprobe's own dumps (tests/fixtures/msprobe/toy, written by msprobe
# with torch 1.13): target, baseline, acceptable. dumpB's linear output was
# rounded through fp16 outside any dumped API (relu's input is the first
# dumped tensor that shows it); tensC multiplies in a tensor holding NaN and
# inf (Tensor.__mul__, absent from dumpA).
FIXTURES = os.environ.get("LOCKSTEP_FIXTURES",
                          os.path.join(HERE, "..", "fixtures"))
TOY = os.path.join(FIXTURES, "msprobe", "toy")
MSPROBE_CASES = {
    "msprobe tensor fp16 rounding": ("dumpB", "dumpA", {"Functional.relu.0.forward"}),
    "msprobe tensor nan injected": ("tensC", "dumpA", {"Tensor.__mul__.0.forward"}),
    "msprobe statistics fp16 rounding": ("statB", "statA", {"Functional.relu.0.forward"}),
    "msprobe statistics nan injected": ("statC", "statA", {"Tensor.__mul__.0.forward"}),
    "msprobe md5 fp16 rounding": ("md5B", "md5A", {"Functional.relu.0.forward"}),
}


class Runs:
    """The dumps of each distinct run the cases need, made in two batches:
    every transformer run in one Python process (tiny_gpt.py --many forks a
    child per run, so torch is imported once), then the LeNet runs, two at
    a time."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.dumps = {}   # (kind, knobs or args, task) -> dump folder
        self.todo = []

    def need(self, kind, how, task, dumper="lockstep"):
        key = (kind, json.dumps(how, sort_keys=True), task, dumper)
        if key not in self.dumps:
            self.dumps[key] = os.path.join(self.tmp, f"run{len(self.dumps)}")
            self.todo.append((key, how))
        return self.dumps[key]

    def make(self):
        off = onednn_off()
        gpt = [[self.dumps[k], k[2], STEPS, how, k[3]] for k, how in self.todo if k[0] == "gpt"]
        if gpt:
            subprocess.run([sys.executable, os.path.join(HERE, "tiny_gpt.py"), "--many", LIB,
                            json.dumps(gpt)], check=True,
                           env=dict(os.environ, LOCKSTEP_NO_ONEDNN="1" if off else "0"))
        lenet = [[LENET, "--steps", STEPS, "--seed", "1", "--task", k[2], "--dump", self.dumps[k]]
                 + how + (["--no-onednn"] if off else []) for k, how in self.todo if k[0] == "lenet"]
        for i in range(0, len(lenet), 2):
            two = [subprocess.Popen(a, stdout=subprocess.DEVNULL) for a in lenet[i:i + 2]]
            for p in two:
                if p.wait() != 0:
                    raise SystemExit(f"lenet failed: {' '.join(p.args)}")
        self.todo = []


def compare(tmp, target, baseline):
    out = os.path.join(tmp, "out")
    r = subprocess.run([LOCKSTEP, "compare", target, baseline, "-o", out, "-q"],
                       capture_output=True, text=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return r.returncode, summary.get("first_divergence") or {}, r.stdout.strip().splitlines()


def judge(rc, first, want):
    if want is None:
        return rc == 0 and not first
    if want == "none named":
        return rc in (0, 1) and not first
    if want == "no culprit":
        return rc == 0 or (rc == 1 and first.get("drift") is True)
    if rc != 1:
        return False
    if isinstance(want, ForwardOfStep0):
        return first in want
    # Named: "the runs drift apart, from X on" names no operator.
    return first.get("entry") in want and not first.get("drift")


def msprobe_cases(tmp):
    hits = total = 0
    for name, (target, baseline, want) in MSPROBE_CASES.items():
        if ONLY and name not in ONLY:
            continue
        rc, first, out = compare(tmp, os.path.join(TOY, target), os.path.join(TOY, baseline))
        ok = judge(rc, first, want)
        hits += ok
        total += 1
        print(f"{'ok  ' if ok else 'MISS'} {'msprobe':10} {name:32} exit {rc}: {out[-1] if out else ''}")
    return hits, total


SKIPPED = 77  # the test's SKIP_RETURN_CODE (tests/CMakeLists.txt)

# The tasks in which msprobe dumps the transformer's scenarios too (torch 2.x
# with mindstudio-probe installed, uncapped run): statistics, where msprobe
# records a bfloat16 tensor's statistics in bfloat16, unlike lockstep;
# LOCKSTEP_SCENARIOS_MSPROBE_TENSOR=1 adds tensor mode (1.5 minutes more).
# And the answers that differ from lockstep's dumps only in msprobe's name
# for the same call.
MSPROBE_RUNS = ["statistics"] + (["tensor"] if os.environ.get("LOCKSTEP_SCENARIOS_MSPROBE_TENSOR") == "1" else [])
MSPROBE_WANT = {
    # msprobe (risk_level FOCUS) does not dump casts: the round trip is
    # outside the dump, and the answer is the first dumped call whose input
    # is not what the call before it returned.
    "inserted round trip through fp16": {"Functional.linear.0.forward"},
    # msprobe dumps the multiplication inside the gradient hook (a Python
    # call during backward, in the target only): that call is the change.
    "gradient hook": {"Tensor.__mul__.0.forward", "Functional.linear.1.backward",
                      "Functional.dropout.1.backward"},
    # The decomposition's calls under msprobe's names.
    "decomposed gelu": {"Functional.gelu.0.forward", "Tensor.__mul__.0.forward",
                        "Tensor.__truediv__.1.forward", "Torch.erf.0.forward"},
}


def with_msprobe():
    """Whether this Python has torch 2.x and msprobe (mindstudio-probe), and
    the run is not capped (the capped runs check kernel paths, which
    msprobe's dumps do not change)."""
    import importlib.util
    if "ATEN_CPU_CAPABILITY" in os.environ or importlib.util.find_spec("msprobe") is None:
        return False
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
    return r.returncode == 0 and not r.stdout.startswith("1.")


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def onednn_off():
    """Whether this run's runs compute without oneDNN: when oneDNN is capped
    below AVX-512 (ONEDNN_MAX_CPU_ISA, the capped runs) on a CPU with
    AVX-512. The cap stands for a host without AVX-512, where LibTorch
    hands no bfloat16 convolution or matmul to oneDNN (its check for that
    wants avx512bw/vl/dq). On this CPU it still does, and oneDNN, capped,
    cannot make the kernel: "could not create a primitive descriptor
    iterator" (LibTorch 1.13, AMD EPYC with AVX-512 BF16). Every run of the
    suite then computes without oneDNN, fp32 ones too, so that both runs of
    a pair take the same paths."""
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    if isa == "" or isa.startswith(("AVX512", "AVX10", "AMX", "ALL")):
        return False
    flags = cpu_flags()
    return flags is not None and "avx512bw" in flags


def main():
    if os.environ.get("ATEN_CPU_CAPABILITY") == "avx2":
        flags = cpu_flags()
        if flags is not None and "avx512f" not in flags:
            # Capped at AVX2 on a CPU without AVX-512, LibTorch and oneDNN
            # take the very paths of the uncapped run (DivergenceScenariosTest).
            print("skipped: this CPU has no AVX-512, so the uncapped run already took the AVX2 kernel paths")
            return SKIPPED
    cases = [(n, "gpt", b, t, want) for n, (b, t, want) in GPT.items()]
    cases += [(n, "lenet", b, t, want) for n, (b, t, want) in LENET_CASES.items()]
    cases = [c for c in cases if not ONLY or c[0] in ONLY]
    hits = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        runs = Runs(tmp)
        pairs = [(task, name, runs.need(kind, target, task), runs.need(kind, base, task), want)
                 for task in ["statistics", "tensor"]
                 for name, kind, base, target, want in cases]
        if MSPROBE_RUNS and with_msprobe():
            # The transformer's runs dumped by msprobe's PrecisionDebugger
            # (live mindstudio-probe, torch 2.x): the same answers, read
            # from msprobe's own dumps. In the uncapped run only.
            pairs += [(f"msprobe {task[:4]}", name,
                       runs.need(kind, target, task, "msprobe"),
                       runs.need(kind, base, task, "msprobe"), MSPROBE_WANT.get(name, want))
                      for task in MSPROBE_RUNS
                      for name, kind, base, target, want in cases if kind == "gpt"]
        else:
            print("msprobe-dumped scenarios: not run (they need torch 2.x with "
                  "mindstudio-probe, in the uncapped run)")
        runs.make()
        for task, name, target, baseline, want in pairs:
            rc, first, out = compare(tmp, target, baseline)
            ok = judge(rc, first, want)
            hits += ok
            total += 1
            verdict = out[-1] if out else ""
            print(f"{'ok  ' if ok else 'MISS'} {task:10} {name:32} exit {rc}: {verdict}")
        if os.path.isdir(TOY) or "LOCKSTEP_FIXTURES" in os.environ:
            h, t = msprobe_cases(tmp)
            hits, total = hits + h, total + t
    caps = ", ".join(f"{v}={os.environ[v]}" for v in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA",
                                                       "LOCKSTEP_CPU_LEVEL")
                     if v in os.environ) or "the CPU's own kernel paths"
    if onednn_off():
        caps += "; oneDNN off, as the cap cannot serve bfloat16 on this AVX-512 CPU"
    print(f"scenarios: {hits} of {total} named right ({caps})")
    return 0 if hits == total else 1


sys.exit(main())
