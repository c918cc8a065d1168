#!/usr/bin/python3
"""Expected outputs of Python's json module for tests/format/json_writer_test.cc
and dump_writer_test.cc.

Run with Debian's /usr/bin/python3 from this directory:
    /usr/bin/python3 make_expected.py [FIXTURES_DIR]
FIXTURES_DIR defaults to ../../fixtures (tests/fixtures).

- <case>.indent1.json: json.dump(json.load(f), out, indent=1) for the fixture
  dump.json files that msprobe did not write with indent=1 (msprobe's own
  test inputs, indent=4). The others are already in that form: the test
  compares against the fixture itself.
- tricky.indent1.json / tricky.compact.json: a document of hard cases
  (float repr boundaries, random doubles, big ints, escapes, astral
  characters, NaN/Infinity, empty containers) as json.dump writes it with
  indent=1 and with indent=None.
"""
import json
import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REINDENT = [
    "cross_framework/pytorch", "cross_framework/mindspore",
    "layer_mapping/pytorch", "layer_mapping/mindspore",
]


def tricky():
    rng = random.Random(20261121)
    floats = [0.0, -0.0, 1.0, 0.1, 1e16, 1e15, 123456789012345678.0, 1e-4, 1e-5,
              0.0001, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
              65504.0, 1.0 / 3.0, 2.0 ** 53 + 2, float("nan"), float("inf"),
              float("-inf")]
    while len(floats) < 300:
        bits = rng.getrandbits(64)
        x = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isfinite(x):
            floats.append(x)
    floats += [rng.uniform(-10, 10) for _ in range(100)]
    floats += [float(struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0])
               for _ in range(100)]
    floats = [f for f in floats if not (isinstance(f, float) and math.isnan(f))] + [
        float("nan")]
    ints = [0, -1, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 64,
            10 ** 30, -10 ** 40]
    strings = ["", "plain", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "quote\" back\\ slash/",
               "caf\u00e9", "\u4e2d\u6587", "\U0001f600 \U00010000 \U0010ffff",
               "\u0080\u07ff\u0800\uffff", "\u2028\u2029", "'single'",
               "File /a/b.py, line 3, in f, \n x = y(z)", "lone low surrogate \udc00"]
    doc = {
        "floats": floats,
        "ints": ints,
        "strings": strings,
        "empties": [[], {}, [[]], [{}], {"a": []}, {"b": {}}],
        "literals": [True, False, None],
        "keys": {s: i for i, s in enumerate(strings)},
        "nested": {"x": [1, [2, [3, {"y": [4.5, None]}]]]},
    }
    return doc


def main():
    fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "..", "fixtures")
    for case in REINDENT:
        with open(os.path.join(fixtures, "msprobe", case, "dump.json")) as f:
            obj = json.load(f)
        name = case.replace("/", "_") + ".indent1.json"
        with open(os.path.join(HERE, name), "w") as out:
            json.dump(obj, out, indent=1)
    doc = tricky()
    with open(os.path.join(HERE, "tricky.indent1.json"), "w") as out:
        json.dump(doc, out, indent=1)
    with open(os.path.join(HERE, "tricky.compact.json"), "w") as out:
        json.dump(doc, out)


if __name__ == "__main__":
    main()
