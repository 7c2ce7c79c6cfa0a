#!/usr/bin/python3
"""Generate the scipy reference fixtures in testdata/scipy/.

Run from the repository root with Debian's interpreter (it has scipy 1.10 and
numpy 1.24; the pyenv `python3` on PATH has no scipy):

    /usr/bin/python3 scripts/scipy_fixtures.py

It deletes every *.npy in testdata/scipy/ and rewrites them, manifest.json and
README.md.  The output is deterministic: every case draws from its own numpy
generator seeded by a CRC of the case name, so running it twice gives
byte-identical files (and adding a case does not change the others).

Semantics are those of DESIGN.md section 1 (scipy.ndimage exactly).  For each
case "expected" is the float64 value scipy computes from the input converted to
float64, BEFORE any cast to the output dtype:

  same   scipy.ndimage.correlate / convolve(x64, w, output=float64, mode=border,
         cval=cval, origin=origin).  scipy 1.10 has no `axes` argument, so a
         kernel spanning fewer axes than the input (or other axes) is reshaped to
         the input's rank with length-1 axes and moved so that kernel axis i lies
         on input axis axes[i] (origin 0 on the added axes).
  valid  scipy.signal.correlate / convolve(x64, w, 'valid', method='direct')
  full   scipy.signal.correlate / convolve(x64, w, 'full', method='direct')
         (only with border constant, cval 0)

For a filter bank (several kernels of one shape) expected has one extra
trailing axis of length K: expected[..., i] is kernel i.

Known scipy 1.10 bug: N-D correlate with mode 'reflect' reads out of bounds at
positions p <= -4n with p % 2n == 0 (see scipy_reflect_bug_position).  Cases
that reach there get "expected" from the independent numpy reference below
(DESIGN semantics) instead of scipy; the README lists them.

Before writing anything the script checks that scipy still behaves as the
design says: the border table of DESIGN.md section 1 (padding `a b c d` by
correlating with shifted delta kernels), border extension at any distance
(kernels longer than the input, n = 1), the convolve = flipped-correlate rule
with its even-kernel origin shift, and the axes emulation against per-slice
filtering.  Every "same" case is also recomputed with an independent numpy
reference and must agree.
"""

import json
import os
import sys
import zlib

import numpy as np
import scipy
import scipy.ndimage as ndi
import scipy.signal as sig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTDIR = os.path.join(ROOT, "testdata", "scipy")
BORDERS = ["reflect", "mirror", "nearest", "wrap", "constant"]
EPS = np.finfo(np.float64).eps

# --------------------------------------------------------------------------
# independent reference (no scipy) used to cross-check the scipy values


def ext_index(p, n, border):
    """Index into [0, n) for position p under the border rule, or -1 (cval)."""
    if 0 <= p < n:
        return p
    if border == "constant":
        return -1
    if border == "nearest":
        return 0 if p < 0 else n - 1
    if border == "wrap":
        return p % n
    if border == "reflect":
        q = p % (2 * n)
        return q if q < n else 2 * n - 1 - q
    if border == "mirror":
        if n == 1:
            return 0
        q = p % (2 * n - 2)
        return q if q < n else 2 * n - 2 - q
    raise ValueError(border)


def ref_correlate_same(x, w, border, cval, origin):
    """out[i] = sum_j w[j] * xext[i + j - c], c = k//2 + o, full-rank w."""
    x = np.asarray(x, dtype=np.float64)
    assert x.ndim == w.ndim
    xe = x
    for ax in range(x.ndim):
        n, k = x.shape[ax], w.shape[ax]
        c = k // 2 + origin[ax]
        idx = np.array([ext_index(p, n, border) for p in range(-c, n + k - 1 - c)])
        shape = list(xe.shape)
        shape[ax] = 1
        padded = np.concatenate([xe, np.full(shape, cval)], axis=ax)
        xe = np.take(padded, np.where(idx < 0, n, idx), axis=ax)
    out = np.zeros(x.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in np.ndindex(w.shape):
            if abs(w[j]) <= EPS:  # scipy.ndimage drops these weights
                continue
            sl = tuple(slice(j[a], j[a] + x.shape[a]) for a in range(x.ndim))
            out = out + w[j] * xe[sl]
    return out


def ref_convolve_same(x, w, border, cval, origin):
    """DESIGN: convolve = correlate with w flipped, o' = -o - (k even)."""
    wf = w[tuple(slice(None, None, -1) for _ in range(w.ndim))]
    o2 = [-o - (1 if k % 2 == 0 else 0) for o, k in zip(origin, w.shape)]
    return ref_correlate_same(x, wf, border, cval, o2)


# --------------------------------------------------------------------------
# scipy evaluation


def norm_axes(axes, xnd, knd):
    if axes is None:
        return list(range(knd))
    out = [a + xnd if a < 0 else a for a in axes]
    assert len(out) == knd and len(set(out)) == knd and all(0 <= a < xnd for a in out)
    return out


def embed_kernel(w, xnd, axes, origin):
    """Kernel reshaped to the input's rank; kernel axis i on input axis axes[i]."""
    ax = norm_axes(axes, xnd, w.ndim)
    wf = np.moveaxis(w.reshape(w.shape + (1,) * (xnd - w.ndim)), list(range(w.ndim)), ax)
    of = [0] * xnd
    for i, a in enumerate(ax):
        of[a] = origin[i]
    return np.ascontiguousarray(wf), of


def scipy_one(func, x64, w, border, cval, origin, mode, axes):
    wf, of = embed_kernel(w, x64.ndim, axes, origin)
    if mode == "same":
        f = ndi.correlate if func == "correlate" else ndi.convolve
        with np.errstate(invalid="ignore", over="ignore"):
            return f(x64, wf, output=np.float64, mode=border, cval=cval, origin=of)
    f = sig.correlate if func == "correlate" else sig.convolve
    if mode == "full":
        assert border == "constant" and cval == 0.0
    return f(x64, wf, mode=mode, method="direct")


def reference_one(func, x64, w, border, cval, origin, axes):
    wf, of = embed_kernel(w, x64.ndim, axes, origin)
    f = ref_correlate_same if func == "correlate" else ref_convolve_same
    return f(x64, wf, border, cval, of)


def same_float(a, b, rtol=1e-12):
    if a.shape != b.shape:
        return False
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return False
    # NaN where NaN, same-signed Inf where Inf
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    if not np.array_equal(a[np.isinf(a)], b[np.isinf(b)]):
        return False
    scale = max(1.0, float(np.max(np.abs(a[fa]), initial=0.0)))
    return bool(np.all(np.abs(a[fa] - b[fa]) <= rtol * scale))


# --------------------------------------------------------------------------
# self-checks of scipy's behaviour


DESIGN_BORDER_TABLE = {
    "reflect": "d c b a | a b c d | d c b a",
    "mirror": "d c b | a b c d | c b a",
    "nearest": "a a a | a b c d | d d d",
    "wrap": "b c d | a b c d | a b c",
    "constant": "k k k | a b c d | k k k",
}


def padded_by_scipy(x, border, cval, left, right):
    """x extended by `left`/`right` samples, using correlate with delta kernels."""
    n = len(x)
    m = max(left, right, 1)
    k = 2 * m + 1  # odd kernel, origin 0, centre c = m
    vals = {}
    for p in range(-left, n + right):
        # out[i] = xext[i + j - m]; choose i = 0, j = p + m when 0 <= p + m < k
        i = 0 if p < n - 1 - m else n - 1
        j = p - i + m
        assert 0 <= j < k
        d = np.zeros(k)
        d[j] = 1.0
        vals[p] = ndi.correlate(x, d, output=np.float64, mode=border, cval=cval)[i]
    return [vals[p] for p in range(-left, n + right)]


def check_border_table():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    names = {1.0: "a", 2.0: "b", 3.0: "c", 4.0: "d", 99.0: "k"}
    for border, want in DESIGN_BORDER_TABLE.items():
        lt, mid, rt = [s.split() for s in want.split("|")]
        got = padded_by_scipy(x, border, 99.0, len(lt), len(rt))
        s = [names[v] for v in got]
        got_str = " ".join(s[: len(lt)]) + " | " + " ".join(s[len(lt): len(lt) + 4]) \
            + " | " + " ".join(s[len(lt) + 4:])
        assert got_str == want, (border, got_str, want)


def scipy_reflect_bug_position(p, n):
    """Positions where scipy 1.10's N-D correlate gets `reflect` wrong.

    NI_InitFilterOffsets (ni_support.c) maps a coordinate cc < -2n by
    cc = 2n*(-cc/2n) + cc, which gives 0 when cc is a multiple of 2n, and then
    `cc < -len ? cc + 2n : -cc - 1` turns that 0 into -1: one element before
    the axis start (the previous line, or memory before the array).  So every
    position p <= -4n with p % 2n == 0 (n >= 2) reads the wrong sample.
    correlate1d (NI_ExtendLine) is not affected.
    """
    return n >= 2 and p <= -4 * n and p % (2 * n) == 0


def check_far_extension():
    # every distance up to 4n+3 on both sides, n = 1..8, every border
    for n in range(1, 9):
        x = np.arange(1.0, n + 1.0) * 1.5 + 0.25
        for border in BORDERS:
            d = 4 * n + 3
            got = padded_by_scipy(x, border, -7.0, d, d)
            for p, g in zip(range(-d, n + d), got):
                q = ext_index(p, n, border)
                want = -7.0 if q < 0 else x[q]
                if border == "reflect" and scipy_reflect_bug_position(p, n):
                    continue  # scipy reads out of bounds here (known bug, see above)
                assert g == want, (n, border, p, g, want)
    # the bug is still there (if scipy fixes it, revisit reflect_bug_hit below)
    x = np.array([1.75, 3.25])
    assert padded_by_scipy(x, "reflect", 0.0, 8, 0)[0] != 1.75
    # correlate1d (line buffers) is right at every distance, reflect included
    for n in range(1, 9):
        x = np.arange(1.0, n + 1.0) * 1.5 + 0.25
        for border in BORDERS:
            d = 6 * n + 3
            k = 2 * d + 1
            for j in (0, k - 1):
                w = np.zeros(k)
                w[j] = 1.0
                got = ndi.correlate1d(x, w, mode=border, cval=-7.0, output=np.float64)
                for i in range(n):
                    q = ext_index(i + j - d, n, border)
                    assert got[i] == (-7.0 if q < 0 else x[q]), (n, border, i, j)


def reflect_bug_hit(func, xshape, wshape, origin, border):
    """Whether scipy.ndimage.correlate/convolve hits the reflect bug for this case."""
    if border != "reflect":
        return False
    for n, k, o in zip(xshape, wshape, origin):
        if func == "convolve":
            o = -o - (1 if k % 2 == 0 else 0)
        c = k // 2 + o  # leftmost position reached is -c
        if n >= 2 and c >= 4 * n:
            return True
    return False


def check_convolve_rule():
    rng = np.random.default_rng(12345)
    for k in range(1, 8):
        x = rng.standard_normal(9)
        w = rng.standard_normal(k)
        for o in range(-(k // 2), (k - 1) // 2 + 1):
            for border in BORDERS:
                a = ndi.convolve(x, w, output=np.float64, mode=border, cval=2.5, origin=o)
                b = ref_convolve_same(x, w, border, 2.5, [o])
                assert same_float(a, b), (k, o, border)
                o2 = -o - (1 if k % 2 == 0 else 0)
                c = ndi.correlate(x, w[::-1], output=np.float64, mode=border, cval=2.5, origin=o2)
                assert np.array_equal(a, c), (k, o, border)
        # origins outside the range must be rejected
        for o in (-(k // 2) - 1, (k - 1) // 2 + 1):
            try:
                ndi.correlate(x, w, origin=o)
            except ValueError:
                pass
            else:
                raise AssertionError("scipy accepted origin %d for k=%d" % (o, k))


def check_axes_emulation():
    rng = np.random.default_rng(777)
    img = rng.standard_normal((7, 6, 3))
    w = rng.standard_normal((3, 4))
    for func in ("correlate", "convolve"):
        f = ndi.correlate if func == "correlate" else ndi.convolve
        for border in BORDERS:
            for origin in ([0, 0], [1, -2], [-1, 1]):
                # axes null = [0, 1]: per channel
                got = scipy_one(func, img, w, border, 2.5, origin, "same", None)
                want = np.stack([f(img[..., c], w, mode=border, cval=2.5, origin=origin)
                                 for c in range(3)], axis=-1)
                assert np.array_equal(got, want), (func, border, origin)
                # axes [1, 0] = transposed kernel on axes [0, 1]
                got = scipy_one(func, img, w, border, 2.5, origin, "same", [1, 0])
                want = np.stack([f(img[..., c], w.T, mode=border, cval=2.5, origin=origin[::-1])
                                 for c in range(3)], axis=-1)
                assert np.array_equal(got, want), (func, border, origin)
                # axes [2, 0] on a 3-D input: slices along axis 1
                v = rng.standard_normal((5, 4, 6))
                got = scipy_one(func, v, w, border, 2.5, origin, "same", [2, 0])
                want = np.stack([f(v[:, j, :], w.T, mode=border, cval=2.5, origin=origin[::-1])
                                 for j in range(4)], axis=1)
                assert np.array_equal(got, want), (func, border, origin)
        # 1-D kernel on axis 1 (and -1) of a 2-D input: row by row
        x2 = rng.standard_normal((4, 9))
        w1 = rng.standard_normal(4)
        for ax in ([1], [-1]):
            got = scipy_one(func, x2, w1, "mirror", 0.0, [1], "same", ax)
            want = np.stack([f(r, w1, mode="mirror", origin=1) for r in x2])
            assert np.array_equal(got, want), func
            got = scipy_one(func, x2, w1, "reflect", 0.0, [-2], "same", [0])
            want = np.stack([f(c, w1, mode="reflect", origin=-2) for c in x2.T], axis=1)
            assert np.array_equal(got, want), func


def check_full_valid():
    # full with constant 0 = same on a zero-padded input, cropped; valid = crop of same
    rng = np.random.default_rng(99)
    for shape, ks in [((9,), (3,)), ((9,), (4,)), ((6, 7), (2, 3)), ((5, 4, 6), (3, 2, 4))]:
        x = rng.standard_normal(shape)
        w = rng.standard_normal(ks)
        for func in ("correlate", "convolve"):
            full = scipy_one(func, x, w, "constant", 0.0, [0] * len(ks), "full", None)
            valid = scipy_one(func, x, w, "constant", 0.0, [0] * len(ks), "valid", None)
            # correlate full: out[i] = sum_j w[j] x[i + j - (k-1)]
            wc = w if func == "correlate" else w[tuple(slice(None, None, -1) for _ in ks)]
            xp = np.pad(x, [(k - 1, k - 1) for k in ks])
            want = np.zeros([n + k - 1 for n, k in zip(shape, ks)])
            for j in np.ndindex(wc.shape):
                want += wc[j] * xp[tuple(slice(j[a], j[a] + want.shape[a]) for a in range(len(ks)))]
            assert same_float(full, want), (shape, ks, func)
            crop = tuple(slice(k - 1, n) for n, k in zip(shape, ks))
            assert same_float(valid, want[crop]), (shape, ks, func)


# --------------------------------------------------------------------------
# cases


CASES = []
NAMES = set()
REFLECT_BUG_CASES = {}  # name -> scipy's value differed


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def origins_for(k):
    """min, 0, max (deduplicated, in order)."""
    out = []
    for o in (-(k // 2), 0, (k - 1) // 2):
        if o not in out:
            out.append(o)
    return out


def rand_input(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt == np.uint8:
        return rng.integers(0, 256, shape).astype(dt)
    if dt == np.uint16:
        return rng.integers(0, 65536, shape).astype(dt)
    if dt == np.int16:
        return rng.integers(-32768, 32768, shape).astype(dt)
    if dt == np.int32:
        return rng.integers(-2_000_000, 2_000_000, shape).astype(dt)
    if dt == np.int8:
        return rng.integers(-128, 128, shape).astype(dt)
    if dt == np.uint32:
        return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(dt)
    if dt == np.int64:
        # beyond 2**53: numpy and ndconv round them to float64 alike
        return rng.integers(-2**62, 2**62, shape, dtype=np.int64)
    if dt == np.uint64:
        return rng.integers(0, 2**64 - 1, shape, dtype=np.uint64, endpoint=True)
    # floats: values with a few significant digits, mostly O(1)..O(100)
    return (rng.standard_normal(shape) * 10.0).astype(dt)


def rand_kernel(rng, shape, nonzero=False):
    w = np.round(rng.standard_normal(shape), 3)
    if nonzero:
        w[np.abs(w) < 0.05] = 0.25
    w[np.abs(w) <= EPS] = 0.5  # keep every weight well above DBL_EPSILON
    return w


def add(name, func, x, kernels, border="reflect", cval=0.0, origin=None, mode="same",
        axes=None, dtype=None, factors=None):
    assert name not in NAMES, name
    NAMES.add(name)
    if not isinstance(kernels, list):
        kernels = [kernels]
    kernels = [np.ascontiguousarray(np.asarray(k, dtype=np.float64)) for k in kernels]
    kshape = kernels[0].shape
    assert all(k.shape == kshape for k in kernels)
    if origin is None:
        origin = [0] * len(kshape)
    origin = [int(o) for o in origin]
    assert len(origin) == len(kshape)
    assert x.ndim >= len(kshape)
    if mode == "full":
        assert border == "constant" and cval == 0.0
    CASES.append(dict(name=name, func=func, x=np.ascontiguousarray(x), kernels=kernels,
                      factors=factors, border=border, cval=float(cval), origin=origin,
                      mode=mode, axes=axes, dtype=dtype))


def cv(border, i=0):
    return (2.5 if i % 2 == 0 else -7.0) if border == "constant" else 0.0


def build_cases():
    # ---- 1-D grid: every border x odd/even kernel x origins min, 0, max
    for border in BORDERS:
        for k in (3, 4):
            for o in origins_for(k):
                funcs = ("correlate", "convolve") if (k % 2 == 0 or o != 0) else ("correlate",)
                for func in funcs:
                    name = "grid1d_%s_%s_k%d_o%d" % (func[:4], border, k, o)
                    r = rng_for(name)
                    x = rand_input(r, (13,), "float64")
                    add(name, func, x, rand_kernel(r, (k,)), border, cv(border, k + o), [o])
        # longer kernels at their extreme origins
        for k, o, func in ((6, -3, "convolve"), (5, 2, "correlate")):
            name = "grid1d_%s_%s_k%d_o%d" % (func[:4], border, k, o)
            r = rng_for(name)
            add(name, func, rand_input(r, (13,), "float64"), rand_kernel(r, (k,)), border,
                cv(border, k), [o])

    # ---- 2-D grid: odd x even kernels, origin combinations
    for border in BORDERS:
        for ks, ors, funcs in (((3, 4), [(-1, 1), (1, -2), (0, 0)], ("correlate", "convolve")),
                               ((4, 5), [(-2, 2), (1, -2)], ("convolve",)),
                               ((2, 6), [(0, -3)], ("correlate",))):
            for oi, org in enumerate(ors):
                for func in funcs:
                    name = "grid2d_%s_%s_k%dx%d_o%d_%d" % (func[:4], border, ks[0], ks[1],
                                                           org[0], org[1])
                    r = rng_for(name)
                    x = rand_input(r, (11, 9), "float32" if oi == 1 else "float64")
                    add(name, func, x, rand_kernel(r, ks), border, cv(border, oi), list(org))

    # ---- kernels larger than the input, every border (origin index 0 = 0, 1 = min, 2 = max)
    big = [((3,), (7,), (0,)), ((1,), (5,), (0, 2)), ((2,), (8,), (0,)),
           ((2,), (11,), (0, 2)), ((3,), (16,), (1, 2)),
           ((1, 4), (5, 3), (0,)), ((3, 2), (7, 9), (0, 2)), ((2, 3, 1), (5, 2, 6), (0,))]
    for border in BORDERS:
        for bi, (shape, ks, ois) in enumerate(big):
            for oi in ois:
                org = ([0] * len(ks), [-(k // 2) for k in ks], [(k - 1) // 2 for k in ks])[oi]
                func = "correlate" if (bi + oi) % 2 == 0 else "convolve"
                name = "big_%s_%s_%s_k%s_o%d" % (func[:4], border, "x".join(map(str, shape)),
                                                 "x".join(map(str, ks)), oi)
                r = rng_for(name)
                x = rand_input(r, shape, "float64")
                add(name, func, x, rand_kernel(r, ks), border, cv(border, bi + oi), org)

    # ---- 3-D, 4-D, 5-D (three borders per shape, rotating)
    nd_cfg = [((10, 11, 12), (3, 3, 3)), ((8, 9, 7), (2, 4, 3)), ((6, 5, 7), (5, 1, 2)),
              ((5, 4, 6, 5), (3, 2, 3, 2)), ((4, 6, 5, 4), (2, 3, 1, 4)),
              ((4, 5, 4, 3, 5), (3, 2, 2, 3, 3)), ((5, 4, 4, 5, 4), (2, 3, 1, 2, 2))]
    for ci, (shape, ks) in enumerate(nd_cfg):
        for bi in range(3):
            border = BORDERS[(2 * ci + bi) % 5]
            func = "correlate" if (ci + bi) % 2 == 0 else "convolve"
            r0 = rng_for("nd%d_%d" % (ci, bi))
            org = [int(r0.integers(-(k // 2), (k - 1) // 2 + 1)) for k in ks]
            name = "nd%d_%s_%s_%s_k%s" % (len(shape), func[:4], border,
                                         "x".join(map(str, shape)), "x".join(map(str, ks)))
            r = rng_for(name)
            dt = "float32" if bi % 2 else "float64"
            add(name, func, rand_input(r, shape, dt), rand_kernel(r, ks), border,
                cv(border, ci), org)

    # ---- dtypes (input dtype, output dtype)
    dts = [("uint8", None), ("uint16", None), ("int16", None), ("int32", None),
           ("float32", None), ("float64", None), ("uint8", "float32"), ("uint8", "float64"),
           ("uint16", "float32"), ("int32", "float64"), ("float32", "float64"),
           ("float64", "float32"), ("uint16", "uint8"), ("uint8", "int16"),
           ("int16", "int32"), ("int32", "int16")]
    for di, (idt, odt) in enumerate(dts):
        border = BORDERS[di % 5]
        func = "correlate" if di % 2 == 0 else "convolve"
        ks = (3, 3) if di % 3 == 0 else ((4, 3) if di % 3 == 1 else (5, 2))
        name = "dtype_%s_%s_to_%s_%s" % (func[:4], idt, odt or "same", border)
        r = rng_for(name)
        x = rand_input(r, (12, 10), idt)
        w = rand_kernel(r, ks)
        if odt is None and idt in ("uint8", "uint16"):
            w = np.abs(w) / np.abs(w).sum()  # mostly in range; rounding matters
        org = [1, -1] if (di % 2 == 0 and ks[1] > 2) else [0, 0]
        add(name, func, x, w, border, cv(border, di) * 10, org, dtype=odt)
    # saturating conversions
    r = rng_for("sat_uint8_f32")
    x = r.integers(0, 256, (14, 13)).astype(np.uint8)
    add("sat_uint8_to_float32_sharpen", "correlate", x,
        np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], float), "nearest", dtype="float32")
    r = rng_for("sat_f32_uint8")
    x = (r.uniform(-80, 340, (14, 13))).astype(np.float32)
    x[0, 0], x[5, 6] = 255.5, 0.5
    add("sat_float32_to_uint8_box", "correlate", x, np.full((3, 3), 1.0 / 9.0), "reflect",
        dtype="uint8")
    add("sat_float32_to_uint8_sharpen", "convolve", x,
        np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], float), "mirror", dtype="uint8")
    r = rng_for("sat_int16_uint16")
    x = r.integers(-32768, 32768, (12, 11)).astype(np.int16)
    add("sat_int16_to_uint16_neg", "correlate", x, rand_kernel(r, (3, 2)) * 1.5, "wrap",
        dtype="uint16")
    add("sat_int16_to_uint16_const", "convolve", x, np.full((2, 3), 0.5), "constant", -1000.0,
        [0, 1], dtype="uint16")
    r = rng_for("sat_f64_int32")
    x = r.uniform(-6e9, 6e9, (10, 12))
    x[3, 3] = 2147483647.4
    x[4, 4] = -2147483648.6
    add("sat_float64_to_int32_range", "correlate", x, np.array([[0.25, 0.5, 0.25]]), "reflect",
        dtype="int32")
    add("sat_float64_to_int32_identity", "correlate", x, np.array([[1.0]]), "reflect",
        dtype="int32")
    r = rng_for("half_even")
    x = (np.arange(-12, 12).reshape(4, 6) + 0.5).astype(np.float64)  # exact .5 ties
    add("round_half_even_float64_to_int16", "correlate", x, np.ones((1, 1)), "nearest",
        dtype="int16")
    add("round_half_even_float32_to_uint8", "correlate", (x + 12).astype(np.float32),
        np.ones((1, 1)), "nearest", dtype="uint8")
    x = (np.arange(24).reshape(4, 6)).astype(np.uint8)
    add("round_half_even_uint8_avg2", "correlate", x, np.array([[0.5, 0.5]]), "nearest",
        dtype="uint8")
    add("round_half_even_int16_avg2_conv", "convolve", (x.astype(np.int16) - 12),
        np.array([[0.5], [0.5]]), "wrap")

    # ---- NaN / Inf propagation (kernels without zero weights)
    for fi, (dt, shape, ks, border) in enumerate([("float32", (9, 10), (3, 3), "reflect"),
                                                  ("float64", (9, 10), (2, 4), "constant"),
                                                  ("float64", (17,), (5,), "wrap"),
                                                  ("float32", (6, 5, 7), (3, 2, 3), "mirror")]):
        for func in ("correlate", "convolve"):
            name = "nonfinite_%s_%s_%dd_%s" % (func[:4], dt, len(shape), border)
            r = rng_for(name)
            x = rand_input(r, shape, dt)
            flat = x.reshape(-1)
            n = flat.size
            flat[n // 5] = np.nan
            flat[n // 2] = np.inf
            flat[(4 * n) // 5] = -np.inf
            flat[0] = np.inf  # edge: reaches the border extension
            w = rand_kernel(r, ks, nonzero=True)
            add(name, func, x, w, border, cv(border, fi), None)
    # +Inf and -Inf in one window -> NaN; positive weights only
    x = np.array([1.0, 2.0, np.inf, 3.0, -np.inf, 4.0, 5.0, 6.0])
    add("nonfinite_inf_minus_inf_1d", "correlate", x, np.array([0.5, 1.0, 0.25]), "nearest")

    # ---- filter banks
    for K in (2, 3, 5):
        for bi, (shape, ks, dt) in enumerate([((12, 11), (3, 3), "float32"),
                                              ((10, 9), (4, 5), "uint8"),
                                              ((7, 8, 6), (3, 2, 3), "float64")]):
            border = BORDERS[(K + bi) % 5]
            func = "correlate" if (K + bi) % 2 == 0 else "convolve"
            name = "bank%d_%s_%dd_%s_k%s" % (K, func[:4], len(shape), border,
                                            "x".join(map(str, ks)))
            r = rng_for(name)
            ws = [rand_kernel(r, ks) for _ in range(K)]
            org = [(k - 1) // 2 if i % 2 == 0 else -(k // 2) for i, k in enumerate(ks)]
            add(name, func, rand_input(r, shape, dt), ws, border, cv(border, K), org,
                dtype="float32" if dt == "uint8" else None)
    r = rng_for("bank_channels")
    add("bank3_corr_hwc_axesnull_wrap", "correlate", rand_input(r, (9, 8, 3), "uint16"),
        [rand_kernel(r, (3, 2)) for _ in range(3)], "wrap", 0.0, [0, -1])
    r = rng_for("bank_channels_ax")
    add("bank2_conv_hwc_axes10_constant", "convolve", rand_input(r, (7, 9, 3), "float32"),
        [rand_kernel(r, (2, 3)) for _ in range(2)], "constant", 2.5, [-1, 1], axes=[1, 0])
    r = rng_for("bank_big")
    add("bank2_corr_1d_bigkernel_mirror", "correlate", rand_input(r, (3,), "float64"),
        [rand_kernel(r, (8,)) for _ in range(2)], "mirror", 0.0, [3])

    # ---- axes
    ax_cfg = [
        ("axes_hwc_null_corr_reflect", "correlate", (10, 9, 3), "uint8", (3, 3), None, [1, 0], "reflect", "float32"),
        ("axes_hwc_null_conv_constant", "convolve", (8, 7, 3), "float32", (4, 2), None, [-2, 0], "constant", None),
        ("axes_hwc_explicit01_corr_wrap", "correlate", (8, 7, 4), "float64", (3, 4), [0, 1], [0, 1], "wrap", None),
        ("axes_10_corr_mirror", "correlate", (9, 11), "float64", (2, 5), [1, 0], [0, -2], "mirror", None),
        ("axes_10_conv_nearest", "convolve", (9, 11), "float32", (4, 3), [1, 0], [1, 1], "nearest", None),
        ("axes_10_hwc_conv_reflect", "convolve", (7, 8, 3), "float64", (3, 4), [1, 0], [-1, 1], "reflect", None),
        ("axes_20_3d_corr_reflect", "correlate", (6, 5, 7), "float64", (3, 2), [2, 0], [1, -1], "reflect", None),
        ("axes_20_3d_conv_constant", "convolve", (6, 5, 7), "float32", (4, 3), [2, 0], [-2, 0], "constant", None),
        ("axes_1_2d_corr_reflect", "correlate", (6, 13), "float64", (5,), [1], [2], "reflect", None),
        ("axes_1_2d_conv_wrap", "convolve", (6, 13), "int16", (4,), [1], [-2], "wrap", None),
        ("axes_m1_2d_corr_mirror", "correlate", (6, 13), "float32", (3,), [-1], [-1], "mirror", None),
        ("axes_m1_3d_conv_constant", "convolve", (4, 5, 9), "float64", (6,), [-1], [2], "constant", None),
        ("axes_m1m3_3d_corr_nearest", "correlate", (5, 4, 6), "float64", (2, 3), [-1, -3], [0, 1], "nearest", None),
        ("axes_1_3d_bigkernel_wrap", "correlate", (3, 2, 4), "float64", (7,), [1], [3], "wrap", None),
        ("axes_12_4d_conv_mirror", "convolve", (3, 5, 6, 2), "float64", (3, 4), [1, 2], [0, -2], "mirror", None),
        ("axes_30_4d_corr_reflect", "correlate", (5, 3, 2, 6), "float32", (2, 3), [3, 0], [-1, 1], "reflect", None),
    ]
    for name, func, shape, dt, ks, axes, org, border, odt in ax_cfg:
        r = rng_for(name)
        add(name, func, rand_input(r, shape, dt), rand_kernel(r, ks), border,
            cv(border, len(name)), org, axes=axes, dtype=odt)

    # ---- separable: factors given, and rank-1 dense kernels without factors
    def gauss(s, rad):
        t = np.arange(-rad, rad + 1, dtype=np.float64)
        g = np.exp(-0.5 * (t / s) ** 2)
        return g / g.sum()

    sep_cfg = [
        ("sep_gauss_5x5_corr_reflect", "correlate", (16, 15), "float32", [gauss(1.0, 2), gauss(1.0, 2)], "reflect", 0.0, [0, 0], None),
        ("sep_gauss_7x3_conv_mirror", "convolve", (14, 12), "uint8", [gauss(1.5, 3), gauss(0.7, 1)], "mirror", 0.0, [1, -1], None),
        ("sep_asym_4x3_corr_constant", "correlate", (12, 11), "float64", [np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.25, -1.0, 2.0])], "constant", 2.5, [-2, 1], None),
        ("sep_asym_2x5_conv_constant", "convolve", (10, 13), "float32", [np.array([1.5, -0.5]), np.array([-1.0, 0.5, 2.0, 0.75, -0.25])], "constant", -7.0, [0, -2], None),
        ("sep_asym_3x4_corr_wrap", "correlate", (9, 10), "int16", [np.array([0.5, 1.0, -0.75]), np.array([2.0, -1.0, 0.5, 0.125])], "wrap", 0.0, [1, 1], None),
        ("sep_asym_3d_conv_nearest", "convolve", (8, 7, 9), "float64", [np.array([1.0, 2.0, -1.0]), np.array([0.5, -0.5]), np.array([1.0, 0.25, 3.0, -2.0, 0.5])], "nearest", 0.0, [-1, 0, 2], None),
        ("sep_gauss_3d_corr_constant", "correlate", (9, 8, 10), "float32", [gauss(1.0, 2), gauss(0.8, 1), gauss(1.2, 3)], "constant", 2.5, [0, 0, 0], None),
        ("sep_hwc_gauss_corr_reflect", "correlate", (11, 10, 3), "uint8", [gauss(1.0, 2), gauss(1.0, 2)], "reflect", 0.0, [0, 0], "float32"),
        ("sep_bigkernel_corr_mirror", "correlate", (3, 2), "float64", [gauss(2.0, 4), np.array([1.0, -1.0, 0.5, 2.0, 0.25, 1.5])], "mirror", 0.0, [-4, 2], None),
        ("sep_rank1trap_cval3_corr", "correlate", (10, 9), "float64", [np.array([0.5, 2.0, -1.0]), np.array([1.5, 0.25, 0.75, -0.5])], "constant", 3.0, [0, 0], None),
        ("sep_rank1trap_cval3_conv_3d", "convolve", (6, 7, 5), "float32", [np.array([2.0, 1.0]), np.array([0.5, 0.5, 0.5]), np.array([-1.0, 3.0, 0.5])], "constant", 3.0, [0, 1, -1], None),
    ]
    for name, func, shape, dt, facs, border, cval, org, odt in sep_cfg:
        r = rng_for(name)
        dense = facs[0]
        for f in facs[1:]:
            dense = np.multiply.outer(dense, f)
        add(name, func, rand_input(r, shape, dt), dense, border, cval, org, dtype=odt,
            factors=[[np.asarray(f, np.float64) for f in facs]])
    # rank-1 dense kernels without factors
    r1_cfg = [
        ("rank1_dense_5x5_gauss_corr_nearest", "correlate", (13, 14), "float32", [gauss(1.0, 2), gauss(1.3, 2)], "nearest", 0.0, [0, 0]),
        ("rank1_dense_4x3_conv_reflect", "convolve", (12, 11), "float64", [np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.25, -1.0, 2.0])], "reflect", 0.0, [1, 0]),
        ("rank1_dense_cval3_corr_constant", "correlate", (10, 12), "float64", [np.array([0.5, 2.0, -1.0]), np.array([1.5, 0.25, 0.75, -0.5])], "constant", 3.0, [-1, 1]),
        ("rank1_dense_cval3_conv_constant", "convolve", (11, 9), "uint16", [np.array([1.0, 0.5, 0.25, 0.125]), np.array([2.0, -1.0, 2.0])], "constant", 3.0, [0, 0]),
        ("rank1_dense_3d_cval3_corr", "correlate", (6, 7, 8), "float64", [np.array([1.0, 2.0, 1.0]), np.array([-1.0, 1.0]), np.array([0.5, 1.5, -0.5, 2.0])], "constant", 3.0, [0, 0, 1]),
        ("rank1_dense_ones_1x7_corr_wrap", "correlate", (5, 9), "int32", [np.ones(1), np.ones(7)], "wrap", 0.0, [0, 3]),
    ]
    for name, func, shape, dt, facs, border, cval, org in r1_cfg:
        r = rng_for(name)
        dense = facs[0]
        for f in facs[1:]:
            dense = np.multiply.outer(dense, f)
        add(name, func, rand_input(r, shape, dt), dense, border, cval, org)

    # ---- valid and full
    vf_cfg = [((15,), (3,)), ((15,), (4,)), ((11, 12), (3, 5)), ((11, 12), (4, 2)),
              ((8, 9, 7), (3, 3, 3)), ((8, 9, 7), (2, 4, 3))]
    for mode in ("valid", "full"):
        for ci, (shape, ks) in enumerate(vf_cfg):
            for func in ("correlate", "convolve"):
                name = "%s_%s_%dd_k%s" % (mode, func[:4], len(shape), "x".join(map(str, ks)))
                r = rng_for(name)
                dt = ["float64", "float32", "uint8", "int16"][(ci + (func == "convolve")) % 4]
                border = "constant" if mode == "full" else BORDERS[ci % 5]
                cval = 0.0
                odt = "float32" if dt == "uint8" else None
                add(name, func, rand_input(r, shape, dt), rand_kernel(r, ks), border, cval,
                    None, mode=mode, dtype=odt)
    r = rng_for("valid_extra")
    add("valid_corr_hwc_axesnull", "correlate", rand_input(r, (9, 8, 3), "float32"),
        rand_kernel(r, (3, 4)), "reflect", mode="valid")
    add("valid_conv_axes10", "convolve", rand_input(r, (7, 10), "float64"),
        rand_kernel(r, (4, 3)), "mirror", mode="valid", axes=[1, 0])
    add("valid_corr_kernel_equals_input", "correlate", rand_input(r, (5, 4), "float64"),
        rand_kernel(r, (5, 4)), "reflect", mode="valid")
    add("valid_bank3_corr_2d", "correlate", rand_input(r, (9, 10), "float64"),
        [rand_kernel(r, (3, 2)) for _ in range(3)], "nearest", mode="valid")
    add("full_conv_hwc_axesnull", "convolve", rand_input(r, (6, 7, 2), "float64"),
        rand_kernel(r, (3, 2)), "constant", mode="full")
    add("full_corr_axes_m1", "correlate", rand_input(r, (4, 9), "float32"),
        rand_kernel(r, (5,)), "constant", mode="full", axes=[-1])
    add("full_corr_kernel_larger_than_input", "correlate", rand_input(r, (3, 2), "float64"),
        rand_kernel(r, (5, 4)), "constant", mode="full")
    add("full_bank2_conv_1d", "convolve", rand_input(r, (10,), "float64"),
        [rand_kernel(r, (4,)) for _ in range(2)], "constant", mode="full")

    # ---- small edge cases
    r = rng_for("edge")
    add("edge_n1_k1_reflect", "correlate", np.array([3.25]), np.array([2.0]), "reflect")
    for border in BORDERS:
        add("edge_1x1_input_3x3_%s" % border, "convolve", np.array([[4.5]]),
            rand_kernel(r, (3, 3)), border, cv(border, 1), [1, -1])
    add("edge_1x1_kernel_scale", "correlate", rand_input(r, (5, 6), "uint8"),
        np.array([[1.75]]), "reflect", dtype="uint16")
    add("edge_delta_shift_wrap", "convolve", rand_input(r, (7, 8), "float64"),
        np.array([[0, 0, 0], [0, 0, 1.0], [0, 0, 0]]), "wrap")

    # ---- issue 17: int8, uint32, int64, uint64 and float16 data and outputs
    # (each in, and to and from float32/float64 and uint8), and scipy's grid-*
    # border names, which ndconv parses as aliases.
    new_dts = ["int8", "uint32", "int64", "uint64", "float16"]
    pairs = [(d, None) for d in new_dts] + [(d, "float64") for d in new_dts] + \
        [(d, "float32") for d in new_dts] + [("float32", d) for d in new_dts] + \
        [("uint8", d) for d in new_dts] + [("float64", d) for d in new_dts]
    borders17 = BORDERS + ["grid-mirror", "grid-wrap", "grid-constant"]
    for di, (idt, odt) in enumerate(pairs):
        border = borders17[di % len(borders17)]
        func = "correlate" if di % 2 == 0 else "convolve"
        ks = (3, 3) if di % 3 == 0 else ((4, 3) if di % 3 == 1 else (2, 5))
        name = "dtype17_%s_%s_to_%s_%s" % (func[:4], idt, odt or "same", border)
        r = rng_for(name)
        x = rand_input(r, (11, 9), idt)
        w = rand_kernel(r, ks)
        if odt is not None and np.dtype(odt).kind in "iu" and idt in ("float32", "float64"):
            x = (x * 3).astype(idt)  # spread over the integer range, some saturating
        org = [1, -1] if (di % 2 == 0 and min(ks) > 2) else [0, 0]
        add(name, func, x, w, border, cv(CANON.get(border, border), di) * 10, org, dtype=odt)


# --------------------------------------------------------------------------


# scipy's grid-* modes, for filters synonyms of reflect, wrap and constant
CANON = {"grid-mirror": "reflect", "grid-wrap": "wrap", "grid-constant": "constant"}


def compute_expected(c):
    x64 = c["x"].astype(np.float64)
    outs = []
    border = CANON.get(c["border"], c["border"])
    for w in c["kernels"]:
        e = scipy_one(c["func"], x64, w, c["border"], c["cval"], c["origin"], c["mode"], c["axes"])
        if c["mode"] == "same":
            ref = reference_one(c["func"], x64, w, border, c["cval"], c["origin"], c["axes"])
            wf, of = embed_kernel(w, x64.ndim, c["axes"], c["origin"])
            if reflect_bug_hit(c["func"], x64.shape, wf.shape, of, border):
                # scipy reads out of bounds here: use the reference (DESIGN semantics)
                REFLECT_BUG_CASES[c["name"]] = not same_float(e, ref)
                e = ref
            assert same_float(e, ref), ("reference disagrees with scipy", c["name"])
        else:
            # valid: windows entirely inside; equals the centre crop of 'same' with
            # origin 0 (any border) only for odd kernels; check shape at least
            ks = embed_kernel(w, x64.ndim, c["axes"], c["origin"])[0].shape
            want = [n - k + 1 if c["mode"] == "valid" else n + k - 1 for n, k in zip(x64.shape, ks)]
            assert list(e.shape) == want, (c["name"], e.shape, want)
        if c["factors"] is not None:
            for fs in c["factors"]:
                d = fs[0]
                for f in fs[1:]:
                    d = np.multiply.outer(d, f)
                assert np.array_equal(d, w)
        outs.append(np.asarray(e, dtype=np.float64))
    if len(outs) == 1:
        return outs[0]
    return np.stack(outs, axis=-1)


def write(c):
    def save(suffix, arr):
        fn = "%s_%s.npy" % (c["name"], suffix)
        arr = np.ascontiguousarray(arr)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        np.save(os.path.join(OUTDIR, fn), arr, allow_pickle=False)
        return fn

    exp = compute_expected(c)
    entry = {"name": c["name"], "func": c["func"], "input": save("input", c["x"])}
    entry["kernels"] = [save("k%d" % i, k) for i, k in enumerate(c["kernels"])]
    if c["factors"] is not None:
        entry["factors"] = [[save("k%d_f%d" % (i, j), f) for j, f in enumerate(fs)]
                            for i, fs in enumerate(c["factors"])]
    entry.update(border=c["border"], cval=c["cval"], origin=c["origin"], mode=c["mode"],
                 axes=c["axes"], dtype=c["dtype"], expected=save("expected", exp))
    return entry


README = """# scipy reference fixtures

Generated by `scripts/scipy_fixtures.py` with scipy {scipy} and numpy {numpy}
(Debian's python3-scipy). Do not edit by hand; regenerate from the repository root
with

    /usr/bin/python3 scripts/scipy_fixtures.py

which deletes and rewrites every `*.npy` here, `manifest.json` and this file. The
output is deterministic (per-case numpy seeds), so a rerun is byte-identical.

`manifest.json` lists {n} cases. Each names its input (`<name>_input.npy`, in its own
dtype), its kernel(s) (`_k<i>.npy`, float64; several = a filter bank), optional 1-D
`factors` of a separable kernel (`_k0_f<j>.npy`; `kernels` still holds the dense outer
product), `func` (correlate|convolve), `border`, `cval`, `origin` (per kernel axis),
`mode` (same|valid|full), `axes` (null = the first kernel-rank axes), the output
`dtype` (null = the input's) and `expected` (`_expected.npy`, float64): the exact
scipy value computed from the input in float64 *before* any cast to the output dtype
(consumers round half to even and saturate themselves). For a bank, `expected` has
one extra trailing axis of length K.

`same` = `scipy.ndimage.correlate/convolve` (axes emulated by embedding the kernel
with length-1 axes); `valid`/`full` = `scipy.signal.correlate/convolve(...,
method='direct')`.

Known scipy 1.10 bug, worked around: `ndimage.correlate/convolve` with `reflect`
maps every position p <= -4n with p % 2n == 0 (n = axis length >= 2, i.e. a kernel
reaching 4n or more before the start of an axis) to index -1 and reads memory before
the axis (NI_InitFilterOffsets; `correlate1d` is fine). For the cases that reach
there ({bugcases}) `expected` comes from the script's independent numpy reference,
which follows the DESIGN.md border table; all other `same` cases are scipy's values
(and agree with that reference to 1e-12).

The script also asserts the DESIGN.md §1 border table, border
extension at any distance, the convolve origin rule and the axes emulation, and
cross-checks every `same` case against an independent numpy reference.
"""


def main():
    check_border_table()
    check_far_extension()
    check_convolve_rule()
    check_axes_emulation()
    check_full_valid()
    build_cases()
    os.makedirs(OUTDIR, exist_ok=True)
    for fn in sorted(os.listdir(OUTDIR)):
        if fn.endswith(".npy"):
            os.remove(os.path.join(OUTDIR, fn))
    entries = [write(c) for c in CASES]
    # the reflect-bug cases must really have shown the bug (else the predicate is wrong
    # or scipy was fixed); print them for the README
    assert REFLECT_BUG_CASES and any(REFLECT_BUG_CASES.values()), REFLECT_BUG_CASES
    for name in sorted(REFLECT_BUG_CASES):
        print("reflect-bug case (expected from the reference): %s (scipy differed: %s)"
              % (name, REFLECT_BUG_CASES[name]), file=sys.stderr)
    manifest = {"generator": "scripts/scipy_fixtures.py", "scipy": scipy.__version__,
                "numpy": np.__version__, "cases": entries}
    with open(os.path.join(OUTDIR, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(OUTDIR, "README.md"), "w") as f:
        f.write(README.format(scipy=scipy.__version__, numpy=np.__version__, n=len(entries),
                              bugcases=", ".join("`%s`" % k for k in sorted(REFLECT_BUG_CASES))))
    print("wrote %d cases to %s" % (len(entries), os.path.relpath(OUTDIR, ROOT)), file=sys.stderr)


if __name__ == "__main__":
    main()
