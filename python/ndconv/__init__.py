"""ndconv for numpy: scipy.ndimage's filter API (correlate, convolve,
correlate1d, convolve1d, gaussian_filter, gaussian_filter1d,
gaussian_laplace, gaussian_gradient_magnitude, generic_laplace,
generic_gradient_magnitude, uniform_filter, uniform_filter1d, sobel,
prewitt, laplace) on ndconv's engines (CPU, CUDA, OpenCL), with scipy
1.10's signatures and defaults and scipy 1.11's ``axes=`` for
gaussian_filter and uniform_filter.

Every function takes, as keywords, ``integer=`` ('round' or 'scipy'),
``device=`` ('auto', 'cpu', 'cuda', 'cuda:N', 'opencl', 'opencl:P:D'),
``method=`` ('auto', 'direct', 'separable', 'fft', 'gemm', 'winograd') and ``workers=`` beside
scipy's arguments. Arrays go to the engines without copies when they are
C-contiguous and in native byte order; other layouts are copied once, and an
output sharing memory with the input is filled through a temporary. Every
numeric dtype is taken (bool, uint8 … uint64, int8 … int64, float16,
float32, float64, complex64, complex128; correlation conjugates complex
weights, as scipy 1.10 and numpy.correlate do). A real output dtype asked
for complex data is promoted to complex with a UserWarning, as scipy does.
Empty arrays and zero-length axes give scipy's empty results.

Where results differ from scipy.ndimage:

- float64 data computes in float64 with a fused multiply-add per tap: it
  differs from scipy by that rounding only (about 1e-16 relative). float32
  (and smaller) data computes in float32, as CuPy does, and differs by
  float32 rounding.
- Integer outputs round half to even and saturate (OpenCV's rule, what
  scipy#8757 asks for) with the default ``integer='round'``; scipy
  truncates toward zero and wraps. ``integer='scipy'`` gives scipy 1.10's
  integer results bit for bit: every 1-D pass computed in float64 and
  stored as scipy's C cast stores it, the separable filters' intermediates
  in the output dtype, and scipy's own loops replayed in float64 where the
  order of the sums decides a truncation (weights that are not integers).
  It changes nothing for float or complex outputs.
- The separable filters (gaussian_filter, uniform_filter, sobel, prewitt,
  laplace) run as one fused plan where they can and round once at the end
  (scipy rounds into the output dtype after every 1-D pass). A sequence of
  modes, mode 'constant' with a nonzero cval over several axes, complex
  data, ``integer='scipy'`` with an integer output and orders above 2 run
  scipy's own sequence of 1-D passes instead. gaussian_laplace and
  gaussian_gradient_magnitude are scipy's compositions of gaussian_filter.
- correlate and convolve take weights with fewer axes than the input (they
  span ``axes``, default the first ones), where scipy needs one weights
  axis per input axis, and ``extent='valid'|'full'``; they follow the
  reflect rule where scipy 1.10's N-D correlate maps a kernel that
  overhangs an axis by more than about three lengths wrongly.

Arrays in CUDA device memory (CuPy, PyTorch, Numba: ``__cuda_array_interface__``;
JAX and others: ``__dlpack__`` on a CUDA device) are filtered on their own device
with no host copy by every filter here, on the caller's stream, and come back
as the same kind of array (``output=`` may be a device array), with the host
path's bits; see python/README.md.

Errors raise ArgumentError (an invalid or unsupported request or argument;
a ValueError, and a RuntimeError too, as scipy raises RuntimeError for some
of the same mistakes) or RuntimeError (anything else, such as an
unavailable device or an internal error the C API recovered) with the
message the ndconv CLI prints. Plans are cached: repeated calls with the
same shapes, dtypes, weights and options reuse the prepared plan and its
device context; a repeated call that ran as one plan also skips the
argument checks it passed before (same plan, same bits).
"""
import collections
import ctypes
import json
import os
import threading

import numpy as np

__all__ = ["correlate", "convolve", "correlate_many", "convolve_many", "correlate1d", "convolve1d", "gaussian_filter", "gaussian_filter1d",
           "gaussian_laplace", "gaussian_gradient_magnitude", "generic_laplace", "generic_gradient_magnitude",
           "uniform_filter", "uniform_filter1d", "sobel", "prewitt", "laplace", "Plan", "ArgumentError",
           "library_path"]

try:
    from ._version import version as __version__
except ImportError:  # a source tree (install.sh, PYTHONPATH=python): setup.py writes _version.py
    __version__ = "0.0.0+source"

_DTYPES = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
           "float16", "float32", "float64", "complex64", "complex128"}
# The same dtypes in native byte order (a set lookup costs far less than
# dtype.name).
_NATIVE = frozenset(np.dtype(n) for n in _DTYPES)


def library_path():
    """The shared library this package loads: $NDCONV_LIBRARY, or
    libndconv.so beside this file (built by setup.py or install.sh)."""
    return os.environ.get("NDCONV_LIBRARY") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "libndconv.so")


def _load():
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("ndconv: cannot load %s (%s); build it with python/install.sh "
                          "or pip install ./python" % (path, e)) from None
    c_char_p, c_int, c_int64, c_void_p = ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_void_p
    lib.ndconv_plan_new.argtypes = [c_char_p, ctypes.POINTER(ctypes.c_double), c_int64,
                                    ctypes.POINTER(c_int64), c_char_p, c_int]
    lib.ndconv_plan_new.restype = c_int
    lib.ndconv_plan_info.argtypes = [c_int64, c_char_p, c_int, c_char_p, c_int]
    lib.ndconv_plan_info.restype = c_int
    lib.ndconv_plan_execute.argtypes = [c_int64, c_void_p, c_int64, c_void_p, c_int64, c_char_p, c_int]
    lib.ndconv_plan_execute.restype = c_int
    lib.ndconv_plan_free.argtypes = [c_int64, c_char_p, c_int]
    lib.ndconv_plan_free.restype = c_int
    if hasattr(lib, "ndconv_plan_execute_device"):  # a library before it has none: host arrays only
        lib.ndconv_plan_execute_device.argtypes = [c_int64, ctypes.c_uint64, c_int64, ctypes.c_uint64, c_int64, c_int64,
                                                   c_char_p, c_int]
        lib.ndconv_plan_execute_device.restype = c_int
    return lib


_lib = _load()
_ERRLEN = 1024
_tls = threading.local()


def _errbuf():
    """This thread's error buffer (one per call would cost more than a
    small filter)."""
    b = getattr(_tls, "errbuf", None)
    if b is None:
        b = _tls.errbuf = ctypes.create_string_buffer(_ERRLEN)
    return b


class ArgumentError(ValueError, RuntimeError):
    """An invalid or unsupported argument. It is a ValueError, as ndconv's
    argument errors always were, and a RuntimeError too, because
    scipy.ndimage raises RuntimeError for several of the same mistakes
    (an unknown mode, a sequence of modes where one is needed, a wrong
    output shape): code written against either catches it."""


def _check(code, errbuf):
    if code == 0:
        return
    msg = errbuf.value.decode("utf-8", "replace")
    raise (ArgumentError if code == 1 else RuntimeError)(msg)


def _jfloat(v):
    """v for the JSON request: JSON has no NaN or infinity, which the
    library reads as the strings "nan", "inf" and "-inf"."""
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


class Plan:
    """A prepared correlation, convolution or named filter for inputs of
    one shape and dtype. Calling it filters an array; it keeps its device
    (a GPU context) alive until closed. The module-level functions create
    and cache plans; build one yourself to hold it explicitly::

        p = ndconv.Plan("correlate", (2048, 2048), "float32", weights=w)
        out = p(x)

    Several weights (``weights=[w1, w2, …]``, one shape) make a filter
    bank: its output has one value per kernel in a trailing axis, shape
    (…, K), or with ``bank_layout="planar"`` in a leading one, shape
    (K, …), a plane per kernel as PyTorch and cuDNN lay out channels —
    ``np.moveaxis(interleaved, -1, 0)`` bit for bit, contiguous. Planar
    banks run on host arrays (not with ``device_arrays``).

    An output that shares memory with the input (output=x, or a view of
    it) is computed into a temporary and copied, as scipy does. A NaN cval
    with a constant border gives NaN wherever a nonzero weight reaches past
    the border, as scipy does (0 in an integer output: NaN rounds to 0).
    """

    # Class defaults: __del__ and close run on a plan whose __init__ failed.
    _handle = None

    def __init__(self, op, shape, dtype, weights=None, factors=None, filter=None, *,
                 output_dtype=None, mode="reflect", cval=0.0, origin=0, axes=None,
                 extent="same", device="auto", method="auto", workers=0, device_arrays=False,
                 bank_layout="interleaved"):
        dtype = np.dtype(dtype)
        if output_dtype is not None:
            output_dtype = np.dtype(output_dtype).name
        cval = complex(cval) if np.iscomplexobj(cval) else float(cval)
        req = {"op": op, "shape": [int(s) for s in shape], "dtype": dtype.name,
               "out_dtype": output_dtype or "", "border": str(mode), "cval": _jfloat(np.real(cval)),
               "cval_imag": _jfloat(np.imag(cval)),
               "axes": None if axes is None else [int(a) for a in np.atleast_1d(axes)],
               "mode": extent, "device": device, "method": method, "workers": int(workers)}
        if bank_layout != "interleaved":
            req["bank_layout"] = str(bank_layout)
        if device_arrays:
            # Also for arrays in the device's memory (CuPy, PyTorch, …):
            # the device must be a CUDA device named in full (cuda:N).
            req["device_arrays"] = True
        origin = [int(o) for o in np.atleast_1d(0 if origin is None else origin)]
        req["origin"] = None if origin == [0] else origin
        if filter is not None:
            req["filter"] = filter
            w = np.zeros(0)
        elif factors is not None:
            fs = [np.asarray(f, dtype=np.float64).ravel() for f in factors]
            req.update(factors=True, kernel_shape=[len(f) for f in fs])
            w = np.concatenate(fs) if fs else np.zeros(0)
        else:
            ks = weights if isinstance(weights, (list, tuple)) else [weights]
            wdt = np.complex128 if any(np.iscomplexobj(k) for k in ks) else np.float64
            ks = [np.asarray(k, dtype=wdt) for k in ks]
            if not ks or any(k.shape != ks[0].shape for k in ks):
                raise ArgumentError("invalid kernel: give one array of weights, or a list of arrays of one shape")
            req.update(kernel_shape=list(ks[0].shape), nkernels=len(ks), complex_weights=wdt == np.complex128)
            # Complex weights travel as pairs of float64 (their memory).
            w = np.ascontiguousarray(np.concatenate([k.ravel() for k in ks])).view(np.float64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        errbuf = ctypes.create_string_buffer(_ERRLEN)
        handle = ctypes.c_int64()
        code = _lib.ndconv_plan_new(json.dumps(req, allow_nan=False).encode(),
                                    w.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                    w.size, ctypes.byref(handle), errbuf, _ERRLEN)
        _check(code, errbuf)
        self._handle = handle.value
        buf = ctypes.create_string_buffer(4096)
        _check(_lib.ndconv_plan_info(self._handle, buf, 4096, errbuf, _ERRLEN), errbuf)
        info = json.loads(buf.value)
        self.input_shape, self.input_dtype = tuple(req["shape"]), dtype
        self.shape, self.dtype = tuple(info["shape"]), np.dtype(info["dtype"])
        self.method, self.device = info["method"], info["device"]
        self.device_arrays = bool(device_arrays)

    def __call__(self, input, output=None):
        """Filters input into output (a new array when None) and returns it.
        A plan made with ``device_arrays=True`` (and a CUDA device) also
        takes arrays in device memory (CuPy, PyTorch, …) and returns the
        same kind of array."""
        handle = self._handle
        if handle is None:
            raise ValueError("invalid plan: it is closed")
        if type(input) is not np.ndarray and _device.is_device_array(input):
            if not self.device_arrays:
                raise ArgumentError("invalid input: a device array (%s), and this plan was made for host arrays "
                                    "(make it with device_arrays=True and device='cuda:N')" % type(input).__name__)
            src = _device.parse(input)
            try:
                if src.shape != self.input_shape or src.dtype != self.input_dtype:
                    raise ArgumentError("invalid input: %s %s does not match the plan's %s %s"
                                        % (src.dtype, src.shape, self.input_dtype, self.input_shape))
                return self._exec_device(src, output)
            finally:
                src.done()
        x = _native(input)
        if x.shape != self.input_shape or x.dtype != self.input_dtype:
            raise ArgumentError("invalid input: %s %s does not match the plan's %s %s"
                             % (x.dtype, x.shape, self.input_dtype, self.input_shape))
        if not isinstance(output, np.ndarray):
            output = None
        elif output.shape != self.shape:
            raise ArgumentError("invalid output: shape %s, the result has %s" % (output.shape, self.shape))
        return self._exec(x, output)

    def _exec(self, x, output):
        """Filters x (C-contiguous, native, the plan's shape and dtype)
        into output (an array of the result's shape, or None)."""
        handle = self._handle
        if handle is None:
            raise ValueError("invalid plan: it is closed")
        # An output sharing memory with the input goes through a temporary
        # (the engines would read what they had written); may_share_memory
        # compares bounds, cheap and never a false "no".
        direct = (output is not None and output.dtype == self.dtype and output.flags.c_contiguous
                  and output.flags.writeable and output.dtype.isnative and not np.may_share_memory(output, x))
        out = output if direct else np.empty(self.shape, self.dtype)
        errbuf = _errbuf()
        code = _lib.ndconv_plan_execute(handle, _address(x), x.nbytes, _address(out), out.nbytes, errbuf, _ERRLEN)
        if code:
            _check(code, errbuf)
        if output is not None and not direct:
            output[...] = out
            return output
        return out

    def _exec_device(self, src, output):
        """Filters src (a parsed device array, _device.Device, of the plan's
        shape and dtype) into output (a device array of the result's shape
        and dtype, or None: a new one of src's kind) and returns it."""
        handle = self._handle
        if handle is None:
            raise ValueError("invalid plan: it is closed")
        finish, dst = None, None
        if output is None:
            out, dst, finish = _device.empty_like_kind(src, self.shape, self.dtype)
        elif type(output) is _device.Device:
            out, dst = output.obj, output  # parsed by the caller
        elif type(output) is not np.ndarray and _device.is_device_array(output):
            out, dst = output, _device.parse(output)
        else:
            raise ArgumentError("invalid output: %s for a device array input (give a device array, a dtype or None)"
                                % type(output).__name__)
        try:
            if dst.shape != self.shape or dst.dtype != self.dtype:
                raise ArgumentError("invalid output: %s %s, the result is %s %s"
                                    % (dst.dtype, dst.shape, self.dtype, self.shape))
            if dst.readonly:
                raise ArgumentError("invalid output: a read-only device array")
            if dst.device != src.device:
                raise ArgumentError("invalid output: on cuda:%d, the input on cuda:%d" % (dst.device, src.device))
            if src.nbytes and dst.nbytes and src.ptr < dst.ptr + dst.nbytes and dst.ptr < src.ptr + src.nbytes:
                # The engines read inputs around each output they write: the
                # result goes to a new array, then into output on its stream
                # (ordered after ours), as scipy does for overlap.
                tmp = self._exec_device(src, None)
                out[...] = tmp
                return out
            errbuf = _errbuf()
            code = _lib.ndconv_plan_execute_device(handle, src.ptr, src.nbytes, dst.ptr, dst.nbytes, src.stream,
                                                   errbuf, _ERRLEN)
            if code:
                _check(code, errbuf)
        finally:
            if dst is not None:
                dst.done()
        return finish(out) if finish is not None else out

    def close(self):
        """Releases the plan; calling it afterwards is an error."""
        handle, self._handle = self._handle, None
        if handle is not None and _lib is not None:
            errbuf = ctypes.create_string_buffer(_ERRLEN)
            _check(_lib.ndconv_plan_free(handle, errbuf, _ERRLEN), errbuf)

    def __del__(self):
        try:
            self.close()
        except Exception:
            # At interpreter exit the module's globals may be gone; a plan
            # the library no longer knows has nothing left to release.
            pass

    def __repr__(self):
        if self._handle is None and not hasattr(self, "method"):
            return "ndconv.Plan(not made)"
        return "ndconv.Plan(%s %s -> %s %s, %s on %s%s)" % (self.input_dtype, self.input_shape, self.dtype,
                                                           self.shape, self.method, self.device,
                                                           "" if self._handle is not None else ", closed")


_c_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _address(a):
    """The address of a C-contiguous array's data: through the buffer
    protocol where the array is writable and not empty (half the cost of
    a.ctypes.data, a small call's largest single cost), else a.ctypes.data."""
    try:
        return _addressof(_c_char_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data


def _native(a):
    """a as a C-contiguous array in native byte order (a itself when it is)."""
    a = np.asarray(a)
    if a.dtype in _NATIVE and a.flags.c_contiguous and a.ndim:
        return a
    if a.ndim == 0:
        # As scipy.ndimage and the CLI (np.ascontiguousarray would make it 1-D).
        raise ArgumentError("invalid shape: a 0-D array has no axis to filter")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype.name not in _DTYPES:
        # Let the library name the dtype in its usual message.
        return a
    return np.ascontiguousarray(a)


_cache = collections.OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 32


def _plan(key, make):
    with _cache_lock:
        p = _cache.get(key)
        if p is not None:
            _cache.move_to_end(key)
            return p
    p = make()
    with _cache_lock:
        _cache[key] = p
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return p


from . import _device  # noqa: E402
from ._filters import (correlate, convolve, correlate_many, convolve_many, correlate1d, convolve1d, gaussian_filter,  # noqa: E402
                       gaussian_filter1d, gaussian_laplace, gaussian_gradient_magnitude,
                       generic_laplace, generic_gradient_magnitude, uniform_filter, uniform_filter1d,
                       sobel, prewitt, laplace)
