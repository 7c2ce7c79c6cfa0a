"""Arrays in CUDA device memory — CuPy, PyTorch, Numba, JAX: anything with
``__cuda_array_interface__`` (versions 0 to 3) or ``__dlpack__`` on a CUDA
device — filtered in place on their device: no host copy, the result
written into device memory and returned as the same kind of array.

How the caller's stream is respected: the work is ordered on the array's
stream (``__cuda_array_interface__``'s "stream", PyTorch's current stream,
the legacy default stream for a DLPack producer asked to make its data
ready there), as a CuPy or PyTorch call is: it starts after the work the
caller queued there, what the caller queues there next starts after it,
and the call may return before the result is written. With no stream
(``"stream": None``) the call returns once the result is written.

Nothing here imports CuPy or PyTorch unless the caller's array is one of
theirs (they are looked up in sys.modules, never imported for a test)."""
import ctypes
import math
import sys

import numpy as np

from . import ArgumentError, _DTYPES

# DLPack device types (dlpack.h).
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_KDL_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm",
              11: "ROCm host", 12: "ext_dev", 13: "CUDA managed", 14: "oneAPI", 15: "WebGPU", 16: "Hexagon"}
# DLPack dtype codes: int, uint, float, bfloat, complex, bool.
_KDL_KIND = {0: "i", 1: "u", 2: "f", 5: "c"}

# The C API's stream argument for "no synchronisation" (the producer says
# its data is ready: __cuda_array_interface__ v3's "stream": None).
NO_STREAM = -1


class Device:
    """One parsed device array: its memory (ptr, nbytes), type and shape,
    the CUDA device and stream it lives on, and how to make more of its
    kind (alloc)."""

    __slots__ = ("obj", "ptr", "shape", "dtype", "nbytes", "device", "stream", "kind", "readonly", "release")

    def __init__(self, obj, ptr, shape, dtype, device, stream, kind, readonly=False, release=None, nbytes=None):
        self.obj, self.ptr, self.shape, self.dtype = obj, int(ptr), tuple(int(s) for s in shape), dtype
        self.nbytes = math.prod(self.shape) * dtype.itemsize if nbytes is None else nbytes
        self.device, self.stream, self.kind, self.readonly, self.release = int(device), stream, kind, readonly, release

    def done(self):
        """Releases what parsing took (a DLPack tensor's producer's hold)."""
        r, self.release = self.release, None
        if r is not None:
            r()

    # The named filters read these as they read a numpy array's.
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)


def _module(x):
    return type(x).__module__.split(".", 1)[0]


def _is_cupy(x):
    m = type(x).__module__
    return m == "cupy" or m.startswith("cupy.")


def is_device_array(x):
    """Whether x is an array in device memory (not numpy's): one this module
    takes, or one on a device it refuses with a clear error (parse). CuPy
    arrays and PyTorch tensors are known by their type (reading
    __cuda_array_interface__ builds its dict: a call's cost)."""
    m = type(x).__module__
    if m == "cupy" or m.startswith("cupy."):
        return hasattr(type(x), "__cuda_array_interface__")
    if m == "torch":
        return bool(getattr(x, "is_cuda", False))
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dev = getattr(x, "__dlpack_device__", None)
    if dev is None or not hasattr(x, "__dlpack__"):
        return False
    try:
        kind = int(dev()[0])
    except Exception:
        return False
    return kind != _KDL_CPU


def _dtype(typestr, what):
    try:
        dt = np.dtype(typestr)
    except TypeError:
        raise ArgumentError("unsupported dtype \"%s\" of a %s (supported: %s)"
                            % (typestr, what, ", ".join(sorted(_DTYPES)))) from None
    if dt.kind == "b":
        raise ArgumentError("unsupported dtype \"bool\" of a device array (supported: %s)" % ", ".join(sorted(_DTYPES)))
    if not dt.isnative:
        raise ArgumentError("unsupported %s: byte order %r is not the device's" % (what, typestr))
    if dt.name not in _DTYPES:
        raise ArgumentError("unsupported dtype \"%s\" of a device array (supported: %s)"
                            % (dt, ", ".join(sorted(_DTYPES))))
    return dt


def _c_contiguous(shape, strides, itemsize):
    """Whether byte strides describe a C-contiguous layout (axes of length 1
    may have any stride, as numpy allows)."""
    want = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != want:
            return False
        want *= n
    return True


def parse_cai(x, d=None):
    """The Device of an object with __cuda_array_interface__ (its dict d)."""
    if d is None:
        d = x.__cuda_array_interface__
    if not isinstance(d, dict):
        raise ArgumentError("invalid device array: __cuda_array_interface__ is %s, not a dict" % type(d).__name__)
    try:
        version = int(d.get("version", 0))
        shape = tuple(int(n) for n in d["shape"])
        typestr = d["typestr"]
        ptr, readonly = d["data"]
    except (KeyError, TypeError, ValueError) as e:
        raise ArgumentError("invalid device array: __cuda_array_interface__ lacks %s" % e) from None
    if any(n < 0 for n in shape):
        raise ArgumentError("invalid device array: negative shape %s" % (shape,))
    dt = _dtype(typestr, "device array")
    if d.get("mask") is not None:
        raise ArgumentError("unsupported device array: a masked array (__cuda_array_interface__ mask)")
    size = int(np.prod(shape, dtype=np.int64))
    ptr = int(ptr or 0)
    if ptr == 0 and size:
        raise ArgumentError("invalid device array: NULL data pointer with %d elements" % size)
    strides = d.get("strides")
    if strides is not None and not _c_contiguous(shape, [int(s) for s in strides], dt.itemsize):
        raise ArgumentError("unsupported device array: strides %s are not C-contiguous (copy it first, "
                            "e.g. cupy.ascontiguousarray)" % (tuple(strides),))
    if version >= 3 and "stream" in d:
        stream = d["stream"]
        if stream is None:
            stream = NO_STREAM
        else:
            stream = int(stream)
            if stream == 0:
                raise ArgumentError("invalid device array: __cuda_array_interface__ stream 0 is disallowed "
                                    "(1 is the legacy default stream, 2 the per-thread one)")
            if stream < 0:
                raise ArgumentError("invalid device array: stream %d" % stream)
    else:
        # No stream given (versions before 3): the legacy default stream,
        # which waits for the work of every blocking stream before it.
        stream = 0
    return Device(x, ptr, shape, dt, _cai_device(x), stream, _module(x), bool(readonly))


def _cai_device(x):
    """The CUDA ordinal of x: its library's (CuPy's device.id, PyTorch's
    device.index, Numba's), else DLPack's, else 0 (the library checks the
    pointer's real device and says which it is)."""
    dev = getattr(x, "device", None)
    for attr in ("id", "index"):
        v = getattr(dev, attr, None)
        if isinstance(v, int):
            return v
    f = getattr(x, "__dlpack_device__", None)
    if f is not None:
        try:
            return int(f()[1])
        except Exception:
            pass
    return 0


def parse_torch(x, torch, stream=None):
    """The Device of a PyTorch tensor on a CUDA device (contiguous: a
    non-contiguous one is copied on its device first, by PyTorch). stream,
    where given, is the raw stream already looked up for the call (an
    output made on the input's device and stream). The per-call costs are
    cached or taken through torch's raw-stream query: each is microseconds
    that a 0.3 ms call notices."""
    if x.device.type != "cuda":
        raise ArgumentError("unsupported device array: a PyTorch tensor on %s, not a CUDA device" % x.device)
    dt = _torch_dtype(x)
    if not x.is_contiguous():
        x = x.contiguous()
    if dt.kind == "c" and x.is_conj():
        x = x.resolve_conj()
    index = x.device.index
    if stream is None:
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        stream = raw(index) if raw is not None else torch.cuda.current_stream(x.device).cuda_stream
    return Device(x, x.data_ptr(), tuple(x.shape), dt, index, int(stream), "torch")


# A PyTorch dtype's numpy dtype, once looked up (_torch_dtype).
_TORCH_DTYPES = {}


def _torch_dtype(x):
    """The numpy dtype of the tensor x, or an ArgumentError."""
    dt = _TORCH_DTYPES.get(x.dtype)
    if dt is None:
        dt = _TORCH_DTYPES[x.dtype] = _dtype(str(x.dtype).rsplit(".", 1)[-1], "tensor")
    return dt


# ------------------------------------------------------------------ DLPack


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_capsule_api = None


def _capsule():
    global _capsule_api
    if _capsule_api is None:
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.restype, api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_SetName.restype, api.PyCapsule_SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        _capsule_api = api
    return _capsule_api


def dlpack_dtype(code, bits, lanes):
    """The numpy dtype of a DLPack dtype, or an ArgumentError."""
    kind = _KDL_KIND.get(code)
    if lanes != 1 or kind is None or bits % 8:
        what = {4: "bfloat16", 6: "bool"}.get(code, "code %d, %d bits, %d lanes" % (code, bits, lanes))
        raise ArgumentError("unsupported dtype \"%s\" of a DLPack tensor (supported: %s)"
                            % (what, ", ".join(sorted(_DTYPES))))
    return _dtype("%s%d" % (kind, bits // 8), "DLPack tensor")


def parse_dlpack(x):
    """The Device of an object with __dlpack__ on a CUDA device. It asks
    the producer to make the data ready on the legacy default stream
    (stream=1), which the library then waits for."""
    kind, dev_id = (int(v) for v in x.__dlpack_device__())
    if kind not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ArgumentError("unsupported device array: a DLPack tensor on a %s device (ndconv takes CUDA device "
                            "memory, and host arrays)" % _KDL_NAMES.get(kind, "type %d" % kind))
    try:
        cap = x.__dlpack__(stream=1)
    except TypeError:  # a producer without the stream argument
        cap = x.__dlpack__()
    api = _capsule()
    if not api.PyCapsule_IsValid(cap, b"dltensor"):
        raise ArgumentError("invalid device array: __dlpack__ gave no unused \"dltensor\" capsule")
    addr = api.PyCapsule_GetPointer(cap, b"dltensor")
    m = _DLManagedTensor.from_address(addr)
    t = m.dl_tensor
    # The tensor is ours now: renamed, its producer released by its
    # deleter once the call is done with the memory (DLPack's protocol).
    api.PyCapsule_SetName(cap, b"used_dltensor")

    def release(m=m, addr=addr, cap=cap):
        if m.deleter:
            m.deleter(addr)

    try:
        if t.device.device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            raise ArgumentError("invalid device array: __dlpack_device__ says CUDA, the tensor says device type %d"
                                % t.device.device_type)
        dt = dlpack_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        if t.ndim < 0:
            raise ArgumentError("invalid device array: ndim %d" % t.ndim)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if any(n < 0 for n in shape):
            raise ArgumentError("invalid device array: negative shape %s" % (shape,))
        if t.strides:
            strides = [t.strides[i] * dt.itemsize for i in range(t.ndim)]  # DLPack counts elements
            if not _c_contiguous(shape, strides, dt.itemsize):
                raise ArgumentError("unsupported device array: strides %s (elements) are not C-contiguous"
                                    % (tuple(t.strides[i] for i in range(t.ndim)),))
        ptr = (t.data or 0) + t.byte_offset
        if ptr == 0 and int(np.prod(shape, dtype=np.int64)):
            raise ArgumentError("invalid device array: NULL data pointer")
        return Device(x, ptr, shape, dt, dev_id, 0, "dlpack", release=release)
    except BaseException:
        release()
        raise


def parse_cupy(x, cupy, copy=False):
    """The Device of a CuPy array, read from its attributes (what its
    __cuda_array_interface__ says, without building the dict): its
    current stream is CuPy's current stream. A strided input (copy: the
    array is only read) is copied C-contiguous on its device first, by
    CuPy, as PyTorch tensors are."""
    if not x.flags.c_contiguous and copy:
        x = cupy.ascontiguousarray(x)
    if not x.flags.c_contiguous:
        raise ArgumentError("unsupported device array: strides %s are not C-contiguous (copy it first, "
                            "e.g. cupy.ascontiguousarray)" % (x.strides,))
    dt = x.dtype
    if dt.name not in _DTYPES or not dt.isnative:
        dt = _dtype(dt.str, "device array")
    return Device(x, x.data.ptr, x.shape, dt, x.device.id, cupy.cuda.get_current_stream().ptr, "cupy",
                  nbytes=x.nbytes)


def parse(x, copy=False):
    """The Device of x, an array in device memory (is_device_array), or an
    ArgumentError saying why ndconv cannot take it. copy says x is only
    read (an input), so a strided CuPy array may be copied C-contiguous."""
    if _is_cupy(x):
        cupy = sys.modules.get("cupy")
        if cupy is not None and isinstance(x, cupy.ndarray):
            return parse_cupy(x, cupy, copy)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return parse_torch(x, torch)
    if hasattr(x, "__cuda_array_interface__"):
        return parse_cai(x)
    return parse_dlpack(x)


# ------------------------------------------------------------- allocation


def _from_dlpack_of(x):
    """x's library's from_dlpack (jax.numpy's, …), or None."""
    mod = sys.modules.get(_module(x))
    for where in (mod, getattr(mod, "numpy", None), getattr(mod, "dlpack", None)):
        f = getattr(where, "from_dlpack", None)
        if f is not None:
            return f
    return None


def empty_like_kind(src, shape, dtype):
    """A new device array of shape and dtype on src's device, of src's
    kind where its library can make one (CuPy, PyTorch, Numba), else a
    CuPy array (or PyTorch tensor) handed to src's library through DLPack.
    Returns (array, its Device, finish): finish(array) gives what to return."""
    kind, dev = src.kind, src.device
    torch = sys.modules.get("torch")
    if kind == "torch":
        a = torch.empty(shape, dtype=getattr(torch, dtype.name), device=src.obj.device)
        return a, parse_torch(a, torch, src.stream), None
    if kind == "numba":
        cuda = sys.modules["numba.cuda"] if "numba.cuda" in sys.modules else __import__("numba.cuda").cuda
        a = cuda.device_array(shape, dtype=dtype)
        return a, parse_cai(a), None
    cupy = sys.modules.get("cupy")
    if kind == "cupy" or (cupy is None and torch is None):
        import cupy  # noqa: F811 (an input of another kind with neither library loaded: CuPy or a clear error)
        if cupy.cuda.runtime.getDevice() == dev:
            a = cupy.empty(shape, dtype=dtype)
        else:
            with cupy.cuda.Device(dev):
                a = cupy.empty(shape, dtype=dtype)
        finish = None if kind == "cupy" else _from_dlpack_of(src.obj)
        return a, parse_cupy(a, cupy), finish
    if cupy is not None:
        with cupy.cuda.Device(dev):
            a = cupy.empty(shape, dtype=dtype)
        return a, parse_cupy(a, cupy), _from_dlpack_of(src.obj)
    a = torch.empty(shape, dtype=getattr(torch, dtype.name), device="cuda:%d" % dev)
    return a, parse_torch(a, torch), _from_dlpack_of(src.obj)


def to_host(x):
    """Weights given as a device array, on the host (they are a few
    numbers, read once per plan)."""
    get = getattr(x, "get", None)  # CuPy
    if get is not None and _module(x) == "cupy":
        return get()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    copy = getattr(x, "copy_to_host", None)  # Numba
    if copy is not None:
        return copy()
    raise ArgumentError("unsupported weights: a device array of type %s (give numpy weights)" % type(x).__name__)


# ------------------------------------------------- element-wise, by library


def _lib_of(d):
    """'cupy' or 'torch' for a parsed array whose library does the
    conversions float16 and complex data need on the device."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(d.obj, torch.Tensor):
        return "torch"
    if d.kind == "cupy":
        return "cupy"
    raise ArgumentError("unsupported device array: float16 or complex data of type %s on the device (CuPy arrays "
                        "and PyTorch tensors are taken)" % type(d.obj).__name__)


def astype(d, dtype):
    """A new contiguous array of d's kind with d's values as dtype (exact
    where it widens; round to nearest even where it narrows; a copy where
    the dtype is d's)."""
    if _lib_of(d) == "torch":
        import torch
        return d.obj.to(dtype=getattr(torch, np.dtype(dtype).name), memory_format=torch.contiguous_format, copy=True)
    return d.obj.astype(dtype, order="C")


def library(a):
    """'numpy', 'cupy' or 'torch': the library whose operations the filters
    of several passes use on a (a numpy array, a CuPy array or a torch
    tensor; another kind is refused)."""
    if type(a) is np.ndarray:
        return "numpy"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return "torch"
    if _is_cupy(a):
        return "cupy"
    raise ArgumentError("unsupported device array: a filter of several passes on an array of type %s (CuPy arrays "
                        "and PyTorch tensors are taken; other kinds take correlate, convolve and the filters of "
                        "one plan)" % type(a).__name__)


def _xp(lib):
    """The numpy-like module of lib 'numpy' or 'cupy' (torch's names differ:
    its callers branch on it)."""
    return np if lib == "numpy" else sys.modules["cupy"]


def dtype_of(a):
    """The numpy dtype of a numpy, CuPy or torch array."""
    if library(a) == "torch":
        return _torch_dtype(a)
    return a.dtype


def zeros(like, shape, dtype):
    """A new zeroed array of like's kind (a numpy array, or a parsed
    Device) and dtype."""
    if type(like) is np.ndarray:
        return np.zeros(shape, dtype)
    a, _, finish = empty_like_kind(like, shape, np.dtype(dtype))
    if math.prod(shape) == 0:
        pass  # nothing to zero: any kind (Numba's, JAX's through DLPack) will do
    elif library(a) == "torch":
        a.zero_()
    else:
        a.fill(0)
    return finish(a) if finish is not None else a


def add_to(acc, a):
    """acc += a, in place, in acc's dtype (as numpy's += casts)."""
    if library(acc) == "torch":
        acc.add_(a)
    else:
        acc += a
    return acc


def square_in_place(a):
    lib = library(a)
    if lib == "torch":
        return a.mul_(a)
    return _xp(lib).multiply(a, a, out=a)


def sqrt_in_place(a):
    """a = √a in place, cast into a's dtype (truncated for an integer
    array, as numpy's unsafe cast)."""
    lib = library(a)
    if lib == "torch":
        if a.is_floating_point():
            return a.sqrt_()
        import torch
        return a.copy_(a.to(torch.float64).sqrt().trunc())
    return _xp(lib).sqrt(a, out=a, casting="unsafe")


def parts(d):
    """The real and imaginary parts of a complex array d, each a new
    contiguous real array of d's kind."""
    if _lib_of(d) == "torch":
        return d.obj.real.contiguous(), d.obj.imag.contiguous()
    import cupy
    return cupy.ascontiguousarray(d.obj.real), cupy.ascontiguousarray(d.obj.imag)


def combine(like, re, im, dtype):
    """A new complex array of dtype from its parts (arrays of like's kind)."""
    if _lib_of(like) == "torch":
        import torch
        return torch.complex(re, im).to(getattr(torch, np.dtype(dtype).name))
    import cupy
    out = cupy.empty(re.shape, dtype=dtype)
    out.real[...] = re
    out.imag[...] = im
    return out


def assign(dst, src):
    """Copies src into the device array dst, in place (its library's copy)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dst, torch.Tensor):
        dst.copy_(src if isinstance(src, torch.Tensor) else torch.as_tensor(src, device=dst.device))
        return dst
    dst[...] = src
    return dst


def cast_scipy(d, dtype):
    """A new array of d's kind (float64 values) stored into the integer
    dtype as scipy 1.10 stores it (scipy_int_cast), by the array's
    library."""
    return scipy_int_cast(d.obj, dtype, _lib_of(d))


def round_saturate(a, dtype, lib="numpy"):
    """a (float64 values; a numpy, CuPy or torch array as lib says) into
    dtype as the engines store an integer output: rounded half to even,
    saturated, NaN as 0 (a bool output: a != 0; a float one: astype). The
    host path and the device path both store through here."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return a != 0
    if lib == "torch":
        import torch
        if dt.kind not in "iu":
            return a.to(getattr(torch, dt.name))
        r = torch.nan_to_num(torch.round(a), nan=0.0, posinf=math.inf, neginf=-math.inf)
    else:
        xp = _xp(lib)
        if dt.kind not in "iu":
            return a.astype(dt)
        r = xp.rint(a)
        r[xp.isnan(r)] = 0
    info = np.iinfo(dt)
    hi = float(info.max) if info.bits < 64 else float(np.nextafter(float(info.max), 0.0))
    if lib == "torch":
        return r.clamp_(float(info.min), hi).to(getattr(torch, dt.name))
    xp.clip(r, float(info.min), hi, out=r)
    return r.astype(dt)


def scipy_int_cast(a, dtype, lib="numpy"):
    """a (float64 values; a numpy, CuPy or torch array as lib says) stored
    into the integer dtype as scipy 1.10's C code stores it, ``(type)value``
    compiled for x86-64: truncation toward zero through cvttsd2si, 32-bit
    for types narrower than uint32 (and int32), 64-bit otherwise (uint64
    values from 2^63 converted less 2^63 with the top bit set), the
    register's minimum for NaN and values out of its range, then the low
    bits kept (wrapping). numpy's own astype does not do this for every
    pair (uint32 from a negative value). The host path and the device path
    both store through here."""
    dt = np.dtype(dtype)
    if lib == "torch":
        import torch as xp
        i64, f = xp.int64, lambda v: xp.tensor(v, dtype=xp.float64, device=a.device)
    else:
        xp = _xp(lib)
        i64, f = xp.int64, float
    a = xp.trunc(a)
    lo_min = -(2 ** 63)
    if dt.itemsize < 4 or dt == np.int32:
        ok = (a >= -2.0 ** 31) & (a < 2.0 ** 31)
        t = xp.where(ok, a, f(-2.0 ** 31))
        t = t.to(i64) if lib == "torch" else t.astype(i64)
    else:
        high = a >= 2.0 ** 63 if dt == np.uint64 else None
        if high is not None:
            a = xp.where(high, a - 2.0 ** 63, a)
        ok = (a >= -2.0 ** 63) & (a < 2.0 ** 63)
        t = xp.where(ok, a, f(0.0))
        t = t.to(i64) if lib == "torch" else t.astype(i64)
        t[~ok] = lo_min
        if high is not None:
            t[high] ^= lo_min  # the top bit set, as a uint64's
    # The low bits of the 64-bit result, as dtype: through the signed
    # type of dtype's width (a conversion that wraps), then reinterpreted.
    signed = np.dtype("int%d" % (8 * dt.itemsize))
    if lib == "torch":
        t = t.to(getattr(xp, signed.name))
        return t if dt == signed else t.view(getattr(xp, dt.name))
    t = t.astype(signed)
    return t if dt == signed else t.view(dt)
