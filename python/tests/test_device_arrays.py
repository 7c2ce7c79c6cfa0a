"""Arrays in device memory, without a GPU: the parsing of
__cuda_array_interface__ and DLPack, the checks made before any device is
touched, and the errors. The device tests (CuPy and PyTorch on the GPU)
are gpu_arrays_device.py, run on the device machine."""
import ctypes
import types
import math
import sys

import numpy as np
import pytest

import ndconv
from ndconv import _device


class FakeCAI:
    """An object exposing a __cuda_array_interface__ dict, as Numba's and
    CuPy's arrays do."""

    def __init__(self, **d):
        base = {"version": 3, "shape": (4, 5), "typestr": "<f4", "data": (0x7f0000001000, False),
                "strides": None, "stream": 1}
        base.update(d)
        self.__cuda_array_interface__ = {k: v for k, v in base.items() if v is not _DROP}


_DROP = object()


def test_host_arrays_are_not_device_arrays():
    assert not _device.is_device_array(np.zeros(3))
    assert not _device.is_device_array([1, 2])
    assert _device.is_device_array(FakeCAI())


def test_parse_cai_v3():
    a = _device.parse(FakeCAI())
    assert (a.ptr, a.shape, a.dtype, a.nbytes, a.stream, a.kind) == (0x7f0000001000, (4, 5), np.float32, 80, 1,
                                                                      "test_device_arrays")
    # C-contiguous strides given explicitly, and any stride on a length-1 axis.
    assert _device.parse(FakeCAI(strides=(20, 4))).nbytes == 80
    assert _device.parse(FakeCAI(shape=(1, 5), strides=(999, 4))).shape == (1, 5)
    assert _device.parse(FakeCAI(typestr="<f2")).dtype == np.float16
    assert _device.parse(FakeCAI(typestr="|u1")).nbytes == 20
    assert _device.parse(FakeCAI(typestr="<c16")).dtype == np.complex128


def test_parse_cai_streams():
    assert _device.parse(FakeCAI(stream=None)).stream == _device.NO_STREAM  # v3: ready, no sync
    assert _device.parse(FakeCAI(stream=2)).stream == 2  # the per-thread default stream
    assert _device.parse(FakeCAI(stream=0x55aa00)).stream == 0x55aa00
    # No stream key (version 2), or version 2 with one: the legacy default stream.
    assert _device.parse(FakeCAI(version=2, stream=_DROP)).stream == 0
    assert _device.parse(FakeCAI(version=2, stream=77)).stream == 0
    with pytest.raises(ndconv.ArgumentError, match="stream 0 is disallowed"):
        _device.parse(FakeCAI(stream=0))


@pytest.mark.parametrize("d, msg", [
    ({"strides": (4, 16)}, "strides \\(4, 16\\) are not C-contiguous"),
    ({"strides": (40, 8)}, "not C-contiguous"),
    ({"typestr": ">f4"}, "byte order '>f4'"),
    ({"typestr": "|b1"}, 'unsupported dtype "bool"'),
    ({"typestr": "<V8"}, "unsupported dtype"),
    ({"typestr": "bfloat16"}, 'unsupported dtype "bfloat16"'),
    ({"data": (0, False)}, "NULL data pointer with 20 elements"),
    ({"shape": (-1, 5)}, "negative shape"),
    ({"mask": object()}, "masked array"),
    ({"shape": _DROP}, "lacks 'shape'"),
    ({"data": 5}, "lacks"),
])
def test_parse_cai_refusals(d, msg):
    with pytest.raises(ndconv.ArgumentError, match=msg):
        _device.parse(FakeCAI(**d))


def test_parse_cai_empty():
    a = _device.parse(FakeCAI(shape=(0, 5), data=(0, False)))
    assert a.nbytes == 0 and a.ptr == 0


class FakeDLPack:
    """An object exposing only __dlpack__/__dlpack_device__ (as JAX's
    arrays do) over a DLManagedTensor built here, with a deleter that
    counts its calls."""

    deleted = 0

    def __init__(self, device=(2, 0), shape=(3, 4), code=2, bits=32, lanes=1, strides=None, data=0x7f0000002000,
                 offset=64):
        self.device = device
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        t = _device._DLTensor(data, _device._DLDevice(*device), len(shape), _device._DLDataType(code, bits, lanes),
                              self._shape, self._strides, offset)

        def deleter(addr):
            FakeDLPack.deleted += 1

        self._deleter = _device._DELETER(deleter)
        self.m = _device._DLManagedTensor(t, None, self._deleter)
        self.streams = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        api = ctypes.pythonapi
        api.PyCapsule_New.restype = ctypes.py_object
        api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return api.PyCapsule_New(ctypes.addressof(self.m), b"dltensor", None)


def test_parse_dlpack():
    FakeDLPack.deleted = 0
    x = FakeDLPack(device=(2, 1))
    assert _device.is_device_array(x)
    a = _device.parse(x)
    assert (a.ptr, a.shape, a.dtype, a.nbytes, a.device, a.stream) == (0x7f0000002000 + 64, (3, 4), np.float32, 48,
                                                                      1, 0)
    assert x.streams == [1]  # asked to be ready on the legacy default stream
    assert FakeDLPack.deleted == 0
    a.done()
    a.done()
    assert FakeDLPack.deleted == 1  # the producer released once, when the call is done
    assert _device.parse(FakeDLPack(code=0, bits=16)).dtype == np.int16
    assert _device.parse(FakeDLPack(code=5, bits=64)).dtype == np.complex64
    assert _device.parse(FakeDLPack(strides=(4, 1))).nbytes == 48
    assert _device.parse(FakeDLPack(device=(13, 0))).device == 0  # CUDA managed memory


@pytest.mark.parametrize("kw, msg", [
    ({"device": (10, 0)}, "DLPack tensor on a ROCm device"),
    ({"device": (3, 0)}, "CUDA host device"),
    ({"code": 4, "bits": 16}, 'unsupported dtype "bfloat16"'),
    ({"code": 6, "bits": 8}, 'unsupported dtype "bool"'),
    ({"lanes": 2}, "2 lanes"),
    ({"strides": (1, 3)}, "not C-contiguous"),
    ({"data": 0, "offset": 0}, "NULL data pointer"),
])
def test_parse_dlpack_refusals(kw, msg):
    FakeDLPack.deleted = 0
    x = FakeDLPack(**kw)
    with pytest.raises(ndconv.ArgumentError, match=msg):
        _device.parse(x)
    # A tensor taken and refused is released all the same.
    assert FakeDLPack.deleted == (0 if kw.get("device", (2,))[0] not in (2, 13) else 1)


def test_numpy_dlpack_is_host():
    # numpy arrays (and CPU tensors) have __dlpack__ on kDLCPU: host arrays.
    class CPU:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("not called")

    assert not _device.is_device_array(CPU())


NAMED = [(ndconv.gaussian_filter, (1.0,)), (ndconv.uniform_filter, ()), (ndconv.sobel, ()), (ndconv.laplace, ()),
         (ndconv.prewitt, ()), (ndconv.gaussian_laplace, (1.0,)), (ndconv.gaussian_gradient_magnitude, (1.0,)),
         (ndconv.uniform_filter1d, (3,)), (ndconv.gaussian_filter1d, (1.0,))]


def test_named_filters_take_device_arrays():
    # Each reaches the device (no CUDA here: the library's error; with a
    # GPU, the fake pointer is refused by the device's check), and refuses
    # a numpy output for a device input before any device is touched.
    for f, args in NAMED:
        with pytest.raises((RuntimeError, ndconv.ArgumentError), match="(?i)cuda"):
            f(FakeCAI(), *args)
        with pytest.raises(ndconv.ArgumentError, match="a numpy array for a device array input"):
            f(FakeCAI(), *args, output=np.zeros((4, 5), np.float32))
    with pytest.raises(ndconv.ArgumentError, match="a device array \\(FakeCAI\\) for a host array input"):
        ndconv.gaussian_filter(np.zeros((4, 5), np.float32), 1.0, output=FakeCAI())


@pytest.mark.parametrize("kw, msg", [
    ({"device": "cpu"}, "invalid device 'cpu' for a device array \\(FakeCAI on cuda:0\\)"),
    ({"device": "opencl"}, "invalid device 'opencl'"),
    ({"device": "cuda:1"}, "invalid device 'cuda:1': the array is on cuda:0"),
    ({"output": np.zeros((4, 5), np.float32)}, "a numpy array for a device array input"),
    ({"output": bool}, "unsupported output dtype bool"),
    ({"cval": 1j}, "complex-valued cval"),
    ({"mode": ["reflect", "wrap"]}, "A sequence of modes"),
])
def test_correlate_device_refusals(kw, msg):
    # Each is refused before any plan or device is made.
    with pytest.raises(ndconv.ArgumentError, match=msg):
        ndconv.correlate(FakeCAI(), np.ones((3, 3)), **kw)


def test_correlate1d_device_refusals():
    with pytest.raises(ndconv.ArgumentError, match="Invalid origin"):
        ndconv.correlate1d(FakeCAI(), [1, 2, 3], origin=2)
    with pytest.raises(ndconv._filters._AxisError):
        ndconv.correlate1d(FakeCAI(), [1, 2, 3], axis=2)
    with pytest.raises(ndconv.ArgumentError, match="takes 1-D weights"):
        ndconv.correlate1d(FakeCAI(), np.ones((2, 2)))


def test_plan_for_host_arrays_refuses_device_arrays():
    p = ndconv.Plan("correlate", (4, 5), "float32", weights=np.ones(3), device="cpu")
    with pytest.raises(ndconv.ArgumentError, match="made for host arrays"):
        p(FakeCAI())


def test_plan_for_device_arrays_needs_cuda():
    with pytest.raises(ndconv.ArgumentError, match="device for device arrays"):
        ndconv.Plan("correlate", (4, 5), "float32", weights=np.ones(3), device="cpu", device_arrays=True)


def test_plan_device_call_without_gpu():
    # A CUDA plan on a machine without CUDA: the library's own error, no crash.
    try:
        p = ndconv.Plan("correlate", (4, 5), "float32", weights=np.ones(3), device="cuda:0", device_arrays=True)
    except RuntimeError as e:
        assert "cuda" in str(e).lower()
        return
    # With a GPU the fake pointer is not device memory: refused by the device's check.
    with pytest.raises(ndconv.ArgumentError, match="not CUDA device memory"):
        p(FakeCAI())


def _scipy_store(v, dt):
    """One float64 stored into integer dtype dt as scipy 1.10's C code on
    x86-64 stores it, element by element: cvttsd2si (32-bit below uint32
    and for int32, else 64-bit; uint64 from 2^63 as the conversion of
    v − 2^63 with the top bit set), the register's minimum for NaN and
    out-of-range values, then the low bits."""
    def cvt(x, bits):
        if math.isnan(x) or not -2.0 ** (bits - 1) <= x < 2.0 ** (bits - 1):
            return -(2 ** (bits - 1))
        return int(math.trunc(x))
    dt = np.dtype(dt)
    if dt.itemsize < 4 or dt == np.int32:
        r = cvt(v, 32)
    elif dt == np.uint64 and v >= 2.0 ** 63:
        r = cvt(v - 2.0 ** 63, 64) ^ -(2 ** 63)
    else:
        r = cvt(v, 64)
    bits = 8 * dt.itemsize
    r &= (1 << bits) - 1
    if dt.kind == "i" and r >= 1 << (bits - 1):
        r -= 1 << bits
    return r


def test_cast_scipy_host_and_device(monkeypatch):
    # The host's scipy cast and the device's (by the array's library: numpy
    # stands in for CuPy here, with the same functions), each against the
    # rule applied element by element, on the values where it matters:
    # fractions both ways, NaN, ±inf, each type's range edges and beyond,
    # 2^31, 2^63, 2^64.
    import types
    from ndconv import _filters
    monkeypatch.setitem(sys.modules, "cupy", np)
    edges = [0.0, 0.5, -0.5, 1.7, -1.7, 127.9, 128.0, 255.5, 256.0, -129.0, 32767.5, 65535.9, 65536.0,
             2.0**31 - 1, 2.0**31, -2.0**31, -2.0**31 - 1, 2.0**32 + 3, 2.0**53, 2.0**63, 2.0**63 + 2048,
             2.0**64, -2.0**63, -2.0**63 - 4096, 1e300, -1e300, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(3)
    a = np.concatenate([edges, rng.standard_normal(2000) * 10.0 ** rng.integers(0, 20, 2000)])
    for dt in ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]:
        want = np.array([_scipy_store(v, dt) for v in a.tolist()], dtype=object)
        host = _filters._cast_scipy(a.copy(), np.dtype(dt))
        dev = _device.cast_scipy(types.SimpleNamespace(obj=a.copy(), kind="cupy"), dt)
        for name, got in (("host", host), ("device", dev)):
            assert got.dtype == np.dtype(dt), (name, dt)
            bad = [(v, int(g), w) for v, g, w in zip(a.tolist(), got.tolist(), want) if int(g) != w]
            assert not bad, (name, dt, bad[:5])


# --------------------------------------------------- named filters, faked
#
# The named filters' device path without a GPU: numpy stands in for CuPy
# (an ndarray subclass that says it is CuPy's, and a module of numpy's
# functions named cupy), and each device plan runs as the same plan on the
# CPU — whose bits the GPU's equal (DESIGN's exact family). What this checks
# is the Python routing: each pass and each fused plan reaches _on_device,
# intermediates stay device arrays, and the rounding, sums and outputs are
# done by the array's library with the host path's bits.

class FakeCupyArray(np.ndarray):
    __module__ = "cupy"
    __cuda_array_interface__ = property(lambda self: {})
    data = property(lambda self: types.SimpleNamespace(ptr=self.ctypes.data))
    device = property(lambda self: types.SimpleNamespace(id=0))


def _fake_cupy():
    m = types.ModuleType("cupy")
    for name in dir(np):
        if not name.startswith("__"):
            setattr(m, name, getattr(np, name))
    m.ndarray = FakeCupyArray
    m.empty = lambda shape, dtype=float: np.empty(shape, dtype).view(FakeCupyArray)
    m.ascontiguousarray = lambda a: np.ascontiguousarray(a).view(FakeCupyArray)
    m.where = lambda *a: np.where(*a).view(FakeCupyArray)
    stream = types.SimpleNamespace(ptr=7)
    m.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: 0),
                                   get_current_stream=lambda: stream, Device=None)
    return m


class _CPUForDevice:
    """ndconv.Plan with device_arrays=True, run on the CPU."""

    def __init__(self, *args, device=None, **kw):
        assert device == "cuda:0"
        self.plan = ndconv.Plan(*args, device="cpu", **kw)
        self.shape, self.dtype = self.plan.shape, self.plan.dtype

    def _exec_device(self, src, out):
        assert type(src.obj) is FakeCupyArray and src.stream == 7
        r = self.plan._exec(np.ascontiguousarray(src.obj.view(np.ndarray)), None)
        if out is None:
            return r.view(FakeCupyArray)
        out.obj.view(np.ndarray)[...] = r
        return out.obj


def _plan_or_fake(*args, device_arrays=False, **kw):
    return _CPUForDevice(*args, **kw) if device_arrays else ndconv.Plan(*args, **kw)


def test_named_filters_device_path(monkeypatch):
    from ndconv import _filters
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    monkeypatch.setattr(_filters, "Plan", _plan_or_fake)
    monkeypatch.setattr(ndconv, "_cache", type(ndconv._cache)())
    rng = np.random.default_rng(5)
    f32 = rng.standard_normal((9, 11)).astype(np.float32)
    u8 = rng.integers(0, 256, (7, 6, 5)).astype(np.uint8)
    cases = [
        (ndconv.gaussian_filter, f32, (1.5,), {}),
        (ndconv.gaussian_filter, f32, ((1.0, 2.0),), {"order": (1, 0), "mode": ["reflect", "wrap"]}),
        (ndconv.gaussian_filter, u8, (1.0,), {"order": 3}),
        (ndconv.gaussian_filter, u8, (1.0,), {"integer": "scipy"}),
        (ndconv.gaussian_filter, f32, (0.0,), {}),
        (ndconv.gaussian_filter, f32, (1.0,), {"mode": "constant", "cval": 2.0}),
        (ndconv.gaussian_filter1d, f32, (2.0,), {"axis": 0, "order": 1}),
        (ndconv.uniform_filter, u8, (), {"size": (3, 1, 4), "origin": (1, 0, -1)}),
        (ndconv.uniform_filter, u8, (), {"size": 3, "mode": ["nearest", "mirror", "wrap"]}),
        (ndconv.uniform_filter, f32, (), {"size": 3, "output": np.float64}),
        (ndconv.uniform_filter1d, u8, (4,), {"axis": 1}),
        (ndconv.sobel, u8, (), {"axis": 0}),
        (ndconv.sobel, f32, (), {"mode": ["reflect", "constant"], "cval": 1.0}),
        (ndconv.prewitt, u8, (), {"output": np.int16}),
        (ndconv.prewitt, u8, (), {"integer": "scipy"}),
        (ndconv.laplace, f32, (), {}),
        (ndconv.laplace, u8, (), {"axes": (0, 2), "mode": ["reflect", "wrap"], "output": np.float64}),
        (ndconv.uniform_filter, u8, (), {"size": 5, "integer": "scipy"}),
        (ndconv.uniform_filter, u8, (), {"size": (3, 4, 2), "integer": "scipy", "mode": "constant", "cval": 3}),
        (ndconv.gaussian_gradient_magnitude, u8, ((1.0, 2.0, 0.5),), {"axes": (2, 0)}),
        (ndconv.gaussian_laplace, u8, ((1.0, 2.0),), {"axes": (2, 0), "output": np.float32}),
        (ndconv.correlate, f32, (np.zeros((0, 3, 3)),), {}),
        (ndconv.laplace, u8, (), {"mode": "nearest"}),
        (ndconv.laplace, u8, (), {"integer": "scipy"}),
        (ndconv.gaussian_laplace, f32, (1.2,), {}),
        (ndconv.gaussian_laplace, u8, (1.2,), {"output": np.float64}),
        (ndconv.gaussian_gradient_magnitude, f32, (1.0,), {}),
        (ndconv.gaussian_gradient_magnitude, u8, (1.0,), {}),
    ]
    for f, x, args, kw in cases:
        want = f(x, *args, device="cpu", **kw)
        got = f(x.view(FakeCupyArray), *args, **kw)
        what = "%s%s %s on %s" % (f.__name__, args, kw, x.dtype)
        assert type(got) is FakeCupyArray, what
        assert got.dtype == want.dtype and got.shape == want.shape, what
        assert np.array_equal(got.view(np.ndarray), want, equal_nan=True), what
        # Into a device output of the result's dtype.
        out = np.full(want.shape, 99, want.dtype).view(FakeCupyArray)
        kw2 = dict(kw, output=out)
        r = f(x.view(FakeCupyArray), *args, **kw2)
        assert r is out or r is None, what
        assert np.array_equal(out.view(np.ndarray), want, equal_nan=True), what
    # An empty array: an empty device array of the output dtype.
    e = ndconv.gaussian_filter(np.zeros((0, 4), np.float32).view(FakeCupyArray), 1.0)
    assert type(e) is FakeCupyArray and e.shape == (0, 4)
