"""Issue 34's cases for the Python face and the C API under it: raw C calls
with NULL pointers, negative counts and unknown handles return error codes;
outputs that share memory with the input (in place, shifted views) give
the out-of-place result; NaN and infinite cvals give scipy's result; 0-d
inputs are refused; a failed or closed Plan fails cleanly."""
import ctypes
import gc
import sys

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndconv

lib = ndconv._lib
SPEC = b'{"op":"correlate","shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1}'


def c_new(spec, weights, n):
    err = ctypes.create_string_buffer(256)
    h = ctypes.c_int64(-1)
    ptr = None if weights is None else weights.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    rc = lib.ndconv_plan_new(spec, ptr, n, ctypes.byref(h), err, 256)
    return rc, err.value.decode(), h.value


def test_raw_plan_new_arguments():
    w = np.ones(3)
    # Issue 34: nweights=-5 was "unsafe.Slice: len out of range", a panic
    # that took the interpreter with it.
    assert c_new(SPEC, w, -5) == (1, "invalid weights: a count of -5 is negative", -1)
    assert c_new(SPEC, None, 3) == (1, "invalid weights: NULL with a count of 3", -1)
    assert c_new(None, w, 3) == (1, "invalid request: NULL", -1)
    assert c_new(SPEC, w, 2)[0] == 1
    err = ctypes.create_string_buffer(256)
    assert lib.ndconv_plan_new(SPEC, w.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), 3, None, err, 256) == 1
    assert err.value == b"invalid handle: the pointer to store it at is NULL"
    # NaN as JSON's non-standard literal is malformed; the string is the way.
    rc, msg, _ = c_new(SPEC.replace(b'"reflect"', b'"constant","cval":NaN'), w, 3)
    assert rc == 1 and msg.startswith("invalid request: malformed JSON")


def test_raw_execute_info_free_arguments():
    w = np.ones(3)
    rc, msg, h = c_new(SPEC, w, 3)
    assert rc == 0, msg
    err = ctypes.create_string_buffer(256)
    x, y = np.ones(8), np.empty(8)
    # Issue 34: NULL buffers with 64 bytes were "unsafe.Slice: ptr is nil
    # and len is not zero", a panic.
    assert lib.ndconv_plan_execute(h, None, 64, None, 64, err, 256) == 1
    assert err.value == b"invalid input: NULL with 64 bytes"
    assert lib.ndconv_plan_execute(h, x.ctypes.data, 64, None, 64, err, 256) == 1
    assert err.value == b"invalid output: NULL with 64 bytes"
    assert lib.ndconv_plan_execute(h, x.ctypes.data, -64, y.ctypes.data, 64, err, 256) == 1
    assert err.value == b"invalid input: -64 bytes is negative"
    assert lib.ndconv_plan_execute(h, x.ctypes.data, 64, y.ctypes.data, 56, err, 256) == 1
    assert b"needs 64 bytes, the buffer has 56" in err.value
    assert lib.ndconv_plan_execute(h, x.ctypes.data, 64, y.ctypes.data, 64, None, 0) == 0
    assert np.array_equal(y, ndi.correlate(x, w))
    assert lib.ndconv_plan_info(h, None, 4096, err, 256) == 1
    assert lib.ndconv_plan_info(h + 10**6, ctypes.create_string_buffer(64), 64, err, 256) == 2
    assert b"no plan" in err.value
    assert lib.ndconv_plan_free(h, err, 256) == 0
    # A second free, and calls on a freed handle, are errors, not crashes.
    assert lib.ndconv_plan_free(h, err, 256) == 2 and b"freed already?" in err.value
    assert lib.ndconv_plan_execute(h, x.ctypes.data, 64, y.ctypes.data, 64, err, 256) == 2
    assert lib.ndconv_plan_free(h, None, 0) == 2


def test_internal_error_is_an_exception():
    # A panic inside the library comes back as RuntimeError("… internal
    # error …"). Empty arrays panicked in the planner (issue 34 item 2,
    # fixed on another branch): either scipy's empty result or that error.
    try:
        got = ndconv.correlate(np.zeros((0, 3), np.float32), np.ones(3), method="direct", workers=1)
    except RuntimeError as e:
        assert "internal error" in str(e) and "\n" not in str(e)
    else:
        assert got.shape == (0, 3) and got.dtype == np.float32


FUNCS = [
    ("correlate", lambda x, **k: ndconv.correlate(x, W5, **k), lambda x, **k: ndi.correlate(x, W5, **k)),
    ("convolve", lambda x, **k: ndconv.convolve(x, W5, **k), lambda x, **k: ndi.convolve(x, W5, **k)),
    ("correlate1d", lambda x, **k: ndconv.correlate1d(x, W5[0], axis=0, **k),
     lambda x, **k: ndi.correlate1d(x, W5[0], axis=0, **k)),
    ("convolve1d", lambda x, **k: ndconv.convolve1d(x, W5[1], **k), lambda x, **k: ndi.convolve1d(x, W5[1], **k)),
    ("gaussian_filter", lambda x, **k: ndconv.gaussian_filter(x, 1.5, **k), lambda x, **k: ndi.gaussian_filter(x, 1.5, **k)),
    ("uniform_filter", lambda x, **k: ndconv.uniform_filter(x, 4, **k), lambda x, **k: ndi.uniform_filter(x, 4, **k)),
    ("sobel", lambda x, **k: ndconv.sobel(x, 0, **k), lambda x, **k: ndi.sobel(x, 0, **k)),
    ("prewitt", lambda x, **k: ndconv.prewitt(x, 1, **k), lambda x, **k: ndi.prewitt(x, 1, **k)),
    ("laplace", lambda x, **k: ndconv.laplace(x, **k), lambda x, **k: ndi.laplace(x, **k)),
]
W5 = np.round(np.random.default_rng(3).standard_normal((5, 5)), 3)


@pytest.mark.parametrize("name,ours,_", FUNCS, ids=[f[0] for f in FUNCS])
def test_output_sharing_the_input(name, ours, _):
    rng = np.random.default_rng(8)
    y = (rng.standard_normal((60, 70)) * 50).astype(np.float32)
    want = ours(y)
    # In place, C-contiguous (issue 34: up to 5217 off for correlate).
    z = y.copy()
    assert ours(z, output=z) is z
    assert np.array_equal(z, want), np.abs(z - want).max()
    # In place through a strided view of the same memory.
    big = np.zeros((60, 140), np.float32)
    big[:, ::2] = y
    v = big[:, ::2]
    ours(v, output=v)
    assert np.array_equal(v, want)
    # Output a shifted view over the input's memory, either way.
    for shift in (1, 70, -1, -71):
        buf = np.zeros(3 * y.size, np.float32)
        src = buf[y.size:2 * y.size].reshape(y.shape)
        src[...] = y
        dst = buf[y.size + shift:2 * y.size + shift].reshape(y.shape)
        ours(src, output=dst)
        assert np.array_equal(dst, want), (shift, np.abs(dst - want).max())


def test_in_place_issue_cases():
    # The issue's two cases, at their sizes.
    rng = np.random.default_rng(34)
    y = (rng.standard_normal((300, 300)) * 50).astype(np.float32)
    w = rng.standard_normal((5, 5))
    want = ndconv.correlate(y, w)
    ndconv.correlate(y, w, output=y)
    assert np.array_equal(y, want)
    v = rng.standard_normal((64, 64, 64)).astype(np.float32)
    w3 = rng.standard_normal((3, 3, 3))
    want = ndconv.correlate(v, w3)
    ndconv.correlate(v, w3, output=v)
    assert np.isfinite(v).all() and np.array_equal(v, want)


def agree(got, want, tol):
    """got has want's NaNs and infinities, and its finite values within tol."""
    assert np.array_equal(np.isnan(got), np.isnan(want)), np.argwhere(np.isnan(got) != np.isnan(want))
    assert np.array_equal(np.isposinf(got), np.isposinf(want)) and np.array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    if fin.any():
        assert np.allclose(got[fin], want[fin], rtol=tol, atol=tol * np.abs(want[fin]).max())


@pytest.mark.parametrize("name,ours,theirs", FUNCS, ids=[f[0] for f in FUNCS])
@pytest.mark.parametrize("cval", [np.nan, np.inf, -np.inf])
def test_non_finite_cval(name, ours, theirs, cval):
    """scipy's NaN (issue 34: "malformed request") and infinite cvals,
    where scipy's result is its definition's. Not compared: uniform_filter
    (scipy's running sum turns a whole line NaN once a non-finite value
    enters it) and, with an infinite cval, sobel and prewitt (scipy adds
    the cval again in each 1-D pass, so its ±inf cancel in another order
    than the one separable kernel's; ndconv follows the kernel)."""
    if name == "uniform_filter" or (np.isinf(cval) and name in ("sobel", "prewitt")):
        pytest.skip("scipy's result here is its implementation's, not the definition's")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((21, 26))
    if name not in ("sobel", "prewitt"):
        # An infinity inside, near no border (scipy's derivative filters
        # multiply it by their zero tap; ndconv skips zero taps).
        x[10, 12] = np.inf
    for mode in ("constant", "grid-constant", "reflect", "wrap"):
        with np.errstate(invalid="ignore"):
            want = theirs(x, mode=mode, cval=cval)
        got = ours(x, mode=mode, cval=cval)
        assert got.dtype == want.dtype
        assert np.array_equal(np.isnan(got), np.isnan(want)), (mode, np.argwhere(np.isnan(got) != np.isnan(want)))
        assert np.array_equal(np.isinf(got), np.isinf(want)), mode
        fin = np.isfinite(want)
        assert np.allclose(got[fin], want[fin], rtol=1e-12, atol=1e-12 * np.abs(want[fin]).max()), mode
    # float32 data, and an integer input with a float output.
    x32 = x.astype(np.float32)
    with np.errstate(invalid="ignore"):
        want = theirs(x32.astype(np.float64), mode="constant", cval=cval)
    agree(ours(x32, mode="constant", cval=cval), want, 1e-4)
    u8 = rng.integers(0, 255, (21, 26)).astype(np.uint8)
    got = ours(u8, mode="constant", cval=cval, output=np.float64)
    with np.errstate(invalid="ignore"):
        want = theirs(u8, mode="constant", cval=cval, output=np.float64)
    agree(got, want, 1e-12)


def test_nan_cval_integer_and_complex():
    # An integer output holds a NaN as 0 (the library's rounding rule, and
    # what scipy's cast gives on x86); complex data is filtered by parts,
    # where a NaN part would not reach the other one: refused.
    got = ndconv.correlate(np.ones((5, 5), np.uint8), np.ones((3, 3)), mode="constant", cval=np.nan)
    want = np.zeros((5, 5), np.uint8)
    want[1:4, 1:4] = 9
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match='invalid cval: NaN'):
        ndconv.correlate(np.ones((5, 5), complex), np.ones((3, 3)), mode="constant", cval=np.nan)
    # Where the border is not constant scipy ignores cval; so do we.
    got = ndconv.correlate(np.ones((5, 5), np.uint8), np.ones((3, 3)), mode="reflect", cval=np.nan)
    assert np.array_equal(got, np.full((5, 5), 9, np.uint8))


def test_0d_input_refused():
    # scipy refuses a 0-d input with a kernel of any axis (and the CLI
    # refuses it); it was filtered as shape (1,). The filters without a
    # kernel axis (gaussian_filter, uniform_filter, laplace) return it, as
    # scipy's do.
    x = np.array(3.0)
    for call in [lambda: ndconv.correlate(x, [1.0, 2.0]), lambda: ndconv.convolve(x, [1.0]),
                 lambda: ndconv.correlate1d(x, [1.0]), lambda: ndconv.sobel(x),
                 lambda: ndconv.Plan("correlate", (), "float64", weights=np.ones(1))]:
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert "0-D" in msg or "out of range for a 0-D input" in msg or "kernel cannot filter" in msg, msg
    for f, g in [(ndconv.gaussian_filter, ndi.gaussian_filter), (ndconv.uniform_filter, ndi.uniform_filter)]:
        assert f(x, 1.0) == g(x, 1.0)
    assert ndconv.laplace(x) == ndi.laplace(x)


def test_failed_plan_is_quiet(monkeypatch):
    # __del__ of a Plan whose __init__ failed printed "Exception ignored …
    # no attribute '_handle'".
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u))
    for kw in [dict(weights=None), dict(weights=[np.ones(3), np.ones(2)]), dict(weights=np.ones(3), mode="circular")]:
        with pytest.raises(ValueError):
            ndconv.Plan("correlate", (8,), "float64", **kw)
        gc.collect()
    assert not seen, [str(u.exc_value) for u in seen]


def test_closed_plan():
    p = ndconv.Plan("correlate", (8,), "float64", weights=np.ones(3))
    p.close()
    # Was ctypes.ArgumentError from passing None as the handle.
    with pytest.raises(ValueError, match="invalid plan: it is closed"):
        p(np.ones(8))
    p.close()  # a second close is harmless
    assert "closed" in repr(p)


def test_misaligned_arrays():
    # numpy allows arrays at any byte address; the C API copies them
    # rather than pointing Go's typed slices there.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 11))
    w = np.round(rng.standard_normal((3, 4)), 3)
    want = ndconv.correlate(x, w, mode="mirror")
    a = np.frombuffer(bytearray(x.nbytes + 1), np.float64, offset=1, count=x.size).reshape(x.shape)
    a.setflags(write=True)
    a[...] = x
    b = np.frombuffer(bytearray(x.nbytes + 3), np.float64, offset=3, count=x.size).reshape(x.shape)
    b.setflags(write=True)
    assert not a.flags.aligned and not b.flags.aligned
    assert np.array_equal(ndconv.correlate(a, w, mode="mirror"), want)
    assert ndconv.correlate(a, w, output=b, mode="mirror") is b and np.array_equal(b, want)
    assert np.array_equal(ndconv.correlate(a, w, output=a, mode="mirror"), want)
