#!/usr/bin/python3
"""Writes the seed corpus of fuzz/safetensors_fuzz.cc into
fuzz/corpus/safetensors_fuzz/: small valid safetensors files (every dtype,
0-d and empty tensors, metadata, a header padded with spaces, an unaligned
header) and a few broken ones. Plain Python, no torch:
python3 tests/data/checkpoint/make_safetensors_seeds.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "..", "fuzz", "corpus", "safetensors_fuzz")
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def build(tensors, metadata=None, pad=8):
    """tensors: [(name, dtype, shape)], data filled with a byte pattern."""
    header, data = {}, b""
    for name, dtype, shape in tensors:
        n = SIZES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + n]}
        data += bytes((len(data) + i) % 251 for i in range(n))
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % pad)
    return struct.pack("<Q", len(text)) + text + data


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "all_dtypes": build([(f"t_{d}", d, [2, 3]) for d in SIZES]),
        "scalar_and_empty": build([("s", "F32", []), ("e", "F16", [0, 3]),
                                   ("w", "BF16", [4])]),
        "metadata": build([("w", "F32", [3])], {"format": "pt", "k": "v"}),
        "unaligned": build([("a", "I8", [3]), ("b", "F64", [2])], pad=0),
        "empty_file_header": build([]),
    }
    good = seeds["all_dtypes"]
    seeds["truncated"] = good[: len(good) - 5]
    seeds["huge_header_len"] = struct.pack("<Q", 1 << 62) + good[8:]
    seeds["bad_json"] = good[:8] + b"{\"a\": [" + good[15:]
    for name, b in seeds.items():
        with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()
