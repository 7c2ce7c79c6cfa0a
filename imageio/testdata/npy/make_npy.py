#!/usr/bin/python3
"""Writes the .npy fixtures of package imageio and expected.json.

Run from this directory with Debian's python3-numpy (1.24):

    /usr/bin/python3 make_npy.py

Every file is written by numpy itself (np.save or np.lib.format.write_array);
expected.json gives, for each readable file, the dtype, shape and values in C
order (floats as Python floats, whose repr round-trips; NaN and infinities as
the strings "nan", "inf", "-inf"), and for each file ndconv must refuse, a
word its error message has to contain. The Go tests read only these outputs.
"""
import json
import math

import numpy as np

rng = np.random.default_rng(20261123)
expected = {"numpy_version": np.__version__, "arrays": {}, "unsupported": {}}


def values(a):
    out = []
    for v in np.asarray(a).reshape(-1, order="C").tolist():
        if isinstance(v, float):
            if math.isnan(v):
                v = "nan"
            elif math.isinf(v):
                v = "inf" if v > 0 else "-inf"
        out.append(v)
    return out


def ints(dtype, shape):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.uint64 if dtype == np.uint64 else np.int64)
    flat = a.reshape(-1)
    if flat.size >= 2:
        flat[0], flat[1] = info.min, info.max
    return a.astype(dtype)


def floats(dtype, shape):
    a = (rng.standard_normal(size=shape) * 1000).astype(dtype)
    flat = a.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny, np.finfo(dtype).max]
    for i, s in enumerate(specials[: flat.size]):
        flat[i] = s
    return a


def save(name, a, version=None, same_bytes=True):
    """same_bytes: WriteNPY must reproduce the file byte for byte."""
    if version is None:
        np.save(name, a)
    else:
        with open(name, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
    expected["arrays"][name] = {
        "dtype": a.dtype.name,
        "shape": list(a.shape),
        "values": values(a.real),
        "same_bytes": same_bytes,
    }
    if a.dtype.kind == "c":
        expected["arrays"][name]["imag"] = values(a.imag)


def complexes(dtype, shape):
    a = np.empty(shape, dtype)
    part = a.real.dtype
    # the imaginary parts rolled, so that specials meet finite real parts
    a.real, a.imag = floats(part, shape), np.roll(floats(part, shape), 1)
    return a


# Every supported dtype (since issue 17 also int8, uint32, int64, uint64 and
# float16), little-endian, C order, as np.save writes them.
save("u1.npy", ints(np.uint8, (3, 5)))
save("u2.npy", ints(np.uint16, (2, 3, 4)))
save("i2.npy", ints(np.int16, (7,)))
save("i4.npy", ints(np.int32, (2, 2, 2, 3)))
save("f4.npy", floats(np.float32, (4, 6)))
save("f8.npy", floats(np.float64, (3, 2, 2)))
save("f4_0d.npy", np.array(2.5, dtype=np.float32))
save("f8_empty.npy", np.zeros((0, 3), dtype=np.float64))
save("u1_rank5.npy", ints(np.uint8, (2, 1, 3, 1, 2)))
save("i1.npy", ints(np.int8, (3, 4)))
save("u4.npy", ints(np.uint32, (2, 5)))
save("i8.npy", ints(np.int64, (3, 3)))
save("u8.npy", ints(np.uint64, (4, 2)))
save("f2.npy", floats(np.float16, (3, 5)))

# Big-endian: numpy keeps the byte order in descr; WriteNPY writes '<'.
for name, dt, maker, shape in [
    ("be_f4.npy", ">f4", floats, (3, 4)),
    ("be_f8.npy", ">f8", floats, (2, 3)),
    ("be_i2.npy", ">i2", ints, (5,)),
    ("be_u2.npy", ">u2", ints, (2, 2)),
    ("be_i4.npy", ">i4", ints, (2, 3)),
    ("be_u4.npy", ">u4", ints, (3, 2)),
    ("be_i8.npy", ">i8", ints, (2, 2)),
    ("be_u8.npy", ">u8", ints, (3,)),
    ("be_f2.npy", ">f2", floats, (2, 4)),
]:
    base = np.dtype(dt).newbyteorder("=")
    save(name, maker(base, shape).astype(dt), same_bytes=False)

# Fortran order, ranks 2 and 3: descr says fortran_order True.
save("fortran_f8.npy", np.asfortranarray(floats(np.float64, (3, 4))), same_bytes=False)
save("fortran_i2_3d.npy", np.asfortranarray(ints(np.int16, (2, 3, 4))), same_bytes=False)

# Explicit header versions.
save("v2_f4.npy", floats(np.float32, (2, 5)), version=(2, 0), same_bytes=False)
save("v3_i4.npy", ints(np.int32, (3, 2)), version=(3, 0), same_bytes=False)

# Complex (issue 17): both byte orders (each part swapped on its own) and
# Fortran order.
save("c8.npy", complexes(np.complex64, (3, 4)))
save("c16.npy", complexes(np.complex128, (2, 3)))
save("be_c8.npy", complexes(np.complex64, (5,)).astype(">c8"), same_bytes=False)
save("be_c16.npy", complexes(np.complex128, (2, 2)).astype(">c16"), same_bytes=False)
save("fortran_c16.npy", np.asfortranarray(complexes(np.complex128, (3, 2))), same_bytes=False)

# Types ndconv refuses, with a word the error must name.
unsupported = [
    ("c32.npy", np.array([1 + 2j], dtype=np.clongdouble), "complex256"),
    ("b1.npy", np.array([True, False]), "bool"),
    ("U.npy", np.array(["ab", "c"]), "Unicode string"),
    ("S.npy", np.array([b"ab"]), "byte string"),
    ("M.npy", np.array(["2020-01-01"], dtype="datetime64[D]"), "datetime64"),
    ("struct.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i2")]), "structured"),
]
for name, a, word in unsupported:
    np.save(name, a)
    expected["unsupported"][name] = word
obj = np.empty(2, dtype=object)
obj[0], obj[1] = {"a": 1}, [1, 2]
np.save("object.npy", obj, allow_pickle=True)
expected["unsupported"]["object.npy"] = "Python objects"

with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
