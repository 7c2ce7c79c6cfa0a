#!/usr/bin/python3
"""NIfTI-1 fixtures for package nifti, written and read by nibabel.

Run from imageio/nifti with Debian's Python (nibabel 5.0, numpy 1.24):

    /usr/bin/python3 testdata/make_nifti.py          # rewrite testdata/nibabel/
    go test ./imageio/nifti -run TestGolden -update  # rewrite testdata/golden/ from Go
    /usr/bin/python3 testdata/make_nifti.py --check  # nibabel reads the Go files back

The first step writes small volumes of every datatype, byte order and rank
(fixed seed), and testdata/nibabel/expected.json with nibabel's view of each:
the array as package nifti must return it (C order, nibabel's axis order, as
little-endian bytes in hex), its dtype, nibabel's affine, qform, sform and
base affine, zooms, and every raw header field — or the error class that
package nifti must report.

--check loads every testdata/golden/*.nii (written by Go's Write with the
header Go read from the fixture of the same name) with nibabel and verifies
that the voxels, affine, zooms and geometry fields equal the fixture's, and
that golden/default_header.nii (written with a nil header) has nibabel's
default geometry.
"""
import gzip
import io
import json
import math
import os
import sys

import nibabel as nib
import numpy as np
from nibabel.eulerangles import euler2mat

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "nibabel")
GOLDEN = os.path.join(HERE, "golden")

# The array dtype package nifti returns for each stored dtype, unscaled.
OUT_DTYPE = {
    "uint8": "uint8", "int16": "int16", "int32": "int32", "float32": "float32",
    "float64": "float64", "uint16": "uint16", "int8": "int8", "uint32": "uint32",
    "int64": "int64", "uint64": "uint64",
}
# Stored dtypes whose scaled values are float64 (float32 for the rest).
WIDE = {"int32", "uint32", "int64", "uint64", "float64"}

# Header fields every golden file must keep from its fixture.
GEOMETRY = ["pixdim", "qform_code", "sform_code", "quatern_b", "quatern_c", "quatern_d",
            "qoffset_x", "qoffset_y", "qoffset_z", "srow_x", "srow_y", "srow_z",
            "xyzt_units", "descrip", "aux_file", "intent_code", "intent_p1", "intent_p2",
            "intent_p3", "intent_name", "dim_info", "toffset", "slice_start", "slice_end",
            "slice_code", "slice_duration"]


def rotation(zooms, offset, qfac=1, angles=(0.3, -0.2, 0.1)):
    a = np.eye(4)
    z = np.array(zooms, float)
    z[2] *= qfac
    a[:3, :3] = euler2mat(*angles) @ np.diag(z)
    a[:3, 3] = offset
    return a


def header(data, endian="<", zooms=None, qform=None, sform=None, **fields):
    h = nib.Nifti1Header(endianness=endian)
    h.set_data_dtype(data.dtype)
    h.set_data_shape(data.shape)
    if zooms is not None:
        h.set_zooms(zooms)
    if qform is not None:
        h.set_qform(qform[0], qform[1])
    if sform is not None:
        h.set_sform(sform[0], sform[1])
    for k, v in fields.items():
        h[k] = v
    return h


def nifti_bytes(data, hdr, scl=None, extension=None, patch=None):
    """The .nii file nibabel saves for data and hdr, then scl_slope and
    scl_inter and any raw header bytes patched in (nibabel's own save
    rescales data, so scaling is patched into an unscaled file)."""
    img = nib.Nifti1Image(data, None, header=hdr)
    if extension is not None:
        img.header.extensions.append(nib.nifti1.Nifti1Extension("comment", extension))
    buf = io.BytesIO()
    img.to_file_map({"image": nib.FileHolder(fileobj=buf), "header": nib.FileHolder(fileobj=buf)})
    b = bytearray(buf.getvalue())
    end = hdr.endianness
    if scl is not None:
        b[112:120] = np.array(scl, end + "f4").tobytes()
    for off, raw in (patch or {}).items():
        b[off:off + len(raw)] = raw
    return bytes(b)


def rand(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt) * 100
    info = np.iinfo(dt)
    lo, hi = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=dt)


def fixtures(rng):
    """(name, file bytes, expected error or None)."""
    out = []

    def add(name, data, hdr, err=None, gz=False, **kw):
        b = nifti_bytes(data, hdr, **kw)
        out.append((name, gzip.compress(b, mtime=0) if gz else b, err))

    d = rand(rng, "u1", (5, 4, 3))
    add("u8_sform_qform.nii", d, header(
        d, qform=(rotation((1.5, 2, 2.5), (10, -20, 30)), 1),
        sform=(np.array([[1.1, 0.2, 0, 5], [0, 2.2, 0.3, 6], [0.1, 0, 3.3, 7], [0, 0, 0, 1]]), 2),
        descrip=b"ndconv fixture: sform and qform", xyzt_units=10, dim_info=57, toffset=1.25,
        intent_code=1001, intent_name=b"tstat-ish", intent_p1=3.5, slice_duration=0.1,
        slice_start=0, slice_end=2, slice_code=1, aux_file=b"aux.txt"))

    d = rand(rng, "i2", (4, 3, 2))
    add("i16_be.nii", d, header(d, ">", qform=(rotation((0.9, 1.1, 3), (-1, 2, -3), qfac=-1), 2),
                                xyzt_units=2, descrip=b"big-endian, qfac -1"))

    d = rand(rng, "i4", (3, 4, 2, 2))
    s = np.array([[-2, 0, 0, 90], [0, 2, 0, -126], [0, 0, 2, -72], [0, 0, 0, 1.0]])
    add("i32_4d.nii.gz", d, header(d, zooms=(2, 2, 2, 0.75), sform=(s, 4), xyzt_units=10), gz=True)

    d = rand(rng, "f4", (6, 5))
    d.flat[[0, 7, 12]] = [np.nan, np.inf, -0.0]
    add("f32_2d_qform.nii", d, header(d, zooms=(0.5, 0.25),
                                      qform=(rotation((0.5, 0.25, 1), (1, 2, 3), angles=(1.0, 0.5, -0.7)), 1)))

    d = rand(rng, "f8", (7,))
    add("f64_1d.nii", d, header(d, zooms=(2.5,)))

    d = rand(rng, "u2", (2, 3, 2, 2, 3))
    add("u16_5d.nii.gz", d, header(d, zooms=(1, 2, 3, 4, 5)), gz=True)

    d = rand(rng, "i1", (3, 3, 2))
    add("i8.nii", d, header(d, zooms=(3, 2, 1)))

    d = rand(rng, "u4", (4, 2))
    d.flat[:2] = [0, 2 ** 32 - 1]
    add("u32.nii", d, header(d))

    d = np.array([[0, -1, 2 ** 53], [-(2 ** 53), 2 ** 62, -(2 ** 63)]], "i8")
    add("i64_exact.nii", d, header(d))

    d = np.array([0, 2 ** 63, 2 ** 64 - 2 ** 11, 12345], "u8")
    add("u64_exact_be.nii.gz", d, header(d, ">"), gz=True)

    d = np.array([1, 2 ** 53 + 1, 3], "i8")
    add("i64_inexact.nii", d, header(d))  # beyond 2**53: read exactly as int64

    d = rand(rng, "i2", (3, 4, 2))
    add("i16_scaled.nii", d, header(d, zooms=(2, 2, 2)), scl=(0.5, -3.25))

    d = rand(rng, "u1", (4, 4))
    add("u8_scaled.nii.gz", d, header(d), scl=(1 / 3, 0), gz=True)

    d = rand(rng, "i4", (3, 3))
    add("i32_scaled.nii", d, header(d), scl=(1e-3, 7))

    d = rand(rng, "f4", (2, 3, 2))
    d.flat[0] = -0.0
    add("f32_scaled.nii", d, header(d), scl=(2, 0))

    d = rand(rng, "f8", (3, 2))
    add("f64_scaled_be.nii", d, header(d, ">"), scl=(-1.5, 0.25))

    d = rand(rng, "u2", (5, 2))
    add("u16_inter_only.nii", d, header(d), scl=(1, 5))

    d = rand(rng, "i2", (3, 2))
    add("i16_slope0.nii", d, header(d), scl=(0, 100))

    d = rand(rng, "i2", (2, 3, 4))
    add("i16_extension.nii", d, header(d, zooms=(1, 1, 4)), extension=b"ndconv extension test")

    # dim[0] = 4 with extents of 1 kept; dim[5:8] zeroed (ignored).
    d = rand(rng, "f4", (3, 2, 1, 1))
    add("f32_trailing_ones.nii", d, header(d), patch={50: bytes(6)})

    d = (rng.standard_normal((2, 2, 2)) + 1j).astype("c8")
    add("complex64.nii", d, header(d), err="unsupported")

    d = np.zeros((2, 2, 1), [("R", "u1"), ("G", "u1"), ("B", "u1")])
    add("rgb24.nii", d, header(d), err="unsupported")

    d = rand(rng, "f8", (2, 2, 2))
    add("float128.nii", d, header(d), err="unsupported",
        patch={70: np.array([1536, 128], "<i2").tobytes()})

    d = rand(rng, "i2", (2, 3))
    buf = io.BytesIO()
    nib.Nifti2Image(d, np.eye(4)).to_file_map({"image": nib.FileHolder(fileobj=buf), "header": nib.FileHolder(fileobj=buf)})
    out.append(("nifti2.nii", buf.getvalue(), "unsupported"))

    hdr, img = io.BytesIO(), io.BytesIO()
    nib.Nifti1Pair(d, np.eye(4)).to_file_map({"header": nib.FileHolder(fileobj=hdr), "image": nib.FileHolder(fileobj=img)})
    out.append(("pair.hdr", hdr.getvalue(), "unsupported"))
    return out


def jsonable(v):
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode("latin-1")
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # "nan", "inf", "-inf": JSON has no such numbers
    return v


def expected_array(img):
    """nibabel's view as package nifti returns it: dtype and values."""
    stored = img.dataobj.dtype.name
    slope, inter = img.dataobj.slope, img.dataobj.inter
    raw = np.asanyarray(img.dataobj.get_unscaled())
    if (slope, inter) != (1, 0):
        f = img.get_fdata()
        ref = raw.astype("f8")
        if slope != 1:
            ref = ref * slope
        if inter != 0:
            ref = ref + inter
        assert np.array_equal(f, ref, equal_nan=True), "get_fdata is not x*slope+inter in float64"
        return f.astype("f8" if stored in WIDE else "f4")
    out = raw.astype(OUT_DTYPE[stored])
    assert np.array_equal(out.astype(stored), raw, equal_nan=True), "inexact conversion"
    return out


def describe(name, blob, err):
    e = {"file": name, "error": err or ""}
    if err:
        return e
    raw_hdr = raw_header(os.path.join(FIXTURES, name))
    img = nib.load(os.path.join(FIXTURES, name))
    arr = expected_array(img)
    e.update({
        "shape": list(arr.shape),
        "dtype": arr.dtype.name,
        "data": np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes().hex(),
        "affine": jsonable(img.affine),
        "qform": jsonable(raw_hdr.get_qform()),
        "sform": jsonable(raw_hdr.get_sform()),
        "base": jsonable(raw_hdr.get_base_affine()),
        "zooms": jsonable(np.array(img.header.get_zooms(), "f8")),
        "big_endian": raw_hdr.endianness == ">",
        "header": {k: jsonable(raw_hdr[k]) for k in raw_hdr.keys()},
    })
    return e


def make():
    os.makedirs(FIXTURES, exist_ok=True)
    rng = np.random.default_rng(20261123)
    entries = []
    for name, blob, err in fixtures(rng):
        with open(os.path.join(FIXTURES, name), "wb") as f:
            f.write(blob)
        entries.append(describe(name, blob, err))
    with open(os.path.join(FIXTURES, "expected.json"), "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
    print(f"wrote {len(entries)} fixtures to {FIXTURES}")


def golden_name(fixture):
    for ext in (".nii.gz", ".nii"):
        if fixture.endswith(ext):
            return fixture[: -len(ext)] + ".nii"
    raise ValueError(fixture)


def raw_header(path):
    """The header as stored, without nibabel's fixes (such as qfac → 1)."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    return nib.Nifti1Header.from_fileobj(io.BytesIO(b), check=False)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "SU":
        return a.tolist() == b.tolist()
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def check():
    with open(os.path.join(FIXTURES, "expected.json")) as f:
        entries = json.load(f)
    failures, checked = [], 0
    for e in entries:
        if e["error"]:
            continue
        path = os.path.join(GOLDEN, golden_name(e["file"]))
        img = nib.load(path)
        fix = nib.load(os.path.join(FIXTURES, e["file"]))
        want = expected_array(fix)
        got = np.asanyarray(img.dataobj)
        problems = []
        if got.dtype != want.dtype or not same(got, want):
            problems.append(f"voxels differ ({got.dtype} vs {want.dtype})")
        if not same(img.get_fdata(), want.astype("f8")):
            problems.append("get_fdata differs")
        if not np.array_equal(img.affine, fix.affine):
            problems.append(f"affine {img.affine.tolist()} != {fix.affine.tolist()}")
        if img.header.get_zooms() != fix.header.get_zooms():
            problems.append(f"zooms {img.header.get_zooms()} != {fix.header.get_zooms()}")
        gh, fh = raw_header(path), raw_header(os.path.join(FIXTURES, e["file"]))
        for k in GEOMETRY:
            if not same(gh[k], fh[k]):
                problems.append(f"{k}: {gh[k]} != {fh[k]}")
        finite = want[np.isfinite(want)] if want.dtype.kind == "f" else want
        if finite.size and not (gh["cal_min"] <= finite.min() and finite.max() <= gh["cal_max"]):
            problems.append(f"cal range [{gh['cal_min']}, {gh['cal_max']}] misses the data")
        if (float(gh["scl_slope"]), float(gh["scl_inter"]), int(gh["vox_offset"])) != (1, 0, 352):
            problems.append("scl_slope, scl_inter, vox_offset not 1, 0, 352")
        if problems:
            failures.append(f"{path}: " + "; ".join(problems))
        checked += 1

    # Written with a nil header: a[x, y, z] = x + 10y + 100z, int16, (4, 3, 2).
    path = os.path.join(GOLDEN, "default_header.nii")
    img = nib.load(path)
    x, y, z = np.indices((4, 3, 2))
    base = nib.Nifti1Header()
    base.set_data_shape((4, 3, 2))
    if not (np.asanyarray(img.dataobj).dtype == np.int16 and same(img.get_fdata(), x + 10 * y + 100 * z)):
        failures.append(f"{path}: voxels differ")
    h = raw_header(path)
    if (int(h["qform_code"]), int(h["sform_code"]), int(h["xyzt_units"])) != (0, 0, 0) or \
            not same(h["pixdim"], np.ones(8)) or not np.array_equal(img.affine, base.get_base_affine()):
        failures.append(f"{path}: not the default geometry")
    checked += 1

    for f in failures:
        print("FAIL", f)
    print(f"checked {checked} Go-written files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(check() if sys.argv[1:] == ["--check"] else make())
