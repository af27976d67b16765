"""Build of the profsum Python package (a wheel carrying profsum.so).

Where profsum.so comes from:
  - PROFSUM_SO=/path/to/profsum.so: that file (no build);
  - else, inside the profsum repository (this directory is its python/):
    `make -C .. profsum.so`, which builds the extension when its sources
    changed and does nothing otherwise;
  - else the build stops and says so.
The version is PROFSUM_VERSION, else the repository's VERSION file.

The wheel is tagged py3-none-<platform>: profsum.so is a SQLite extension
(it calls SQLite through the host's function table, not Python), so any
Python 3 of the platform can load it; it is not pure Python.
"""
import os
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def read_version():
    v = os.environ.get("PROFSUM_VERSION")
    if v:
        return v.strip()
    try:
        with open(os.path.join(REPO, "VERSION")) as f:
            return f.read().strip()
    except OSError:
        raise SystemExit("profsum setup.py: no version: set PROFSUM_VERSION or build from the "
                         "repository (python/ next to VERSION)")


def extension_path():
    """The profsum.so to package: PROFSUM_SO, or the repository's, built by
    its Makefile."""
    so = os.environ.get("PROFSUM_SO")
    if so:
        if not os.path.isfile(so):
            raise SystemExit("profsum setup.py: PROFSUM_SO=%s: no such file" % so)
        return so
    if os.path.isfile(os.path.join(REPO, "Makefile")) and os.path.isdir(os.path.join(REPO, "ext")):
        subprocess.check_call([os.environ.get("MAKE", "make"), "-C", REPO, "profsum.so"])
        return os.path.join(REPO, "profsum.so")
    raise SystemExit("profsum setup.py: no profsum.so: build the package from python/ inside the "
                     "profsum repository (it runs `make -C .. profsum.so`) or set PROFSUM_SO")


class BuildPy(build_py):
    """build_py, plus profsum.so copied into the package."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "profsum", "profsum.so")
        self.mkpath(os.path.dirname(dest))
        self.copy_file(extension_path(), dest, preserve_times=False)


class PlatformDistribution(Distribution):
    """A distribution with a shared library: installed to platlib, a
    platform wheel (the wheel's root is platlib, not purelib)."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPy}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        """Platform wheel (it holds a shared library), for any Python 3."""

        def get_tag(self):
            _py, _abi, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:  # no wheel module: pip's legacy install still works
    pass


def long_description():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        return f.read()


setup(
    name="profsum",
    version=read_version(),
    description="JAX/XLA profiler traces in SQLite: the profsum extension for Python",
    long_description=long_description(),
    long_description_content_type="text/markdown",
    license="MIT",
    license_files=["LICENSE"],      # a link to the repository's LICENSE
    packages=["profsum"],
    python_requires=">=3.8",
    extras_require={"pandas": ["pandas"], "apsw": ["apsw"]},
    cmdclass=cmdclass,
    distclass=PlatformDistribution,
    zip_safe=False,
)
