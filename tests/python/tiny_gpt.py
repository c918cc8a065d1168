"""A small GPT-like transformer for the probe's tests and the divergence
scenarios: token + position embeddings, blocks of layer norm, a qkv linear on
3-D input split into heads, causal matmul attention with softmax, dropout,
a GELU MLP, residual adds, a final layer norm and a head tied to the token
embedding, trained with cross entropy and AdamW.

`Knobs` holds the changes a scenario makes to one run; the defaults are the
reference run. Everything is seeded: two runs with the same knobs give the
same numbers bit for bit (one intra-op thread).
"""
import dataclasses
import os
import math
import time

import torch
import torch.nn.functional as F

from tiny_llama import TinyLlama


@dataclasses.dataclass
class Knobs:
    vocab: int = 96
    d: int = 32
    heads: int = 4
    blocks: int = 2
    seq: int = 16
    batch: int = 4
    gelu: str = "none"          # "tanh": the approximate GELU
    ln_eps: float = 1e-5
    dropout: float = 0.0        # attention and residual dropout
    init_seed: int = 0          # the parameters' seed
    init_scale_block1_fc: float = 1.0  # a changed initialisation
    nudge_block1_fc: float = 1.0  # one element of block 1's fc weight scaled
    scale_grad_block0_proj: float = 1.0  # a gradient hook on one tensor
    insert_mul_one: bool = False  # an extra `x * 1.0` after the first ln
    insert_fp16_cast: bool = False  # an extra round trip through fp16 there
    autocast_block1: bool = False  # block 1 under torch.autocast bfloat16
    insert_linear: bool = False  # an extra linear of other shapes (unused)
    decomposed_gelu: bool = False  # GELU written as erf arithmetic
    inplace_view: float = 0.0   # scale a slice of the last MLP's h in place
    att_scale: float = 1.0      # multiplies the attention logits
    act_scale: float = 1.0      # the MLP's activation: gelu(h * s) / s
    # Kernels replaced for the whole process (see use_kernels): the op
    # stream and arguments stay those of the reference, the numbers do not.
    softmax_kernel: str = "native"  # "bf16": computes in bfloat16;
    #                                 "naive": exp without subtracting the max
    gelu_kernel: str = "native"     # "fp16_saturate": results saturate at
    #                                 +-65504 as an NPU's fp16 saturation mode
    extra_ops: bool = False     # identity-like, list-output, view ops
    dtype: str = "fp32"         # "bf16": parameters and activations
    mm_kernel: str = "native"   # "fp32_sum": mm/bmm/addmm summed in another
    #                             order in fp32, rounded to the dtype once
    ln_kernel: str = "native"   # "eps_1e-2": layer norm ignores its eps
    # The optimizer (train): AdamW's weight decay; clip_grad > 0 clips the
    # gradients' norm to it before each step.
    weight_decay: float = 0.01
    clip_grad: float = 0.0
    # arch "llama": tiny_llama.TinyLlama, with these knobs of its own (and
    # init_scale_block1_fc, nudge_block1_fc, autocast_block1 on its W1).
    arch: str = "gpt"
    rms_eps: float = 1e-6
    rope_base: float = 10000.0
    rope_dtype: str = "fp32"    # "fp64": the rotary frequencies in float64
    act: str = "silu"           # "gelu": the MLP's activation swapped
    mask_value: str = "-inf"    # "min": the causal mask fills finfo.min


class TinyGPT(torch.nn.Module):
    def __init__(self, k: Knobs):
        super().__init__()
        self.k = k
        g = torch.Generator().manual_seed(k.init_seed)

        def p(*shape, scale=0.02):
            return torch.nn.Parameter(torch.randn(*shape, generator=g) * scale)

        d = k.d
        self.tok = p(k.vocab, d)
        self.pos = p(k.seq, d)
        self.blocks = torch.nn.ParameterList()
        for i in range(k.blocks):
            fc_scale = 0.02 * (k.init_scale_block1_fc if i == 1 else 1.0)
            for t in [torch.ones(d), torch.zeros(d),            # ln1
                      p(3 * d, d), torch.zeros(3 * d),          # qkv
                      p(d, d), torch.zeros(d),                  # proj
                      torch.ones(d), torch.zeros(d),            # ln2
                      p(4 * d, d, scale=fc_scale), torch.zeros(4 * d),  # fc
                      p(d, 4 * d), torch.zeros(d)]:             # fc2
                self.blocks.append(t if isinstance(t, torch.nn.Parameter)
                                   else torch.nn.Parameter(t))
        if k.nudge_block1_fc != 1.0:
            with torch.no_grad():
                self.blocks[12 + 8][3, 5] *= k.nudge_block1_fc
        self.side_w = torch.randn(8, d, generator=torch.Generator().manual_seed(7))
        self.lnf_w = torch.nn.Parameter(torch.ones(d))
        self.lnf_b = torch.nn.Parameter(torch.zeros(d))

    def block(self, i, x):
        k = self.k
        (ln1w, ln1b, qkvw, qkvb, projw, projb,
         ln2w, ln2b, fcw, fcb, fc2w, fc2b) = self.blocks[12 * i:12 * i + 12]
        B, T, C = x.shape
        h = F.layer_norm(x, (C,), ln1w, ln1b, eps=k.ln_eps)
        if k.insert_mul_one and i == 0:
            h = h * 1.0
        if k.insert_fp16_cast and i == 0:
            h = h.half().float()
        if k.insert_linear and i == 0:
            # A side computation (a probe of the user's own, say): the same
            # API as the block's linears, with other shapes; unused.
            _ = F.linear(h[:, -1], self.side_w)
        q, kk, v = F.linear(h, qkvw, qkvb).split(C, dim=2)
        q = q.view(B, T, k.heads, C // k.heads).transpose(1, 2)
        kk = kk.view(B, T, k.heads, C // k.heads).transpose(1, 2)
        v = v.view(B, T, k.heads, C // k.heads).transpose(1, 2)
        att = torch.matmul(q, kk.transpose(-2, -1)) / math.sqrt(C // k.heads)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if k.att_scale != 1.0:
            att = att * k.att_scale
        att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, p=k.dropout, training=self.training)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
        y = F.linear(y, projw, projb)
        if k.scale_grad_block0_proj != 1.0 and i == 0 and y.requires_grad:
            s = k.scale_grad_block0_proj
            y.register_hook(lambda g: g * s)
        x = x + F.dropout(y, p=k.dropout, training=self.training)
        h = F.layer_norm(x, (C,), ln2w, ln2b, eps=k.ln_eps)
        h = F.linear(h, fcw, fcb)
        if k.act_scale != 1.0:
            h = h * k.act_scale
        if k.decomposed_gelu:
            h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))
        else:
            h = F.gelu(h, approximate=k.gelu)
        if k.act_scale != 1.0:
            h = h / k.act_scale
        if k.inplace_view and i == k.blocks - 1:
            h2 = h.clone()
            v2 = h2[:, 1:3]
            v2.mul_(k.inplace_view)
            h = h2
        h = F.linear(h, fc2w, fc2b)
        return x + F.dropout(h, p=k.dropout, training=self.training)

    def forward(self, idx, targets):
        k = self.k
        x = F.embedding(idx, self.tok) + self.pos[: idx.shape[1]]
        if k.extra_ops:
            x = x.to(torch.float32)          # returns its input
            x = x.float().type_as(x)         # so do these
            a, b = x.chunk(2, dim=-1)        # list output
            x = torch.cat([b, a], dim=-1)
            x = torch.stack(x.unbind(0), 0)  # list output and list input
            w = self.lnf_w.float()           # a leaf returned as is
            with torch.no_grad():
                _ = x * 2.0                  # no graph
        else:
            w = self.lnf_w
        for i in range(k.blocks):
            if k.autocast_block1 and i == 1:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    x = self.block(i, x)
                x = x.float()
            else:
                x = self.block(i, x)
        x = F.layer_norm(x, (k.d,), w, self.lnf_b, eps=k.ln_eps)
        logits = F.linear(x, self.tok)       # tied head
        return F.cross_entropy(logits.view(-1, k.vocab), targets.view(-1))


_LIBS = []  # keeps kernel registrations alive


def use_kernels(k: Knobs):
    """Replaces aten kernels for the CPU in this process, as a device whose
    kernels differ would: nested inside the aten call, so a probe sees the
    same operator with the same inputs."""
    if (k.softmax_kernel == "native" and k.gelu_kernel == "native" and
            k.mm_kernel == "native" and k.ln_kernel == "native"):
        return
    lib = torch.library.Library("aten", "IMPL")
    _LIBS.append(lib)
    # Written with torch.ops.aten calls, which a Python-level dumper
    # (msprobe's PrecisionDebugger) does not wrap: a device's kernel is not
    # a sequence of Python calls either.
    A = torch.ops.aten

    def to(x, dtype):
        return A._to_copy(x, dtype=dtype)

    if k.softmax_kernel != "native":
        def softmax(x, dim, half_to_float):
            if k.softmax_kernel == "bf16":
                y = to(x, torch.bfloat16)
                y = A.exp(A.sub(y, A.amax(y, [dim], True)))
                return to(A.div(y, A.sum(y, [dim], True)), x.dtype)
            y = A.exp(x)  # naive: overflows for large logits
            return A.div(y, A.sum(y, [dim], True))
        lib.impl("_softmax", softmax, "CPU")
    if k.gelu_kernel == "fp16_saturate":
        def gelu(x, approximate="none"):
            y = A.mul(A.mul(x, 0.5), A.add(A.erf(A.div(x, math.sqrt(2.0))), 1.0))
            return A.clamp(y, -65504.0, 65504.0)
        lib.impl("gelu", gelu, "CPU")
    if k.mm_kernel == "fp32_sum":
        def mm(a, b):  # products summed in fp32 (no mm inside: no recursion)
            p = A.mul(A.unsqueeze(to(a, torch.float32), -1),
                      A.unsqueeze(to(b, torch.float32), -3))
            return to(A.sum(p, [-2]), a.dtype)
        lib.impl("mm", mm, "CPU")
        lib.impl("bmm", mm, "CPU")
        lib.impl("addmm", lambda c, a, b, beta=1, alpha=1:
                 to(A.add(A.mul(to(c, torch.float32), beta),
                          A.mul(to(mm(a, b), torch.float32), alpha)), a.dtype), "CPU")
    if k.ln_kernel == "eps_1e-2":
        def layer_norm(x, shape, w, b, eps):
            dims = list(range(x.dim() - len(shape), x.dim()))
            xf = to(x, torch.float32)
            mean = A.mean(xf, dims, True)
            var = A.var(xf, dims, correction=0, keepdim=True)
            rstd = A.rsqrt(A.add(var, 1e-2))
            y = A.mul(A.sub(xf, mean), rstd)
            if w is not None:
                y = A.mul(y, to(w, torch.float32))
            if b is not None:
                y = A.add(y, to(b, torch.float32))
            return to(y, x.dtype), to(mean, x.dtype), to(rstd, x.dtype)
        lib.impl("native_layer_norm", layer_norm, "CPU")


def batch(k: Knobs, step: int):
    g = torch.Generator().manual_seed(1000 + step)
    idx = torch.randint(0, k.vocab, (k.batch, k.seq), generator=g)
    return idx, torch.roll(idx, -1, dims=1)


def issue_setup(steps):
    """The probe-cost benchmarks' setting (issue 15): 2 blocks, d=128, 4
    heads, seq 64, batch 8, AdamW at 1e-4, one intra-op thread, seed 0.
    Returns (model, optimizer, batches) for `steps` steps."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    k = Knobs(d=128, heads=4, blocks=2, seq=64, batch=8)
    use_kernels(k)
    model = TinyGPT(k)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, opt, [batch(k, s) for s in range(steps)]


def timed_steps(model, opt, batches, probe=None, clock=time.perf_counter,
                sync=None):
    """One training step per (idx, tgt) of `batches` (probe.step() after
    the optimizer); returns each step's time by `clock`. sync(), when
    given, runs before the clock is read each time (a device's queue)."""
    times = []
    for idx, tgt in batches:
        if sync is not None:
            sync()
        t0 = clock()
        opt.zero_grad()
        loss = model(idx, tgt)
        loss.backward()
        opt.step()
        if probe is not None:
            probe.step()
        if sync is not None:
            sync()
        times.append(clock() - t0)
    return times


def train(k: Knobs, steps, on_step=None, probe=None, lr=1e-3):
    """Trains `steps` steps. on_step(step, model) runs after each backward,
    before the optimizer; probe.step() after the optimizer. A probe that is
    not started yet is started once the model and optimizer are built (as a
    user would after loading a checkpoint), and stopped at the end."""
    torch.set_num_threads(1)
    torch.manual_seed(0)  # the global generator too (env.json records it)
    if os.environ.get("LOCKSTEP_NO_ONEDNN") == "1":  # scenarios_test.py: capped
        torch.backends.mkldnn.enabled = False
    use_kernels(k)
    if k.arch == "llama":
        model = TinyLlama(k)
    else:
        model = TinyGPT(k)
    if k.dtype == "bf16":
        model.to(torch.bfloat16)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=k.weight_decay)
    started_here = probe is not None and not getattr(probe, "started", True)
    if started_here:
        probe.start()
    losses = []
    for s in range(steps):
        opt.zero_grad()
        loss = model(*batch(k, s))
        loss.backward()
        losses.append(loss.item())
        if on_step is not None:
            on_step(s, model)
        if k.clip_grad > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), k.clip_grad)
        opt.step()
        if probe is not None:
            probe.step()
    if started_here:
        probe.stop()
    return model, losses


class MsprobeDumper:
    """msprobe's PrecisionDebugger (mindstudio-probe) behind the probe's
    start/step/stop, for train(): each step is dumped between start() and
    stop(), then step() moves on, as msprobe's documentation has it; after
    the last of `steps` it does not start again (an empty step folder)."""
    started = False

    def __init__(self, task, dump, steps):
        self.left = steps
        import json
        from msprobe.pytorch import PrecisionDebugger
        with open(dump + ".config.json", "w") as f:
            json.dump({"task": task, "dump_path": dump, "level": "L1",
                       task: {"data_mode": ["all"]}}, f)
        self.dbg = PrecisionDebugger(config_path=dump + ".config.json")

    def start(self):
        self.dbg.start()

    def step(self):
        self.dbg.stop()
        self.dbg.step()
        self.left -= 1
        if self.left > 0:
            self.dbg.start()

    def stop(self):
        if self.left > 0:
            self.dbg.stop()


def run_many(lib, jobs, parallel=2):
    """Runs each job (dump, task, steps, knobs dict[, dumper]) in a child
    forked from this process, `parallel` at a time, each dumped by a probe
    of its own (one per process): lockstep's, or msprobe's PrecisionDebugger
    when dumper is "msprobe"; a child's stderr goes to DUMP.stderr. torch is imported once, here: a torch 2.x import costs
    seconds, a fork milliseconds. Returns the dumps whose run failed.
    REQUIRES: this process has computed nothing with torch yet (a fork after
    an intra-op thread pool started is unsafe)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "python"))
    import lockstep_probe
    if any(job[4:] == ["msprobe"] for job in jobs):
        # Imported once here too (seconds), not in each child; it starts no
        # thread and computes nothing with torch.
        from msprobe.pytorch import PrecisionDebugger  # noqa: F401
    failed, running, queue = [], {}, list(jobs)
    while queue or running:
        while queue and len(running) < parallel:
            dump, task, steps, knobs, *dumper = queue.pop(0)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                    os.dup2(os.open(dump + ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
                    if dumper == ["msprobe"]:
                        probe = MsprobeDumper(task, dump, int(steps))
                    else:
                        cfg = {"task": task, "level": "L1", "dump_path": dump}
                        probe = lockstep_probe.Probe(cfg, lib=lib)
                    train(Knobs(**knobs), int(steps), probe=probe)
                    code = 0
                except BaseException:  # into DUMP.stderr: os._exit prints nothing
                    import traceback
                    traceback.print_exc()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
            running[pid] = dump
        pid, status = os.wait()
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(running[pid])
        del running[pid]
    return failed


if __name__ == "__main__":
    # tiny_gpt.py LIB DUMP TASK STEPS KNOBS_JSON: one run, dumped by the probe.
    # tiny_gpt.py --many LIB JOBS_JSON: run_many over a JSON list of
    #   [dump, task, steps, knobs]; exit 1 naming the runs that failed.
    import json
    import os
    import sys
    if sys.argv[1] == "--many":
        bad = run_many(sys.argv[2], json.loads(sys.argv[3]), min(2, os.cpu_count() or 1))
        for dump in bad:
            with open(dump + ".stderr", errors="replace") as f:
                lines = f.read().strip().splitlines() or ["(nothing on stderr)"]
            print("tiny_gpt: run " + dump + " failed: " + lines[-1], file=sys.stderr)
        sys.exit(1 if bad else 0)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "python"))
    import lockstep_probe
    lib, dump, task, steps, knobs = sys.argv[1:6]
    cfg = {"task": task, "level": "L1", "dump_path": dump}
    _, losses = train(Knobs(**json.loads(knobs)), int(steps),
                      probe=lockstep_probe.Probe(cfg, lib=lib))
    print(json.dumps(losses))
