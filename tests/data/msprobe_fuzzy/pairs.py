"""The pairs of dumps whose msprobe fuzzy-match tables are in expected/
(see README.md); shared by make_expected.py and the test."""
import glob
import gzip
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def pairs(fixtures):
    """name -> (target dump.json, baseline dump.json); .gz paths allowed.
    msprobe's own dumps only where `fixtures` (tests/fixtures) has them."""
    gpt = lambda n: os.path.join(HERE, f"gpt_{n}.dump.json.gz")
    toy = lambda d: glob.glob(os.path.join(fixtures, "msprobe", "toy", d,
                                           "out", "step0", "*", "dump.json"))[0]
    ours = {
        "gpt_insert_linear": (gpt("insert_linear"), gpt("ref")),
        "gpt_decomposed_gelu": (gpt("decomposed_gelu"), gpt("ref")),
        "gpt_insert_mul_bf16": (gpt("insert_mul_bf16"), gpt("ref")),
    }
    if not fixtures or not os.path.isdir(os.path.join(fixtures, "msprobe")):
        return ours
    qs = os.path.join(fixtures, "msprobe", "quick_start")
    return {
        **ours,
        "quick_start_step1_vs_step0": (
            os.path.join(qs, "step1", "proc2016", "dump.json"),
            os.path.join(qs, "step0", "proc2016", "dump.json")),
        "toy_unmatched": tuple(
            os.path.join(fixtures, "msprobe", "toy", "unmatched", s,
                         "dump.json") for s in ("npu", "bench")),
        "toy_md5B_vs_md5A": (toy("md5B"), toy("md5A")),
        "toy_dumpB_vs_dumpA": (toy("dumpB"), toy("dumpA")),
        "toy_tensC_vs_dumpA": (toy("tensC"), toy("dumpA")),
    }


def plain(path, tmp):
    """A readable dump.json path: .gz files are unpacked into tmp."""
    if not path.endswith(".gz"):
        return path
    out = os.path.join(tmp, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


# Small md5-mode dumps made up for msprobe HEAD's fuzzy match (msprobe 26:
# rows paired by name alone, in queues; no table at all when a target row
# stays unpaired). md5 mode, because in plain statistics mode msprobe 26's
# fuzzy table lacks a column (data_name) and every row comes out unpaired. Each entry is (name, [(dtype, shape) of input 0, 1, ...],
# [(dtype, shape) of output 0, ...]).
F32 = "torch.float32"
MADE_UP = {
    # An inserted multiply of another shape in the baseline: msprobe HEAD
    # pairs the target's __mul__.0 with the baseline's __mul__.0 (its
    # shape unlike), 1.2.2 with __mul__.1 (the same shape).
    "made_mul_inserted_in_baseline": (
        [("Tensor.__mul__.0.forward", [(F32, [4, 8]), (F32, [4, 8])], [(F32, [4, 8])]),
         ("Functional.relu.0.forward", [(F32, [4, 8])], [(F32, [4, 8])])],
        [("Tensor.__mul__.0.forward", [(F32, [2]), (F32, [2])], [(F32, [2])]),
         ("Tensor.__mul__.1.forward", [(F32, [4, 8]), (F32, [4, 8])], [(F32, [4, 8])]),
         ("Functional.relu.0.forward", [(F32, [4, 8])], [(F32, [4, 8])])]),
    # The target's __mul__.1 after an inserted __mul__.0 of another shape,
    # the baseline with two multiplies as well: HEAD pairs by index order.
    "made_mul_shapes_swapped": (
        [("Tensor.__mul__.0.forward", [(F32, [3]), (F32, [3])], [(F32, [3])]),
         ("Tensor.__mul__.1.forward", [(F32, [4, 8]), (F32, [4, 8])], [(F32, [4, 8])])],
        [("Tensor.__mul__.0.forward", [(F32, [4, 8]), (F32, [4, 8])], [(F32, [4, 8])]),
         ("Tensor.__mul__.1.forward", [(F32, [5]), (F32, [5])], [(F32, [5])])]),
    # Float dtypes pair, others are paired by name and then cut (HEAD's
    # dtype condition): the int64 input loses its baseline row, the float
    # output next to it keeps it.
    "made_dtypes": (
        [("Functional.relu.0.forward", [("torch.bfloat16", [4])], [("torch.float16", [4])]),
         ("Functional.relu.1.forward", [("torch.int64", [4])], [(F32, [4])])],
        [("Functional.relu.0.forward", [(F32, [4])], [(F32, [4])]),
         ("Functional.relu.1.forward", [(F32, [4])], [(F32, [4])])]),
    # An entry the baseline lacks, ahead of the rest: a target row stays
    # unpaired, so msprobe HEAD writes no table (lockstep follows 1.2.2).
    "made_target_extra": (
        [("Functional.gelu.0.forward", [(F32, [4])], [(F32, [4])]),
         ("Functional.relu.0.forward", [(F32, [4])], [(F32, [4])])],
        [("Functional.relu.0.forward", [(F32, [4])], [(F32, [4])])]),
}


def made_up_dump(entries, path):
    """Writes an md5-mode dump.json of `entries` (see MADE_UP) to path."""
    import json

    def stat(dtype, shape):
        return {"type": "torch.Tensor", "dtype": dtype, "shape": shape,
                "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.0,
                "requires_grad": False, "md5": "00000000"}
    data = {name: {"input_args": [stat(*t) for t in ins], "input_kwargs": {},
                   "output": [stat(*t) for t in outs]}
            for name, ins, outs in entries}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch",
                   "dump_data_dir": None, "data": data}, f, indent=1)
    return path


def made_up_pairs(tmp):
    """name -> (target dump.json, baseline dump.json) of MADE_UP, in tmp."""
    return {name: (made_up_dump(t, os.path.join(tmp, name, "target", "dump.json")),
                   made_up_dump(b, os.path.join(tmp, name, "baseline", "dump.json")))
            for name, (t, b) in MADE_UP.items()}
