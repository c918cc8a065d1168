"""Dump a Python (PyTorch) training loop with lockstep's C++ probe.

    import lockstep_probe
    with lockstep_probe.Probe({"task": "statistics", "dump_path": "dump"}) as p:
        for batch in data:
            loss = model(batch).sum(); loss.backward(); opt.step()
            p.step()

The probe sees every ATen operator (forward and backward) and writes
step{N}/rank{R}/dump.json in msprobe's layout; compare with
`lockstep compare`. Needs Debian's python3-torch (the LibTorch it was built
against); LOCKSTEP_PY_LIB or the default build path locates the library.

A dump that cannot be written (unwritable path, full disk) never stops the
loop: start(), step() and stop() issue a RuntimeWarning saying what was lost,
and the dump.json files that could be written list it under "skipped".
A bad config raises RuntimeError.
"""
import json
import os
import warnings

import torch

_DEFAULT_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "build", "lib", "liblockstep_py.so")


def load(path=None):
    """Loads the probe operators into torch.ops.lockstep (once)."""
    path = path or os.environ.get("LOCKSTEP_PY_LIB", _DEFAULT_LIB)
    if not hasattr(torch.ops.lockstep, "start"):
        torch.ops.load_library(path)
    return torch.ops.lockstep


def _warn(problem):
    if problem:
        warnings.warn(problem, RuntimeWarning, stacklevel=3)


class Probe:
    """Starts on enter (or start()), stops on exit. `config` is a dict with
    msprobe's config.json keys, or a path to such a file.

    Tensor mode writes one .pt file per tensor (torch.save's format, which
    msprobe's PyTorch compare loads). tensor_format="npy" (or the config
    key "tensor_format": "npy") writes .npy files instead; "pack" writes
    one dump_tensor_data.pack per step and rank (docs/packed_format.md):
    every lockstep command reads it, and `lockstep export` turns it into
    msprobe's layout.
    """

    def __init__(self, config, lib=None, tensor_format=None):
        self._ops = load(lib)
        if tensor_format is not None:
            if isinstance(config, str):
                with open(config) as f:
                    config = json.load(f)
            config = dict(config, tensor_format=tensor_format)
        self._config = config if isinstance(config, str) else json.dumps(config)
        self.started = False  # between start() and stop()

    def start(self):
        _warn(self._ops.start(self._config))
        self.started = True
        return self

    def step(self):
        _warn(self._ops.step())

    def stop(self):
        _warn(self._ops.stop())
        self.started = False

    def entries(self):
        return self._ops.entries()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
