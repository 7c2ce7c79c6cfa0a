"""scipy.ndimage's whole filter API on ndconv (issue 32): every function
against scipy 1.10 on random cases; integer='scipy' gives scipy's integer
results bit for bit; per-axis modes, axes, order, radius; complex data
with a real output dtype promoted with a warning; empty arrays and
zero-length axes. NDCONV_SCIPY_CASES sets the number of random cases per
test (default 40)."""
import os
import zlib
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndconv

CASES = int(os.environ.get("NDCONV_SCIPY_CASES", "40"))
MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-constant", "grid-mirror"]
INTS = ["uint8", "int8", "uint16", "int16", "int32", "uint32", "int64", "uint64"]


def rand_int(rng, shape, dtype):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -(2**31)), min(info.max, 2**31 - 1)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def rand_shape(rng, ndim=None):
    ndim = ndim or int(rng.integers(1, 4))
    return tuple(int(n) for n in rng.integers(1, 9, size=ndim))


def rand_modes(rng, ndim):
    return [MODES[i] for i in rng.integers(0, len(MODES), size=ndim)]


# Each case: name, a function of (module, x, rng-drawn parameters) taking
# the module (scipy.ndimage or ndconv) and keyword arguments.
def _params(rng, x, per_axis):
    ndim = x.ndim
    mode = rand_modes(rng, ndim) if per_axis else MODES[int(rng.integers(0, len(MODES)))]
    cval = float(rng.integers(-300, 300))
    return mode, cval


def integer_cases():
    """(name, call) with call(mod, x, rng, **kw): one draw of each function."""
    def corr(mod, x, rng, **kw):
        w = rng.integers(-4, 5, size=rand_shape(rng, x.ndim)[:x.ndim]).astype(float)
        mode, cval = _params(rng, x, False)
        origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in w.shape]
        return mod.correlate(x, w, mode=mode, cval=cval, origin=origin, **kw)

    def conv(mod, x, rng, **kw):
        w = rng.integers(-4, 5, size=rand_shape(rng, x.ndim)[:x.ndim]).astype(float)
        mode, cval = _params(rng, x, False)
        return mod.convolve(x, w, mode=mode, cval=cval, **kw)

    def corr1d(mod, x, rng, **kw):
        w = rng.integers(-4, 5, size=int(rng.integers(1, 7))).astype(float)
        mode, cval = _params(rng, x, False)
        axis = int(rng.integers(-x.ndim, x.ndim))
        origin = int(rng.integers(-(len(w) // 2), (len(w) - 1) // 2 + 1))
        return mod.correlate1d(x, w, axis, mode=mode, cval=cval, origin=origin, **kw)

    def conv1d(mod, x, rng, **kw):
        w = rng.integers(-4, 5, size=int(rng.integers(1, 7))).astype(float)
        mode, cval = _params(rng, x, False)
        return mod.convolve1d(x, w, int(rng.integers(0, x.ndim)), mode=mode, cval=cval, **kw)

    def gauss(mod, x, rng, **kw):
        mode, cval = _params(rng, x, True)
        sigma = [float(s) for s in rng.uniform(0.3, 2.5, size=x.ndim)]
        order = [int(o) for o in rng.integers(0, 4, size=x.ndim)]
        return mod.gaussian_filter(x, sigma, order, mode=mode, cval=cval, **kw)

    def gauss1d(mod, x, rng, **kw):
        mode, cval = _params(rng, x, False)
        return mod.gaussian_filter1d(x, float(rng.uniform(0.3, 3)), int(rng.integers(0, x.ndim)),
                                     int(rng.integers(0, 3)), mode=mode, cval=cval, **kw)

    def uniform(mod, x, rng, **kw):
        mode, cval = _params(rng, x, True)
        size = [int(s) for s in rng.integers(1, 7, size=x.ndim)]
        origin = [int(rng.integers(-(s // 2), (s - 1) // 2 + 1)) for s in size]
        return mod.uniform_filter(x, size, mode=mode, cval=cval, origin=origin, **kw)

    def uniform1d(mod, x, rng, **kw):
        mode, cval = _params(rng, x, False)
        size = int(rng.integers(1, 9))
        origin = int(rng.integers(-(size // 2), (size - 1) // 2 + 1))
        return mod.uniform_filter1d(x, size, int(rng.integers(0, x.ndim)), mode=mode, cval=cval, origin=origin,
                                    **kw)

    def sobel(mod, x, rng, **kw):
        mode, cval = _params(rng, x, bool(rng.integers(0, 2)))
        return mod.sobel(x, int(rng.integers(0, x.ndim)), mode=mode, cval=cval, **kw)

    def prewitt(mod, x, rng, **kw):
        mode, cval = _params(rng, x, bool(rng.integers(0, 2)))
        return mod.prewitt(x, int(rng.integers(0, x.ndim)), mode=mode, cval=cval, **kw)

    def laplace(mod, x, rng, **kw):
        mode, cval = _params(rng, x, bool(rng.integers(0, 2)))
        return mod.laplace(x, mode=mode, cval=cval, **kw)

    def glaplace(mod, x, rng, **kw):
        mode, cval = _params(rng, x, bool(rng.integers(0, 2)))
        return mod.gaussian_laplace(x, float(rng.uniform(0.5, 2)), mode=mode, cval=cval, **kw)

    def ggm(mod, x, rng, **kw):
        mode, cval = _params(rng, x, bool(rng.integers(0, 2)))
        return mod.gaussian_gradient_magnitude(x, float(rng.uniform(0.5, 2)), mode=mode, cval=cval, **kw)

    return [("correlate", corr), ("convolve", conv), ("correlate1d", corr1d), ("convolve1d", conv1d),
            ("gaussian_filter", gauss), ("gaussian_filter1d", gauss1d), ("uniform_filter", uniform),
            ("uniform_filter1d", uniform1d), ("sobel", sobel), ("prewitt", prewitt), ("laplace", laplace),
            ("gaussian_laplace", glaplace), ("gaussian_gradient_magnitude", ggm)]


def _scipy_ok(x, out):
    """Whether scipy 1.10 takes this input/output dtype pair."""
    return True


@pytest.mark.parametrize("name,call", integer_cases(), ids=[c[0] for c in integer_cases()])
def test_integer_scipy_exact(name, call):
    # integer='scipy': scipy's truncation and wrapping, bit for bit, on
    # random integer inputs and outputs (the output dtype drawn too).
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for case in range(CASES):
        x = rand_int(rng, rand_shape(rng), INTS[int(rng.integers(0, len(INTS)))])
        out = INTS[int(rng.integers(0, len(INTS)))] if rng.integers(0, 2) else None
        seed = int(rng.integers(0, 2**32))
        kw = {} if out is None else {"output": np.dtype(out)}
        want = call(ndi, x, np.random.default_rng(seed), **kw)
        got = call(ndconv, x, np.random.default_rng(seed), integer="scipy", **kw)
        assert got.dtype == want.dtype and got.shape == want.shape, (name, case)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (name, case, x.dtype, out, x.shape, got.ravel()[bad[:5]], want.ravel()[bad[:5]])


@pytest.mark.parametrize("name,call", integer_cases(), ids=[c[0] for c in integer_cases()])
def test_float_against_scipy(name, call):
    # float64 data: scipy's result up to the rounding of fused
    # multiply-adds; per-axis modes, orders, origins and cval included.
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    for case in range(CASES):
        x = rng.standard_normal(rand_shape(rng)) * 100
        seed = int(rng.integers(0, 2**32))
        want = call(ndi, x, np.random.default_rng(seed))
        got = call(ndconv, x, np.random.default_rng(seed))
        assert got.dtype == want.dtype
        scale = 1 + np.abs(want).max(initial=0)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * scale, err_msg="%s case %d" % (name, case))


def test_integer_round_default():
    # The default rule: round half to even and saturate (scipy truncates
    # and wraps): a 3×3 box on uint8 is the rounded float64 mean.
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, size=(20, 21)).astype(np.uint8)
    ref = ndi.uniform_filter(x.astype(np.float64), 3)
    got = ndconv.uniform_filter(x, 3)
    assert got.dtype == np.uint8
    assert np.all(np.abs(got - ref) <= 0.5 + 1e-4)
    trunc = ndconv.uniform_filter(x, 3, integer="scipy")
    np.testing.assert_array_equal(trunc, ndi.uniform_filter(x, 3))
    assert np.mean(trunc != got) > 0.2
    # Saturation, not wrapping, with per-axis modes (the 1-D passes).
    y = np.full((6, 6), 200, np.uint8)
    np.testing.assert_array_equal(ndconv.sobel(y, 0, mode=["constant", "nearest"]),
                                  np.clip(ndi.sobel(y.astype(float), 0, mode=["constant", "nearest"]), 0, 255))
    np.testing.assert_array_equal(ndconv.laplace(y, mode=["constant", "wrap"], output=np.int8),
                                  np.clip(ndi.laplace(y.astype(float), mode=["constant", "wrap"]), -128, 127))


def test_complex_promoted_with_warning():
    x = np.arange(12.0).reshape(3, 4) * (1 + 2j)
    for f, args in [("correlate", (np.ones((3, 3)),)), ("correlate1d", ([1.0, 2.0],)),
                    ("convolve1d", ([1.0, 2.0j],)), ("uniform_filter1d", (3,))]:
        with pytest.warns(UserWarning, match="promoting specified output dtype to complex"):
            got = getattr(ndconv, f)(x, *args, output=np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(ndi, f)(x, *args, output=np.float32)
        assert got.dtype == want.dtype == np.complex64, f
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f)
    # Real data, complex weights: the output is complex too.
    with pytest.warns(UserWarning):
        got = ndconv.correlate(x.real, np.ones((2, 2)) * 1j, output=np.float64)
    assert got.dtype == np.complex128


def test_complex_separable():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 9)) + 1j * rng.standard_normal((7, 9))
    for name, args in [("gaussian_filter", (1.5,)), ("uniform_filter", (3,)), ("sobel", (0,)),
                       ("laplace", ()), ("gaussian_laplace", (1.0,))]:
        np.testing.assert_allclose(getattr(ndconv, name)(x, *args, mode=["wrap", "nearest"]),
                                   getattr(ndi, name)(x, *args, mode=["wrap", "nearest"]), atol=1e-12,
                                   err_msg=name)


def test_axes():
    # scipy 1.11's axes: sigma/size/mode/origin per listed axis; the others
    # untouched (scipy 1.10: sigma 0 or size 1 there).
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 6, 7))
    got = ndconv.gaussian_filter(x, [1.0, 2.0], axes=(2, 0), mode=["wrap", "mirror"], order=[1, 0])
    want = ndi.gaussian_filter(x, [2.0, 0, 1.0], order=[0, 0, 1], mode=["mirror", "reflect", "wrap"])
    np.testing.assert_allclose(got, want, atol=1e-12)
    got = ndconv.uniform_filter(x, [3, 4], axes=[-1, 1], origin=[1, -1])
    want = ndi.uniform_filter(x, [1, 4, 3], origin=[0, -1, 1])
    np.testing.assert_allclose(got, want, atol=1e-12)
    with pytest.raises(ValueError, match="unique"):
        ndconv.gaussian_filter(x, 1, axes=[0, -3])
    with pytest.raises(RuntimeError, match="sequence argument"):
        ndconv.uniform_filter(x, [3, 3, 3], axes=[0, 1])


def test_gaussian_order_radius():
    x = np.random.default_rng(2).standard_normal((12, 13))
    for order in [0, 1, 2, 3, [3, 1]]:
        np.testing.assert_allclose(ndconv.gaussian_filter(x, [1.2, 0.7], order),
                                   ndi.gaussian_filter(x, [1.2, 0.7], order), atol=1e-12, err_msg=str(order))
    for radius in [0, 2, [1, 5], [7, 0]]:
        np.testing.assert_allclose(ndconv.gaussian_filter(x, [1.2, 0.7], radius=radius),
                                   ndi.gaussian_filter(x, [1.2, 0.7], radius=radius), atol=1e-12,
                                   err_msg=str(radius))
    np.testing.assert_allclose(ndconv.gaussian_filter1d(x, 1.5, 0, 3, radius=4),
                               ndi.gaussian_filter1d(x, 1.5, 0, 3, radius=4), atol=1e-12)
    np.testing.assert_allclose(ndconv.gaussian_laplace(x, 1.1, truncate=2.0),
                               ndi.gaussian_laplace(x, 1.1, truncate=2.0), atol=1e-12)
    np.testing.assert_allclose(ndconv.gaussian_gradient_magnitude(x, [1.1, 2], radius=[3, 2]),
                               ndi.gaussian_gradient_magnitude(x, [1.1, 2], radius=[3, 2]), atol=1e-12)
    with pytest.raises(ValueError, match="order must be non-negative"):
        ndconv.gaussian_filter(x, 1, -1)
    with pytest.raises(ValueError, match="Radius"):
        ndconv.gaussian_filter(x, 1, radius=-1)


def test_generic_with_ndconv_derivatives():
    x = np.random.default_rng(4).standard_normal((9, 8))

    def d2(input, axis, output, mode, cval):
        return ndconv.correlate1d(input, [1, -2, 1], axis, output, mode, cval)

    def d1(input, axis, output, mode, cval, sigma):
        return ndconv.gaussian_filter1d(input, sigma, axis, 1, output, mode, cval)

    np.testing.assert_allclose(ndconv.generic_laplace(x, d2, mode=["wrap", "nearest"]),
                               ndi.laplace(x, mode=["wrap", "nearest"]), atol=1e-12)
    np.testing.assert_allclose(ndconv.generic_gradient_magnitude(x, d1, extra_arguments=(1.5,)),
                               ndi.generic_gradient_magnitude(x, lambda i, a, o, m, c: ndi.gaussian_filter1d(
                                   i, 1.5, a, 1, o, m, c)), atol=1e-12)


EMPTY_CALLS = [
    ("correlate", lambda m, x: m.correlate(x, np.ones((2,) * x.ndim))),
    ("convolve", lambda m, x: m.convolve(x, np.ones((3,) * x.ndim))),
    ("correlate1d", lambda m, x: m.correlate1d(x, [1, 1])),
    ("convolve1d", lambda m, x: m.convolve1d(x, [1, 2, 1], axis=0)),
    ("gaussian_filter", lambda m, x: m.gaussian_filter(x, 1.0)),
    ("gaussian_filter1d", lambda m, x: m.gaussian_filter1d(x, 1.0)),
    ("uniform_filter", lambda m, x: m.uniform_filter(x, 3)),
    ("uniform_filter1d", lambda m, x: m.uniform_filter1d(x, 3)),
    ("sobel", lambda m, x: m.sobel(x)),
    ("prewitt", lambda m, x: m.prewitt(x, 0)),
    ("laplace", lambda m, x: m.laplace(x)),
    ("gaussian_laplace", lambda m, x: m.gaussian_laplace(x, 1.0)),
    ("gaussian_gradient_magnitude", lambda m, x: m.gaussian_gradient_magnitude(x, 1.0)),
]


@pytest.mark.parametrize("name,call", EMPTY_CALLS, ids=[c[0] for c in EMPTY_CALLS])
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4), (2, 0, 3)])
def test_empty(name, call, shape):
    # Issue 32: ndconv.correlate(np.array([]), [1, 1]) aborted the process
    # (a panic in the library); empty arrays and zero-length axes give
    # scipy's empty result.
    for dt in [np.float64, np.uint8, np.complex64]:
        x = np.zeros(shape, dt)
        want = call(ndi, x)
        got = call(ndconv, x)
        assert got.shape == want.shape and got.dtype == want.dtype, (name, shape, dt)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5)])
def test_empty_plan(shape):
    # The library itself (through the C API, no Python shortcut) gives an
    # empty result for kernels and named filters.
    for kw in [dict(weights=np.ones(2)), dict(filter="gaussian:sigma=1"), dict(filter="sobel:axis=0"),
               dict(filter="uniform:size=3")]:
        p = ndconv.Plan("correlate", shape, "float64", **kw)
        assert p(np.zeros(shape)).shape == shape
        p.close()


def test_output_array_and_overlap():
    rng = np.random.default_rng(9)
    x = rng.integers(0, 200, size=(10, 11)).astype(np.int16)
    for integer in ["round", "scipy"]:
        out = np.empty((10, 11), np.uint8)
        r = ndconv.gaussian_filter(x, 1.3, output=out, mode=["nearest", "wrap"], integer=integer)
        assert r is out
        if integer == "scipy":
            np.testing.assert_array_equal(out, ndi.gaussian_filter(x, 1.3, output=np.uint8, mode=["nearest", "wrap"]))
    y = x.astype(np.float64)
    want = ndi.sobel(y, 1, mode=["reflect", "mirror"])
    ndconv.sobel(y, 1, output=y, mode=["reflect", "mirror"])
    np.testing.assert_allclose(y, want)


def test_argument_types():
    # numpy scalars and 0-d arrays for cval, arrays for sigma and size, a
    # numpy integer radius: as scipy takes them.
    x = np.random.default_rng(8).standard_normal((6, 7))
    for cval in [np.float32(2.5), np.array(2.5), 2]:
        np.testing.assert_allclose(ndconv.correlate(x, np.ones((2, 3)), mode="constant", cval=cval),
                                   ndi.correlate(x, np.ones((2, 3)), mode="constant", cval=cval), atol=1e-12)
    np.testing.assert_allclose(ndconv.gaussian_filter(x, np.array([1.0, 2.0]), radius=np.int64(3)),
                               ndi.gaussian_filter(x, np.array([1.0, 2.0]), radius=np.int64(3)), atol=1e-12)
    np.testing.assert_allclose(ndconv.uniform_filter(x, np.array([2, 3]), output="float32"),
                               ndi.uniform_filter(x, np.array([2, 3]), output="float32"), atol=1e-6)


def test_version():
    assert isinstance(ndconv.__version__, str) and ndconv.__version__


def test_laplacians_over_axes():
    # scipy 1.15's axes for laplace, gaussian_laplace and the gradient
    # magnitude: the generic sum over the axes given, in their order, mode
    # and sigma per axis of them (the other axes unfiltered).
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 7, 8))
    want = (ndconv.correlate1d(x, [1, -2, 1], axis=2, mode="reflect")
            + ndconv.correlate1d(x, [1, -2, 1], axis=0, mode="wrap"))
    got = ndconv.laplace(x, axes=(2, 0), mode=["reflect", "wrap"])
    assert np.array_equal(got, want)

    def term(order_axis, order):
        sig = [0.0, 0.0, 0.0]
        sig[2], sig[0] = 1.0, 2.0
        o = [0, 0, 0]
        o[order_axis] = order
        return ndconv.gaussian_filter(x, sig, o, mode="nearest")
    assert np.array_equal(ndconv.gaussian_laplace(x, (1.0, 2.0), axes=(2, 0), mode="nearest"),
                          term(2, 2) + term(0, 2))
    # The gradient magnitude's sigma smooths every axis, as scipy's does.
    g = [ndconv.gaussian_filter(x, 1.5, [0, 0, 1], mode="nearest"),
         ndconv.gaussian_filter(x, 1.5, [1, 0, 0], mode="nearest")]
    assert np.array_equal(ndconv.gaussian_gradient_magnitude(x, 1.5, axes=(-1, 0), mode="nearest"),
                          np.sqrt(g[0] ** 2 + g[1] ** 2))
    # Every axis given is the filter without axes; none leaves the input.
    assert np.array_equal(ndconv.laplace(x, axes=(0, 1, 2)), ndconv.laplace(x))
    assert np.array_equal(ndconv.gaussian_laplace(x, 1.5, axes=()), x)
    with pytest.raises(ndconv.ArgumentError, match="sequence argument must have length"):
        ndconv.laplace(x, axes=(0, 1), mode=["reflect"] * 3)


def test_zero_size_weights():
    # scipy's rule: an axis of length 0 with the others spanning the input
    # gives zeros (in the output dtype); otherwise the shape is refused.
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    for k in [(0, 3, 3), (3, 0, 2)]:
        for f in (ndconv.correlate, ndconv.convolve):
            r = f(x, np.zeros(k))
            assert r.dtype == np.uint8 and r.shape == x.shape and not r.any()
            assert np.array_equal(r, ndi.correlate(x, np.zeros(k)))
    for k in [(0, 3), (3, 0)]:
        with pytest.raises(ndconv.ArgumentError, match="incorrect shape"):
            ndconv.correlate(x, np.zeros(k))
        with pytest.raises(RuntimeError):
            ndi.correlate(x, np.zeros(k))
