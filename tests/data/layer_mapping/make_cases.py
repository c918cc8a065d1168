"""Writes the inputs of tests/compare/layer_mapping_test.cc (see README.md).

  python3 make_cases.py [OUT_DIR] [--mirror MSPROBE_GIT_DIR] [--msprobe]

OUT_DIR defaults to this folder. Writes the synthetic cases s1..s6 (small
MindSpore/PyTorch dump pairs with construct.json, stack.json and rule files,
each made to show one behaviour of msprobe's -lm); with --mirror (a clone of
msprobe at 8ff00da3), also extracts msprobe's own layer-mapping test set A
into msprobe_A/. msprobe 26.2 was run on exactly these files to give
expected/*.yaml; with --msprobe (run by a Python with mindstudio-probe 26.2
installed), this script runs it on the s7 case and writes expected/S7_*.yaml.
"""
import json
import os
import subprocess
import sys

MS, PT = "mindspore", "pytorch"


def tensor(fw, dtype):
    t = {"type": "mindspore.Tensor" if fw == MS else "torch.Tensor", "dtype": dtype,
         "shape": [2, 2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 2.0}
    if fw == PT:
        t["requires_grad"] = False
    return t


def dtype(fw):
    return "Float32" if fw == MS else "torch.float32"


def forward(fw, params=()):
    e = {"input_args": [tensor(fw, dtype(fw))], "input_kwargs": {}, "output": [tensor(fw, dtype(fw))]}
    if params:
        e["parameters"] = {p: tensor(fw, dtype(fw)) for p in params}
    return e


def backward(fw):
    return {"input": [tensor(fw, dtype(fw))], "output": [tensor(fw, dtype(fw))]}


def grads(fw, names):
    return {n: [tensor(fw, dtype(fw))] for n in names}


def side(root, fw, data, construct, stack=True):
    """dump.json, construct.json (construct: {entry: parent}) and, unless
    stack is False, a stack.json with an empty stack per entry."""
    d = os.path.join(root, fw)
    os.makedirs(d, exist_ok=True)
    dump = {"task": "statistics", "level": "mix", "framework": fw, "dump_data_dir": None, "data": data}
    with open(os.path.join(d, "dump.json"), "w") as f:
        json.dump(dump, f, indent=1)
    with open(os.path.join(d, "construct.json"), "w") as f:
        json.dump(construct, f, indent=1)
    if stack:
        with open(os.path.join(d, "stack.json"), "w") as f:
            json.dump({k: [] for k in data}, f)


def text(path, content):
    with open(path, "w") as f:
        f.write(content)


def s1_backward_index(r):
    # A call index (1) that differs from the backward ordinal (0).
    for fw, api in ((MS, "Mint.matmul"), (PT, "Torch.matmul")):
        names = [f"{api}.0.forward", f"{api}.1.forward", f"{api}.1.backward"]
        data = {names[0]: forward(fw), names[1]: forward(fw), names[2]: backward(fw)}
        side(r, fw, data, {n: "" for n in names})


def s2_renumber_layers(r):
    # Pipeline stage 2: MindSpore's layers 4 and 5 are PyTorch's 0 and 1.
    for fw, cell, api, first in ((MS, "Cell", "Mint.add", 4), (PT, "Module", "Torch.add", 0)):
        top = f"{cell}.net.encoder.ParallelTransformer.forward.0"
        layers = [f"{cell}.net.encoder.layers.{first + k}.ParallelTransformerLayer.forward.0"
                  for k in (0, 1)]
        data = {top: forward(fw), layers[0]: forward(fw), layers[1]: forward(fw),
                f"{api}.0.forward": forward(fw)}
        construct = {top: f"{cell}.net.Net.forward.0", layers[0]: top, layers[1]: top,
                     f"{api}.0.forward": layers[1]}
        side(r, fw, data, construct)


def s3_rules(r):
    # Rules keyed by class and by attribute name, a two-level key, a '('
    # note in a value, the legacy top key Cell, an undumped parent cell.
    for fw, cell, net, inner, cls, sub, api in (
            (MS, "Cell", "network", "inner.proj", "Dense", "sub", "Mint.matmul"),
            (PT, "Module", "net", "proj2", "Linear", "sub2", "Torch.matmul")):
        block = f"{cell}.{net}.block.Block.forward.0"
        proj = f"{cell}.{net}.block.{inner}.{cls}.forward.0"
        other = f"{cell}.{net}.other.{sub}.{cls}.forward.0"
        data = {block: forward(fw), proj: forward(fw), f"{api}.0.forward": forward(fw),
                other: forward(fw)}
        side(r, fw, data, {block: "", proj: block, f"{api}.0.forward": proj, other: ""})
    text(os.path.join(r, "by_class.yaml"),
         "Cell:\n  network: net\nBlock:\n  inner.proj: proj2(renamed)\nOther:\n  sub: sub2\n")
    text(os.path.join(r, "by_attr_name.yaml"),
         "Cell:\n  network: net\nBlock:\n  inner.proj: proj2\nother:\n  sub: sub2\n")


def s4_no_stack(r):
    # construct.json without stack.json on the MindSpore side.
    side(r, MS, {"Mint.cos.0.forward": forward(MS)}, {"Mint.cos.0.forward": ""}, stack=False)
    side(r, PT, {"Torch.cos.0.forward": forward(PT)}, {"Torch.cos.0.forward": ""})


def s5_params(r):
    # A cell with parameters and (old-layout) parameters_grad, renamed by a rule.
    for fw, cell, net in ((MS, "Cell", "network"), (PT, "Module", "net")):
        fwd, grad = f"{cell}.{net}.fc.Dense.forward.0", f"{cell}.{net}.fc.Dense.parameters_grad"
        side(r, fw, {fwd: forward(fw, ("weight", "bias")), grad: grads(fw, ("weight", "bias"))},
             {fwd: "", grad: ""})
    text(os.path.join(r, "cell_names.yaml"), "Cell:\n  network: net\n")


def s6_params_grad_renamed(r):
    # Current-layout parameters_grad (".parameters_grad.0") under a renamed cell.
    for fw, cell, net, fc, cls in ((MS, "Cell", "network", "fc", "Dense"),
                                   (PT, "Module", "net", "fc2", "Linear")):
        fwd = f"{cell}.{net}.{fc}.{cls}.forward.0"
        grad = f"{cell}.{net}.{fc}.{cls}.parameters_grad.0"
        side(r, fw, {fwd: forward(fw), grad: grads(fw, ("weight",))}, {fwd: "", grad: ""})
    text(os.path.join(r, "layer_mapping.yaml"), "Cell:\n  network: net\nnetwork:\n  fc: fc2\n")


def s7_scopes(r):
    # Scopes beyond msprobe's own cases: layers renumbered from a digit run
    # inside a name (x7, x9) and to "nan" where no layer has one, backward
    # entries on their forward's scope, framework frames that end at
    # MindSpore's construct and PyTorch's forward, a Primitive's stack left
    # out, a parent without a dot, current-layout parameters_grad, an entry
    # without rows, Megatron's [parent, micro_step] parents, and rules of
    # two levels on both sides.
    ms_add = ["File /x/site-packages/mindspore/nn/cell.py, line 1, in _run_construct, y",
              "File /x/msprobe/mindspore/dump/hook_cell/wrap_api.py, line 2, in api_function, "
              "return ApiTemplate(a)(b)",
              "File /x/site-packages/mindspore/ops/functional.py, line 3, in tensor_add, z",
              "File /x/site-packages/mindspore/common/tensor.py, line 4, in __add__, z",
              "File /u/model.py, line 5, in construct, w",
              "File /u/train.py, line 6, in main, v"]
    pt_add = ["File /x/msprobe/pytorch/hook_module/wrap_torch.py, line 1, in torch_template, "
              "TorchOPTemplate(a)(b)",
              "File /x/site-packages/torch/_tensor.py, line 2, in __radd__, z",
              "File /x/site-packages/torch/nn/modules/module.py, line 3, in _call_impl, z",
              "File /u/model.py, line 4, in forward, w",
              "File /u/train.py, line 5, in main, v"]
    for fw in (MS, PT):
        ms = fw == MS
        c = "Cell" if ms else "Module"
        enc, dec = f"{c}.net.enc.ParallelTransformer.forward.0", f"{c}.net.dec.ParallelTransformer.forward.0"
        l0 = f"{c}.net.enc.layers.{'x7' if ms else '0'}.Layer.forward.0"
        l1 = f"{c}.net.enc.layers.{'x9' if ms else '2'}.Layer.forward.0"
        l1b = l1.replace("forward", "backward")
        head = f"{c}.net.dec.layers.{'head' if ms else 'tail'}.Layer.forward.0"
        add, norm = ("Mint.add.0", "Primitive.norm.RmsNorm.0") if ms else ("Torch.add.0", "NPU.npu_rms_norm.0")
        mul, relu = ("Mint.mul.0" if ms else "Torch.mul.0"), "Functional.relu.0.forward"
        grad = f"{c}.net.fc.{'Dense' if ms else 'Linear'}.parameters_grad.0"
        data = {enc: forward(fw), l0: forward(fw), l1: forward(fw), l1b: backward(fw),
                dec: forward(fw), head: forward(fw), add + ".forward": forward(fw),
                add + ".backward": backward(fw), norm + ".forward": forward(fw), relu: forward(fw),
                grad: grads(fw, ("weight",)), mul + ".forward": {} if ms else forward(fw),
                mul + ".backward": backward(fw)}
        parents = {enc: f"{c}.net.Net.forward.0", l0: enc, l1: enc, l1b: enc.replace("forward", "backward"),
                   dec: f"{c}.net.Net.forward.0", head: dec, add + ".forward": l1, add + ".backward": "",
                   norm + ".forward": l1, relu: "nodot", grad: "", mul + ".forward": "",
                   mul + ".backward": ""}
        if not ms:
            parents = {k: [v, 0] if k in (l0, l1) else v for k, v in parents.items()}
            parents["megatron_micro_step_number"] = 1
        side(r, fw, data, parents)
        stacks = {k: [] for k in data}
        stacks[add + ".forward"] = ms_add if ms else pt_add
        stacks[norm + ".forward"] = ms_add if ms else []
        with open(os.path.join(r, fw, "stack.json"), "w") as f:
            json.dump(stacks, f, indent=1)
    text(os.path.join(r, "rules.yaml"),
         "TopLayer:\n  net: net\nLayer:\n  __add__.add: _call_impl.add\n"
         "  RmsNorm: npu_rms_norm(fused)\n")


def extract_set_a(mirror, out):
    base = "test/resources/layer_mapping"
    names = ["layer_mapping.yaml"] + [f"{fw}/{f}.json" for fw in (MS, PT)
                                      for f in ("dump", "construct", "stack")]
    for name in names:
        path = os.path.join(out, "msprobe_A", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        blob = subprocess.run(["git", "-C", mirror, "show", f"8ff00da3:{base}/{name}"],
                              capture_output=True, check=True).stdout
        with open(path, "wb") as f:
            f.write(blob)


def expect_with_msprobe(out):
    """msprobe's own data mapping for s7, with and without its rules."""
    import glob
    import shutil
    import tempfile
    import types
    import msprobe
    # msprobe.mindspore's __init__ imports MindSpore: an empty package instead.
    pkg = types.ModuleType("msprobe.mindspore")
    pkg.__path__ = [os.path.join(os.path.dirname(msprobe.__file__), "mindspore")]
    sys.modules["msprobe.mindspore"] = pkg
    from msprobe.core.compare.layer_mapping import generate_data_mapping_by_layer_mapping
    r = os.path.join(out, "s7_scopes")
    sides = {"npu_path": os.path.join(r, MS, "dump.json"), "bench_path": os.path.join(r, PT, "dump.json")}
    for name, rules in (("S7_lm_rules", os.path.join(r, "rules.yaml")), ("S7_lm_nofile", True)):
        with tempfile.TemporaryDirectory() as tmp:
            generate_data_mapping_by_layer_mapping(sides, rules, tmp)
            written = glob.glob(os.path.join(tmp, "data_mapping_*.yaml"))
            shutil.copy(written[0], os.path.join(out, "expected", name + ".yaml"))


def main(argv):
    run_msprobe = "--msprobe" in argv
    argv = [a for a in argv if a != "--msprobe"]
    mirror = None
    if "--mirror" in argv:
        i = argv.index("--mirror")
        mirror = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    out = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for make in (s1_backward_index, s2_renumber_layers, s3_rules, s4_no_stack, s5_params,
                 s6_params_grad_renamed, s7_scopes):
        make(os.path.join(out, make.__name__))
    if mirror:
        extract_set_a(mirror, out)
    if run_msprobe:
        expect_with_msprobe(out)


if __name__ == "__main__":
    main(sys.argv)
