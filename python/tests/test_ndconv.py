"""ndconv's Python face against scipy.ndimage on random cases: every dtype,
every border name (scipy's and the aliases), correlate and convolve, the
1-D and named filters, any strides and byte order, output arrays, the plan
cache, and error cases. Run: python3 -m pytest python/tests"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndconv

DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
          "float16", "float32", "float64"]
WIDE = {"float64", "int32", "uint32", "int64", "uint64"}
# ndconv's border names and the scipy mode each stands for.
BORDERS = {"reflect": "reflect", "mirror": "mirror", "nearest": "nearest", "wrap": "wrap",
           "constant": "constant", "symmetric": "reflect", "grid-mirror": "reflect",
           "reflect101": "mirror", "reflect_101": "mirror", "edge": "nearest", "replicate": "nearest",
           "grid-wrap": "wrap", "grid-constant": "constant"}


def random_array(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -(2**62)), min(info.max, 2**62)
        return rng.integers(lo, hi, size=shape, dtype=np.int64 if dt.kind == "i" else np.uint64).astype(dt)
    return (rng.standard_normal(shape) * 50).astype(dt)


def devices():
    found = ["cpu"]
    try:
        p = ndconv.Plan("correlate", (4, 4), "float32", weights=np.ones((3, 3)), device="opencl")
        found.append("opencl")
        p.close()
    except (RuntimeError, ValueError):
        pass
    try:
        ndconv.Plan("correlate", (4, 4), "float32", weights=np.ones((3, 3)), device="cuda").close()
        found.append("cuda")
    except (RuntimeError, ValueError):
        pass
    return found


def check(got, x, w, scipy_mode, cval, origin, out_dtype, convolve=False, ref=None):
    """got must equal scipy's float64 result within the rounding of ndconv's
    accumulator and output type; integer outputs round half to even and
    saturate."""
    f = ndi.convolve if convolve else ndi.correlate
    x64 = x.astype(np.float64)
    if ref is None:
        ref = f(x64, w, mode=scipy_mode, cval=cval, origin=origin)
    mag = f(np.abs(x64), np.abs(w), mode=scipy_mode, cval=abs(cval), origin=origin)
    out = np.dtype(out_dtype)
    assert got.dtype == out and got.shape == ref.shape
    eps = 2.0**-53 if (x.dtype.name in WIDE or out == np.float64) else 2.0**-24
    within(got, ref, mag * eps * (4 * w.size + 16), out)


def within(got, ref, tol, out, what=None):
    """got (a real output of dtype out) within tol of ref, plus the output
    type's own rounding: an integer output anywhere between ref ± tol
    rounded half to even and saturated, a float16 one infinite beyond its
    range."""
    g = got.astype(np.float64)
    if out.kind in "iu":
        info = np.iinfo(out)
        lo = np.clip(np.rint(ref - tol), float(info.min), float(info.max))
        hi = np.clip(np.rint(ref + tol), float(info.min), float(info.max))
        assert np.all((g >= lo) & (g <= hi)), (what, np.max(np.maximum(lo - g, g - hi)))
        return
    if out == np.float32:
        tol = tol + 2.0**-24 * np.abs(ref)
    if out == np.float16:
        tol = tol + 2.0**-11 * np.abs(ref) + 2.0**-25
        over = np.abs(ref) > 65504
        assert np.all(np.isinf(g[over]) | (np.abs(g - ref)[over] <= tol[over])), what
        ref, g, tol = ref[~over], g[~over], tol[~over]
    assert np.all(np.abs(g - ref) <= tol), (what, np.max(np.abs(g - ref) - tol))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("border", sorted(BORDERS))
def test_correlate_convolve_every_dtype_and_border(dtype, border):
    rng = np.random.default_rng(abs(hash((dtype, border))) % 2**32)
    for trial in range(3):
        shape = tuple(rng.integers(1, 12, size=rng.integers(1, 4)))
        kshape = tuple(rng.integers(1, 6, size=len(shape)))
        x = random_array(rng, shape, dtype)
        w = np.round(rng.standard_normal(kshape), 3)
        origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in kshape]
        cval = float(rng.integers(-5, 5))
        out = [None, "float32", "float64", dtype][trial % 4]
        convolve = trial % 2 == 1
        f = ndconv.convolve if convolve else ndconv.correlate
        got = f(x, w, output=out, mode=border, cval=cval, origin=origin)
        check(got, x, w, BORDERS[border], cval, origin, out or dtype, convolve)


@pytest.mark.parametrize("device", devices())
def test_devices(device):
    rng = np.random.default_rng(7)
    for dtype in ["uint8", "int8", "uint32", "int64", "float32", "float64"]:
        x = random_array(rng, (13, 11), dtype)
        w = np.round(rng.standard_normal((3, 4)), 3)
        got = ndconv.correlate(x, w, output="float64", mode="wrap", device=device)
        check(got, x, w, "wrap", 0.0, 0, "float64")
        # Same bits as the CPU: the exact family on every device.
        cpu = ndconv.correlate(x, w, output="float64", mode="wrap", device="cpu", method="direct")
        assert np.array_equal(ndconv.correlate(x, w, output="float64", mode="wrap", device=device, method="direct"), cpu)


def test_float16_on_gpus():
    # float16 runs on the GPUs as its float32 twin, with the CPU's bits.
    rng = np.random.default_rng(11)
    x = rng.standard_normal((13, 17)).astype(np.float16)
    w = np.round(rng.standard_normal((3, 5)), 3)
    cpu = ndconv.correlate(x, w, mode="reflect", device="cpu", method="direct")
    assert cpu.dtype == np.float16
    for device in devices():
        if device == "cpu":
            continue
        got = ndconv.correlate(x, w, mode="reflect", device=device, method="direct")
        assert got.dtype == np.float16 and np.array_equal(got.view(np.uint16), cpu.view(np.uint16))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float16", "float32", "float64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_1d(dtype, axis):
    rng = np.random.default_rng(3)
    x = random_array(rng, (9, 14), dtype)
    w = np.round(rng.standard_normal(5), 3)
    for convolve, f in [(False, ndconv.correlate1d), (True, ndconv.convolve1d)]:
        g = ndi.convolve1d if convolve else ndi.correlate1d
        ref = g(x.astype(np.float64), w, axis=axis, mode="mirror", origin=1)
        got = f(x, w, axis=axis, output="float64", mode="reflect101", origin=1)
        wf = np.expand_dims(w, [a for a in range(2) if a != axis % 2])
        check(got, x, wf, "mirror", 0.0, [1 if a == axis % 2 else 0 for a in range(2)], "float64", convolve, ref=ref)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_named_filters(dtype):
    rng = np.random.default_rng(5)
    x = random_array(rng, (20, 17), dtype)
    x64 = x.astype(np.float64)
    tol = 1e-4 if dtype == "float32" else 1e-10
    cases = [
        (ndconv.gaussian_filter(x, 1.5), ndi.gaussian_filter(x64, 1.5)),
        (ndconv.gaussian_filter(x, (2, 1), order=(0, 1), mode="nearest"),
         ndi.gaussian_filter(x64, (2, 1), order=(0, 1), mode="nearest")),
        (ndconv.gaussian_filter(x, 1.0, truncate=2.5, mode="edge"), ndi.gaussian_filter(x64, 1.0, truncate=2.5, mode="nearest")),
        (ndconv.gaussian_filter(x, 2.0, radius=3), ndi.gaussian_filter(x64, 2.0, radius=3)),
        (ndconv.uniform_filter(x, 4, mode="wrap"), ndi.uniform_filter(x64, 4, mode="wrap")),
        (ndconv.uniform_filter(x, (3, 5), mode="constant", cval=2), ndi.uniform_filter(x64, (3, 5), mode="constant", cval=2)),
        (ndconv.sobel(x, 0), ndi.sobel(x64, 0)),
        (ndconv.sobel(x, -1, mode="mirror"), ndi.sobel(x64, -1, mode="mirror")),
        (ndconv.prewitt(x, 1), ndi.prewitt(x64, 1)),
        (ndconv.laplace(x, mode="nearest"), ndi.laplace(x64, mode="nearest")),
    ]
    for got, ref in cases:
        assert got.dtype == np.dtype(dtype)
        assert np.allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max()), np.abs(got - ref).max()


def test_layouts_and_output():
    rng = np.random.default_rng(11)
    base = random_array(rng, (30, 40), "float32")
    w = np.round(rng.standard_normal((3, 5)), 3)
    want = ndconv.correlate(np.ascontiguousarray(base[::2, 1::3].T), w)
    # Any strides, and the other byte order, give the same result.
    assert np.array_equal(ndconv.correlate(base[::2, 1::3].T, w), want)
    be = np.ascontiguousarray(base[::2, 1::3].T).astype(">f4")
    assert np.array_equal(ndconv.correlate(be, w), want)
    # A C-contiguous output of the right type is written in place and returned.
    out = np.empty_like(want)
    assert ndconv.correlate(base[::2, 1::3].T, w, output=out) is out
    assert np.array_equal(out, want)
    # A strided output is filled too.
    big = np.zeros((want.shape[0], 2 * want.shape[1]), np.float32)
    ndconv.correlate(base[::2, 1::3].T, w, output=big[:, ::2])
    assert np.array_equal(big[:, ::2], want)
    # output as a dtype.
    assert ndconv.correlate(base, w, output=np.float64).dtype == np.float64
    # extent: valid and full as scipy.signal.
    assert ndconv.correlate(base, w, extent="valid").shape == (28, 36)
    assert ndconv.correlate(base, w, extent="full", mode="constant").shape == (32, 44)


def test_plan_cache_and_plan():
    x = np.ones((8, 9), np.float32)
    w = np.arange(6.0).reshape(2, 3)
    ndconv.correlate(x, w)
    n = len(ndconv._cache)
    ndconv.correlate(x, w)
    assert len(ndconv._cache) == n  # reused
    p = ndconv.Plan("convolve", x.shape, x.dtype, weights=w, mode="wrap", workers=1)
    assert np.array_equal(p(x), ndconv.convolve(x, w, mode="wrap"))
    assert "cpu" in repr(p)
    p.close()
    with pytest.raises(RuntimeError, match="no plan"):
        p._handle = 10**9
        p(x)
    p._handle = None
    bank = ndconv.Plan("correlate", x.shape, "float32", weights=[w, -w])
    assert bank(x).shape == (8, 9, 2)
    sep = ndconv.Plan("correlate", x.shape, "float32", factors=[[1, 2], [1, 0, -1]], method="separable")
    assert np.allclose(sep(x), ndconv.correlate(x, np.outer([1, 2], [1, 0, -1])))


@pytest.mark.parametrize("dtype,out", [("float32", None), ("uint8", None), ("float32", "int16")])
@pytest.mark.parametrize("nk", [2, 5, 17])
def test_bank_layout_planar(dtype, out, nk):
    """bank_layout="planar": the kernel axis first, np.moveaxis of the
    interleaved bank bit for bit, for an H×W×3 image (a 2-D kernel per
    channel), and the plan reused; one kernel is unchanged; an unknown
    layout is a ValueError naming it."""
    rng = np.random.default_rng(38 + nk)
    x = random_array(rng, (13, 11, 3), dtype)
    ws = [rng.standard_normal((3, 4)) for _ in range(nk)]
    inter = ndconv.Plan("correlate", x.shape, x.dtype, weights=ws, output_dtype=out)(x)
    p = ndconv.Plan("correlate", x.shape, x.dtype, weights=ws, output_dtype=out, bank_layout="planar")
    assert p.shape == (nk, 13, 11, 3)
    for _ in range(2):
        got = p(x)
        assert got.shape == (nk, 13, 11, 3) and got.dtype == inter.dtype and got.flags.c_contiguous
        assert np.array_equal(got, np.moveaxis(inter, -1, 0))
    p.close()
    one = ndconv.Plan("correlate", x.shape, x.dtype, weights=ws[0], bank_layout="planar")(x)
    assert np.array_equal(one, ndconv.correlate(x, ws[0]))
    with pytest.raises(ValueError, match='unsupported bank layout "nchw"'):
        ndconv.Plan("correlate", x.shape, x.dtype, weights=ws, bank_layout="nchw")


@pytest.mark.parametrize("call,exc,message", [
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), mode="circular"), ValueError, 'unsupported border "circular" (supported: reflect (symmetric'),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), origin=2), ValueError, "invalid origin: 2 is out of range [-1, 1]"),
    (lambda: ndconv.correlate(np.ones(5), np.ones((3, 3))), ValueError, "invalid kernel: a 2-D kernel cannot filter a 1-D input"),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), output="complex64"), ValueError, 'unsupported dtype "complex64"'),
    (lambda: ndconv.correlate(np.ones((5, 5), np.float16), np.ones((3, 3)) * 1j, mode="circular"), ValueError, 'unsupported border'),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)) * 1j, cval=1j), ValueError, "a complex cval needs complex input"),
    (lambda: ndconv.correlate(np.ones((5, 5)), [[1, np.nan]]), ValueError, "invalid kernel: weight NaN is not finite"),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), method="im2col"), ValueError, 'unsupported method "im2col"'),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), device="tpu"), ValueError, 'unsupported device "tpu"'),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), axes=[0, 0]), ValueError, "invalid axes: axis 0 is given twice"),
    (lambda: ndconv.correlate(np.ones((2, 2)), np.ones((3, 3)), extent="valid"), ValueError, "invalid mode: valid needs"),
    (lambda: ndconv.correlate1d(np.ones((5, 5)), np.ones((3, 3))), ValueError, "correlate1d takes 1-D weights"),
    (lambda: ndconv.sobel(np.ones((5, 5)), axis=2), ValueError, "axis 2 is out of range"),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), output=np.empty((4, 4))), ValueError, "invalid output"),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), workers=-1), ValueError, "invalid workers"),
    (lambda: ndconv.correlate(np.ones((5, 5), complex), np.ones((3, 3)), output=np.empty((5, 5))), RuntimeError,
     "output must have complex dtype"),
    (lambda: ndconv.gaussian_filter(np.ones((5, 5)), 1, mode=["reflect"]), RuntimeError,
     "sequence argument must have length equal to input rank"),
    (lambda: ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), mode=["reflect", "wrap"]), RuntimeError,
     "A sequence of modes is not supported"),
    (lambda: ndconv.sobel(np.ones((5, 5)), integer="wrap"), ValueError, "unsupported integer 'wrap'"),
])
def test_errors(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_unavailable_device_is_runtime_error():
    if "cuda" in devices():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="unavailable"):
        ndconv.correlate(np.ones((5, 5)), np.ones((3, 3)), device="cuda")


@pytest.mark.parametrize("xdt,wdt", [("complex128", "float64"), ("float64", "complex128"), ("complex128", "complex128"),
                                     ("complex64", "complex64"), ("float32", "complex128"), ("uint8", "complex128")])
@pytest.mark.parametrize("border", ["reflect", "constant", "wrap", "edge"])
def test_complex(xdt, wdt, border):
    rng = np.random.default_rng(abs(hash((xdt, wdt, border))) % 2**32)
    x = (random_array(rng, (9, 12), "float64") + (1j * random_array(rng, (9, 12), "float64") if xdt.startswith("complex") else 0))
    x = x.astype(xdt) if not xdt.startswith("uint") else random_array(rng, (9, 12), xdt)
    w = np.round(rng.standard_normal((3, 4)), 3) + (1j * np.round(rng.standard_normal((3, 4)), 3) if wdt.startswith("complex") else 0)
    mode = BORDERS[border]
    cval = 1.5 - 2j if x.dtype.kind == "c" else 1.5
    for f, g in [(ndconv.correlate, ndi.correlate), (ndconv.convolve, ndi.convolve)]:
        got = f(x, w, mode=border, cval=cval, origin=(1, -1))
        want = g(x, w, mode=mode, cval=cval, origin=(1, -1))
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        tol = (1e-4 if got.dtype == np.complex64 else 1e-11) * (1 + np.abs(want).max())
        assert np.abs(got - want).max() <= tol
    got = ndconv.correlate1d(x, w[0], axis=0, mode=border, cval=cval)
    want = ndi.correlate1d(x, w[0], axis=0, mode=mode, cval=cval)
    assert got.dtype == want.dtype and np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())


@pytest.mark.parametrize("device", devices())
def test_complex_through_the_library(device):
    """Complex data and weights go to the library as they are (one plan of
    complex dtype, no splitting in Python): the plan's output is complex,
    complex64 data are read in place, and the result equals scipy's for
    correlate, convolve, the 1-D forms and an explicit complex128 output,
    on every device present."""
    rng = np.random.default_rng(17)
    x = (random_array(rng, (11, 13), "float64") + 1j * random_array(rng, (11, 13), "float64")).astype(np.complex64)
    w = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    p = ndconv.Plan("correlate", x.shape, x.dtype, weights=w, mode="constant", cval=2 - 1j, device=device)
    assert p.dtype == np.complex64
    want = ndi.correlate(x, w, mode="constant", cval=2 - 1j)
    assert np.abs(p(x) - want).max() <= 1e-4 * (1 + np.abs(want).max())
    got = ndconv.convolve(x, w, mode="wrap", output=np.complex128, device=device)
    want = ndi.convolve(x.astype(np.complex128), w, mode="wrap")
    assert got.dtype == np.complex128 and np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())
    for f, g in [(ndconv.correlate1d, ndi.correlate1d), (ndconv.convolve1d, ndi.convolve1d)]:
        got = f(x, w[:, 0], axis=0, mode="mirror", device=device)
        want = g(x, w[:, 0], axis=0, mode="mirror")
        assert got.dtype == want.dtype and np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())
    out = np.empty_like(x)
    assert ndconv.correlate(x, w.real, output=out, device=device) is out
    assert np.abs(out - ndi.correlate(x, w.real)).max() <= 1e-4 * (1 + np.abs(out).max())


@pytest.mark.parametrize("name,args", [("gaussian_filter", (1.5,)), ("uniform_filter", (3,)), ("sobel", (0,)),
                                       ("prewitt", (1,)), ("laplace", ())])
def test_named_filters_on_complex(name, args):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((20, 30)) + 1j * rng.standard_normal((20, 30))).astype(np.complex64)
    got, want = getattr(ndconv, name)(x, *args), getattr(ndi, name)(x, *args)
    assert got.dtype == want.dtype == np.complex64
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
