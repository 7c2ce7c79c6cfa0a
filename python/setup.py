"""Builds the ndconv Python package: the Go shared library (./capi, built
with go build -buildmode=c-shared from the repository around this
directory) goes into the package beside __init__.py.

    pip install --no-build-isolation ./python   # offline: uses the installed setuptools
"""
import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class BuildWithGo(build_py):
    def run(self):
        super().run()
        out = os.path.join(os.path.abspath(self.build_lib), "ndconv", "libndconv.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        subprocess.check_call(["go", "build", "-trimpath", "-buildmode=c-shared", "-o", out, "./capi"],
                              cwd=REPO, env=env)
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)


setup(
    name="ndconv",
    version="0.1.0",
    description="scipy.ndimage's correlate, convolve and filters on ndconv's CPU, CUDA and OpenCL engines",
    packages=["ndconv"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass={"build_py": BuildWithGo},
    zip_safe=False,
)
