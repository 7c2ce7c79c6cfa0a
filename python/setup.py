"""Builds the ndconv Python package: the Go shared library (./capi, built
with go build -buildmode=c-shared from the repository around this
directory) goes into the package beside __init__.py, and the wheel is a
platform wheel (py3-none-<platform>: ctypes loads the library, so any
CPython 3 can use it; only the platform and its glibc matter).

    pip wheel --no-deps -w dist ./python     # offline: uses the installed setuptools and wheel
    pip install dist/ndconv-*.whl            # no Go, no compiler

Building needs Go and a C compiler (cgo); installing the wheel needs
neither. The version is the Go module's: the repository's nearest git tag
vX.Y.Z (git describe), as PEP 440 (X.Y.Z, X.Y.Z.postN+gHASH past the tag,
0.0.0.devN+gHASH with no tag, N the commit count); $NDCONV_VERSION
overrides it where there is no git (a source tarball).

The platform tag is manylinux_2_M_<arch>, M the newest GLIBC_2.M symbol
version the library needs (read from its dynamic symbol table, as
auditwheel reads it): the library needs only glibc (libc, libpthread),
nothing to bundle. $NDCONV_PLAT overrides the tag.
"""
import os
import platform
import re
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _git(*args):
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()


def version():
    """The Go module's version as PEP 440 (see the module docstring)."""
    v = os.environ.get("NDCONV_VERSION")
    if v:
        return v.lstrip("v")
    try:
        d = _git("describe", "--tags", "--match", "v[0-9]*", "--long", "--dirty")
    except (OSError, subprocess.CalledProcessError):
        d = ""
    m = re.fullmatch(r"v(\d+(?:\.\d+)*)-(\d+)-g([0-9a-f]+)(-dirty)?", d)
    if m:
        base, n, h, dirty = m.groups()
        v = base if n == "0" and not dirty else "%s.post%s+g%s" % (base, n, h)
        return v + (".dirty" if dirty and "+" in v else "")
    try:
        n, h = _git("rev-list", "--count", "HEAD"), _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no") != ""
    except (OSError, subprocess.CalledProcessError):
        return "0.0.0"
    return "0.0.0.dev%s+g%s%s" % (n, h, ".dirty" if dirty else "")


VERSION = version()


def glibc_needed(lib):
    """The newest GLIBC_2.M a shared library's dynamic symbols need, as
    (2, M), or None where objdump is missing."""
    try:
        out = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    vs = [tuple(int(p) for p in m.split(".")) for m in re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", out)]
    return max(vs)[:2] if vs else (2, 17)


def plat_tag(lib):
    tag = os.environ.get("NDCONV_PLAT")
    if tag:
        return tag
    arch = platform.machine()
    if sys.platform != "linux":
        from sysconfig import get_platform
        return get_platform().replace("-", "_").replace(".", "_")
    need = glibc_needed(lib) or (2, 17)
    # manylinux2014 (2_17) is the oldest tag pip still ranks first; a
    # library that needs older symbols only is still 2_17-compatible.
    major, minor = max(need, (2, 17))
    return "manylinux_%d_%d_%s" % (major, minor, arch)


class BuildWithGo(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(os.path.abspath(self.build_lib), "ndconv")
        out = os.path.join(pkg, "libndconv.so")
        os.makedirs(pkg, exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        subprocess.check_call(["go", "build", "-trimpath", "-buildmode=c-shared", "-ldflags=-s -w",
                               "-o", out, "./capi"], cwd=REPO, env=env)
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)
        with open(os.path.join(pkg, "_version.py"), "w") as f:
            f.write("# Written by setup.py: the Go module's version this package was built from.\n"
                    "version = %r\n" % VERSION)
        self.distribution.ndconv_library = out


class PlatformDistribution(Distribution):
    """The package holds a shared library: never a pure wheel."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithGo}
try:
    from wheel.bdist_wheel import bdist_wheel

    class PlatformWheel(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            lib = getattr(self.distribution, "ndconv_library", None)
            if lib is None:
                self.run_command("build_py")
                lib = self.distribution.ndconv_library
            return "py3", "none", plat_tag(lib)

    cmdclass["bdist_wheel"] = PlatformWheel
except ImportError:  # no wheel package: pip install ./python still works
    pass


setup(
    name="ndconv",
    version=VERSION,
    description="scipy.ndimage's correlate, convolve and filters on ndconv's CPU, CUDA and OpenCL engines",
    packages=["ndconv"],
    package_data={"ndconv": ["libndconv.so"]},
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass=cmdclass,
    distclass=PlatformDistribution,
    zip_safe=False,
)
