"""The PEP 517 build backend of `pip install .` (pyproject.toml names it).

It needs nothing from an index, so `pip install .` works offline, with or
without build isolation:
- torch is looked up in the Python that runs pip, as it is outside pip's
  isolated build environment (a child process of the same interpreter,
  without pip's PYTHONPATH overlay), and liblockstep_py.so is built with
  CMake against that torch's TorchConfig.cmake;
- the wheel is written here (a zip with its .dist-info), without
  setuptools. It carries a native library, so it is tagged for this
  platform (py3-none-linux_x86_64), not py3-none-any.

The build directory is $LOCKSTEP_BUILD_DIR (which must hold a build for this
torch), else one per torch version and Python under the user's cache
(~/.cache/lockstep-probe/), so the source tree stays clean and a second
install rebuilds only what changed. A torch that is importable only through
PYTHONPATH is not seen from pip's isolated build: use
`pip install --no-build-isolation .` then.
"""
import base64
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "lockstep_probe"
LIB = "liblockstep_py.so"
INFO = "liblockstep_py.build.json"  # {"torch": version}, written by CMake
# What an sdist needs to build the library (LOCKSTEP_BUILD_TESTS=OFF).
SDIST_PATHS = ["pyproject.toml", "README.md", "CMakeLists.txt", "cmake",
               "include", "src", "python", "build_backend", "examples",
               "fuzz", "bench", "tests"]


def _fail(message):
    raise SystemExit("lockstep-probe | " + message)


def _project():
    """name, version, summary and requires-python from pyproject.toml's
    [project] table (plain `key = "value"` lines)."""
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        text = f.read()
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not table:
        _fail("pyproject.toml has no [project] table")
    fields = dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"\s*$',
                             table.group(1), re.M))
    for key in ("name", "version"):
        if key not in fields:
            _fail(f"pyproject.toml's [project] has no {key}")
    return fields


def _dist_name(name):
    return re.sub(r"[-_.]+", "_", name)


def _outside_env():
    """The environment of the Python that runs pip, without what pip's
    isolated build environment adds (its PYTHONPATH overlay and
    PYTHONNOUSERSITE)."""
    env = dict(os.environ)
    overlay = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
               if p and os.path.exists(os.path.join(p, "sitecustomize.py"))]
    if overlay:
        rest = [p for p in env["PYTHONPATH"].split(os.pathsep)
                if p and p not in overlay]
        if rest:
            env["PYTHONPATH"] = os.pathsep.join(rest)
        else:
            env.pop("PYTHONPATH")
        env.pop("PYTHONNOUSERSITE", None)
    return env


def _torch():
    """{"version", "cmake"} of the torch the installing Python has."""
    probe = ("import json, torch, torch.utils; print(json.dumps("
             "{'version': torch.__version__, "
             "'cmake': torch.utils.cmake_prefix_path}))")
    r = subprocess.run([sys.executable, "-c", probe], env=_outside_env(),
                       capture_output=True, text=True)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["?"])[-1]
        _fail(f"torch is not importable by {sys.executable} ({tail}). Note: "
              "install torch first (the probe is built against the torch "
              "already installed); if it is found only through PYTHONPATH, "
              "run `pip install --no-build-isolation .`")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _base_version(v):
    """The release numbers of a torch version: "2.11.0+cu130" and
    "1.13.0a0" are 2.11.0 and 1.13.0."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", v)
    return ".".join(g or "0" for g in m.groups()) if m else v


def _build_dir(torch_version):
    if os.environ.get("LOCKSTEP_BUILD_DIR"):
        return os.environ["LOCKSTEP_BUILD_DIR"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    tree = hashlib.sha256(ROOT.encode()).hexdigest()[:10]
    return os.path.join(cache, "lockstep-probe", "torch-%s-py%d.%d-%s" % (
        _base_version(torch_version), *sys.version_info[:2], tree))


def _build_library():
    """Builds liblockstep_py.so; returns its path and its build.json's."""
    torch = _torch()
    build = _build_dir(torch["version"])
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        args = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                "-DLOCKSTEP_PYTHON=" + sys.executable,
                "-DLOCKSTEP_BUILD_TESTS=OFF", "-DLOCKSTEP_BUILD_BENCH=OFF",
                "-DLOCKSTEP_WITH_MPI=OFF"]
        prefix = torch["cmake"]
        if os.path.exists(os.path.join(prefix, "Torch", "TorchConfig.cmake")):
            args += ["-DTorch_DIR=" + os.path.join(prefix, "Torch"),
                     "-DCaffe2_DIR=" + os.path.join(prefix, "Caffe2")]
        subprocess.check_call(args, stdout=sys.stderr)
    subprocess.check_call(["cmake", "--build", build, "--target", "lockstep_py",
                           "-j", str(os.cpu_count() or 1)], stdout=sys.stderr)
    lib = os.path.join(build, "lib", LIB)
    info = os.path.join(build, "lib", INFO)
    if not os.path.exists(lib) or not os.path.exists(info):
        _fail(f"{lib} was not built. Note: CMake found no LibTorch; see the "
              "output above")
    with open(info) as f:
        built_for = json.load(f)["torch"]
    if _base_version(built_for) != _base_version(torch["version"]):
        _fail(f"{build} holds a build for torch {built_for}; this Python has "
              f"torch {torch['version']}. Note: unset LOCKSTEP_BUILD_DIR, or "
              "point it to a build for this torch")
    return lib, info


def _tag():
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "py3-none-" + platform


def _metadata(fields):
    lines = ["Metadata-Version: 2.1", "Name: " + fields["name"],
             "Version: " + fields["version"]]
    if "description" in fields:
        lines.append("Summary: " + fields["description"])
    if "requires-python" in fields:
        lines.append("Requires-Python: " + fields["requires-python"])
    return "\n".join(lines) + "\n"


def _dist_info(fields):
    return "%s-%s.dist-info" % (_dist_name(fields["name"]), fields["version"])


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    fields = _project()
    info = os.path.join(metadata_directory, _dist_info(fields))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(_metadata(fields))
    return os.path.basename(info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    fields = _project()
    lib, info = _build_library()
    files = []  # (name in the wheel, bytes)
    package = os.path.join(ROOT, "python", PACKAGE)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), "rb") as f:
                files.append((f"{PACKAGE}/{name}", f.read()))
    for path in (lib, info):
        with open(path, "rb") as f:
            files.append((f"{PACKAGE}/{os.path.basename(path)}", f.read()))
    dist_info = _dist_info(fields)
    files.append((f"{dist_info}/METADATA", _metadata(fields).encode()))
    files.append((f"{dist_info}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: lockstep_backend\n"
        "Root-Is-Purelib: false\nTag: %s\n" % _tag()).encode()))
    record = []
    for name, data in files:
        digest = base64.urlsafe_b64encode(
            hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = "%s-%s-%s.whl" % (_dist_name(fields["name"]), fields["version"],
                              _tag())
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return wheel


def _sdist_members(path):
    """The files under `path` an sdist carries (no build output, caches or
    version control)."""
    skip_dirs = {"__pycache__", ".git", "build", "output"}
    if os.path.isfile(path):
        yield path
        return
    for here, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs
                         and not d.startswith("build-") and not d.endswith(".egg-info"))
        for name in sorted(names):
            yield os.path.join(here, name)


def build_sdist(sdist_directory, config_settings=None):
    fields = _project()
    base = "%s-%s" % (_dist_name(fields["name"]), fields["version"])
    os.makedirs(sdist_directory, exist_ok=True)
    out = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for top in SDIST_PATHS:
            full = os.path.join(ROOT, top)
            if not os.path.exists(full):
                continue
            for path in _sdist_members(full):
                tar.add(path, arcname=os.path.join(
                    base, os.path.relpath(path, ROOT)), recursive=False)
        pkg_info = io.BytesIO(_metadata(fields).encode())
        entry = tarfile.TarInfo(os.path.join(base, "PKG-INFO"))
        entry.size = len(pkg_info.getvalue())
        tar.addfile(entry, pkg_info)
    return os.path.basename(out)
