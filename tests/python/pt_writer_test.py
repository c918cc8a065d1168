"""Loads the .pt files lockstep's writer makes (write_pt_corpus) with
Debian's torch, as msprobe does: torch.load(path, map_location="cpu",
weights_only=True). Every file must give exactly the dtype, shape and
element bytes written, not require grad, be contiguous, and (torch 1.x,
whose layout the writer follows) be byte for byte what torch.save writes
for that tensor under the same file name; torch 2.x's torch.save adds
records of its own, and there loading is what is checked.
Files with ZIP64 records forced small are checked with Python's zipfile.

  /usr/bin/python3 tests/python/pt_writer_test.py build/bin/write_pt_corpus
"""
import os
import subprocess
import sys
import tempfile
import zipfile

import torch


def pattern(dtype, numel):
    """The element bytes write_pt_corpus wrote."""
    size = torch.empty(0, dtype=dtype).element_size()
    if dtype == torch.bool:
        return bytes(int(i % 3 == 0) for i in range(numel))
    return bytes((i * 37 + 11) % 256 for i in range(numel * size))


def raw(t):
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.view(torch.int16)
    return t.contiguous().numpy().tobytes()


def main():
    corpus = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ours")
        os.mkdir(out)
        os.mkdir(os.path.join(tmp, "torch"))
        lines = subprocess.run([corpus, out], check=True, capture_output=True,
                               text=True).stdout.splitlines()
        assert len(lines) == 10 * 9 * 2, len(lines)
        for line in lines:
            name, dtype_name, shape_text = line.split("\t")
            path = os.path.join(out, name)
            shape = [int(d) for d in shape_text.split(",")] if shape_text else []
            want_dtype = getattr(torch, dtype_name[len("torch."):])
            numel = 1
            for d in shape:
                numel *= d
            if name.endswith(".zip64.pt"):
                # ZIP64 records forced at 64 bytes: Python's zipfile checks
                # them (torch's miniz refuses a 32-bit offset of 0xFFFFFFFF
                # past the end of so small an archive; a real file past
                # 4 GiB is that long).
                z = zipfile.ZipFile(path)
                assert z.testzip() is None, name
                stem = name[:-3]
                assert z.namelist() == [stem + "/data.pkl", stem + "/data/0",
                                        stem + "/version"], z.namelist()
                assert z.read(stem + "/data/0") == pattern(want_dtype, numel)
                assert any(i.extra[:2] == b"\x01\x00" for i in z.infolist())
                continue
            t = torch.load(path, map_location="cpu", weights_only=True)
            assert isinstance(t, torch.Tensor), (name, type(t))
            assert t.dtype == want_dtype, (name, t.dtype)
            assert list(t.shape) == shape, (name, t.shape)
            assert not t.requires_grad and t.is_contiguous(), name
            assert raw(t) == pattern(want_dtype, t.numel()), name
            if int(torch.__version__.split(".")[0]) >= 2:
                continue  # 2.x's torch.save writes more records (byteorder, ...)
            again = os.path.join(tmp, "torch", name)
            torch.save(t, again)
            with open(path, "rb") as a, open(again, "rb") as b:
                assert a.read() == b.read(), name + ": not torch.save's bytes"
    print("pt_writer_test.py: %d files OK" % len(lines))


if __name__ == "__main__":
    main()
