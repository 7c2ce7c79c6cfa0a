"""Property tests of the Python face against scipy.ndimage: random 1–4-D
shapes (zero-length axes included), every dtype, banks, borders with cvals
(NaN and infinities included), origins, axes, correlate and convolve (N-D
and 1-D), and outputs given as a dtype, a strided array, the input itself
and a view overlapping it.

NDCONV_PROPERTY_CASES (default 300) sets the number of random cases,
NDCONV_PROPERTY_SEED (default 34) the seed."""
import os

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndconv
from test_ndconv import BORDERS, DTYPES, WIDE, random_array, within

CASES = int(os.environ.get("NDCONV_PROPERTY_CASES", "300"))
SEED = int(os.environ.get("NDCONV_PROPERTY_SEED", "34"))
COMPLEX = ["complex64", "complex128"]
CONSTANT = {b for b, m in BORDERS.items() if m == "constant"}


def full_kernel(w, ndim, axes):
    """w (kernel axes first) as an ndim-D scipy kernel: w's axes placed at
    axes, size-1 axes elsewhere."""
    order = list(axes) + [a for a in range(ndim) if a not in axes]
    w = w.reshape(w.shape + (1,) * (ndim - w.ndim))
    return np.moveaxis(w, list(range(ndim)), order)


def full_origin(origin, ndim, axes):
    o = [0] * ndim
    for a, v in zip(axes, origin):
        o[a] = v
    return o


def reference(x, ks, convolve, border, cval, origin):
    """scipy on float64 (complex128) data, one result per kernel of the
    bank on a trailing axis; with the magnitudes for the tolerance."""
    f = ndi.convolve if convolve else ndi.correlate
    xr = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    mode = BORDERS[border]
    refs, mags = [], []
    with np.errstate(invalid="ignore", over="ignore"):
        for w in ks:
            refs.append(f(xr, w, mode=mode, cval=cval, origin=origin))
            c = 0.0 if not np.isfinite(cval) else abs(cval)
            mags.append(f(np.abs(xr), np.abs(w), mode=mode, cval=c, origin=origin))
    return refs, mags


def compare(got, ref, mag, x_dtype, out, wsize, what):
    """got (one kernel's result) against scipy's ref within the rounding of
    ndconv's accumulator and output type (test_ndconv.within);
    NaNs and infinities where scipy has them."""
    assert got.shape == ref.shape, what
    if out.kind in "fc":
        assert np.array_equal(np.isnan(got), np.isnan(ref)), what
        fin = np.isfinite(ref)
        assert np.array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)]), what
        got, ref, mag = got[fin], ref[fin], mag[fin]
    eps = 2.0**-53 if (x_dtype.name in WIDE or out in (np.float64, np.complex128)) else 2.0**-24
    tol = mag * eps * (4 * wsize + 16)
    if out.kind == "c":
        tol = 4 * tol + (2.0**-24 if out == np.complex64 else 2.0**-53) * 4 * np.abs(ref)
        assert np.all(np.abs(got - ref) <= tol), (what, np.max(np.abs(got - ref) - tol))
        return
    if out.kind in "iu":
        # An integer output holds NaN (a NaN cval's) as 0: the library's
        # rounding rule, where scipy's cast is undefined.
        ref, tol = np.where(np.isnan(ref), 0.0, ref), np.where(np.isnan(ref), 0.0, tol)
    within(got, ref, tol, out, what)


def random_case(rng):
    ndim = int(rng.integers(1, 5))
    shape = tuple(0 if rng.random() < 0.06 else int(rng.integers(1, [40, 12, 7, 5][ndim - 1] + 1))
                  for _ in range(ndim))
    dtype = str(rng.choice(DTYPES + COMPLEX if rng.random() < 0.85 else COMPLEX))
    op = str(rng.choice(["correlate", "convolve", "correlate1d", "convolve1d", "bank"]))
    krank = 1 if op.endswith("1d") else int(rng.integers(1, ndim + 1))
    kshape = tuple(int(rng.integers(1, 6)) for _ in range(krank))
    nk = int(rng.choice([2, 3, 5, 8, 9])) if op == "bank" else 1
    cplx_w = rng.random() < 0.1
    ks = []
    for _ in range(nk):
        w = np.round(rng.standard_normal(kshape), 3)
        w[rng.random(kshape) < 0.15] = 0  # zero taps are skipped: keep some
        if cplx_w:
            w = w + 1j * np.round(rng.standard_normal(kshape), 3)
        ks.append(w)
    if op.endswith("1d"):
        axes = [int(rng.integers(0, ndim))]
    elif rng.random() < 0.3:
        axes = sorted(int(a) for a in rng.permutation(ndim)[:krank])
    else:
        axes = list(range(krank))
    border = str(rng.choice(sorted(BORDERS)))
    r = rng.random()
    cval = float(rng.integers(-5, 5))
    if r < 0.1:
        cval = np.nan
    elif r < 0.15:
        cval = float(rng.choice([np.inf, -np.inf]))
    if dtype.startswith("complex") or cplx_w:
        # scipy filters complex data by real parts, where a non-finite
        # cval meets the parts in its own order.
        cval = float(rng.integers(-5, 5))
    origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in kshape]
    output = str(rng.choice(["none", "dtype", "strided", "inplace", "overlap"]))
    out_dtype = str(rng.choice(["float32", "float64", "int16", "uint8", dtype]))
    if np.isinf(cval) and (np.dtype(dtype).kind in "iu" or output == "dtype"):
        # An integer output saturates ±inf, where scipy's cast is undefined.
        output, out_dtype = "dtype", str(rng.choice(["float16", "float32", "float64"]))
    # A zero-length axis may still panic below the C API on this branch:
    # one worker keeps a panic on the caller's goroutine, where it is
    # recovered (a worker's would end the process).
    # Banks too: the CPU engine's bank bug (issue 34 item 1, fixed on
    # another branch) panics for some banks of 8 or more real kernels.
    workers = 1 if 0 in shape or op == "bank" else int(rng.choice([0, 1, 2]))
    return dict(shape=shape, dtype=dtype, op=op, ks=ks, axes=axes, border=border, cval=cval, origin=origin,
                output=output, out_dtype=out_dtype, workers=workers)


def run_case(rng, c):
    """Runs case c through ndconv; returns (got list per kernel, x, the
    output dtype) or raises."""
    x = random_array(rng, c["shape"], c["dtype"].replace("complex64", "float32").replace("complex128", "float64"))
    if c["dtype"].startswith("complex"):
        x = (x + 1j * random_array(rng, c["shape"], "float64")).astype(c["dtype"])
    ks, op, kw = c["ks"], c["op"], dict(mode=c["border"], cval=c["cval"], device="cpu", workers=c["workers"])
    complex_out = x.dtype.kind == "c" or any(np.iscomplexobj(k) for k in ks)
    out_kind = c["output"]
    if complex_out and (out_kind == "dtype" or any(np.iscomplexobj(k) for k in ks)):
        # A real output of complex data is an error (test_ndconv tests it);
        # the output dtype of complex weights is the library's to say.
        out_kind = "none"
    if op == "bank":
        p = ndconv.Plan("correlate", x.shape, x.dtype, weights=ks, origin=c["origin"], axes=c["axes"],
                        output_dtype=c["out_dtype"] if out_kind == "dtype" else None, **kw)
        out_kind = "none" if out_kind == "dtype" else out_kind
        call = lambda out: p(x, output=out)
        res_shape, res_dtype = p.shape, p.dtype
    else:
        w = ks[0]
        if op.endswith("1d"):
            f = ndconv.correlate1d if op == "correlate1d" else ndconv.convolve1d
            call = lambda out: f(x, w, axis=c["axes"][0], output=out, origin=c["origin"][0], **kw)
        else:
            f = ndconv.correlate if op == "correlate" else ndconv.convolve
            call = lambda out: f(x, w, output=out, origin=c["origin"], axes=c["axes"], **kw)
        res_shape, res_dtype = x.shape, x.dtype
    if out_kind == "dtype":
        return [call(c["out_dtype"])], x, np.dtype(c["out_dtype"])
    if out_kind == "strided":
        big = np.zeros(res_shape[:-1] + (2 * res_shape[-1],) if res_shape else (), res_dtype)
        out = big[..., ::2]
        got = call(out)
        assert got is out
        return [got[..., i] for i in range(len(ks))] if op == "bank" else [got], x, res_dtype
    if out_kind in ("inplace", "overlap") and op != "bank" and res_dtype == x.dtype:
        x0 = x.copy()
        if out_kind == "inplace":
            out = x
        else:
            buf = np.zeros(3 * x.size + 3, x.dtype)
            shift = int(rng.integers(-x.size - 1, x.size + 2))
            src = buf[x.size + 1:2 * x.size + 1].reshape(x.shape)
            src[...] = x
            x = src
            out = buf[x.size + 1 + shift:2 * x.size + 1 + shift].reshape(x.shape)
        got = call(out)
        assert got is out
        return [got.copy()], x0, res_dtype
    got = call(None)
    if op == "bank":
        return [got[..., i] for i in range(len(ks))], x, got.dtype
    return [got], x, got.dtype


def test_random_cases_against_scipy():
    rng = np.random.default_rng(SEED)
    ran = refused = 0
    for i in range(CASES):
        c = random_case(rng)
        what = "case %d: %r" % (i, {k: v for k, v in c.items() if k != "ks"} | {"kshape": c["ks"][0].shape})
        nan_refused = (np.isnan(c["cval"]) and c["border"] in CONSTANT)
        try:
            gots, x, out = run_case(rng, c)
        except ValueError as e:
            # The one refusal these cases may meet: a NaN cval with
            # complex data, which is filtered by parts.
            assert nan_refused and 'invalid cval: NaN' in str(e), (what, e)
            refused += 1
            continue
        ks = [full_kernel(w, len(c["shape"]), c["axes"]) for w in c["ks"]]
        origin = full_origin(c["origin"], len(c["shape"]), c["axes"])
        refs, mags = reference(x, ks, c["op"].startswith("convolve"), c["border"], c["cval"], origin)
        for k, (got, ref, mag) in enumerate(zip(gots, refs, mags)):
            assert got.dtype == out, what
            if out.kind in "iu" and not np.isfinite(c["cval"]) and c["border"] in CONSTANT:
                # ±inf saturates; scipy's cast of inf is undefined.
                ref = np.where(np.isinf(ref), np.sign(ref) * 1e300, ref)
            compare(got, ref, mag, x.dtype, out, ks[k].size, what + " kernel %d" % k)
        ran += 1
    print("%d random cases: %d compared with scipy, %d NaN cvals with complex data refused"
          % (CASES, ran, refused))
    assert ran >= CASES // 2


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64"])
def test_banks_crossing_simd_groups(dtype):
    """Banks of 1 to 33 kernels, across the SIMD group sizes (issue 34: 16
    or more float32/complex64 kernels panicked on AVX2, fixed in the CPU
    engine)."""
    rng = np.random.default_rng(16)
    x = random_array(rng, (16, 16), "float32" if dtype == "complex64" else dtype).astype(dtype)
    for nk in (1, 7, 8, 9, 15, 16, 17, 33):
        ks = [np.round(rng.standard_normal((3, 3)), 3) for _ in range(nk)]
        got = ndconv.Plan("correlate", x.shape, x.dtype, weights=ks, mode="wrap", device="cpu")(x)
        if nk == 1:
            got = got[..., None]  # one kernel is no bank: no trailing axis
        refs, mags = reference(x, ks, False, "wrap", 0.0, [0, 0])
        for k in range(nk):
            compare(got[..., k], refs[k], mags[k], x.dtype, got.dtype, 9, "bank of %d, kernel %d" % (nk, k))

