#!/usr/bin/python3
"""Writes the .npy test files for tests/format/npy_test.cc with numpy.

Run with Debian's /usr/bin/python3 (numpy 1.24) from this directory:
    /usr/bin/python3 make_npy.py
Each file is described in manifest.json: the lockstep dtype name, the shape,
the expected C-order little-endian bytes (hex) after reading, and whether
lockstep's EncodeNpy must reproduce the file byte for byte.
"""
import io
import json
import os

import numpy as np
import numpy.lib.format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))
LOCKSTEP_NAMES = {
    "f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8",
    "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
    "u2": "uint16", "u4": "uint32", "u8": "uint64", "b1": "bool",
}
manifest = []


def sample(code, shape):
    n = int(np.prod(shape))
    if code == "b1":
        return (np.arange(n) % 3 == 1).reshape(shape)
    dt = np.dtype("<" + code)
    if dt.kind == "f":
        base = [0.5, -0.0, 1.0 / 3.0, np.inf, -np.inf, np.nan, 65504.0, 1e-7]
        vals = [base[i % len(base)] * (1 + i) for i in range(n)]
        return np.array(vals, dtype=dt).reshape(shape)
    info = np.iinfo(dt)
    vals = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 7]
    return np.array([vals[i % len(vals)] for i in range(n)], dtype=dt).reshape(shape)


def add(name, data, dtype_name, expected, roundtrip):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    manifest.append({
        "file": name,
        "dtype": dtype_name,
        "shape": list(expected.shape),
        "data_hex": np.ascontiguousarray(expected).astype(
            expected.dtype.newbyteorder("<")).tobytes().hex(),
        "roundtrip": roundtrip,
    })


def saved(a, **kw):
    buf = io.BytesIO()
    if kw:
        npformat.write_array(buf, a, **kw)
    else:
        np.save(buf, a)
    return buf.getvalue()


def with_header(d, payload, version=None):
    buf = io.BytesIO()
    npformat._write_array_header(buf, d, version)
    return buf.getvalue() + payload


def main():
    for code, name in LOCKSTEP_NAMES.items():
        a = sample(code, (2, 3))
        add(f"{code}_le.npy", saved(a), name, a, True)
        if code not in ("i1", "u1", "b1"):
            b = a.astype(a.dtype.newbyteorder(">"))
            add(f"{code}_be.npy", saved(b), name, a, False)
    f = np.asfortranarray(sample("f4", (2, 3, 4)))
    add("f4_fortran.npy", saved(f), "float32", np.ascontiguousarray(f), False)
    f = np.asfortranarray(sample("i2", (3, 2)))
    add("i2_fortran.npy", saved(f), "int16", np.ascontiguousarray(f), False)
    f = np.asfortranarray(sample("f8", (2, 3)).astype(">f8"))
    add("f8_be_fortran.npy", saved(f), "float64", np.ascontiguousarray(f).astype("<f8"), False)
    f = np.asfortranarray(sample("u1", (4,)))
    add("u1_fortran_1d.npy", saved(f), "uint8", f, True)
    a = sample("f4", (3, 2))
    add("f4_v2.npy", saved(a, version=(2, 0)), "float32", a, False)
    add("f4_v3.npy", saved(a, version=(3, 0)), "float32", a, False)
    add("f4_0d.npy", saved(np.array(3.5, dtype="<f4")), "float32", np.array(3.5, "<f4"), True)
    add("i8_0d.npy", saved(np.array(-7, dtype="<i8")), "int64", np.array(-7, "<i8"), True)
    e = np.zeros((0,), dtype="<f4")
    add("f4_empty.npy", saved(e), "float32", e, True)
    e = np.zeros((2, 0, 3), dtype="<i4")
    add("i4_empty_3d.npy", saved(e), "int32", e, True)
    big = (np.arange(335, dtype="<f2") * 0.37).reshape(5, 67)
    add("f2_wide.npy", saved(big), "float16", big, True)
    # bfloat16: numpy has none; raw 16-bit values under descr 'bfloat16'.
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0xFFC1, 0x0001, 0x8000], dtype="<u2")
    add("bf16_descr.npy",
        with_header({"descr": "bfloat16", "fortran_order": False, "shape": (2, 3)},
                    bits.tobytes()),
        "bfloat16", bits.reshape(2, 3), True)
    widened = (bits.astype("<u4") << 16).view("<f4").reshape(2, 3)
    add("bf16_widened.npy", saved(widened), "float32", widened, True)
    # Python 2 numpy wrote longs with an 'L'; a 16-byte aligned old header
    # that leaves float64 data at an odd offset.
    a = sample("i4", (2, 3))
    header = b"{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }  \n"
    add("i4_py2_long.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
        + a.tobytes(), "int32", a, False)
    a = sample("f8", (3,))
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n"
    add("f8_misaligned.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
        + a.tobytes(), "float64", a, False)
    with open(os.path.join(HERE, "v2_void.npy"), "wb") as f:
        f.write(saved(np.zeros((2,), dtype="V2")))
    with open(os.path.join(HERE, "c8_complex.npy"), "wb") as f:
        f.write(saved(np.zeros((2,), dtype="<c8")))
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
