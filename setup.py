"""Builds liblockstep_py.so with CMake (in $LOCKSTEP_BUILD_DIR, default
build/, configured there if it is not yet) and puts it into the
lockstep_probe package; the metadata is in pyproject.toml."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        build = os.environ.get("LOCKSTEP_BUILD_DIR",
                               os.path.join(ROOT, "build"))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build,
                                   "-DCMAKE_BUILD_TYPE=Release"])
        subprocess.check_call(["cmake", "--build", build, "--target",
                               "lockstep_py", "-j", str(os.cpu_count() or 1)])
        lib = os.path.join(build, "lib", "liblockstep_py.so")
        if not os.path.exists(lib):
            raise RuntimeError(
                f"{lib} was not built: LibTorch (Debian's libtorch-dev) is "
                "needed; run bash scripts/setup.sh first")
        shutil.copy2(lib, os.path.join(self.build_lib, "lockstep_probe"))


setup(cmdclass={"build_py": BuildWithLibrary})
