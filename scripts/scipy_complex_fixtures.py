#!/usr/bin/python3
"""Generate the complex scipy fixtures in testdata/scipy-complex/.

Run from the repository root with Debian's interpreter (scipy 1.10, numpy
1.24; the pyenv `python3` on PATH has no scipy):

    /usr/bin/python3 scripts/scipy_complex_fixtures.py

It deletes every *.npy in testdata/scipy-complex/ and rewrites them and
manifest.json. Every case draws from its own generator seeded by a CRC of
its name, so the output is deterministic.

Each case is scipy.ndimage.correlate or convolve of complex data and/or
complex weights, the data's own dtype stored in `<name>_input.npy`, the
weights (complex128 or float64) in `<name>_k.npy`, and `expected`
(`<name>_expected.npy`, complex128): scipy's value computed from the input
converted to complex128 (or float64 for real data) with output=complex128,
before any cast to the output dtype. `cval` is [real, imag]. Before writing,
the script asserts the semantics ndconv follows: scipy 1.10's correlate
conjugates complex weights (as numpy.correlate does) and convolve does not,
and a complex result is the linear combination of the parts' real
correlations.
"""

import json
import os
import zlib

import numpy as np
import scipy
import scipy.ndimage as ndi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTDIR = os.path.join(ROOT, "testdata", "scipy-complex")
BORDERS = ["reflect", "mirror", "nearest", "wrap", "constant"]


def check_semantics():
    x = np.arange(1.0, 6.0)
    w = np.array([1j, 0, 0])
    got = ndi.correlate(x, w, mode="constant")
    assert np.array_equal(got, [0, -1j, -2j, -3j, -4j]), got  # conjugated
    got = ndi.convolve(x, w, mode="constant")
    assert np.array_equal(got, [2j, 3j, 4j, 5j, 0]), got  # not conjugated
    rng = np.random.default_rng(0)
    xc = rng.standard_normal((6, 7)) + 1j * rng.standard_normal((6, 7))
    wc = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    c = 1.5 - 2j
    whole = ndi.correlate(xc, wc, mode="constant", cval=c)
    wcc = np.conj(wc)
    re = (ndi.correlate(xc.real, wcc.real, mode="constant", cval=c.real)
          - ndi.correlate(xc.imag, wcc.imag, mode="constant", cval=c.imag))
    im = (ndi.correlate(xc.real, wcc.imag, mode="constant", cval=c.real)
          + ndi.correlate(xc.imag, wcc.real, mode="constant", cval=c.imag))
    assert np.allclose(whole, re + 1j * im, rtol=0, atol=1e-12)
    for dt, want in [(np.uint8, np.complex64), (np.int16, np.complex64), (np.float32, np.complex64),
                     (np.int32, np.complex128), (np.float64, np.complex128), (np.complex64, np.complex64)]:
        got = ndi.correlate(np.ones(4, dt), np.array([1j]))
        assert got.dtype == want, (dt, got.dtype)


def cases():
    out = []
    inputs = ["complex64", "complex128", "float32", "float64", "int16", "uint8"]
    n = 0
    for func in ["correlate", "convolve"]:
        for border in BORDERS:
            for input_dtype in inputs:
                for weights in ["complex", "real"]:
                    if weights == "real" and not input_dtype.startswith("complex"):
                        continue
                    n += 1
                    shape = [(17,), (9, 11), (5, 6, 4)][n % 3]
                    kshape = [(4,), (3, 2), (2, 3, 3)][n % 3]
                    out.append(dict(name="%s_%s_%s_%sw" % (func, border, input_dtype, weights), func=func,
                                    border=border, input_dtype=input_dtype, weights=weights,
                                    shape=shape, kshape=kshape))
    return out


def make(case):
    rng = np.random.default_rng(zlib.crc32(case["name"].encode()))
    dt = np.dtype(case["input_dtype"])
    shape = case["shape"]
    if dt.kind == "c":
        x = (rng.uniform(-100, 100, shape) + 1j * rng.uniform(-100, 100, shape)).astype(dt)
    elif dt.kind == "f":
        x = rng.uniform(-100, 100, shape).astype(dt)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    kshape = case["kshape"]
    w = rng.uniform(-1, 1, kshape)
    if case["weights"] == "complex":
        w = w + 1j * rng.uniform(-1, 1, kshape)
        w.flat[0] = w.flat[0].real  # a weight with a zero imaginary part
    cval = [0.0, 0.0]
    if case["border"] == "constant":
        cval = [round(float(rng.uniform(-5, 5)), 3), round(float(rng.uniform(-5, 5)), 3) if dt.kind == "c" else 0.0]
    origin = [int(rng.integers(-(k // 2), (k - 1) // 2, endpoint=True)) for k in kshape]
    wide = x.astype(np.complex128 if dt.kind == "c" else np.float64)
    c = complex(*cval) if dt.kind == "c" else cval[0]
    f = ndi.correlate if case["func"] == "correlate" else ndi.convolve
    expected = f(wide, w, output=np.complex128, mode=case["border"], cval=c, origin=origin)
    return x, w, cval, origin, expected


def main():
    check_semantics()
    os.makedirs(OUTDIR, exist_ok=True)
    for name in os.listdir(OUTDIR):
        if name.endswith(".npy"):
            os.remove(os.path.join(OUTDIR, name))
    manifest = {"scipy": scipy.__version__, "numpy": np.__version__, "cases": []}
    for case in cases():
        x, w, cval, origin, expected = make(case)
        name = case["name"]
        for suffix, a in [("input", x), ("k", w), ("expected", expected)]:
            np.save(os.path.join(OUTDIR, "%s_%s.npy" % (name, suffix)), a)
        manifest["cases"].append(dict(name=name, func=case["func"], border=case["border"], cval=cval,
                                      origin=origin, input=name + "_input.npy", kernel=name + "_k.npy",
                                      expected=name + "_expected.npy"))
    with open(os.path.join(OUTDIR, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
