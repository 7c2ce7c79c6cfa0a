"""Device arrays on a CUDA GPU with CuPy and PyTorch (not collected by
pytest: run it on a machine with a GPU, CuPy and torch):

    NDCONV_LIBRARY=…/libndconv.so PYTHONPATH=python python3 python/tests/gpu_arrays_device.py [out.json]

It checks that CuPy and torch arrays in give the same bits as the host
path (the CPU engines, and ndconv's CUDA engines on host arrays), on the
caller's streams, into output= device arrays, with the plan cache, and
the errors; then it times 8192² float32 with 7×7 against
cupyx.scipy.ndimage.correlate on the same array. Exit status 1 on any
failed check."""
import json
import os
import sys
import time
import traceback

import numpy as np

import ndconv
from ndconv import _device

import cupy
import cupyx.scipy.ndimage as cndi
import torch

failures = []
results = {"checks": [], "timing": {}}


def check(name, ok, detail=""):
    results["checks"].append({"name": name, "ok": bool(ok), "detail": str(detail)})
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)), flush=True)
    if not ok:
        failures.append(name)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def raises(name, fn, kind, text):
    try:
        fn()
    except kind as e:
        check(name, text in str(e), "message %r lacks %r" % (str(e), text))
        return
    except Exception as e:
        check(name, False, "raised %s: %s" % (type(e).__name__, e))
        return
    check(name, False, "no error")


rng = np.random.default_rng(7)

# A kernel that keeps a stream busy for a number of clock cycles: the
# stream checks write their input only after it.
spin = cupy.RawKernel(r'''
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}''', "spin")


def host(shape, dt):
    dt = np.dtype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0, 200, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


# ------------------------------------------------------------ correctness

w7 = rng.standard_normal((7, 7))
cases = [
    ("correlate", np.float32, (301, 257), w7, {}),
    ("convolve", np.float32, (256, 300), w7, {"mode": "wrap"}),
    ("correlate", np.float64, (129, 200), rng.standard_normal((5, 3)), {"mode": "constant", "cval": 1.5}),
    ("correlate", np.float16, (200, 128), rng.standard_normal((3, 3)), {"mode": "nearest"}),
    ("correlate", np.uint8, (200, 128), np.ones((3, 3)) / 9, {}),
    ("correlate", np.int16, (64, 70), rng.standard_normal((3, 5)), {"mode": "mirror", "output": np.float32}),
    ("correlate", np.complex64, (100, 90), rng.standard_normal((3, 3)), {}),
    ("correlate", np.float32, (40, 50, 60), rng.standard_normal((3, 3, 3)), {"origin": 1}),
    ("correlate", np.float32, (1000, 1000), np.ones((1, 31)) / 31, {}),
    # Complex weights and complex cval: nd.RealParts on the device.
    ("correlate", np.float32, (64, 70), rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)), {}),
    ("convolve", np.complex64, (50, 61), rng.standard_normal((3, 5)) - 2j * rng.standard_normal((3, 5)),
     {"mode": "constant", "cval": 1 + 2j}),
    ("correlate", np.complex128, (40, 30, 20), rng.standard_normal((3, 3, 3)) * (1 + 1j), {"mode": "wrap"}),
    ("correlate", np.uint8, (64, 64), 1j * np.ones((3, 3)), {"output": np.complex128}),
    ("correlate", np.complex64, (64, 64), rng.standard_normal((5, 5)), {"output": np.complex128, "cval": 0.5 - 1j,
                                                                         "mode": "constant"}),
]
for op, dt, shape, w, kw in ([] if os.environ.get("GPU_ARRAYS_ONLY_TIMING") == "1" else cases):
    name = "%s %s %s w%s %s" % (op, np.dtype(dt).name, shape, w.shape, kw)
    try:
        x = host(shape, dt)
        f = getattr(ndconv, op)
        want = f(x, w, device="cpu", **kw)
        want_cuda = f(x, w, device="cuda", **kw)
        got_cp = f(cupy.asarray(x), w, **kw)
        check("cupy type " + name, isinstance(got_cp, cupy.ndarray), type(got_cp))
        check("cupy = host cpu bits " + name, same_bits(cupy.asnumpy(got_cp), want),
              np.max(np.abs(cupy.asnumpy(got_cp).astype(np.complex128) - want)))
        check("cupy = host cuda bits " + name, same_bits(cupy.asnumpy(got_cp), want_cuda))
        tx = torch.from_numpy(x).cuda()
        got_t = f(tx, w, **kw)
        check("torch type " + name, isinstance(got_t, torch.Tensor) and got_t.is_cuda, type(got_t))
        check("torch = host cpu bits " + name, same_bits(got_t.cpu().numpy(), want))
    except Exception as e:
        check("case " + name, False, traceback.format_exc())

def correctness():
    global want, x, xt, xc
    # 1-D, axis, and gaussian_filter1d (a correlate1d)
    x = host((300, 200), np.float32)
    for axis in (0, 1, -1):
        want = ndconv.correlate1d(x, [1, 2, 3, 4, 5], axis=axis, device="cpu")
        got = ndconv.correlate1d(cupy.asarray(x), [1, 2, 3, 4, 5], axis=axis)
        check("correlate1d axis %d" % axis, same_bits(got.get(), want))
    wc1 = np.array([1 + 2j, -0.5j, 3, 0.25 - 1j])
    for op in ("correlate1d", "convolve1d"):
        xcx = host((30, 40), np.complex64)
        check("%s complex weights on cupy" % op, same_bits(getattr(ndconv, op)(cupy.asarray(xcx), wc1, axis=0).get(),
                                                          getattr(ndconv, op)(xcx, wc1, axis=0, device="cpu")))
    check("gaussian_filter1d on cupy", same_bits(ndconv.gaussian_filter1d(cupy.asarray(x), 2.0).get(),
                                                 ndconv.gaussian_filter1d(x, 2.0, device="cpu")))

    # integer='scipy' on the device: the float64 result stored by scipy's
    # truncation and wrapping (the array's library), as the host path does.
    xs = (rng.standard_normal((90, 70)) * 3e4).astype(np.float64)
    ws = rng.standard_normal((3, 3))
    for dt in (None, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        for kind in ("cupy", "torch"):
            src = cupy.asarray(host((64, 48), np.uint8)) if dt is None else cupy.asarray(xs)
            hx = cupy.asnumpy(src)
            dev = src if kind == "cupy" else torch.as_tensor(src, device="cuda")
            want = ndconv.correlate(hx, ws, output=dt, integer="scipy", device="cpu")
            got = ndconv.correlate(dev, ws, output=dt, integer="scipy")
            got = got.get() if kind == "cupy" else got.cpu().numpy()
            check("integer='scipy' %s output %s" % (kind, np.dtype(dt).name if dt else "uint8 (input's)"),
                  same_bits(got, want), "%s vs %s" % (got.dtype, want.dtype))
    o = cupy.zeros((300, 200), cupy.int16)
    ndconv.correlate1d(cupy.asarray(x * 1000), [1, -2, 3], axis=0, output=o, integer="scipy")
    check("integer='scipy' correlate1d into a cupy output", same_bits(
        o.get(), ndconv.correlate1d(x * 1000, [1, -2, 3], axis=0, output=np.int16, integer="scipy", device="cpu")))

    # Weights given as a device array (as cupyx callers do).
    check("cupy weights", same_bits(ndconv.correlate(cupy.asarray(x), cupy.asarray(w7)).get(),
                                    ndconv.correlate(x, w7, device="cpu")))

    # output= device arrays, a dtype, and an output overlapping the input.
    xc = cupy.asarray(x)
    want = ndconv.correlate(x, w7, device="cpu")
    o = cupy.empty_like(xc)
    r = ndconv.correlate(xc, w7, output=o)
    check("output= cupy array is returned", r is o)
    check("output= cupy array bits", same_bits(o.get(), want))
    o64 = ndconv.correlate(xc, w7, output=np.float64)
    check("output=float64 dtype", o64.dtype == np.float64 and same_bits(o64.get(), ndconv.correlate(x, w7, output=np.float64, device="cpu")))
    ot = torch.empty(x.shape, dtype=torch.float32, device="cuda")
    r = ndconv.correlate(torch.from_numpy(x).cuda(), w7, output=ot)
    check("output= torch tensor", r is ot and same_bits(ot.cpu().numpy(), want))
    xi = xc.copy()
    r = ndconv.correlate(xi, w7, output=xi)
    check("output= the input itself (through a temporary)", r is xi and same_bits(xi.get(), want))
    raises("output= wrong shape", lambda: ndconv.correlate(xc, w7, output=cupy.empty((3, 3), cupy.float32)),
           ndconv.ArgumentError, "invalid output")
    plan = ndconv.Plan("correlate", x.shape, "float32", weights=w7, device="cuda:0", device_arrays=True)
    check("Plan(device_arrays=True) on cupy", same_bits(plan(xc).get(), want))
    check("Plan(device_arrays=True) on numpy", same_bits(plan(x), ndconv.correlate(x, w7, device="cuda")))
    raises("Plan output= wrong dtype array", lambda: plan(xc, cupy.empty(x.shape, cupy.float64)), ndconv.ArgumentError,
           "invalid output")

    # Non-contiguous inputs: torch copies (contiguous()); CuPy's strides are refused clearly.
    xt = torch.from_numpy(x).cuda()
    check("torch transposed", same_bits(ndconv.correlate(xt.t(), w7).cpu().numpy(),
                                        ndconv.correlate(np.ascontiguousarray(x.T), w7, device="cpu")))
    check("cupy strided input copied", same_bits(ndconv.correlate(xc[:, ::2], w7).get(),
                                                 ndconv.correlate(np.ascontiguousarray(x[:, ::2]), w7, device="cpu")))
    check("cupy F-order input copied", same_bits(ndconv.correlate(cupy.asfortranarray(xc), w7).get(),
                                                 ndconv.correlate(x, w7, device="cpu")))
    raises("cupy strided output refused", lambda: ndconv.correlate(xc, w7, output=cupy.zeros((x.shape[1], x.shape[0]), cupy.float32).T),
           ndconv.ArgumentError, "not C-contiguous")

    # Streams: the input is written on the caller's stream after a long wait;
    # ndconv must read it only once it is there.
    for label, make in [("cupy non-blocking stream", lambda: cupy.cuda.Stream(non_blocking=True)),
                        ("cupy blocking stream", lambda: cupy.cuda.Stream()),
                        ("cupy per-thread default stream", lambda: cupy.cuda.Stream.ptds)]:
        s = make()
        dst = cupy.zeros(x.shape, cupy.float32)
        src = cupy.asarray(x)
        with s:
            spin((1,), (1,), (np.int64(200_000_000),))  # ~0.1 s
            dst[...] = src  # the input becomes x only after the spin
            got = ndconv.correlate(dst, w7)
            back = got.get(stream=s)
        s.synchronize()
        check("stream: " + label, same_bits(back, want))
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        dst = torch.zeros(x.shape, dtype=torch.float32, device="cuda")
        torch.cuda._sleep(200_000_000)
        dst.copy_(xt)
        got = ndconv.correlate(dst, w7)
        got2 = got * 1  # queued on ts after the call: must see the result
    torch.cuda.synchronize()
    check("stream: torch side stream", same_bits(got2.cpu().numpy(), want))

    # DLPack only (as JAX arrays are): a wrapper with __dlpack__ and no __cuda_array_interface__.


    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()


    got = ndconv.correlate(DLPackOnly(xt), w7)
    check("DLPack-only input", same_bits(cupy.asnumpy(got), want), type(got))

    # The plan cache: a second call reuses the plan.
    n0 = len(ndconv._cache)
    for _ in range(3):
        ndconv.correlate(xc, w7)
    check("plan cache reused", len(ndconv._cache) == n0, (n0, len(ndconv._cache)))

    # Errors.
    raises("host memory through the interface", lambda: ndconv.correlate(type("H", (), {
        "__cuda_array_interface__": {"version": 3, "shape": x.shape, "typestr": "<f4", "data": (x.ctypes.data, False),
                                     "strides": None, "stream": 1}})(), w7), ndconv.ArgumentError, "not CUDA device memory")
    raises("past the allocation", lambda: ndconv.correlate(type("P", (), {
        "__cuda_array_interface__": {"version": 3, "shape": (4096, 4096), "typestr": "<f4",
                                     "data": (cupy.empty(16, cupy.float32).data.ptr, False), "strides": None,
                                     "stream": 1}})(), w7), ndconv.ArgumentError, "past the allocation")
    raises("device= another GPU", lambda: ndconv.correlate(xc, w7, device="cuda:3"), ndconv.ArgumentError, "is on cuda:0")
    raises("device=cpu with a GPU array", lambda: ndconv.correlate(xc, w7, device="cpu"), ndconv.ArgumentError,
           "invalid device 'cpu'")
    raises("gaussian_filter with a numpy output", lambda: ndconv.gaussian_filter(xc, 2, output=x),
           ndconv.ArgumentError, "a numpy array for a device array input")
    raises("bool", lambda: ndconv.correlate(cupy.zeros((8, 8), bool), w7), ndconv.ArgumentError, '"bool"')
    raises("bfloat16", lambda: ndconv.correlate(torch.zeros((8, 8), dtype=torch.bfloat16, device="cuda"), w7),
           ndconv.ArgumentError, "bfloat16")



def named_filters():
    """scipy.ndimage's named filters on CuPy and torch arrays: each the
    host path's bits (CPU, and CUDA on host arrays), into device outputs,
    on a caller's stream."""
    f32 = host((301, 257), np.float32)
    f64 = host((120, 90), np.float64)
    u8 = host((64, 48, 40), np.uint8)
    c64 = host((50, 40), np.complex64)
    f16 = host((128, 96), np.float16)
    named = [
        ("gaussian_filter", f32, (2.0,), {}),
        ("gaussian_filter", f64, ((1.0, 3.0),), {"order": (1, 0), "mode": ["reflect", "wrap"]}),
        ("gaussian_filter", u8, (1.0,), {"order": 3}),
        ("gaussian_filter", u8, (1.5,), {"integer": "scipy"}),
        ("gaussian_filter", u8, (1.5,), {}),
        ("gaussian_filter", f32, (1.0,), {"mode": "constant", "cval": 2.0}),
        ("gaussian_filter", f32, (1.0,), {"radius": 2, "axes": (1,)}),
        ("gaussian_filter", c64, (1.0,), {}),
        ("gaussian_filter", f16, (1.0,), {}),
        ("gaussian_filter1d", f32, (2.0,), {"axis": 0, "order": 1}),
        ("uniform_filter", u8, (), {"size": (3, 1, 4), "origin": (1, 0, -1)}),
        ("uniform_filter", u8, (), {"size": 3, "mode": ["nearest", "mirror", "wrap"]}),
        ("uniform_filter", u8, (), {"size": 5, "integer": "scipy"}),
        ("uniform_filter", f32, (), {"size": 7, "output": np.float64}),
        ("uniform_filter1d", u8, (4,), {"axis": 1}),
        ("sobel", u8, (), {"axis": 0}),
        ("sobel", f32, (), {"mode": ["reflect", "constant"], "cval": 1.0}),
        ("prewitt", u8, (), {"output": np.int16}),
        ("prewitt", u8, (), {"integer": "scipy"}),
        ("laplace", f32, (), {}),
        ("laplace", u8, (), {"mode": "nearest"}),
        ("laplace", u8, (), {"integer": "scipy"}),
        ("gaussian_laplace", f32, (1.2,), {}),
        ("gaussian_laplace", u8, (1.2,), {"output": np.float64}),
        ("gaussian_gradient_magnitude", f32, (1.0,), {}),
        ("gaussian_gradient_magnitude", u8, (1.0,), {}),
        ("gaussian_gradient_magnitude", f64, (2.0,), {"mode": "mirror"}),
        ("gaussian_gradient_magnitude", u8, (1.0,), {"axes": (2, 0), "mode": ["reflect", "constant"]}),
        ("gaussian_laplace", f32, ((1.5,),), {"axes": (1,)}),
        ("laplace", u8, (), {"axes": (0, 2), "mode": ["reflect", "wrap"], "output": np.float64}),
    ]
    for fname, xh, args, kw in named:
        name = "%s%s %s on %s %s" % (fname, args, kw, xh.dtype, xh.shape)
        try:
            f = getattr(ndconv, fname)
            want = f(xh, *args, device="cpu", **kw)
            want_cuda = f(xh, *args, device="cuda", **kw)
            check("named: host cuda = cpu " + name, same_bits(want_cuda, want))
            got = f(cupy.asarray(xh), *args, **kw)
            check("named: cupy = host bits " + name, isinstance(got, cupy.ndarray) and same_bits(got.get(), want),
                  type(got))
            gt = f(torch.from_numpy(xh).cuda(), *args, **kw)
            check("named: torch = host bits " + name, isinstance(gt, torch.Tensor) and gt.is_cuda
                  and same_bits(gt.cpu().numpy(), want), type(gt))
            o = cupy.full(want.shape, 7, want.dtype)
            r = f(cupy.asarray(xh), *args, **dict(kw, output=o))
            check("named: into a cupy output " + name, r is o and same_bits(o.get(), want))
        except Exception:
            check("named case " + name, False, traceback.format_exc())
    # On a caller's stream: the input is written there after a long wait.
    want = ndconv.gaussian_gradient_magnitude(f32, 1.5, device="cpu")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        dst = cupy.zeros(f32.shape, cupy.float32)
        spin((1,), (1,), (np.int64(200_000_000),))
        dst[...] = cupy.asarray(f32)
        back = ndconv.gaussian_gradient_magnitude(dst, 1.5).get(stream=s)
    s.synchronize()
    check("named: gaussian_gradient_magnitude on a non-blocking stream", same_bits(back, want))
    e = ndconv.sobel(cupy.zeros((0, 5), cupy.float32))
    check("named: empty cupy array", isinstance(e, cupy.ndarray) and e.shape == (0, 5))
    # Time: gaussian_filter 8192² float32 σ=2 against cupyx on the same array.
    xs = cupy.asarray(host((8192, 8192), np.float32))
    for label, fn in [("ndconv.gaussian_filter(cupy)", lambda: ndconv.gaussian_filter(xs, 2.0)),
                      ("cupyx.gaussian_filter", lambda: cndi.gaussian_filter(xs, 2.0)),
                      ("ndconv.sobel(cupy)", lambda: ndconv.sobel(xs)),
                      ("cupyx.sobel", lambda: cndi.sobel(xs))]:
        for _ in range(3):
            fn()
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        for _ in range(20):
            fn()
        b.record()
        b.synchronize()
        ms = cupy.cuda.get_elapsed_time(a, b) / 20
        results["timing"][label] = {"event_ms": ms}
        print("%-36s %8.3f ms" % (label, ms), flush=True)
    d = np.abs(ndconv.gaussian_filter(xs, 2.0).get().astype(np.float64) -
               cndi.gaussian_filter(xs, 2.0).get().astype(np.float64)).max()
    results["timing"]["gaussian max_abs_diff_vs_cupyx"] = float(d)


ONLY_TIMING = os.environ.get("GPU_ARRAYS_ONLY_TIMING") == "1"
try:
    if not ONLY_TIMING:
        correctness()
except Exception:
    check("correctness section", False, traceback.format_exc())
try:
    if not ONLY_TIMING:
        named_filters()
except Exception:
    check("named filters section", False, traceback.format_exc())


def diagnose():
    """Where a call's time goes: the C call alone (fixed pointers, with and
    without the stream wait), a 64×64 call (the fixed cost), and every
    kernel's device time from the CUDA profiler (CUPTI, through torch)."""
    import ctypes
    from torch.profiler import profile, ProfilerActivity
    N = 8192
    xs = cupy.random.rand(N, N, dtype=cupy.float32)
    out = cupy.empty_like(xs)
    wk = np.asarray(rng.standard_normal((7, 7)), np.float32).astype(np.float64)
    eb = ctypes.create_string_buffer(1024)
    d = results.setdefault("diagnosis", {})
    for mode in ("reflect", "constant"):
        for n in (64, N):
            x = xs[:n, :n].copy() if n != N else xs
            o = cupy.empty_like(x)
            p = ndconv.Plan("correlate", (n, n), "float32", weights=wk, mode=mode, device="cuda:0", device_arrays=True)
            src, dst = _device.parse(x), _device.parse(o)
            for stream in (-1, 1):
                reps = 200 if n == 64 else 50
                ndconv._lib.ndconv_plan_execute_device(p._handle, src.ptr, src.nbytes, dst.ptr, dst.nbytes, stream, eb, 1024)
                cupy.cuda.Device().synchronize()
                t0 = time.perf_counter()
                for _ in range(reps):
                    rc = ndconv._lib.ndconv_plan_execute_device(p._handle, src.ptr, src.nbytes, dst.ptr, dst.nbytes,
                                                               stream, eb, 1024)
                ms = (time.perf_counter() - t0) / reps * 1e3
                key = "C call %s %d² stream %d" % (mode, n, stream)
                d[key] = ms
                print("%-44s %8.4f ms/call rc %d" % (key, ms, rc), flush=True)
            t0 = time.perf_counter()
            for _ in range(reps):
                p(x, o)
            key = "Plan(x, out) %s %d²" % (mode, n)
            d[key] = (time.perf_counter() - t0) / reps * 1e3
            print("%-44s %8.4f ms/call" % (key, d[key]), flush=True)
            t0 = time.perf_counter()
            for _ in range(reps):
                ndconv.correlate(x, wk, mode=mode)
            key = "ndconv.correlate %s %d²" % (mode, n)
            d[key] = (time.perf_counter() - t0) / reps * 1e3
            print("%-44s %8.4f ms/call" % (key, d[key]), flush=True)
            if n == N:
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(5):
                        ndconv._lib.ndconv_plan_execute_device(p._handle, src.ptr, src.nbytes, dst.ptr, dst.nbytes,
                                                               1, eb, 1024)
                    for _ in range(5):
                        ndconv.correlate(x, wk, mode=mode)
                    for _ in range(5):
                        ndconv.correlate(x, wk, mode=mode, output=o)
                    for _ in range(2):
                        cndi.correlate(x, cupy.asarray(wk, cupy.float32), mode=mode)
                table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=12)
                print(table, flush=True)
                d["profile " + mode] = table


try:
    if not ONLY_TIMING:
        diagnose()
except Exception:
    check("diagnosis section", False, traceback.format_exc())


def timing_section():
    # ---------------------------------------------------------------- timing

    N = 8192
    xs = cupy.random.rand(N, N, dtype=cupy.float32)
    wk = np.asarray(rng.standard_normal((7, 7)), np.float32).astype(np.float64)
    wc = cupy.asarray(wk.astype(np.float32))


    def per_call(fn, reps):
        fn()
        cupy.cuda.Device().synchronize()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        t0 = time.perf_counter()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        wall = (time.perf_counter() - t0) / reps * 1e3
        return cupy.cuda.get_elapsed_time(start, end) / reps, wall


    timing = results["timing"]
    out = cupy.empty_like(xs)
    for label, fn, reps in [
        ("ndconv.correlate(cupy)", lambda: ndconv.correlate(xs, wk), 100),
        ("ndconv.correlate(cupy, output=)", lambda: ndconv.correlate(xs, wk, output=out), 100),
        ("cupyx.scipy.ndimage.correlate", lambda: cndi.correlate(xs, wc), 30),
    ]:
        ev, wall = per_call(fn, reps)
        timing[label] = {"event_ms": ev, "wall_ms": wall}
        print("%-36s %8.3f ms/call (events) %8.3f ms (wall)" % (label, ev, wall), flush=True)
    tx = torch.as_tensor(xs, device="cuda")
    tout = torch.empty_like(tx)
    for label, fn, reps in [
        ("ndconv.correlate(torch)", lambda: ndconv.correlate(tx, wk), 100),
        ("ndconv.correlate(torch, output=)", lambda: ndconv.correlate(tx, wk, output=tout), 100),
    ]:
        torch.cuda.synchronize()
        fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        wall = (time.perf_counter() - t0) / reps * 1e3
        timing[label] = {"event_ms": s.elapsed_time(e) / reps, "wall_ms": wall}
        print("%-36s %8.3f ms/call (events) %8.3f ms (wall)" % (label, timing[label]["event_ms"], wall), flush=True)
    xh = cupy.asnumpy(xs)
    t0 = time.perf_counter()
    for _ in range(3):
        ndconv.correlate(xh, wk, device="cuda")
    timing["ndconv.correlate(numpy, device=cuda)"] = {"wall_ms": (time.perf_counter() - t0) / 3 * 1e3}
    print("%-36s %8.3f ms (wall)" % ("host arrays device=cuda", timing["ndconv.correlate(numpy, device=cuda)"]["wall_ms"]))
    big_want = ndconv.correlate(xh, wk, device="cuda")
    check("8192² cupy = host cuda path bits", same_bits(ndconv.correlate(xs, wk).get(), big_want))
    check("8192² torch = host cuda path bits", same_bits(ndconv.correlate(tx, wk).cpu().numpy(), big_want))
    d = np.abs(ndconv.correlate(xs, wk).get().astype(np.float64) - cndi.correlate(xs, wc).get().astype(np.float64))
    timing["max_abs_diff_vs_cupyx"] = float(d.max())
    sp = timing["cupyx.scipy.ndimage.correlate"]["event_ms"]
    for k in ("ndconv.correlate(cupy)", "ndconv.correlate(torch)"):
        timing[k]["speedup_vs_cupyx"] = sp / timing[k]["event_ms"]
    check("target: cupy ≤ 0.35 ms", timing["ndconv.correlate(cupy)"]["event_ms"] <= 0.35, timing["ndconv.correlate(cupy)"])
    check("target: cupy ≥ 5× cupyx", timing["ndconv.correlate(cupy)"]["speedup_vs_cupyx"] >= 5)
    check("target: torch ≤ 0.35 ms", timing["ndconv.correlate(torch)"]["event_ms"] <= 0.35, timing["ndconv.correlate(torch)"])
    check("target: torch ≥ 5× cupyx", timing["ndconv.correlate(torch)"]["speedup_vs_cupyx"] >= 5)


try:
    timing_section()
except Exception:
    check("timing section", False, traceback.format_exc())
results["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
results["versions"] = {"cupy": cupy.__version__, "torch": torch.__version__, "numpy": np.__version__}
print(json.dumps(results.get("timing"), indent=1))
print(results["device"], results["versions"])
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(results, f, indent=1)
print("%d checks, %d failed: %s" % (len(results["checks"]), len(failures), failures))
sys.exit(1 if failures else 0)
