"""Names each entry after the Python-level API that the training code called,
as msprobe does ("Tensor.__add__" for `x + y`, "Tensor.add" for `x.add(y)`,
"Torch.add" for `torch.add(x, y)`, "Functional.linear"), rather than after
the ATen operator underneath (aten::add for all three).

A TorchFunctionMode sees each outermost torch API call of Python code and
tells the C++ probe its name (lockstep_begin_python_api_call, through
ctypes: a dispatcher call would cost more than the call it names); the
first operator the call runs at the top level is its entry. Python's
operators (`x + y`) reach the mode as the method they call (`add`), so
while the probe is started the operator methods of torch.Tensor are
wrapped to say which one ran.

With `msprobe_apis`, only the calls that the installed msprobe would dump
are entries: the APIs of its support_wrap_ops.yaml, filtered by its
risk_level as msprobe 26 filters them (FOCUS, its default, leaves out
views, shape changes, casts and factories). A lockstep dump of one run then
lines up with an msprobe dump of the other call for call.
"""
import ctypes
import importlib.util
import inspect
import os
import threading

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

# Methods whose call is not an operator of the model: no entry is named
# after them (their operators keep the probe's own names, or, with
# msprobe_apis, are not entries: msprobe does not wrap them).
_NOT_APIS = {"backward", "register_hook", "retain_grad", "__get__", "__set__",
             "__repr__", "__format__", "__str__", "__len__", "__iter__",
             "__hash__", "__reduce_ex__", "__deepcopy__", "__setstate__",
             "tolist", "numpy", "__array__", "__contains__", "__bool__",
             "__index__", "__int__", "__float__", "dim", "size", "stride",
             "data_ptr", "is_contiguous", "element_size", "nelement",
             "numel", "storage_offset", "__dlpack__", "requires_grad_"}

# Python's operator methods (x + y, x += y, x[i], -x, x < y): the mode sees
# the method they call (add, add_, ...), so they are wrapped to name
# themselves.
_OPERATORS = [f"__{p}{n}__" for n in (
    "add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "matmul",
    "and", "or", "xor", "lshift", "rshift") for p in ("", "r", "i")]
_OPERATORS += ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
               "__neg__", "__pos__", "__abs__", "__invert__", "__getitem__",
               "__setitem__"]

_local = threading.local()
_SEP = "\x1f"


def _layout(args, kwargs):
    """The call's arguments for the C++ probe (probe_python_args.cc): one
    token per value, separated by \\x1f; "K" between the positional
    arguments and the keywords ("=name" before each). A tensor is its
    TensorImpl's address (the probe takes it from the operator's inputs);
    the others are written as msprobe writes them."""
    out = []
    add = out.append

    def enc(v):
        if isinstance(v, torch.Tensor):
            add("t%x" % v._cdata)
        elif v is None:
            add("n")
        elif isinstance(v, bool):
            add("b1" if v else "b0")
        elif isinstance(v, int):
            add("i%d" % v if -2**63 <= v < 2**63 else "oint")
        elif isinstance(v, float):
            add("f" + repr(v))
        elif isinstance(v, str):
            add("s" + v.replace(_SEP, " "))
        elif isinstance(v, torch.dtype):
            add("d" + str(v))
        elif isinstance(v, torch.device):
            add("v" + str(v))
        elif isinstance(v, torch.Size):
            add("S" + ",".join(str(int(x)) for x in v))
        elif isinstance(v, (list, tuple)):
            add("[")
            for x in v:
                enc(x)
            add("]")
        elif isinstance(v, slice):
            parts = (v.start, v.stop, v.step)
            if all(p is None or (isinstance(p, int) and not isinstance(p, bool))
                   for p in parts):
                add("l" + ",".join("" if p is None else str(p) for p in parts))
            else:
                add("oslice")
        elif v is Ellipsis:
            add("e")
        else:
            add("o" + type(v).__name__)
    for a in args:
        enc(a)
    add("K")
    for k, v in kwargs.items():
        add("=" + str(k))
        enc(v)
    return _SEP.join(out)


def _api_name(func):
    """msprobe's name of a torch API that a TorchFunctionMode received, or
    None for one that is not an operator call."""
    name = getattr(func, "__name__", None)
    if not name or name in _NOT_APIS:
        return None
    qual = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", None)
    if qual.split(".")[0] in ("TensorBase", "_TensorBase", "Tensor"):
        return "Tensor." + name
    if getattr(F, name, None) is func or module in ("torch.nn.functional",
                                                     "torch._C._nn"):
        return "Functional." + name
    if module in ("torch", "torch.functional") or qual.startswith(
            "_VariableFunctionsClass."):
        return "Torch." + name
    return None


def _library(path):
    """The probe library's two C entry points, or None for a library built
    before they were."""
    try:
        lib = ctypes.CDLL(path)
        begin = lib.lockstep_begin_python_api_call
        end = lib.lockstep_end_python_api_call
    except (OSError, AttributeError):
        return None
    begin.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    begin.restype = None
    end.argtypes = []
    end.restype = ctypes.c_int
    return begin, end


def msprobe_filter(risk_level=None):
    """A function name -> bool: whether the installed msprobe dumps that API
    (its support_wrap_ops.yaml, then its risk level: None is msprobe's
    default, FOCUS). Raises RuntimeError if msprobe is not installed."""
    spec = importlib.util.find_spec("msprobe")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("lockstep: msprobe_apis needs msprobe installed "
                           "(pip install mindstudio-probe)")
    root = list(spec.submodule_search_locations)[0]
    path = os.path.join(root, "pytorch", "dump", "api_dump",
                        "support_wrap_ops.yaml")
    import yaml  # msprobe's own dependency
    try:
        with open(path) as f:
            lists = yaml.safe_load(f) or {}
    except OSError as e:
        raise RuntimeError(f"lockstep: msprobe_apis: {path}: {e.strerror}")
    prefixes = {"functional": "Functional", "tensor": "Tensor",
                "torch": "Torch", "distributed": "Distributed"}
    wrapped = {prefixes[k] + "." + str(api) for k, apis in lists.items()
               if k in prefixes for api in (apis or [])}
    level = (risk_level or "FOCUS").upper()
    try:
        from msprobe.pytorch.dump.api_dump.api_risk_level import \
            get_api_risk_level
    except ImportError:  # an msprobe before risk levels: it dumps them all
        level = "ALL"
    if level not in ("ALL", "FOCUS", "CORE"):
        raise RuntimeError(f"lockstep: risk_level {risk_level!r}: msprobe's "
                           "are ALL, FOCUS and CORE")
    cache = {}

    def wanted(name):
        got = cache.get(name)
        if got is None:
            got = name in wrapped
            if got and level != "ALL":
                risk = get_api_risk_level(name.split(".", 1)[1])
                got = risk == "CORE" if level == "CORE" else risk != "LOW"
            cache[name] = got
        return got
    return wanted


class ApiNames(TorchFunctionMode):
    """Entered while a probe is started (enter(), exit()). wanted: None (every
    API call is an entry) or msprobe_filter()'s function."""

    def __init__(self, lib_path, wanted=None):
        super().__init__()
        self._calls = _library(lib_path)
        self._wanted = wanted
        self._names = {}
        self._wrapped = {}

    @property
    def usable(self):
        return self._calls is not None

    def enter(self):
        for op in _OPERATORS:
            method = getattr(torch.Tensor, op, None)
            if method is not None:
                self._wrap(torch.Tensor, op, "Tensor." + op, method)
        # Functions written in Python hand the mode their arguments
        # normalized (F.layer_norm(x, s, w, b) arrives as weight=w, bias=b,
        # with every default): wrapped, they hand over the caller's own.
        for owner, module, prefix in ((F, F.__name__, "Functional."),
                                      (torch.Tensor, "torch._tensor", "Tensor.")):
            for n, fn in list(vars(owner).items()):
                if inspect.isfunction(fn) and fn.__module__ == module and \
                        not n.startswith("_") and n not in _NOT_APIS:
                    self._wrap(owner, n, prefix + n, fn)
        self.__enter__()

    def _wrap(self, owner, attr, name, fn):
        if getattr(fn, "_lockstep_call", None):
            return
        self._wrapped[(owner, attr)] = owner.__dict__.get(attr)
        setattr(owner, attr, _caller_args(name, fn))

    def exit(self):
        self.__exit__(None, None, None)
        for (owner, attr), fn in self._wrapped.items():
            if fn is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, fn)
        self._wrapped = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        call = getattr(_local, "call", None)
        _local.call = None
        # The caller's name and arguments: an operator's (x + y reaches the
        # mode as add), or a wrapped function's that reached it itself (not
        # a torch call inside a method that never asks the mode).
        if call is not None and (call[0] is None or call[0] == getattr(
                func, "__name__", None)):
            _, name, args_given, kwargs_given = call
        else:
            args_given, kwargs_given = args, kwargs
            name = self._names.get(func, False)
            if name is False:
                name = self._names[func] = _api_name(func)
        if name is None:
            if self._wanted is None:
                return func(*args, **kwargs)
            dump = False  # msprobe sees no such call: nor its operators
        else:
            dump = self._wanted is None or self._wanted(name)
        begin, end = self._calls
        layout = None
        if dump:
            try:
                layout = _layout(args_given, kwargs_given).encode(
                    "utf-8", "replace")
            except Exception:  # an argument that will not encode: ATen's
                layout = None
        begin((name or "").encode(), dump, layout)
        try:
            return func(*args, **kwargs)
        finally:
            end()


def _caller_args(name, fn):
    """fn wrapped to tell the mode its name and the caller's arguments."""
    expect = None if name.split(".", 1)[1] in _OPERATORS else fn.__name__

    def call(*args, **kwargs):
        _local.call = (expect, name, args, kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            _local.call = None
    call._lockstep_call = True
    call.__name__ = fn.__name__
    call.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call
