"""`pip install .` of the source tree into a venv (no index, so offline, and
with pip's default build isolation: the in-tree backend needs nothing from
an index) that sees the torch of the Python running this test, gives an
importable lockstep_probe that loads its own copy of the C++ library and
dumps, and leaves the source tree as it was; run by ctest as
`PYTHON tests/python/pip_install_test.py BUILD_DIR` (PYTHON: Debian's
/usr/bin/python3, or a venv's with a pip torch).
"""
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (cmd, r.stdout[-3000:], r.stderr[-3000:])
    return r.stdout


with tempfile.TemporaryDirectory() as tmp:
    venv = os.path.join(tmp, "venv")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    if sys.prefix != sys.base_prefix:
        # This Python is itself a venv, whose packages (torch) a venv made
        # from it does not see: a .pth file adds them.
        inner = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True).stdout.strip()
        with open(os.path.join(inner, "outer_venv.pth"), "w") as f:
            f.write("\n".join(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]) + "\n")
    env = dict(os.environ, LOCKSTEP_BUILD_DIR=BUILD, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("LOCKSTEP_PY_LIB", None)
    def untracked():
        r = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                            "--untracked-files=all", "--ignored"],
                           capture_output=True, text=True)
        return set(r.stdout.splitlines()) if r.returncode == 0 else set()
    before = untracked()
    run([os.path.join(venv, "bin", "pip"), "install", "--no-deps", ROOT],
        env=env, cwd=tmp)
    # Nothing written into the source tree (no build-pip/, no egg-info).
    new = sorted(untracked() - before)
    assert not [n for n in new if "egg-info" in n or "build-pip" in n
                or "lockstep_probe" in n], new
    script = """
import json, sys, torch, lockstep_probe
print(json.dumps({"file": lockstep_probe.__file__}))
m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
with lockstep_probe.Probe(level="mix", dump_path=sys.argv[1], model=m) as p:
    m(torch.randn(2, 4)).sum().backward()
    p.step()
"""
    dump = os.path.join(tmp, "dump")
    out = run([os.path.join(venv, "bin", "python"), "-c", script, dump],
              env=env, cwd=tmp)
    where = json.loads(out.splitlines()[0])["file"]
    # The installed package, not the source tree, with its own library.
    assert where.startswith(venv), where
    assert os.path.exists(os.path.join(os.path.dirname(where),
                                       "liblockstep_py.so")), where
    with open(os.path.join(dump, "step0", "rank0", "dump.json")) as f:
        data = json.load(f)["data"]
    assert "Module.0.Linear.forward.0" in data, list(data)
    assert "Functional.linear.0.forward" in data, list(data)
    # The library records its torch, and a library built for another torch
    # is refused at load, naming both versions.
    lib_dir = os.path.dirname(where)
    with open(os.path.join(lib_dir, "liblockstep_py.build.json")) as f:
        built_for = json.load(f)["torch"]
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    shutil.copy2(os.path.join(lib_dir, "liblockstep_py.so"), bad)
    with open(os.path.join(bad, "liblockstep_py.build.json"), "w") as f:
        json.dump({"torch": "0.0.1"}, f)
    check = """
import sys, torch, lockstep_probe
try:
    lockstep_probe.load(sys.argv[1])
except ImportError as e:
    print("REFUSED", e, "| have", torch.__version__)
else:
    print("LOADED")
"""
    out = run([os.path.join(venv, "bin", "python"), "-c", check,
               os.path.join(bad, "liblockstep_py.so")], env=env, cwd=tmp)
    assert out.startswith("REFUSED") and "0.0.1" in out, out
    have = out.rsplit("| have ", 1)[1].strip()
    assert have in out.rsplit("| have ", 1)[0], out
    # The wheel carries a native library: a platform tag, not py3-none-any.
    wheels = os.path.join(tmp, "wheels")
    run([os.path.join(venv, "bin", "pip"), "wheel", "--no-deps", "-w", wheels,
         ROOT], env=env, cwd=tmp)
    names = os.listdir(wheels)
    assert len(names) == 1 and names[0].endswith("_x86_64.whl") and \
        "none-any" not in names[0], names
    # --no-build-isolation (the way PyTorch extensions are built) works too.
    run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation",
         "--no-deps", "--force-reinstall", ROOT], env=env, cwd=tmp)
print("pip_install_test.py: OK")
