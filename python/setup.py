"""Builds the extension hloi._hloi with hloi's own CMake build (the library
and the extension, in a temporary build folder) for the interpreter running
pip. Offline: pip install --no-build-isolation ./python (README.md)."""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "CMakeLists.txt").exists():
            raise RuntimeError(f"hloi's sources are not at {ROOT}: build from a checkout")
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        subprocess.check_call([
            "cmake", "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DHLOI_BUILD_TESTS=OFF",
            "-DHLOI_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ])
        jobs = os.environ.get("HLOI_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build), "--target", "hloi_python",
                               "--parallel", jobs])
        built = sorted((build / "python" / "hloi").glob("_hloi*.so"))
        if not built:
            raise RuntimeError("the CMake build made no hloi/_hloi*.so")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


setup(ext_modules=[Extension("hloi._hloi", sources=[])], cmdclass={"build_ext": CMakeBuild})
