#!/usr/bin/python3
"""Writes the .pt test files for tests/format/pt_reader_test.cc.

Run with Debian's torch (1.13): /usr/bin/python3 tests/data/pt/make_pt.py
For each case it writes <name>.pt (what torch.save wrote) and <name>.bin (the
tensor's values in C order, little-endian: what a reader must return), and one
line in manifest.tsv: name, torch dtype, shape (comma-separated, "" for 0-d),
and a note. Cases that torch itself cannot write (byteorder "big", deflated
entries, a renamed archive prefix) are rewritten with Python's zipfile.
Reruns give the same bytes except legacy.pt (its storage keys are object
ids). Also writes the fuzz seeds in fuzz/corpus/{pt_fuzz,pickle_fuzz}/.
"""
import io
import os
import shutil
import struct
import sys
import zipfile

import torch

OUT = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(OUT, "..", "..", "..", "fuzz", "corpus")
torch.manual_seed(0)
rows = []


def raw_bytes(t):
    c = t.detach().contiguous()
    if c.dtype == torch.bfloat16:
        c = c.view(torch.int16)
    return c.numpy().tobytes()


def shape_str(t):
    return ",".join(str(d) for d in t.shape)


def emit(name, t, note, **save_kwargs):
    torch.save(t, os.path.join(OUT, name + ".pt"), **save_kwargs)
    record(name, t, note)


def record(name, t, note):
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(raw_bytes(t))
    rows.append((name, str(t.dtype), shape_str(t), note))


def fixed_time(name, compression):
    """A ZipInfo with a fixed timestamp, so that regenerating is stable."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = compression
    return info


def rewrite(src_name, dst_name, t, note, compression=zipfile.ZIP_STORED,
            byteorder=None, prefix=None, swap=False):
    """Copies src_name.pt entry by entry with Python's zipfile (no 64-byte
    alignment), optionally renaming the prefix, deflating, adding a
    byteorder record and byte-swapping the storages."""
    src = zipfile.ZipFile(os.path.join(OUT, src_name + ".pt"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as dst:
        for info in src.infolist():
            data = src.read(info)
            old_prefix, rest = info.filename.split("/", 1)
            if swap and rest.startswith("data/"):
                size = t.element_size()
                data = b"".join(data[i:i + size][::-1]
                                for i in range(0, len(data), size))
            dst.writestr(fixed_time((prefix or old_prefix) + "/" + rest,
                                    compression), data)
        if byteorder is not None:
            dst.writestr(fixed_time((prefix or old_prefix) + "/byteorder",
                                    compression), byteorder)
    with open(os.path.join(OUT, dst_name + ".pt"), "wb") as f:
        f.write(buf.getvalue())
    record(dst_name, t, note)


def main():
    specials = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"),
                float("nan"), 65504.0, 1e-3]
    for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
        t = torch.tensor(specials, dtype=dt).reshape(3, 3)
        emit(str(dt)[6:], t, "every dtype; NaN, Inf, -0")
    ints = {torch.int64: [-(2**63), 2**63 - 1, -1, 0, 7, 123456789012],
            torch.int32: [-(2**31), 2**31 - 1, -1, 0, 7, 1234567],
            torch.int16: [-32768, 32767, -1, 0, 7, 1234],
            torch.int8: [-128, 127, -1, 0, 7, 12],
            torch.uint8: [0, 255, 1, 128, 7, 12]}
    for dt, vals in ints.items():
        emit(str(dt)[6:], torch.tensor(vals, dtype=dt).reshape(2, 3),
             "every dtype; extremes")
    emit("bool", torch.tensor([[True, False, True], [False, False, True]]),
         "every dtype")
    emit("scalar_0d", torch.tensor(3.25), "0-d")
    emit("empty", torch.zeros(0), "empty [0]")
    emit("empty_2x0x3", torch.zeros(2, 0, 3, dtype=torch.float16), "empty")
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    emit("transposed", base.t(), "non-contiguous: transposed view")
    emit("slice_offset", base[1:, 2:5], "non-contiguous slice, offset 8")
    emit("rows_offset", base[2:], "contiguous view with storage offset 12")
    emit("step2", base[:, ::2], "non-contiguous: stride 2")
    emit("expanded", torch.tensor([1.0, 2.0, 3.0]).expand(4, 3),
         "stride-0 expand: storage smaller than the tensor")
    emit("permuted_3d", torch.arange(60, dtype=torch.int64)
         .reshape(3, 4, 5).permute(2, 0, 1), "non-contiguous 3-d")
    w = torch.randn(5, 4, requires_grad=True)
    emit("requires_grad", w, "leaf with requires_grad=True")
    p = torch.nn.Parameter(torch.randn(3, 2))
    emit("parameter", p, "nn.Parameter: _rebuild_parameter")
    x = torch.randn(6, 5)
    emit("msprobe_style", x.clone().contiguous().detach(),
         "as msprobe saves")
    emit("proto4", torch.arange(7, dtype=torch.int32), "pickle protocol 4",
         pickle_protocol=4)
    emit("randn_1000", torch.randn(1000), "1000 floats")
    y = torch.randn(2, 3)
    torch.save(y, os.path.join(OUT, "legacy.pt"),
               _use_new_zipfile_serialization=False)
    rows.append(("legacy", str(y.dtype), shape_str(y),
                 "legacy (pre-1.6) format: NotSupported"))
    rewrite("float32", "renamed_prefix", torch.tensor(specials).reshape(3, 3),
            "zip prefix differs from the file stem", prefix="archive")
    rewrite("float64", "deflated", torch.tensor(specials, dtype=torch.float64)
            .reshape(3, 3), "DEFLATE entries", compression=zipfile.ZIP_DEFLATED)
    rewrite("int32", "byteorder_little",
            torch.tensor(ints[torch.int32], dtype=torch.int32).reshape(2, 3),
            "byteorder 'little', unaligned data", byteorder="little")
    rewrite("int32", "byteorder_big",
            torch.tensor(ints[torch.int32], dtype=torch.int32).reshape(2, 3),
            "byteorder 'big': storages byte-swapped", byteorder="big",
            swap=True)
    t = base[1:, 2:5]
    rewrite("slice_offset", "byteorder_big_strided", t,
            "byteorder 'big' with offset and strides", byteorder="big",
            swap=True)
    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("# name\tdtype\tshape\tnote  (written by make_pt.py, torch "
                + torch.__version__ + ")\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    write_fuzz_seeds()


def zero_crcs(data):
    """Sets every central-directory CRC to 0 ("not computed"), so that
    fuzzed data.pkl bytes reach the pickle machine instead of failing the
    CRC check."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    while pos >= 0:
        struct.pack_into("<I", out, pos + 16, 0)
        pos = out.find(b"PK\x01\x02", pos + 4)
    return bytes(out)


def write_fuzz_seeds():
    """Seeds for fuzz/pt_fuzz.cc and fuzz/pickle_fuzz.cc."""
    pt_dir = os.path.join(FUZZ, "pt_fuzz")
    pkl_dir = os.path.join(FUZZ, "pickle_fuzz")
    os.makedirs(pt_dir, exist_ok=True)
    os.makedirs(pkl_dir, exist_ok=True)
    for stem in ["float32", "proto4", "parameter", "transposed",
                 "byteorder_big", "deflated", "slice_offset", "empty_2x0x3",
                 "expanded", "scalar_0d"]:
        src = os.path.join(OUT, stem + ".pt")
        shutil.copy(src, os.path.join(pt_dir, stem + ".pt"))
        with open(src, "rb") as f:
            data = f.read()
        if stem in ("float32", "proto4", "parameter", "byteorder_big"):
            with open(os.path.join(pt_dir, stem + "_nocrc.pt"), "wb") as f:
                f.write(zero_crcs(data))
        z = zipfile.ZipFile(src)
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
        with open(os.path.join(pkl_dir, stem + ".pkl"), "wb") as f:
            f.write(z.read(pkl))


if __name__ == "__main__":
    sys.exit(main())
