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
