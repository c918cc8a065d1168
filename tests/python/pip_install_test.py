"""`pip install .` of the source tree into a venv (Debian's pip and
setuptools, no index) gives an importable lockstep_probe that loads its own
copy of the C++ library and dumps; run by ctest as
`/usr/bin/python3 tests/python/pip_install_test.py BUILD_DIR`.
"""
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (cmd, r.stdout[-3000:], r.stderr[-3000:])
    return r.stdout


with tempfile.TemporaryDirectory() as tmp:
    venv = os.path.join(tmp, "venv")
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
    env = dict(os.environ, LOCKSTEP_BUILD_DIR=BUILD, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("LOCKSTEP_PY_LIB", None)
    run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation",
         "--no-deps", ROOT], env=env, cwd=tmp)
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
print("pip_install_test.py: OK")
