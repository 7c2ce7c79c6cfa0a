"""scipy.ndimage's filter API over ndconv's engines: the functions the
package exports. How their results differ from scipy's, and what
``integer=`` does, is in the package docstring (help(ndconv))."""
import functools
import inspect
import numbers
import threading
import warnings
import weakref
from collections.abc import Iterable

import numpy as np

from . import ArgumentError, Plan, _DTYPES, _NATIVE, _cache_lock, _device, _plan

_SCIPY_MODES = ("reflect", "grid-mirror", "mirror", "nearest", "wrap", "grid-wrap", "constant", "grid-constant")
_CONSTANT = ("constant", "grid-constant")
_F64 = np.dtype(np.float64)
# numpy 2 moved AxisError to numpy.exceptions (numpy 1.25 has both).
_AxisError = getattr(getattr(np, "exceptions", None), "AxisError", None) or np.AxisError


# ------------------------------------------------------------- call cache
#
# A warm call of a small filter costs more in this module's argument
# normalisation than in the engine. Each public function is wrapped by
# _cached: a call whose arguments form a key (the input a C-contiguous
# native array, the rest plain scalars, tuples or lists of them, weights
# arrays and an output array or dtype) and whose first run went through
# exactly one engine plan that returned the input filtered, as it is, as the
# result, is remembered as that plan; the next call with an equal key runs
# the plan at once. The plan and the input are the ones the full path used,
# so the results are the same bits. Anything else (several passes, a result
# rounded or summed in numpy, a warning, a data-dependent route) leaves no
# entry and takes the full path every time. An entry holds its plan weakly:
# the plan cache (ndconv._cache) decides how long a plan, and the device
# memory it holds, lives.

_FAST_SIZE = 64
_fast = {}
_rec = threading.local()
_SCALARS = frozenset((int, float, complex, str, bool, type(None)))
_INEXACT = (float, complex, np.inexact)


class _Uncacheable(Exception):
    pass


def _keyof(v):
    """v as part of a call's key, with its type beside it (1, 1.0, True
    and 1+0j are equal in Python and not as arguments; _cached adds the
    type of a plain scalar itself), or _Uncacheable."""
    t = type(v)
    if t is type or isinstance(v, np.dtype):
        return v
    if t is np.ndarray:
        # Weights, a sigma per axis: the values matter.
        return v.dtype, v.shape, v.tobytes()
    if t is tuple or t is list:
        ts = tuple(map(type, v))
        if _SCALARS.issuperset(ts):
            tv = tuple(v)
            if 0 in tv:
                # 0.0 == -0.0, and weights of either sign made plans of
                # their own (the plan cache keys their bytes): repr tells
                # them apart.
                return tv, ts, repr(tv)
            return tv, ts
    if isinstance(v, np.generic):
        return v
    raise _Uncacheable


def _recording():
    """The current thread's stack of call recorders."""
    recs = getattr(_rec, "stack", None)
    if recs is None:
        recs = _rec.stack = []
    return recs


def _record(entry):
    """Tells every call being recorded on this thread what ran: a plan's
    execution (plan, input, output argument, result) or None (something
    that makes the call uncacheable)."""
    for r in _recording():
        r.append(entry)


def _nocache():
    _record(None)


def _cached(fn):
    """fn with the call cache (see above)."""
    name = fn.__name__
    params = list(inspect.signature(fn).parameters)
    out_pos = params.index("output") if "output" in params else None

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        if type(input) is not np.ndarray or input.dtype not in _NATIVE or not input.flags.c_contiguous:
            _nocache()
            return fn(input, *args, **kwargs)
        output = None
        if out_pos is not None:
            if len(args) >= out_pos:
                output = args[out_pos - 1]
            else:
                output = kwargs.get("output")
        key = [name, input.shape, input.dtype]
        try:
            i = 0
            for a in args:
                i += 1
                t = type(a)
                if t in _SCALARS:
                    key += (t, a)
                elif t is np.ndarray and i == out_pos:
                    # An output array: its shape and dtype decide the call.
                    key += (t, (a.shape, a.dtype))
                else:
                    key += (t, _keyof(a))
            for k, a in kwargs.items():
                t = type(a)
                if t in _SCALARS:
                    key += (k, t, a)
                elif t is np.ndarray and k == "output":
                    key += (k, t, (a.shape, a.dtype))
                else:
                    key += (k, t, _keyof(a))
            key = tuple(key)
            hit = _fast.get(key)
        except _Uncacheable:
            _nocache()
            return fn(input, *args, **kwargs)
        plan = hit[0]() if hit is not None else None
        if plan is not None:
            out = output if hit[1] else None
            result = plan._exec(input, out)
            if getattr(_rec, "stack", None):
                _record((plan, input, out, result))
            return result
        # What ran is recorded in this call's recorder and in those of the
        # calls around it (gaussian_filter1d runs correlate1d).
        recs = _recording()
        mine = []
        recs.append(mine)
        try:
            result = fn(input, *args, **kwargs)
        finally:
            recs.pop()
        if len(mine) == 1 and mine[0] is not None and not any(isinstance(v, _INEXACT) and v != v for v in key):
            # (A NaN argument makes a key equal to no other: not kept.)
            plan, x, out, r = mine[0]
            if x is input and r is result and (out is None or (out is output and type(out) is np.ndarray)):
                with _cache_lock:
                    while len(_fast) >= _FAST_SIZE:
                        _fast.pop(next(iter(_fast)))
                    _fast[key] = (weakref.ref(plan), out is not None)
        return result

    wrapper.uncached = fn
    return wrapper


# ---------------------------------------------------------------- helpers


def _scipy_rule(integer):
    if integer == "round":
        return False
    if integer == "scipy":
        return True
    raise ArgumentError("unsupported integer %r (supported: 'round', 'scipy')" % (integer,))


def _normalize_sequence(value, rank):
    """scipy's _ni_support._normalize_sequence."""
    if value is None or type(value) in (int, float, str):
        return [value] * rank
    if not isinstance(value, str) and isinstance(value, Iterable):
        normalized = list(value)
        if len(normalized) != rank:
            raise ArgumentError("sequence argument must have length equal to input rank")
        return normalized
    return [value] * rank


def _get_output(output, input, shape=None, complex_output=False):
    """scipy's _ni_support._get_output, without allocating: (the output
    array or None, the output dtype)."""
    if shape is None:
        shape = input.shape
    on_device = type(input) is _device.Device
    if output is None:
        if complex_output:
            return None, np.promote_types(input.dtype, np.complex64)
        return None, input.dtype
    if type(output) is not np.ndarray and _device.is_device_array(output):
        if not on_device:
            raise ArgumentError("invalid output: a device array (%s) for a host array input (give a numpy array, "
                                "a dtype or None)" % type(output).__name__)
        d = _device.parse(output)
        d.done()
        given = d.shape, d.dtype
    elif isinstance(output, np.ndarray):
        if on_device:
            raise ArgumentError("invalid output: a numpy array for a device array input (give a device array, a "
                                "dtype or None)")
        given = output.shape, output.dtype
    else:
        given = None
    if given is not None:
        if given[0] != tuple(shape):
            raise ArgumentError("invalid output: shape %s, the result has %s (output shape not correct)"
                                % (given[0], tuple(shape)))
        if complex_output and given[1].kind != "c":
            raise ArgumentError("output must have complex dtype")
        return output, given[1]
    if isinstance(output, str):
        dt = np.dtype(np.sctypeDict.get(output, output))
        if complex_output and dt.kind != "c":
            raise ArgumentError("output must have complex dtype")
        return None, dt
    dt = np.dtype(output)
    if complex_output and dt.kind != "c":
        warnings.warn("promoting specified output dtype to complex", UserWarning, stacklevel=4)
        _nocache()
        dt = np.promote_types(dt, np.complex64)
    return None, dt


def _deliver(result, out):
    """result, written into the caller's output array (numpy's, or a
    device array) where there is one."""
    if out is None or result is out:
        return result
    if type(out) is np.ndarray:
        out[...] = result
        return out
    return _device.assign(out, _obj(result))


def _empty(out, dt, like):
    """The result of a filter of an empty array like: out, or a new one of
    like's kind."""
    return out if out is not None else _device.zeros(like, like.shape, dt)


def _input(input):
    """input as the named filters take it: a numpy array, or an array in
    device memory as its parsed Device (its array, shape, dtype and kind),
    which each pass runs on its own device (_filter)."""
    if type(input) is np.ndarray or type(input) is _device.Device:
        return input
    if _device.is_device_array(input):
        d = _device.parse(input, copy=True)
        d.done()  # only its description is kept: each pass parses the array again
        return d
    return np.asarray(input)


def _obj(x):
    """The array itself (a parsed device array's, or x)."""
    return x.obj if type(x) is _device.Device else x


def _dtype(x):
    """The numpy dtype of x: a numpy array, a parsed device array, or a
    pass's result in device memory (a torch tensor's dtype is torch's)."""
    if type(x) is np.ndarray or type(x) is _device.Device:
        return x.dtype
    return _device.dtype_of(x)


def _as_dtype(x, dt):
    """A copy of x (a numpy array or a parsed device array) as dt."""
    return _device.astype(x, dt) if type(x) is _device.Device else x.astype(dt)


def _axis(axis, ndim):
    if not isinstance(axis, (numbers.Integral, np.integer)):
        raise ArgumentError("invalid axis %r: an integer" % (axis,))
    if not -ndim <= axis < ndim:
        # An AxisError (a ValueError and an IndexError), as scipy raises.
        raise _AxisError("invalid axes: axis %d is out of range for a %d-D input" % (axis, ndim))
    return int(axis) % ndim


def _check_axes(axes, ndim):
    """scipy 1.11's axes: None (every axis), an int or a sequence of
    distinct ints; negative ones count from the end."""
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (axes,)
    axes = tuple(_axis(a, ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ArgumentError("axes must be unique")
    return axes


def _mode_name(mode):
    if not isinstance(mode, str):
        raise ArgumentError("boundary mode not supported: %r (one mode here; a sequence of modes is only "
                            "taken by the separable filters)" % (mode,))
    return mode


def _cast_scipy(a, dt):
    """a (float64) as scipy's C code stores it into dtype dt
    (_device.scipy_int_cast for integers)."""
    if dt.kind == "b":
        return a != 0
    if dt.kind not in "iu":
        return a.astype(dt)
    with np.errstate(invalid="ignore"):
        return _device.scipy_int_cast(a, dt)


# ------------------------------------------------------------ engine calls


def _engine_input(x):
    """x as the engines take it: C-contiguous, native, a supported dtype."""
    if x.dtype in _NATIVE and x.flags.c_contiguous:
        return x
    if x.dtype.kind == "b":
        x = x.view(np.uint8)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if x.dtype.name not in _DTYPES:
        raise ArgumentError('unsupported dtype "%s" (supported: %s)' % (x.dtype, ", ".join(sorted(_DTYPES))))
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return x


def _run(op, x, weights, filter, out, odt, mode, cval, origin, axes, extent, device, method, workers):
    """One engine plan over x (cached), into out (an array or None) of
    dtype odt; weights is a float64 or complex128 array, or None with a
    named filter spec."""
    if type(cval) is not float:
        # A plain number for the cache key (a numpy scalar or 0-d array
        # too, which would not hash).
        cval = complex(cval) if np.iscomplexobj(cval) else float(cval)
    if weights is not None:
        key = (op, x.shape, x.dtype, weights.shape, weights.dtype, weights.tobytes(), odt, mode, cval, origin,
               axes, extent, device, method, workers)
        p = _plan(key, lambda: Plan(op, x.shape, x.dtype, weights=weights, output_dtype=odt, mode=mode,
                                    cval=cval, origin=origin, axes=axes, extent=extent, device=device,
                                    method=method, workers=workers))
    else:
        key = (op, x.shape, x.dtype, filter, odt, mode, cval, origin, axes, extent, device, method, workers)
        p = _plan(key, lambda: Plan(op, x.shape, x.dtype, filter=filter, output_dtype=odt, mode=mode,
                                    cval=cval, origin=origin, axes=axes, extent=extent, device=device,
                                    method=method, workers=workers))
    if out is not None and out.shape != p.shape:
        raise ArgumentError("invalid output: shape %s, the result has %s" % (out.shape, p.shape))
    r = p._exec(x, out)
    _record((p, x, out, r))
    return r


def _filter(op, x, weights, filter, out, odt, mode, cval, origin, axes, scipy_int, device, method, workers,
            extent="same"):
    """One correlation on the engines with the output rule: with
    integer='scipy' an integer (or bool) output is computed in float64 and
    cast as scipy casts; a bool output is computed in float64 either way
    (the engines have no bool). x in device memory (a parsed Device, or a
    pass's result) runs on its device (_on_device)."""
    if type(x) is not np.ndarray:
        return _on_device(op, _obj(x), weights, None, out, mode, cval, origin, axes, extent, scipy_int, device,
                          method, workers, odt=odt if out is None else None, filter=filter)
    if scipy_int and odt.kind in "iub" and weights is not None and not _exact_on_engine(x, weights):
        # The float64 sums' order decides where a result near an integer
        # truncates (a length-1 axis or a flat region gives Σw·v with Σw
        # one ulp off 1): scipy's own loops, replayed in numpy.
        return _deliver(_cast_scipy(_scipy_correlate(op, np.asarray(x), weights, mode, cval, origin, axes), odt),
                        out)
    x = _engine_input(x)
    if odt.kind == "b" or (scipy_int and odt.kind in "iu"):
        r = _run(op, x, weights, filter, None, _F64, mode, cval, origin, axes, extent, device, method, workers)
        r = _cast_scipy(r, odt) if scipy_int else _device.round_saturate(r, odt)
        return _deliver(r, out)
    return _run(op, x, weights, filter, out, odt, mode, cval, origin, axes, extent, device, method, workers)


def _exact_on_engine(x, w):
    """Whether every float64 sum of x and w is exact whatever its order
    (integer data and weights, sums below 2^53), so that the engines'
    fused multiply-adds give scipy's float64 result bit for bit."""
    _nocache()  # the route depends on the data
    if x.dtype.kind not in "biu" or w.dtype.kind != "f" or not np.all(np.floor(w) == w):
        return False
    if x.size == 0:
        return True
    big = max(abs(float(np.max(x))), abs(float(np.min(x))))
    return big * float(np.sum(np.abs(w))) < 2.0**52


def _scipy_correlate1d(x, w, axis, mode, cval, origin):
    """scipy 1.10's NI_Correlate1D in float64, in its order of operations:
    symmetric and antisymmetric odd kernels add (or subtract) the paired
    samples before multiplying, other kernels sum from the last tap."""
    n = x.shape[axis]
    size = len(w)
    size1 = size // 2
    size2 = size - size1 - 1
    e = np.moveaxis(_extend(x, axis, size1 + origin, size2 - origin, mode, cval), axis, -1)

    def v(j):
        return e[..., size1 + j:size1 + j + n]

    eps = np.finfo(np.float64).eps
    sym = 0
    if size & 1:
        if all(abs(w[size1 + i] - w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            sym = 1
        elif all(abs(w[size1 + i] + w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            sym = -1
    if sym > 0:
        out = v(0) * w[size1]
        for j in range(-size1, 0):
            out = out + (v(j) + v(-j)) * w[size1 + j]
    elif sym < 0:
        out = v(0) * w[size1]
        for j in range(-size1, 0):
            out = out + (v(j) - v(-j)) * w[size1 + j]
    else:
        out = v(size2) * w[size1 + size2]
        for j in range(-size1, size2):
            out = out + v(j) * w[size1 + j]
    return np.moveaxis(out, -1, axis)


def _scipy_correlate(op, x, w, mode, cval, origin, axes):
    """scipy 1.10's correlation in float64 (NI_Correlate1D for one axis,
    NI_Correlate otherwise: a sum from 0 over the nonzero weights in C
    order), convolution as scipy makes it a correlation."""
    k = w.ndim
    ax = list(range(k)) if axes is None else [a % x.ndim for a in axes]
    origins = [int(o) for o in np.broadcast_to(np.atleast_1d(0 if origin is None else origin), (k,))]
    if op == "convolve":
        w = w[(slice(None, None, -1),) * k]
        origins = [-o - (1 - n % 2) for o, n in zip(origins, w.shape)]
    if k == 1:
        return _scipy_correlate1d(x, w, ax[0], mode, cval, origins[0])
    shape, org = [1] * x.ndim, [0] * x.ndim
    for i, a in enumerate(ax):
        shape[a], org[a] = w.shape[i], origins[i]
    wf = np.transpose(w, np.argsort(ax)).reshape(shape)
    e = np.asarray(x, dtype=np.float64)
    for a in range(x.ndim):
        s1 = shape[a] // 2 + org[a]
        e = _extend(e, a, s1, shape[a] - 1 - s1, mode, cval)
    out = np.zeros(x.shape)
    for idx in zip(*np.nonzero(wf)):
        out = out + e[tuple(slice(i, i + n) for i, n in zip(idx, x.shape))] * wf[idx]
    return out


def _is_complex(v):
    """np.iscomplexobj for a scalar cval, at a fraction of its cost."""
    if type(v) is float or type(v) is int:
        return False
    return np.iscomplexobj(v)


def _weights(weights):
    if type(weights) is np.ndarray and weights.dtype == _F64 and weights.flags.c_contiguous and weights.ndim:
        return weights
    w = np.asarray(weights)
    w = w.astype(np.complex128 if np.iscomplexobj(w) else np.float64, copy=False)
    if w.ndim == 0:
        raise ArgumentError("invalid kernel: a 0-D array is not a kernel")
    return np.ascontiguousarray(w)


# ------------------------------------------------------- device arrays


def _device_name(device, arr):
    """The CUDA device a device array's call runs on: its own."""
    mine = "cuda:%d" % arr.device
    if device in ("auto", "cuda", mine):
        return mine
    if isinstance(device, str) and device.startswith("cuda:"):
        raise ArgumentError("invalid device %r: the array is on %s (device='auto' runs it there)" % (device, mine))
    raise ArgumentError("invalid device %r for a device array (%s on %s): it runs on its own device "
                        "(device='auto' or %r)" % (device, type(arr.obj).__name__, mine, mine))


def _on_device(op, input, weights, axis, output, mode, cval, origin, axes, extent, scipy_int, device, method,
               workers, odt=None, filter=None):
    """correlate/convolve (axis None) or correlate1d/convolve1d on an array
    in CUDA device memory, on its device with no host copy; the result is
    an array of the input's kind (or output, a device array). With a named
    filter's spec (filter; weights None) it is that filter's plan, as the
    host path's."""
    if type(weights) is not np.ndarray and _device.is_device_array(weights):
        weights = _device.to_host(weights)
    w = _weights(weights) if filter is None else None
    src = _device.parse(input, copy=True)
    try:
        ndim = len(src.shape)
        if ndim == 0:
            raise ArgumentError("invalid shape: a 0-D array has no axis to filter")
        if axis is not None:
            if w.ndim != 1 or w.shape[0] < 1:
                raise ArgumentError("no filter weights given" if w.size == 0 else
                                    "invalid kernel: %s1d takes 1-D weights, not %d-D" % (op, w.ndim))
            axes = (_axis(axis, ndim),)
            origin = int(origin)
            n = len(w)
            if origin < -(n // 2) or origin > (n - 1) // 2:
                raise ArgumentError("Invalid origin; origin must satisfy -(len(weights) // 2) <= origin <= "
                                    "(len(weights)-1) // 2")
            mode = _mode_name(mode)
        else:
            if not isinstance(mode, str):
                raise ArgumentError("A sequence of modes is not supported")
            if axes is not None:
                axes = tuple(int(a) for a in np.atleast_1d(axes))
            if origin is not None:
                origin = _origin_key(origin)
        complex_out = src.dtype.kind == "c" or (w is not None and w.dtype.kind == "c")
        if not complex_out and _is_complex(cval):
            raise ArgumentError("Cannot provide a complex-valued cval when the input is real.")
        out = None
        if output is None and odt is not None:
            pass  # a float16 call's float32 twin
        elif output is None:
            odt = np.promote_types(src.dtype, np.complex64) if complex_out else src.dtype
        elif type(output) is not np.ndarray and _device.is_device_array(output):
            out = _device.parse(output)  # a parsed Device: the plan takes it as it is
            odt = out.dtype
        elif isinstance(output, np.ndarray):
            raise ArgumentError("invalid output: a numpy array for a device array input (give a device array, "
                                "a dtype or None)")
        else:
            _, odt = _get_output(output, np.empty(0, src.dtype), complex_output=complex_out)
        if odt.kind == "b":
            raise ArgumentError("unsupported output dtype bool for a device array (the engines have no bool)")
        if odt.name not in _DTYPES:
            raise ArgumentError('unsupported output dtype "%s"' % odt)
        dev = _device_name(device, src)
        if w is not None and w.size == 0 and axis is None and extent == "same":
            _zero_size_weights(w, ndim, axes)
            r = _device.zeros(src, src.shape, odt)  # scipy's result
            return r if out is None else _device.assign(out.obj, r)
        if scipy_int and odt.kind in "iu":
            # As the host path: the float64 result, stored into the
            # integer dtype by scipy's truncation and wrapping, on the
            # device by the array's library.
            r = _on_device(op, src.obj, w, axis, None, mode, cval, origin, axes, extent, False, dev, method,
                           workers, odt=_F64, filter=filter)
            r = _device.cast_scipy(_device.parse(r), odt)
            return r if out is None else _device.assign(out.obj, r)
        if src.dtype.kind == "c" or odt.kind == "c":
            if filter is not None:
                # (The named filters run complex data as 1-D passes of weights.)
                raise ArgumentError("unsupported: named filter %s of complex data in one plan" % filter)
            return _complex_on_device(op, src, w, axis, None if out is None else out.obj, odt, mode, cval, origin,
                                      axes, extent, scipy_int, dev, method, workers)
        if src.dtype == np.float16 or odt == np.float16:
            # As the host path runs float16 on a GPU: the input widened to
            # float32 (exact), the float32 twin, its result rounded to
            # float16 (to nearest even) — here by the array's library.
            out = out.obj if out is not None else None
            x32 = _device.astype(src, np.float32) if src.dtype == np.float16 else src.obj
            o32 = None if odt == np.float16 else out
            r = _on_device(op, x32, w, axis, o32, mode, cval, origin, axes, extent, scipy_int, dev, method, workers,
                           odt=np.dtype(np.float32) if odt == np.float16 else odt, filter=filter)
            if odt != np.float16:
                return r
            r = _device.astype(_device.parse(r), np.float16)
            return r if out is None else _device.assign(out, r)
        if type(cval) is not float:
            cval = complex(cval) if np.iscomplexobj(cval) else float(cval)
        what = (w.shape, w.dtype, w.tobytes()) if filter is None else filter
        key = ("device", op, src.shape, src.dtype, what, odt, mode, cval, origin, axes, extent, dev, method, workers)
        p = _plan(key, lambda: Plan(op, src.shape, src.dtype, weights=w, filter=filter, output_dtype=odt, mode=mode,
                                    cval=cval, origin=origin, axes=axes, extent=extent, device=dev, method=method,
                                    workers=workers, device_arrays=True))
        if src.nbytes == 0 and out is None:
            # Nothing to compute: an empty array of the input's kind.
            return _device.empty_like_kind(src, p.shape, p.dtype)[0]
        return p._exec_device(src, out)
    finally:
        src.done()


def _complex_on_device(op, src, w, axis, out, odt, mode, cval, origin, axes, extent, scipy_int, dev, method,
                       workers):
    """Complex data or weights on the device, as the host path computes
    them (nd.RealParts): with x = xr + i·xi and w = wr + i·wi (conjugated
    for correlation), re = corr(xr, wr) − corr(xi, wi) and im = corr(xr, wi)
    + corr(xi, wr), each a real problem into the accumulator's type
    (float64 for wide data or a complex128 output, else float32), combined
    there by the array's library (one operation each) and rounded once to
    the output's parts."""
    if odt.kind != "c":
        raise ArgumentError("output must have complex dtype")
    spart = np.empty(0, src.dtype).real.dtype
    opart = np.empty(0, odt).real.dtype
    wide = spart.name in ("float64", "int32", "uint32", "int64", "uint64") or opart == _F64
    acc = _F64 if wide else np.dtype(np.float32)
    cv = complex(cval)
    if src.dtype.kind == "c":
        xr, xi = _device.parts(src)
    else:
        xr, xi = src.obj, None
    wr, wi = np.ascontiguousarray(w.real), None
    if w.dtype.kind == "c":
        wi = np.ascontiguousarray(-w.imag if op == "correlate" else w.imag)

    def corr(x, weights, c):
        return _on_device(op, x, weights, axis, None, mode, c, origin, axes, extent, False, dev, method, workers,
                          odt=acc)

    re = corr(xr, wr, cv.real)
    im = corr(xr, wi, cv.real) if wi is not None else None
    if xi is not None:
        b = corr(xi, wr, cv.imag)
        if wi is not None:
            re = re - corr(xi, wi, cv.imag)
            im = im + b
        else:
            im = b
    r = _device.combine(src, re, im, odt)
    return r if out is None else _device.assign(out, r)


# ------------------------------------------------- correlate and convolve


def _zero_size_weights(w, ndim, axes):
    """scipy's rule for weights with an axis of length 0 (checked before
    the result, zeros, is made): their other axes must be one per filtered
    axis."""
    if len([n for n in w.shape if n > 0]) != (ndim if axes is None else len(axes)):
        raise ArgumentError("invalid kernel: weights of shape %s have an axis of length 0 and the rest do not "
                            "span the filtered axes (filter weights array has incorrect shape)" % (w.shape,))


def _origin_key(origin):
    if type(origin) is int:
        return origin
    o = tuple(int(v) for v in np.atleast_1d(origin))
    return 0 if all(v == 0 for v in o) else (o[0] if len(o) == 1 and np.ndim(origin) == 0 else o)


def _nd(op, input, weights, output, mode, cval, origin, axes, extent, integer, device, method, workers):
    scipy_int = _scipy_rule(integer)
    if type(input) is not np.ndarray and _device.is_device_array(input):
        return _on_device(op, input, weights, None, output, mode, cval, origin, axes, extent, scipy_int, device,
                          method, workers)
    x = np.asarray(input)
    w = _weights(weights)
    if x.ndim == 0:
        raise ArgumentError("invalid shape: a 0-D array has no axis to filter")
    if not isinstance(mode, str):
        raise ArgumentError("A sequence of modes is not supported")
    out, odt = _get_output(output, x, complex_output=x.dtype.kind == "c" or w.dtype.kind == "c",
                           shape=x.shape if extent == "same" else None if output is None else output.shape)
    if x.dtype.kind != "c" and w.dtype.kind != "c" and _is_complex(cval):
        raise ArgumentError("Cannot provide a complex-valued cval when the input is real.")
    if x.size == 0 and extent == "same":
        if w.size == 0:
            raise ArgumentError("no filter weights given")
        return _empty(out, odt, x)
    if axes is not None:
        axes = tuple(int(a) for a in np.atleast_1d(axes))
    if w.size == 0 and extent == "same":
        _zero_size_weights(w, x.ndim, axes)
        return _deliver(np.zeros(x.shape, odt), out)
    return _filter(op, x, w, None, out, odt, mode, cval, _origin_key(origin), axes, scipy_int, device, method,
                   workers, extent=extent)


@_cached
def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, axes=None,
              *, extent="same", integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.correlate. ``weights`` spans ``axes`` (default the
    first weights.ndim axes; scipy needs weights.ndim == input.ndim);
    ``extent`` 'valid' or 'full' gives scipy.signal's output sizes. Complex
    data or weights give a complex output (weights conjugated, as scipy
    and numpy.correlate do). See help(ndconv) for how results differ from
    scipy's and for ``integer``."""
    return _nd("correlate", input, weights, output, mode, cval, origin, axes, extent, integer, device, method,
               workers)


@_cached
def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, axes=None,
             *, extent="same", integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.convolve (see correlate)."""
    return _nd("convolve", input, weights, output, mode, cval, origin, axes, extent, integer, device, method,
               workers)


def correlate_many(inputs, weights, mode="reflect", cval=0.0, origin=0, axes=None,
                   *, extent="same", integer="round", device="auto", method="auto", workers=0):
    """correlate for each array of inputs (any iterable: a list, a
    generator reading files) with the same weights and options, returned
    as a list in order. Arrays of one shape and dtype share one plan and
    the device's context (the plan cache), so a thousand small images
    plan, and compile GPU kernels, once. Each result equals correlate's
    for its array."""
    return [correlate(x, weights, None, mode, cval, origin, axes, extent=extent, integer=integer, device=device,
                      method=method, workers=workers) for x in inputs]


def convolve_many(inputs, weights, mode="reflect", cval=0.0, origin=0, axes=None,
                  *, extent="same", integer="round", device="auto", method="auto", workers=0):
    """convolve for each array of inputs (see correlate_many)."""
    return [convolve(x, weights, None, mode, cval, origin, axes, extent=extent, integer=integer, device=device,
                     method=method, workers=workers) for x in inputs]


def _1d(op, input, weights, axis, output, mode, cval, origin, integer, device, method, workers):
    scipy_int = _scipy_rule(integer)
    if type(input) is not np.ndarray and _device.is_device_array(input):
        return _on_device(op, input, weights, axis, output, mode, cval, origin, None, "same", scipy_int, device,
                          method, workers)
    x = np.asarray(input)
    w = _weights(weights)
    if w.ndim != 1 or w.shape[0] < 1:
        raise ArgumentError("no filter weights given" if w.size == 0 else
                            "invalid kernel: %s1d takes 1-D weights, not %d-D" % (op, w.ndim))
    if x.ndim == 0:
        _axis(axis, 0)
    axis = _axis(axis, x.ndim)
    out, odt = _get_output(output, x, complex_output=x.dtype.kind == "c" or w.dtype.kind == "c")
    if x.dtype.kind != "c" and w.dtype.kind != "c" and _is_complex(cval):
        raise ArgumentError("Cannot provide a complex-valued cval when the input is real.")
    origin = int(origin)
    n = len(w)
    if origin < -(n // 2) or origin > (n - 1) // 2:
        raise ArgumentError("Invalid origin; origin must satisfy -(len(weights) // 2) <= origin <= "
                            "(len(weights)-1) // 2")
    mode = _mode_name(mode)
    if x.size == 0:
        return _empty(out, odt, x)
    return _filter(op, x, w, None, out, odt, mode, cval, origin, (axis,), scipy_int, device, method,
                   workers)


@_cached
def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0,
                *, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.correlate1d (see correlate)."""
    return _1d("correlate", input, weights, axis, output, mode, cval, origin, integer, device, method, workers)


@_cached
def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0,
               *, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.convolve1d (see correlate)."""
    return _1d("convolve", input, weights, axis, output, mode, cval, origin, integer, device, method, workers)


# ------------------------------------------------------ separable filters


def _fusable(x, modes, cval, npasses, scipy_int, odt):
    """Whether a separable filter may run as one fused named-filter plan:
    real data, one mode, scipy's result up to rounding (the borders of a
    constant mode with a nonzero cval differ once there are several
    passes), and not integer='scipy' with an integer output."""
    if x.dtype.kind not in "biuf" or odt.kind not in "fiu":
        return False
    if any(not isinstance(m, str) or m != modes[0] for m in modes):
        return False
    if scipy_int and odt.kind in "iu":
        return False
    if npasses > 1 and modes[0] in _CONSTANT and cval != 0:
        return False
    return True


def _work_dtype(odt, scipy_int):
    """The dtype the passes of a separable filter store their
    intermediates in: the output's (as scipy) except that an integer
    output under integer='round' keeps float64 and rounds once at the end."""
    if odt.kind in "iub" and not scipy_int:
        return _F64
    return odt


def _finish(r, out, odt):
    """The passes' result r (numpy's or a device array) as odt, into out."""
    if _device.dtype_of(r) != odt:
        r = _device.round_saturate(r, odt, _device.library(r))
    return _deliver(r, out)


def _pass1d(x, w, axis, wdt, mode, cval, origin, scipy_int, device, method, workers):
    """One 1-D correlation of the passes: x into a new array of wdt."""
    return _filter("correlate", x, w, None, None, wdt, _mode_name(mode), cval, origin, (axis,),
                   scipy_int, device, method, workers)


def _gaussian_kernel1d(sigma, order, radius):
    """scipy's _gaussian_kernel1d (the derivative-of-Gaussian weights)."""
    if order < 0:
        raise ArgumentError("order must be non-negative")
    exponent_range = np.arange(order + 1)
    sigma2 = sigma * sigma
    x = np.arange(-radius, radius + 1)
    phi_x = np.exp(-0.5 / sigma2 * x ** 2)
    phi_x = phi_x / phi_x.sum()
    if order == 0:
        return phi_x
    q = np.zeros(order + 1)
    q[0] = 1
    D = np.diag(exponent_range[1:], 1)
    P = np.diag(np.ones(order) / -sigma2, -1)
    Q_deriv = D + P
    for _ in range(order):
        q = Q_deriv.dot(q)
    q = (x[:, None] ** exponent_range).dot(q)
    return q * phi_x


def _gaussian_weights(sigma, order, truncate, radius):
    sd = float(sigma)
    lw = int(truncate * sd + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ArgumentError("Radius must be a nonnegative integer.")
    # Correlation weights: the kernel reversed, as scipy correlates it.
    return np.ascontiguousarray(_gaussian_kernel1d(sigma, int(order), lw)[::-1])


@_cached
def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                      *, radius=None, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.gaussian_filter1d: a correlate1d with scipy's
    derivative-of-Gaussian weights (see help(ndconv))."""
    return correlate1d(input, _gaussian_weights(sigma, order, truncate, radius), axis, output, mode, cval, 0,
                       integer=integer, device=device, method=method, workers=workers)


def _common_truncate(axes, truncate):
    """One truncate that gives every (sigma, radius) of axes its radius
    (radius None: the one truncate gives), for the fused plan, whose
    Gaussian takes one truncate for all axes; None where there is none, and
    the filter runs as 1-D passes. Radius is int(truncate·sigma + 0.5), as
    scipy's."""
    truncate = float(truncate)
    want = [int(truncate * s + 0.5) if r is None else r for s, r in axes]
    if all(r is None for _, r in axes):
        return truncate
    if any(not isinstance(r, numbers.Integral) or r < 0 for r in want):
        return None
    lo = max((r - 0.5) / s for (s, _), r in zip(axes, want))
    hi = min((r + 0.5) / s for (s, _), r in zip(axes, want))
    for t in (truncate, (lo + hi) / 2):
        if t > 0 and all(int(t * s + 0.5) == r for (s, _), r in zip(axes, want)):
            return t
    return None


@functools.lru_cache(maxsize=256)
def _gaussian_spec(sigmas, orders, radiuses, truncate):
    """The fused plan's spec for these axes' Gaussians, or None where one
    plan cannot give them (an order above 2, radii no one truncate gives)."""
    t = _common_truncate(list(zip(sigmas, radiuses)), truncate)
    if t is None or not all(isinstance(o, (int, np.integer)) and 0 <= o <= 2 for o in orders):
        return None
    return "gaussian:sigma=%s,order=%s,truncate=%r" % (_spec(sigmas), _spec(orders, int), t)


def _spec(values, kind=float):
    return "x".join(repr(kind(v)) for v in values)


@_cached
def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.gaussian_filter, with scipy 1.11's ``axes``: sigma,
    order, mode and radius may be given per axis (of ``axes``). One fused
    separable plan where it can (rounded once at the end; scipy rounds
    into the output dtype after every axis); see help(ndconv)."""
    scipy_int = _scipy_rule(integer)
    x = _input(input)
    out, odt = _get_output(output, x)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    orders = _normalize_sequence(order, n)
    sigmas = _normalize_sequence(sigma, n)
    modes = _normalize_sequence(mode, n)
    radiuses = _normalize_sequence(radius, n)
    todo = [(axes[i], sigmas[i], orders[i], modes[i], radiuses[i]) for i in range(n) if sigmas[i] > 1e-15]
    for m in modes:
        _mode_name(m)
    if x.size == 0:
        return _empty(out, odt, x)
    if not todo:
        return _deliver(_as_dtype(x, odt) if out is None else x, out)
    spec = _gaussian_spec(tuple(float(s) for _, s, _, _, _ in todo), tuple(o for _, _, o, _, _ in todo),
                          tuple(r for _, _, _, _, r in todo), float(truncate))
    if spec is not None and _fusable(x, [m for _, _, _, m, _ in todo], cval, len(todo), scipy_int, odt):
        return _filter("correlate", x, None, spec, out, odt, todo[0][3], cval, None, tuple(a for a, _, _, _, _ in todo),
                       False, device, method, workers)
    wdt = _work_dtype(odt, scipy_int)
    r = x
    for ax, s, o, m, rad in todo:
        r = _pass1d(r, _gaussian_weights(s, o, truncate, rad), ax, wdt, m, cval, 0, scipy_int, device, method,
                    workers)
    return _finish(r, out, odt)


def _border_index(p, n, rule):
    """The samples that positions p (an int64 array, at any distance from
    the edge) read on an axis of length n under rule ('reflect', 'mirror',
    'nearest' or 'wrap'): DESIGN.md §1's border rules; None for another
    rule."""
    if rule == "reflect":
        q = np.mod(p, 2 * n)
        return np.where(q >= n, 2 * n - 1 - q, q)
    if rule == "mirror":
        if n == 1:
            return np.zeros_like(p)
        q = np.mod(p, 2 * n - 2)
        return np.where(q >= n, 2 * n - 2 - q, q)
    if rule == "nearest":
        return np.clip(p, 0, n - 1)
    if rule == "wrap":
        return np.mod(p, n)
    return None


# The rule each of scipy's mode names that read samples follows.
_SAMPLE_RULES = {"reflect": "reflect", "grid-mirror": "reflect", "mirror": "mirror", "nearest": "nearest",
                 "wrap": "wrap", "grid-wrap": "wrap"}


def _extend(x, axis, before, after, mode, cval):
    """x extended along axis by before and after samples as scipy's line
    buffers extend it (the border rules of DESIGN.md §1)."""
    n = x.shape[axis]
    p = np.arange(-before, n + after)
    if mode in _SAMPLE_RULES:
        return np.take(x, _border_index(p, n, _SAMPLE_RULES[mode]), axis=axis).astype(np.float64)
    if mode in _CONSTANT:
        e = np.take(x, np.clip(p, 0, n - 1), axis=axis).astype(np.float64)
        shape = [1] * x.ndim
        shape[axis] = len(p)
        outside = ((p < 0) | (p >= n)).reshape(shape)
        return np.where(outside, float(cval), e)
    raise ArgumentError("boundary mode not supported")


def _uniform1d_scipy(x, size, axis, mode, cval, origin):
    """scipy's uniform_filter1d in float64, its running sum replayed: the
    first window summed in order, then each step adds the entering sample
    and takes away the leaving one, and every sum is divided by size (so
    integer data gives the exact mean, which scipy's cast truncates)."""
    size1 = size // 2 + origin
    e = _extend(x, axis, size1, size - size1 - 1, mode, cval)
    e = np.moveaxis(e, axis, -1)
    n = x.shape[axis]
    tmp = np.zeros(e.shape[:-1])
    for k in range(size):
        tmp = tmp + e[..., k]
    steps = np.empty(e.shape[:-1] + (n,))
    steps[..., 0] = tmp
    steps[..., 1:] = e[..., size:size + n - 1] - e[..., :n - 1]
    # cumsum adds in order, as scipy's loop does.
    return np.moveaxis(np.cumsum(steps, axis=-1) / size, -1, axis)


def _uniform_pass(x, size, axis, wdt, mode, cval, origin, scipy_int, device, method, workers):
    mode = _mode_name(mode)
    xdt = _dtype(x)
    if xdt.kind == "c":
        w = np.full(size, 1.0 / size)
        return _pass1d(x, w, axis, wdt, mode, cval, origin, scipy_int, device, method, workers)
    if scipy_int and wdt.kind in "iub" and type(x) is np.ndarray:
        return _cast_scipy(_uniform1d_scipy(x, size, axis, mode, cval, origin), wdt)
    if scipy_int and wdt.kind in "iu" and xdt.kind in "iub" and float(cval) == int(cval):
        # On the device, integer data: scipy's running sums of integers
        # are exact, so its mean is the exact window sum (the engines'
        # float64 sum of ones) divided by size once, then stored by
        # scipy's cast, all by the array's library.
        r = _filter("correlate", x, np.ones(size), None, None, _F64, mode, cval, origin, (axis,), False, device,
                    method, workers)
        return _device.scipy_int_cast(r / size, wdt, _device.library(r))
    # (Otherwise, on the device, integer='scipy' stores the plan's float64
    # results as scipy casts them, as _on_device does for any plan.)
    return _filter("correlate", x, None, "uniform:size=%d" % size, None, wdt, mode, cval, origin, (axis,),
                   False, device, method, workers)


def _uniform_origin(size, origin):
    if (size // 2 + origin < 0) or (size // 2 + origin >= size):
        raise ArgumentError("invalid origin")


@_cached
def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0,
                     *, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.uniform_filter1d (see help(ndconv))."""
    scipy_int = _scipy_rule(integer)
    x = _input(input)
    if x.ndim == 0:
        _axis(axis, 0)
    axis = _axis(axis, x.ndim)
    if size < 1:
        raise ArgumentError("incorrect filter size")
    out, odt = _get_output(output, x, complex_output=x.dtype.kind == "c")
    origin = int(origin)
    _uniform_origin(size, origin)
    mode = _mode_name(mode)
    if x.size == 0:
        return _empty(out, odt, x)
    if scipy_int or x.dtype.kind == "c" or odt.kind == "b":
        return _finish(_uniform_pass(x, int(size), axis, odt, mode, cval, origin, scipy_int, device, method,
                                     workers), out, odt)
    return _filter("correlate", x, None, "uniform:size=%d" % size, out, odt, mode, cval, origin, (axis,),
                   False, device, method, workers)


@_cached
def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0,
                   *, axes=None, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.uniform_filter, with scipy 1.11's ``axes``; size, mode
    and origin may be given per axis (see help(ndconv))."""
    scipy_int = _scipy_rule(integer)
    x = _input(input)
    out, odt = _get_output(output, x, complex_output=x.dtype.kind == "c")
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    sizes = _normalize_sequence(size, n)
    origins = _normalize_sequence(origin, n)
    modes = _normalize_sequence(mode, n)
    todo = [(axes[i], int(sizes[i]), int(origins[i]), modes[i]) for i in range(n) if sizes[i] > 1]
    for ax, s, o, m in todo:
        _uniform_origin(s, o)
        _mode_name(m)
    if x.size == 0:
        return _empty(out, odt, x)
    if not todo:
        return _deliver(_as_dtype(x, odt) if out is None else x, out)
    if _fusable(x, [t[3] for t in todo], cval, len(todo), scipy_int, odt):
        o = tuple(t[2] for t in todo)
        return _filter("correlate", x, None, "uniform:size=%s" % _spec((t[1] for t in todo), int), out, odt,
                       todo[0][3], cval, 0 if not any(o) else o, tuple(t[0] for t in todo), False, device,
                       method, workers)
    wdt = _work_dtype(odt, scipy_int)
    r = x
    for ax, s, o, m in todo:
        r = _uniform_pass(r, s, ax, wdt, m, cval, o, scipy_int, device, method, workers)
    return _finish(r, out, odt)


def _derivative(name, smooth, input, axis, output, mode, cval, integer, device, method, workers):
    scipy_int = _scipy_rule(integer)
    x = _input(input)
    if x.ndim == 0:
        _axis(axis, 0)
    axis = _axis(axis, x.ndim)
    out, odt = _get_output(output, x)
    modes = _normalize_sequence(mode, x.ndim)
    for m in modes:
        _mode_name(m)
    if x.size == 0:
        return _empty(out, odt, x)
    if _fusable(x, modes, cval, x.ndim, scipy_int, odt):
        return _filter("correlate", x, None, "%s:axis=%d" % (name, axis), out, odt, modes[0], cval, None, None,
                       False, device, method, workers)
    wdt = _work_dtype(odt, scipy_int)
    r = _pass1d(x, np.array([-1.0, 0.0, 1.0]), axis, wdt, modes[axis], cval, 0, scipy_int, device, method,
                workers)
    for ii in range(x.ndim):
        if ii != axis:
            r = _pass1d(r, np.asarray(smooth, dtype=np.float64), ii, wdt, modes[ii], cval, 0, scipy_int, device,
                        method, workers)
    return _finish(r, out, odt)


@_cached
def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0,
          *, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.sobel; mode may be given per axis (see help(ndconv))."""
    return _derivative("sobel", [1, 2, 1], input, axis, output, mode, cval, integer, device, method, workers)


@_cached
def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0,
            *, integer="round", device="auto", method="auto", workers=0):
    """scipy.ndimage.prewitt; mode may be given per axis (see help(ndconv))."""
    return _derivative("prewitt", [1, 1, 1], input, axis, output, mode, cval, integer, device, method, workers)


def generic_laplace(input, derivative2, output=None, mode="reflect", cval=0.0, extra_arguments=(),
                    extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_laplace: the sum over axes of
    ``derivative2(input, axis, output, mode, cval, *extra_arguments,
    **extra_keywords)`` (any callable; ndconv's correlate1d,
    gaussian_filter and the like run on the engines), summed in the output
    dtype as scipy sums; over ``axes`` (scipy 1.15), mode per axis of them."""
    if extra_keywords is None:
        extra_keywords = {}
    x = _input(input)
    out, odt = _get_output(output, x)
    src = _obj(x)
    axes = _check_axes(axes, x.ndim)
    if not axes:
        return _deliver(_as_dtype(x, odt) if out is None else src, out)
    modes = _normalize_sequence(mode, len(axes))
    output = _first_term(derivative2, src, axes[0], out, odt, modes[0], cval, extra_arguments, extra_keywords)
    for ax, m in zip(axes[1:], modes[1:]):
        tmp = derivative2(src, ax, odt, m, cval, *extra_arguments, **extra_keywords)
        _device.add_to(output, tmp)
    return output


def _first_term(derivative, src, axis, out, odt, mode, cval, extra_arguments, extra_keywords):
    """The generic filters' first term, into out where the caller gave
    one (scipy's call), else a new array of odt (src's kind)."""
    if out is None:
        return derivative(src, axis, odt, mode, cval, *extra_arguments, **extra_keywords)
    derivative(src, axis, out, mode, cval, *extra_arguments, **extra_keywords)
    return out


def generic_gradient_magnitude(input, derivative, output=None, mode="reflect", cval=0.0, extra_arguments=(),
                               extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_gradient_magnitude: the square root of the sum
    over axes of the squares of ``derivative(input, axis, output, mode,
    cval, *extra_arguments, **extra_keywords)``, computed in the output
    dtype as scipy computes it; over ``axes`` (scipy 1.15)."""
    if extra_keywords is None:
        extra_keywords = {}
    x = _input(input)
    out, odt = _get_output(output, x)
    src = _obj(x)
    axes = _check_axes(axes, x.ndim)
    if not axes:
        return _deliver(_as_dtype(x, odt) if out is None else src, out)
    modes = _normalize_sequence(mode, len(axes))
    output = _device.square_in_place(_first_term(derivative, src, axes[0], out, odt, modes[0], cval,
                                                 extra_arguments, extra_keywords))
    for ax, m in zip(axes[1:], modes[1:]):
        tmp = derivative(src, ax, odt, m, cval, *extra_arguments, **extra_keywords)
        _device.add_to(output, _device.square_in_place(tmp))
    _device.sqrt_in_place(output)
    return output


def _laplacian(named, derivative2, x, output, mode, cval, axes, scipy_int, device, method, workers, extra=(),
               magnitude=False):
    """laplace, gaussian_laplace or gaussian_gradient_magnitude over axes
    (checked): the fused named filter where it can run (every axis), else
    scipy's generic_* over ndconv's 1-D filters (into float64 under
    integer='round', then rounded once)."""
    out, odt = _get_output(output, x)
    modes = _normalize_sequence(mode, len(axes))
    for m in modes:
        _mode_name(m)
    if x.size == 0:
        return _empty(out, odt, x)
    if (named is not None and axes == tuple(range(x.ndim)) and x.ndim > 0
            and _fusable(x, modes, cval, x.ndim, scipy_int, odt)):
        return _filter("correlate", x, None, named, out, odt, modes[0], cval, None, None, False, device, method,
                       workers)
    wdt = _work_dtype(odt, scipy_int)
    generic = generic_gradient_magnitude if magnitude else generic_laplace
    r = generic(_obj(x), derivative2, wdt, modes, cval, extra_arguments=extra, axes=axes)
    return _finish(r, out, odt)


def _sigmas_on(sigma, axes, ndim):
    """scipy 1.15's sigma for gaussian_laplace over axes: one per axis of
    axes, 0 (not filtered) on the others."""
    sigma = _normalize_sequence(sigma, len(axes))
    if len(axes) == ndim:
        return sigma
    full = [0] * ndim
    for s, ax in zip(sigma, axes):
        full[ax] = s
    return full


@_cached
def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None, integer="round", device="auto",
            method="auto", workers=0):
    """scipy.ndimage.laplace, with scipy 1.15's ``axes``; mode may be given
    per axis (of axes; see help(ndconv))."""
    scipy_int = _scipy_rule(integer)
    integer = "scipy" if scipy_int else "round"

    def derivative2(input, axis, output, mode, cval):
        return correlate1d(input, [1, -2, 1], axis, output, mode, cval, 0, integer=integer, device=device,
                           method=method, workers=workers)

    x = _input(input)
    return _laplacian("laplace", derivative2, x, output, mode, cval, _check_axes(axes, x.ndim), scipy_int, device,
                      method, workers)


def _gaussian_kw(kwargs):
    bad = set(kwargs) - {"truncate", "radius"}
    if bad:
        raise TypeError("unexpected keyword argument(s) %s (gaussian_filter's truncate and radius are taken)"
                        % ", ".join(sorted(bad)))


@_cached
def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, integer="round",
                     device="auto", method="auto", workers=0, **kwargs):
    """scipy.ndimage.gaussian_laplace, with scipy 1.15's ``axes`` (kwargs:
    gaussian_filter's truncate, radius); sigma and mode may be given per
    axis (of axes; see help(ndconv))."""
    _gaussian_kw(kwargs)
    scipy_int = _scipy_rule(integer)
    x = _input(input)

    def derivative2(input, axis, output, mode, cval, sigma):
        order = [0] * x.ndim
        order[axis] = 2
        return gaussian_filter(input, sigma, order, output, mode, cval, integer=integer, device=device,
                               method=method, workers=workers, **kwargs)

    # scipy's composition of gaussian_filter calls (each one fused plan),
    # so that the result is that of gaussian_filter's orders summed, bit
    # for bit, as scipy's is.
    axes = _check_axes(axes, x.ndim)
    return _laplacian(None, derivative2, x, output, mode, cval, axes, scipy_int, device, method, workers,
                      extra=(_sigmas_on(sigma, axes, x.ndim),))


@_cached
def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None,
                                integer="round", device="auto", method="auto", workers=0, **kwargs):
    """scipy.ndimage.gaussian_gradient_magnitude, with scipy 1.15's
    ``axes`` (kwargs: gaussian_filter's truncate, radius); mode may be
    given per axis of axes, sigma per axis of the input (as scipy, the
    derivatives along axes smooth every axis; see help(ndconv))."""
    _gaussian_kw(kwargs)
    scipy_int = _scipy_rule(integer)
    x = _input(input)

    def derivative(input, axis, output, mode, cval, sigma):
        order = [0] * x.ndim
        order[axis] = 1
        return gaussian_filter(input, sigma, order, output, mode, cval, integer=integer, device=device,
                               method=method, workers=workers, **kwargs)

    # scipy's composition (see gaussian_laplace).
    # (scipy's sigma applies to every axis here, filtered or not: only
    # gaussian_laplace sets the others' to 0.)
    return _laplacian(None, derivative, x, output, mode, cval, _check_axes(axes, x.ndim), scipy_int, device, method,
                      workers, extra=(sigma,), magnitude=True)
