"""Builds liblockstep_py.so with CMake against the torch of the Python that
runs pip, and puts it into the lockstep_probe package; the metadata is in
pyproject.toml.

    pip install --no-build-isolation .

--no-build-isolation: the library is built for the torch already installed
(PyTorch extensions are built the same way); in an isolated build
environment there is no torch. The build directory is
build-pip/torch-<version>-py<X.Y>/ (or $LOCKSTEP_BUILD_DIR, which must hold
a build for this torch), configured with this torch's own TorchConfig.cmake.
The wheel is platform-specific: it carries the native library.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
LIB = "liblockstep_py.so"
INFO = "liblockstep_py.build.json"  # {"torch": version}, written by CMake


def this_torch():
    try:
        import torch
    except ImportError:
        sys.exit("lockstep-probe | torch is not importable by the Python that "
                 "builds this package. Note: install torch first, then "
                 "`pip install --no-build-isolation .` (the probe is built "
                 "against the torch already installed)")
    return torch


def base_version(v):
    """The release numbers of a torch version: "2.11.0+cu130" and
    "1.13.0a0" are 2.11.0 and 1.13.0."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", v)
    return ".".join(g or "0" for g in m.groups()) if m else v


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        torch = this_torch()
        build = os.environ.get("LOCKSTEP_BUILD_DIR") or os.path.join(
            ROOT, "build-pip", "torch-%s-py%d.%d" % (
                base_version(torch.__version__), *sys.version_info[:2]))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            args = ["cmake", "-S", ROOT, "-B", build,
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DLOCKSTEP_PYTHON=" + sys.executable,
                    "-DLOCKSTEP_BUILD_TESTS=OFF", "-DLOCKSTEP_BUILD_BENCH=OFF",
                    "-DLOCKSTEP_WITH_MPI=OFF"]
            prefix = torch.utils.cmake_prefix_path
            if os.path.exists(os.path.join(prefix, "Torch", "TorchConfig.cmake")):
                args += ["-DTorch_DIR=" + os.path.join(prefix, "Torch"),
                         "-DCaffe2_DIR=" + os.path.join(prefix, "Caffe2")]
            subprocess.check_call(args)
        subprocess.check_call(["cmake", "--build", build, "--target",
                               "lockstep_py", "-j", str(os.cpu_count() or 1)])
        lib = os.path.join(build, "lib", LIB)
        info = os.path.join(build, "lib", INFO)
        if not os.path.exists(lib):
            sys.exit(f"lockstep-probe | {lib} was not built. Note: CMake found "
                     "no LibTorch; see the output above")
        with open(info) as f:
            built_for = json.load(f)["torch"]
        if base_version(built_for) != base_version(torch.__version__):
            sys.exit(f"lockstep-probe | {build} holds a build for torch "
                     f"{built_for}; this Python has torch {torch.__version__}. "
                     "Note: unset LOCKSTEP_BUILD_DIR, or point it to a build "
                     "for this torch")
        dest = os.path.join(self.build_lib, "lockstep_probe")
        shutil.copy2(lib, dest)
        shutil.copy2(info, dest)


class BinaryDistribution(Distribution):
    """A native library inside: the wheel gets a platform tag."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
