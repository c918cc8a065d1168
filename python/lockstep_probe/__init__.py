"""Dump a PyTorch training loop with lockstep's C++ probe, in msprobe's layout.

    import lockstep_probe
    probe = lockstep_probe.Probe(task="statistics", level="mix",
                                 dump_path="dump", model=model)
    with probe:
        for batch in data:
            loss = model(batch).sum(); loss.backward(); opt.step()
            probe.step()

then `lockstep compare dump_a dump_b -o out`. The probe sees every ATen
operator (forward and backward; level L1 and mix), and with `model` each
submodule's calls (level L0 and mix: `Module.<path>.<Class>.forward.<n>`,
their backward, and `parameters_grad`), and writes step{N}/rank{R}/ with
dump.json, stack.json (the Python lines of each call) and construct.json
(each entry's module), as msprobe's PrecisionDebugger does.

The configuration is msprobe's config.json: a dict, a path to such a file,
or keyword arguments (`task`, `dump_path`, `level`, `step`, `rank`, `scope`,
`list`, `data_mode`, `summary_mode`, `extra_info`, `tensor_format`,
`overflow_nums`, `sample_rate`), which override the file's keys. A misspelled key is an
error that names the key meant.

A dump that cannot be written (unwritable path, full disk) never stops the
loop: start(), step() and stop() warn (RuntimeWarning, at the caller's line)
saying what was lost, and the dump.json files that could be written list it
under "skipped". A misspelled or mistyped configuration key raises
ValueError (TypeError for a keyword argument); a value lockstep cannot use,
a dump path holding an earlier dump, or two probes started at once raise
RuntimeError.

The C++ library is build/lib/liblockstep_py.so of the source tree, the copy
installed next to this file by `pip install .`, or $LOCKSTEP_PY_LIB.
"""
import atexit
import difflib
import json
import os
import random
import re
import sys
import warnings

import torch

__all__ = ["Probe", "seed_all", "load"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_LIB_NAME = "liblockstep_py.so"
_CANDIDATES = (
    os.path.join(_HERE, _LIB_NAME),  # installed by pip
    os.path.join(_HERE, "..", "..", "build", "lib", _LIB_NAME),  # source tree
)

# Probe()'s keyword arguments: config keys it sets, at the top level or in
# the task's section. Which keys a config may hold is the C++ library's to
# say (format/probe_config.h, ProbeConfigKeysProblem), for C++ users too.
_TOP_KEYS = {"task", "dump_path", "level", "step", "rank", "extra_info",
             "tensor_format", "risk_level", "api_names", "msprobe_apis"}
_SECTION_KEYS = {"scope", "list", "data_mode", "summary_mode",
                 "overflow_nums", "sample_rate"}
_KEYWORDS = _TOP_KEYS | _SECTION_KEYS

_started = None  # the Probe started in this process, if any


@atexit.register
def _stop_at_exit():
    # A probe never stopped: its last steps' dump.json are written before
    # the interpreter goes (not left to C++ static destructors).
    if _started is not None:
        _started.stop()


def load(path=None):
    """Loads the probe operators into torch.ops.lockstep (once) and returns
    that namespace. `path`: the library; default $LOCKSTEP_PY_LIB, then the
    installed copy, then the source tree's build/lib."""
    if hasattr(torch.ops.lockstep, "start"):
        return torch.ops.lockstep
    path = path or os.environ.get("LOCKSTEP_PY_LIB")
    if path is None:
        path = next((p for p in _CANDIDATES if os.path.exists(p)), None)
        if path is None:
            raise ImportError(
                "lockstep: liblockstep_py.so not found (looked at "
                + ", ".join(os.path.normpath(p) for p in _CANDIDATES)
                + "); build it (bash scripts/setup.sh lockstep_py), "
                "`pip install .` the source tree, or set LOCKSTEP_PY_LIB")
    _check_built_for(os.fspath(path))
    torch.ops.load_library(os.fspath(path))
    global _LOADED
    _LOADED = os.fspath(path)
    return torch.ops.lockstep


_LOADED = None  # the library load() loaded


def _loaded_path():
    """The path of the probe library in use: the one load() loaded, else the
    one torch loaded it from (a library loaded before this module)."""
    if _LOADED is not None:
        return _LOADED
    for lib in getattr(torch.ops, "loaded_libraries", ()):
        if os.path.basename(lib) == _LIB_NAME:
            return lib
    return None


def _release(version):
    """2.11.0 for "2.11.0+cu130", 1.13.0 for "1.13.0a0"."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(g or 0) for g in m.groups()) if m else version


def _check_built_for(path):
    """Refuses a library built for another torch (its ABI differs: loading
    it fails on a missing symbol, or worse), naming both versions. The
    version is in liblockstep_py.build.json beside the library (CMake and
    `pip install` put it there); a library without one is loaded as is."""
    info = os.path.join(os.path.dirname(path), "liblockstep_py.build.json")
    try:
        with open(info) as f:
            built_for = str(json.load(f)["torch"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if _release(built_for) != _release(torch.__version__):
        raise ImportError(
            f"lockstep: {path} was built for torch {built_for}, and this "
            f"Python has torch {torch.__version__}. Rebuild it for this torch: "
            "`pip install --force-reinstall .` from the "
            "lockstep checkout (or build with -DTorch_DIR set to this torch's "
            "TorchConfig.cmake folder)")


def _caller_level():
    """The stacklevel of warnings.warn that names the first frame outside
    this package (the user's line)."""
    level, f = 1, sys._getframe(1)
    while f is not None and os.path.dirname(
            os.path.abspath(f.f_code.co_filename)) == _HERE:
        f = f.f_back
        level += 1
    return level


def _warn(problem):
    if problem:
        warnings.warn(problem, RuntimeWarning, stacklevel=_caller_level())


def _did_you_mean(key, known):
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _read_config(config):
    if config is None:
        return {}
    if isinstance(config, (str, bytes, os.PathLike)):
        path = os.fspath(config)
        try:
            with open(path) as f:
                return json.load(f)
        except OSError as e:
            raise ValueError(f"lockstep: config {path}: {e.strerror}") from e
        except json.JSONDecodeError as e:
            raise ValueError(f"lockstep: config {path}: {e}") from e
    if isinstance(config, dict):
        return dict(config)
    raise ValueError("lockstep: config must be a dict, a path to a "
                     f"config.json, or None; got {type(config).__name__}")


def _tensors(value, out):
    """The tensors in `value` (nested tuples, lists, dicts), in order."""
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, out)
    return out


def _process_rank():
    """torch.distributed's rank when a process group is initialised (as
    msprobe takes it), else -1: $RANK, or 0."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except (ImportError, RuntimeError):
        pass
    return -1


def _compile_used():
    """Whether torch.compile (or torch._dynamo.optimize) has been called in
    this process: it registers its backend with dynamo (an optimizer's
    dynamo-disabled step registers None)."""
    try:
        from torch._dynamo.eval_frame import cached_backends
        return any(b is not None for b in list(cached_backends.values()))
    except (ImportError, AttributeError):
        return True


class _EagerCompile:
    """torch.compile'd code runs as one "Torch-Compiled Region" to the
    probe, whose operators inside it are not entries: while a probe is
    started, compiled code runs eagerly (compiler stance force_eager,
    torch >= 2.6), so its operators are dumped one by one. The stance is
    set only once torch._dynamo is imported (torch.compile imports it); it
    is restored by stop()."""

    def __init__(self):
        self._stance = None  # set_stance's context: __exit__ restores
        self._warned = False

    def apply(self):
        """At start() and each step(): sets the stance (once) and warns (once)
        when compiled code is about."""
        if "torch._dynamo" not in sys.modules:  # nothing compiled yet
            return None
        set_stance = getattr(getattr(torch, "compiler", None), "set_stance",
                             None)
        if self._stance is None and set_stance is not None:
            try:
                self._stance = set_stance("force_eager")
            except RuntimeError as e:  # called inside a compiled region
                self._warned = True
                return (f"lockstep: torch.compile'd code is not dumped: "
                        f"cannot make it run eagerly ({e})")
        if self._warned or not _compile_used():
            return None
        self._warned = True
        if self._stance is None:
            return ("lockstep: the operators inside torch.compile'd code are "
                    "not dumped with this torch (no torch.compiler.set_stance, "
                    "torch < 2.6): run the model uncompiled to dump them")
        return ("lockstep: torch.compile'd code runs eagerly while the probe "
                "is started (compiler stance force_eager), so that its "
                "operators are dumped")

    def restore(self):
        if self._stance is not None:
            self._stance.__exit__(None, None, None)
            self._stance = None
        self._warned = False


def _quiet_ddp_bookkeeping(ops):
    """DistributedDataParallel's forward sets up and rebuilds its gradient
    buckets in C++ (_pre_forward, _post_forward): copies into and views of
    buffers not yet written, which are no entries of the model and which
    msprobe does not see. They run with the probe paused on this thread;
    the bucketed all_reduce of the backward pass is still dumped. Installed
    once per process, a no-op while no probe is started."""
    try:
        from torch.nn.parallel import DistributedDataParallel as ddp
    except ImportError:
        return
    for name in ("_pre_forward", "_post_forward"):
        fn = getattr(ddp, name, None)
        if fn is None or getattr(fn, "_lockstep_quiet", False):
            continue

        def quiet(self, *args, _fn=fn, **kwargs):
            if _started is None:
                return _fn(self, *args, **kwargs)
            ops.pause(True)
            try:
                return _fn(self, *args, **kwargs)
            finally:
                ops.pause(False)
        quiet._lockstep_quiet = True
        setattr(ddp, name, quiet)


class Probe:
    """A dump of a training loop: started on `with` (or start()), a step
    ended by step(), stopped on leaving `with` (or stop()).

    config: msprobe's config.json as a dict or a path (str or pathlib.Path),
        or None for the defaults (task statistics, level L1, dump_path
        "./dump").
    model: the torch.nn.Module being trained: at level L0 and mix, its
        submodules' calls and parameter gradients are dumped (and named by
        their path in the model, as msprobe names them).
    lib: the path of liblockstep_py.so (default: see load()).
    write_behind: step() hands the step's dump.json to the probe's writer
        thread and returns while it is written (the default; dump.json is
        still written atomically, and stop() and the interpreter's exit
        wait for it). A process killed while that write runs (a few
        milliseconds at most on a disk) loses the step just finished, as
        well as the one in progress. False: step() returns once dump.json
        is on disk.
    Keyword arguments override config keys: task, dump_path, level, step,
        rank, scope, list, data_mode, summary_mode, extra_info,
        tensor_format, overflow_nums, sample_rate, and:
    api_names: "aten" (the default: an entry is named after its ATen
        operator, Torch.add for x + y) or "python" (after the Python call,
        as msprobe names it: Tensor.__add__; docs/probe.md#msprobe-names).
    msprobe_apis: True keeps only the calls the installed msprobe dumps
        (its support_wrap_ops.yaml and risk_level, msprobe's config key:
        FOCUS by default), named as msprobe names them.

    Tensor mode (task="tensor") writes one .pt file per tensor (torch.save's
    format, which msprobe's PyTorch compare loads); tensor_format="npy"
    writes .npy files instead, "pack" one dump_tensor_data.pack per step and
    rank (docs/packed_format.md), which every lockstep command reads and
    `lockstep export` turns into msprobe's layout.

    Shadow mode (task="shadow") replays each sampled forward call in
    float64 as it runs and writes its error against its bound into the
    entry (sample_rate: the share of calls checked, in (0, 1]); `lockstep
    replay` reads the dump back (docs/probe.md#shadow).

    One probe records at a time in a process: start() of a second one while
    the first is started raises RuntimeError.
    """

    def __init__(self, config=None, model=None, *, lib=None,
                 write_behind=True, **overrides):
        self._ops = load(lib)
        self._write_behind = bool(write_behind)
        cfg = _read_config(config)
        for key, value in overrides.items():
            if key not in _KEYWORDS:
                raise TypeError(f"Probe() got an unexpected keyword argument "
                                f"{key!r}" + _did_you_mean(key, _KEYWORDS))
            if value is None:  # not given
                continue
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if key in _SECTION_KEYS:  # into the task's section
                task = overrides.get("task", cfg.get("task", "statistics"))
                # md5 is statistics with summary_mode md5: its section is
                # "statistics" (the one the C++ config reader reads).
                section = "statistics" if task == "md5" else task
                cfg.setdefault(section, {})[key] = value
            else:
                cfg[key] = value
        cfg.setdefault("task", "statistics")
        cfg.setdefault("level", "L1")
        cfg.setdefault("dump_path", "./dump")
        if isinstance(cfg["dump_path"], os.PathLike):
            cfg["dump_path"] = os.fspath(cfg["dump_path"])
        # A key that neither lockstep nor msprobe has (a misspelling) is an
        # error here, before anything starts, with the closest known key.
        problem = self._ops.config_keys_problem(json.dumps(cfg))
        if problem:
            raise ValueError("lockstep: " + problem)
        self._config = cfg
        self._model = model
        self._hooks = []
        self._open_calls = []  # per hooked module: tokens of open calls
        self._eager = _EagerCompile()
        self._lib = lib
        self._api_names = None  # _api_names.ApiNames while started
        # msprobe's names of Python API calls, or the ATen operators' own
        # (the default; msprobe_apis implies "python").
        cfg.setdefault("api_names",
                       "python" if cfg.get("msprobe_apis") else "aten")
        if cfg["api_names"] not in ("python", "aten"):
            raise ValueError(f"lockstep: api_names {cfg['api_names']!r}: "
                             "'python' (msprobe's names of the Python API "
                             "calls) or 'aten' (the operators' own)")
        self._msprobe_filter = None
        if cfg.get("msprobe_apis"):
            if cfg["api_names"] != "python":
                raise ValueError("lockstep: msprobe_apis needs api_names "
                                 "'python'")
            from . import _api_names
            self._msprobe_filter = _api_names.msprobe_filter(
                cfg.get("risk_level"))
        self.started = False  # between start() and stop()

    # -- configuration and state ------------------------------------------
    @property
    def config(self):
        """The configuration in effect (a copy)."""
        return json.loads(json.dumps(self._config))

    @property
    def dump_path(self):
        return self._config["dump_path"]

    @property
    def level(self):
        return self._config["level"]

    @property
    def task(self):
        return self._config["task"]

    def _status(self):
        """The C++ probe's state by name (status_fields() names status()'s
        integers), or None when this probe is not the started one."""
        if _started is not self:
            return None
        return dict(zip(self._ops.status_fields(), self._ops.status()))

    @property
    def current_step(self):
        """The step being recorded (None when not started)."""
        s = self._status()
        return None if s is None or s["step"] < 0 else s["step"]

    @property
    def rank(self):
        s = self._status()
        return None if s is None or s["rank"] < 0 else s["rank"]

    @property
    def overflow_count(self):
        """Task overflow_check: the overflowing entries kept so far."""
        s = self._status()
        return 0 if s is None else s["overflow_count"]

    def entries(self):
        """The entries recorded so far in the current step."""
        s = self._status()
        return 0 if s is None else s["entries"]

    # -- lifecycle --------------------------------------------------------
    def start(self, model=None):
        """Starts dumping (step `step`'s first number, 0 by default).
        `model`: as the constructor's, if not given there."""
        global _started
        if model is not None:
            self._model = model
        if _started is self:
            raise RuntimeError("lockstep: this probe is already started")
        if _started is not None:
            raise RuntimeError(
                "lockstep: another Probe (dump_path "
                f"{_started.dump_path!r}) is started in this process; "
                "stop() it first")
        try:
            # Frames of this file are the probe's (co_filename is __file__
            # as imported, unnormalized).
            problem = self._ops.start(json.dumps(self._config),
                                      os.path.dirname(__file__) + os.sep,
                                      _process_rank(), self._write_behind)
        except RuntimeError as e:
            text = str(e).split("\n")[0]
            if "lockstep:" in text:  # lockstep's message, not C++'s trace
                raise RuntimeError(text[text.index("lockstep:"):]) from None
            raise
        _started = self
        self.started = True
        self._enter_api_names()
        if hasattr(self._ops, "pause"):
            _quiet_ddp_bookkeeping(self._ops)
        if self._model is not None and self.level in ("L0", "mix"):
            self._attach(self._model)
        _warn(problem)
        _warn(self._eager.apply())
        return self

    def step(self):
        """Ends the current step and begins the next. Its dump.json is
        written by the probe's writer thread (write_behind, the default) or
        before step() returns (write_behind=False)."""
        if _started is not self:
            raise RuntimeError("lockstep: step() of a probe not started")
        for tokens in self._open_calls:  # calls cut short by an exception
            tokens.clear()
        _warn(self._ops.step())
        _warn(self._eager.apply())  # torch.compile called after start()

    def stop(self):
        """Ends the last step and waits until every file is written. Does
        nothing if this probe is not started."""
        global _started
        if _started is not self:
            return
        self._detach()
        if self._api_names is not None:
            self._api_names.exit()
            self._api_names = None
        self._eager.restore()
        _started = None
        self.started = False
        _warn(self._ops.stop())

    def save(self, name, tensor):
        """Records `tensor` (any tensor the loop computes: a loss, an
        activation, a gradient) as entry "{name}.{n}.debug" of the current
        step (n counts this name's saves in the step), as msprobe's
        debugger.save names it; `lockstep compare` compares it like an
        operator's output. Does nothing while the probe is not started."""
        if not isinstance(name, str) or not name:
            raise ValueError("lockstep: save() needs a non-empty name")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"lockstep: save() takes a tensor, not "
                            f"{type(tensor).__name__}")
        if _started is self:
            self._ops.save(name, tensor.detach())

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        state = "started" if self.started else "stopped"
        return (f"<lockstep_probe.Probe {self.task} {self.level} "
                f"{self.dump_path!r} {state}>")

    # -- modules ----------------------------------------------------------
    def _attach(self, model):
        """Hooks every submodule of `model` (msprobe leaves the root out)."""
        ops = self._ops
        for path, module in model.named_modules():
            if not path:
                continue
            prefix = f"Module.{path}.{type(module).__name__}"
            named = list(module.named_parameters(recurse=False))
            names = [n for n, _ in named]
            params = [p for _, p in named]
            if params:
                ops.register_params(prefix, names, params)
            tokens = []
            self._open_calls.append(tokens)

            def pre(mod, args, prefix=prefix, names=names, params=params,
                    tokens=tokens):
                tokens.append(ops.module_begin(
                    prefix, _tensors(args, []), names, params))

            def post(mod, args, output, tokens=tokens):
                if tokens:
                    ops.module_end(tokens.pop(), _tensors(output, []))

            self._hooks.append(module.register_forward_pre_hook(pre))
            self._hooks.append(module.register_forward_hook(post))

    def _enter_api_names(self):
        """Names entries after the Python APIs called (api_names "python"):
        see _api_names.py."""
        if self._config["api_names"] != "python":
            return
        from . import _api_names
        path = _loaded_path()
        names = _api_names.ApiNames(path, self._msprobe_filter) if path else None
        if names is None or not names.usable:
            _warn("lockstep: entries are named after ATen operators "
                  "(Torch.add for x + y): this liblockstep_py.so cannot "
                  "name Python API calls; rebuild it")
            return
        names.enter()
        self._api_names = names

    def _detach(self):
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._open_calls = []
        if self._model is not None:
            self._ops.clear_params()


def seed_all(seed=1234, mode=False):
    """Seeds Python's random, NumPy (if present) and torch (CPU and CUDA)
    with `seed`, and sets PYTHONHASHSEED for child processes; `mode=True`
    also makes torch choose deterministic algorithms (and cuDNN's), as
    msprobe's seed_all does. Returns the seed."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"lockstep: seed must be an int >= 0, not {seed!r}")
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if mode:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed
