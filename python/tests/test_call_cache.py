"""The call cache (ndconv._filters._cached): a warm call that reuses the plan
its first call ran gives the same bits as the full path, and only calls
that ran as exactly one plan are remembered."""
import warnings

import numpy as np
import pytest

import ndconv
from ndconv import _filters

W33 = np.arange(9.0).reshape(3, 3) / 7

CALLS = [
    ("correlate", lambda x, o: ndconv.correlate(x, W33, output=o)),
    ("correlate constant", lambda x, o: ndconv.correlate(x, W33, o, "constant", 1.5)),
    ("convolve", lambda x, o: ndconv.convolve(x, W33, output=o, origin=(0, 1))),
    ("correlate1d list", lambda x, o: ndconv.correlate1d(x, [1, 2.5, 1], output=o)),
    ("correlate1d axis 0", lambda x, o: ndconv.correlate1d(x, [1, 2.5, 1], 0, o, "wrap")),
    ("convolve1d origin", lambda x, o: ndconv.convolve1d(x, np.array([1, 2.5, -1]), output=o, origin=1)),
    ("sobel", lambda x, o: ndconv.sobel(x, output=o)),
    ("sobel axis 0", lambda x, o: ndconv.sobel(x, 0, o)),
    ("prewitt nearest", lambda x, o: ndconv.prewitt(x, output=o, mode="nearest")),
    ("laplace", lambda x, o: ndconv.laplace(x, o)),
    ("gaussian_filter", lambda x, o: ndconv.gaussian_filter(x, 1.0, output=o)),
    ("gaussian_filter per axis", lambda x, o: ndconv.gaussian_filter(x, (1.0, 2.0), (0, 1), o)),
    ("gaussian_filter1d", lambda x, o: ndconv.gaussian_filter1d(x, 1.5, output=o)),
    ("uniform_filter", lambda x, o: ndconv.uniform_filter(x, 3, o)),
    ("uniform_filter1d", lambda x, o: ndconv.uniform_filter1d(x, 4, output=o)),
    ("gaussian_gradient_magnitude", lambda x, o: ndconv.gaussian_gradient_magnitude(x, 1.0, o)),
    ("gaussian_laplace", lambda x, o: ndconv.gaussian_laplace(x, 1.0, o)),
    ("sobel scipy", lambda x, o: ndconv.sobel(x, output=o, integer="scipy")),
    ("uniform scipy", lambda x, o: ndconv.uniform_filter(x, 3, o, integer="scipy")),
    ("correlate scipy", lambda x, o: ndconv.correlate(x, W33, o, integer="scipy")),
]

DTYPES = ["float32", "float64", "uint8", "int16"]


def _uncached(call, x, o):
    """call with the call cache and the plan cache both emptied first: the
    full path, a new plan."""
    _filters._fast.clear()
    ndconv._cache.clear()
    return call(x, o)


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("output", ["none", "array", "float64"])
def test_cached_same_bits(name, call, dtype, output):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((16, 17)) * 60 + 100).astype(dtype)

    def out():
        return {"none": None, "array": np.full(x.shape, 7, x.dtype), "float64": np.float64}[output]

    want = _uncached(call, x, out())
    for _ in range(3):  # the first fills the call cache, the others hit it
        o = out()
        got = call(x, o)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), name
        if isinstance(o, np.ndarray):
            assert got is o
    # The same input, the call cache emptied: the plan cache's plan.
    _filters._fast.clear()
    assert call(x, out()).tobytes() == want.tobytes()


def test_cache_holds_single_plans_only():
    x = np.random.default_rng(1).standard_normal((12, 10)).astype(np.float32)
    _filters._fast.clear()
    for _ in range(2):
        ndconv.sobel(x)
        ndconv.correlate1d(x, [1, 2, 1])
        ndconv.gaussian_filter(x, 1.0)
    names = sorted(k[0] for k in _filters._fast)
    assert names == ["correlate1d", "gaussian_filter", "sobel"]
    _filters._fast.clear()
    # Several plans summed in numpy, rounded in numpy, or a route that
    # depends on the data: never remembered as one plan.
    ndconv.gaussian_laplace(x, 1.0)
    ndconv.gaussian_gradient_magnitude(x, 1.0)
    u = (x * 10).astype(np.uint8)
    ndconv.sobel(u, integer="scipy")
    ndconv.correlate(u, W33, integer="scipy")
    ndconv.gaussian_filter(x, [1.0, 2.0], mode=["reflect", "wrap"])
    assert not [k for k in _filters._fast if k[0] in ("gaussian_laplace", "gaussian_gradient_magnitude", "sobel",
                                                      "correlate")]
    # (gaussian_laplace's own gaussian_filter calls are single plans.)
    assert not [k for k in _filters._fast if k[0] == "gaussian_filter" and "mode" in k]


def test_key_tells_equal_values_of_other_types_apart():
    # 1 == 1.0 == 1+0j in Python: as weights they make real and complex
    # results, as cval a real one and an error.
    x = np.arange(20.0).reshape(4, 5)
    _filters._fast.clear()
    for _ in range(2):
        assert ndconv.correlate1d(x, [1, 2, 1]).dtype == np.float64
    assert ndconv.correlate1d(x, [1 + 0j, 2, 1]).dtype == np.complex128
    assert ndconv.correlate1d(x, [1, 2, 1], cval=0).dtype == np.float64
    ndconv.correlate1d(x, [1, 2, 1], cval=0)
    with pytest.raises(ValueError, match="complex-valued cval"):
        ndconv.correlate1d(x, [1, 2, 1], cval=0j)
    # Weights of one shape and other values.
    a = ndconv.correlate(x, np.ones((3, 3)))
    b = ndconv.correlate(x, np.full((3, 3), 2.0))
    assert np.array_equal(b, 2 * a)


def test_warning_every_call():
    # A complex input with a real output dtype warns on every call (it is
    # never remembered).
    x = np.ones((6, 6), np.complex128)
    for _ in range(3):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ndconv.correlate(x, np.ones((3, 3)), output=np.float64)
        assert any("promoting" in str(m.message) for m in w)


def test_cache_bounded():
    _filters._fast.clear()
    x = np.ones((5, 6))
    for s in range(2 * _filters._FAST_SIZE):
        for _ in range(2):
            ndconv.uniform_filter1d(x, 1 + s % 5, origin=0, cval=float(s))
    assert len(_filters._fast) <= _filters._FAST_SIZE


def test_read_only_and_views():
    # The data's address comes from the buffer protocol where the array is
    # writable, else from .ctypes: a read-only input and one that does not
    # own its memory give the bits the writable copy gives, warm or cold.
    rng = np.random.default_rng(4)
    base = rng.standard_normal((20, 18)).astype(np.float32)
    want = ndconv.sobel(base.copy())
    ro = base.copy()
    ro.flags.writeable = False
    view = np.frombuffer(base.copy().tobytes(), np.float32).reshape(base.shape)  # read-only, not owning
    for x in (ro, view, base[2:12].copy(), base):
        for _ in range(3):
            got = ndconv.sobel(x)
            assert got.tobytes() == (want if x.shape == base.shape else ndconv.sobel.uncached(x)).tobytes()


def test_plan_cache_decides_lifetime():
    # The call cache holds its plans weakly: a plan the plan cache lets go
    # is released (its device memory with it), and the next call makes a
    # new one, with the same bits.
    import gc
    x = np.random.default_rng(3).standard_normal((10, 12))
    want = ndconv.gaussian_filter(x, 1.0)
    ndconv.gaussian_filter(x, 1.0)
    (ref, _), = [v for k, v in _filters._fast.items() if k[0] == "gaussian_filter" and k[1] == x.shape]
    assert ref() is not None
    ndconv._cache.clear()
    gc.collect()
    assert ref() is None
    for _ in range(2):
        assert ndconv.gaussian_filter(x, 1.0).tobytes() == want.tobytes()


def test_keys_of_signed_zeros_and_nan():
    x = np.arange(30.0).reshape(5, 6)
    _filters._fast.clear()
    for w in ([0.0, 1.0, 2.0], [-0.0, 1.0, 2.0]):
        for _ in range(2):
            ndconv.correlate1d(x, w)
    assert len([k for k in _filters._fast if k[0] == "correlate1d"]) == 2
    # A NaN cval equals nothing, itself included: such calls are not kept
    # (each would add an entry no call finds), and still give the bits.
    want = ndconv.correlate1d.uncached(x, [1.0, 2.0, 1.0], mode="constant", cval=np.nan)
    for cval in (float("nan"), np.float64("nan"), np.float32("nan")):
        for _ in range(2):
            got = ndconv.correlate1d(x, [1.0, 2.0, 1.0], mode="constant", cval=cval)
            assert got.tobytes() == want.tobytes()
    assert len([k for k in _filters._fast if k[0] == "correlate1d"]) == 2
    # numpy scalars are keys too.
    for _ in range(2):
        a = ndconv.gaussian_filter(x, np.float64(1.5))
    assert a.tobytes() == ndconv.gaussian_filter.uncached(x, 1.5).tobytes()
    assert [k for k in _filters._fast if k[0] == "gaussian_filter" and np.float64 in k]
