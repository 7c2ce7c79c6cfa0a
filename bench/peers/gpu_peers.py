#!/usr/bin/env python3
"""GPU peers of `ndconv bench`: CuPy and cuDNN (through torch) on the same
workloads, data resident on the device, timed with CUDA events.

    python3 bench/peers/gpu_peers.py [WORKLOADS.jsonl|-] [--repeats N]
        [--systems cupy,cupy-separable,cupy-fft,cudnn,cudnn-tf32]
        [--warmup N] [--dry-run] [--emulate] > results.jsonl

Reads workload lines (bench/README.md) from the file or stdin and prints one
result line per workload and system on stdout (progress on stderr).

Systems:
  cupy            cupyx.scipy.ndimage.correlate, the workload's border
  cupy-separable  cupyx.scipy.ndimage.correlate1d passes (separable workloads)
  cupy-fft        cupyx.scipy.signal.fftconvolve with the flipped kernel
  cudnn           torch.nn.functional.conv1d/2d/3d, TF32 off, cudnn.benchmark
  cudnn-tf32      the same with TF32 on (not exact)

--dry-run imports neither CuPy nor torch: it parses the workloads, plans every
system (notes, what would run) and prints null results with the plan as note.
--emulate runs the very same code on the CPU (numpy, scipy, torch on the CPU)
so that the checksums can be checked without a GPU; its timings mean nothing.

Needs (on the device): Python 3.9+, numpy, CuPy 13+/14 (cupy-cuda13x), torch.
"""

import argparse
import contextlib
import os
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402

SYSTEMS = ("cupy", "cupy-separable", "cupy-fft", "cudnn", "cudnn-tf32")


# --------------------------------------------------------------------------
# Backends: the real GPU one and a CPU emulation with the same interface.
# --------------------------------------------------------------------------

class _WallTimer:
    def start(self):
        self.t0 = time.perf_counter()

    def stop(self):
        return (time.perf_counter() - self.t0) * 1e3


class CupyBackend:
    """CuPy on the GPU, or numpy/scipy with --emulate."""

    def __init__(self, emulate=False):
        self.emulate = emulate
        self._idx = {}
        if emulate:
            import scipy.ndimage as ndi
            import scipy.signal as signal
            self.xp, self.ndi, self.signal = np, ndi, signal
            self.device = "cpu-emulation (not a GPU timing)"
            self.oom_types = (MemoryError,)
            return
        import cupy as cp
        import cupyx
        import cupyx.scipy.ndimage as ndi
        import cupyx.scipy.signal as signal
        self.cp, self.cupyx = cp, cupyx
        self.xp, self.ndi, self.signal = cp, ndi, signal
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        self.device = name.decode() if isinstance(name, bytes) else str(name)
        self.oom_types = (cp.cuda.memory.OutOfMemoryError, MemoryError)

    def to_device(self, a):
        return a.copy() if self.emulate else self.cp.asarray(a)

    def pinned(self, shape, dtype):
        if self.emulate:
            return np.empty(shape, dtype)
        return self.cupyx.empty_pinned(shape, dtype)

    def upload(self, dev, host):
        if self.emulate:
            np.copyto(dev, host)
        else:
            dev.set(host)

    def download(self, dev, host):
        if self.emulate:
            np.copyto(host, dev)
        else:
            self.cp.ascontiguousarray(dev).get(out=host)

    def timer(self):
        if self.emulate:
            return _WallTimer()
        cp = self.cp

        class T:
            def __init__(self):
                self.s, self.e = cp.cuda.Event(), cp.cuda.Event()

            def start(self):
                self.s.record()

            def stop(self):
                self.e.record()
                self.e.synchronize()
                return cp.cuda.get_elapsed_time(self.s, self.e)
        return T()

    def sync(self):
        if not self.emulate:
            self.cp.cuda.Device().synchronize()

    def take(self, x, idx, axis):
        key = (axis, idx.tobytes())
        t = self._idx.get(key)
        if t is None:
            t = self._idx[key] = self.xp.asarray(idx)
        return self.xp.take(x, t, axis=axis)

    def checksum(self, outs):
        return wl.checksum(outs, self.xp)

    def free(self):
        if self.emulate:
            return
        self.sync()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()
        with contextlib.suppress(Exception):
            self.cp.fft.config.get_plan_cache().clear()


class TorchBackend:
    """torch on CUDA (cuDNN), or torch on the CPU with --emulate."""

    def __init__(self, emulate=False):
        import torch
        import torch.nn.functional as F
        self.torch, self.F, self.emulate = torch, F, emulate
        self._idx = {}
        if emulate:
            self.dev = torch.device("cpu")
            self.device = "cpu-emulation (not a GPU timing)"
        else:
            if not torch.cuda.is_available():
                raise RuntimeError("torch sees no CUDA device")
            self.dev = torch.device("cuda")
            self.device = torch.cuda.get_device_name(0)
            torch.backends.cudnn.benchmark = True
        oom = [MemoryError]
        for holder in (torch.cuda, torch):
            t = getattr(holder, "OutOfMemoryError", None)
            if isinstance(t, type):
                oom.append(t)
        self.oom_types = tuple(oom)

    def set_tf32(self, on):
        """TF32 for cuDNN convolutions (and cuBLAS matmuls) on or off. The
        legacy flags, as asked; newer torch maps them onto fp32_precision."""
        torch = self.torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                torch.backends.cudnn.allow_tf32 = on
                torch.backends.cuda.matmul.allow_tf32 = on
                return
            except Exception:
                pass
            torch.backends.cudnn.conv.fp32_precision = "tf32" if on else "ieee"
            torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"

    def tf32_state(self):
        torch = self.torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return bool(torch.backends.cudnn.allow_tf32)
            except Exception:
                return str(torch.backends.cudnn.conv.fp32_precision) == "tf32"

    def to_device(self, a):
        t = self.torch.from_numpy(np.ascontiguousarray(a))
        return t.clone() if self.emulate else t.to(self.dev)

    def pinned(self, shape, dtype):
        return self.torch.empty(tuple(shape), dtype=dtype, pin_memory=not self.emulate)

    def host_from_numpy(self, a):
        src = self.torch.from_numpy(np.ascontiguousarray(a))
        t = self.pinned(src.shape, src.dtype)
        t.copy_(src)
        return t

    def upload(self, dev, host):
        dev.copy_(host, non_blocking=True)

    def download(self, dev, host):
        host.copy_(dev, non_blocking=True)

    def timer(self):
        if self.emulate:
            return _WallTimer()
        torch = self.torch

        class T:
            def __init__(self):
                self.s = torch.cuda.Event(enable_timing=True)
                self.e = torch.cuda.Event(enable_timing=True)

            def start(self):
                self.s.record()

            def stop(self):
                self.e.record()
                self.e.synchronize()
                return self.s.elapsed_time(self.e)
        return T()

    def sync(self):
        if not self.emulate:
            self.torch.cuda.synchronize()

    def take(self, x, idx, axis):
        # axis counts the spatial axes of an N, C, spatial... tensor; the
        # index tensors are made once (outside the timing after the warm-up)
        key = (axis, idx.tobytes())
        t = self._idx.get(key)
        if t is None:
            t = self._idx[key] = self.torch.as_tensor(idx, device=x.device)
        return x.index_select(2 + axis, t)

    def checksum(self, outs):
        return float(sum(float(o.sum(dtype=self.torch.float64)) for o in outs))

    def free(self):
        if self.emulate:
            return
        self.sync()
        self.torch.cuda.empty_cache()


# --------------------------------------------------------------------------
# Systems. plan(w) is pure (used by --dry-run); build(w, plan, x_host, be)
# returns (compute, x_dev, x_host_for_transfers).
# --------------------------------------------------------------------------

def _chan_ones(w):
    return (1,) * len(w.chan_shape)


class CupyDirect:
    name, method, backend = "cupy", "direct", "cupy"

    def plan(self, w):
        notes = []
        ft = w.float_dtype
        if w.mode == "valid":
            notes.append("valid: 'same' computed (constant border) and cropped (view)")
        if w.out_is_int:
            notes.append("integer output: %s result rounded half even and saturated by cupy (CuPy alone truncates)" % ft.name)
        elif w.np_out_dtype != ft:
            notes.append("computed in %s" % ft.name)
        if w.bank > 1:
            notes.append("bank: one correlate per kernel, bank-major output")
        return {"notes": notes, "ft": ft}

    def build(self, w, p, x_host, be):
        xp, ndi = be.xp, be.ndi
        ft = p["ft"]
        ws = [be.to_device(k.astype(ft).reshape(w.kernel + _chan_ones(w))) for k in wl.full_weights(w)]
        mode = "constant" if w.mode == "valid" else w.border
        cval = 0.0 if w.mode == "valid" else w.cval
        crop = tuple(slice(k // 2, k // 2 + o) for k, o in zip(w.kernel, w.out_spatial)) if w.mode == "valid" else None
        out_dtype = w.out_dtype

        def compute(x):
            outs = []
            for k in ws:
                y = ndi.correlate(x, k, output=ft, mode=mode, cval=cval)
                if crop is not None:
                    y = y[crop]
                outs.append(wl.round_saturate(y, out_dtype, xp))
            return outs
        return compute, be.to_device(x_host), x_host


class CupySeparable(CupyDirect):
    name, method = "cupy-separable", "separable"

    def plan(self, w):
        if not w.separable:
            raise wl.NotApplicable()
        p = CupyDirect.plan(self, w)
        p["notes"].append("%s intermediates" % p["ft"].name)
        if w.border == "constant" and w.cval != 0 and w.mode == "same":
            p["notes"].append("each pass pads with cval (equal to padding once, the factors summing to 1, up to rounding)")
        return p

    def build(self, w, p, x_host, be):
        xp, ndi = be.xp, be.ndi
        ft = p["ft"]
        fs = [[be.to_device(f.astype(ft)) for f in row] for row in wl.separable_factors(w)]
        mode = "constant" if w.mode == "valid" else w.border
        cval = 0.0 if w.mode == "valid" else w.cval
        crop = tuple(slice(k // 2, k // 2 + o) for k, o in zip(w.kernel, w.out_spatial)) if w.mode == "valid" else None
        out_dtype = w.out_dtype

        def compute(x):
            outs = []
            for row in fs:
                y = x
                for a, f in enumerate(row):
                    y = ndi.correlate1d(y, f, axis=a, output=ft, mode=mode, cval=cval)
                if crop is not None:
                    y = y[crop]
                outs.append(wl.round_saturate(y, out_dtype, xp))
            return outs
        return compute, be.to_device(x_host), x_host


class CupyFFT(CupyDirect):
    name, method = "cupy-fft", "fft"

    def plan(self, w):
        ft = w.float_dtype
        notes = ["FFT in %s (rounding differs from a direct sum; integer outputs may differ by 1 near .5)" % ft.name]
        prepad = None
        if w.mode == "same" and not w.constant_zero:
            prepad = w.same_pads()
            notes.append("%s border: input padded first (timed; fftconvolve pads with zeros), then 'valid'"
                         % (w.border if w.border != "constant" else "constant cval=%g" % w.cval))
        if w.dtype != ft.name:
            notes.append("input converted to %s (timed)" % ft.name)
        if w.out_is_int:
            notes.append("integer output rounded half even and saturated by cupy")
        if w.bank > 1:
            notes.append("bank: one fftconvolve broadcasting the input against all %d kernels" % w.bank)
        return {"notes": notes, "ft": ft, "prepad": prepad}

    def build(self, w, p, x_host, be):
        xp, signal = be.xp, be.signal
        ft, prepad = p["ft"], p["prepad"]
        nk = w.nk
        flip = (slice(None),) + (slice(None, None, -1),) * nk
        k = wl.full_weights(w).astype(ft)[flip]               # (bank, *kernel), flipped
        k = np.moveaxis(k, 0, -1).reshape(w.kernel + (1, w.bank))  # (*kernel, 1, bank)
        kd = be.to_device(np.ascontiguousarray(k))
        axes = tuple(range(nk))  # CuPy wants a tuple
        out_dtype = w.out_dtype
        S, C = w.spatial, w.C
        # Offsets into fftconvolve's 'full' output: 'same' correlation starts
        # at k-1-k//2, 'valid' (and padded 'same') at k-1.
        if prepad is None and w.mode == "same":
            starts = [k_ - 1 - k_ // 2 for k_ in w.kernel]
        else:
            starts = [k_ - 1 for k_ in w.kernel]
        crop = tuple(slice(s, s + o) for s, o in zip(starts, w.out_spatial))

        def compute(x):
            xf = x.astype(ft, copy=False) if x.dtype != ft else x
            if prepad is not None:
                xf = wl.pad_input(xf, prepad, w.border, w.cval, xp=xp, take=be.take)
            xr = xf.reshape(xf.shape[:nk] + (C, 1))
            y = signal.fftconvolve(xr, kd, mode="full", axes=axes)   # (*full, C, bank)
            y = y[crop]
            return [wl.round_saturate(y, out_dtype, xp)]
        return compute, be.to_device(x_host), x_host


class Cudnn:
    backend = "torch"
    method = "auto"

    def __init__(self, tf32):
        self.tf32 = tf32
        self.name = "cudnn-tf32" if tf32 else "cudnn"

    def plan(self, w):
        if w.nk > 3:
            raise wl.Unsupported("torch has conv1d/2d/3d only, not a %d-D kernel" % w.nk)
        notes = []
        if self.tf32:
            notes.append("TF32, not exact")
        ft = w.float_dtype
        notes.append("cuDNN picks the algorithm (cudnn.benchmark)")
        if w.C > 1 or w.bank > 1:
            notes.append("output layout N x (C*bank) x spatial (NCHW; channel c, kernel b at c*bank+b)")
        if w.C > 1:
            notes.append("input NCHW (converted outside the timing); channels as groups")
        if w.dtype != ft.name:
            notes.append("input converted to %s (timed)" % ft.name)
        if w.out_is_int:
            notes.append("integer output rounded half even and saturated by torch")
        if w.out_dtype == "uint16":
            notes.append("uint16 output held as int32 (same values)")
        prepad, padding = None, (0,) * w.nk
        if w.mode == "same":
            if w.constant_zero:
                padding = w.centre()
                if any(k % 2 == 0 for k in w.kernel):
                    notes.append("even kernel: symmetric zero padding k//2, the extra last output cropped (view)")
            else:
                prepad = w.same_pads()
                notes.append("%s border: input padded first (timed; cuDNN pads with zeros), then 'valid'"
                             % (w.border if w.border != "constant" else "constant cval=%g" % w.cval))
        return {"notes": notes, "ft": ft, "prepad": prepad, "padding": padding}

    def build(self, w, p, x_host, be):
        torch, F = be.torch, be.F
        be.set_tf32(self.tf32)
        ft = torch.float64 if p["ft"] == np.float64 else torch.float32
        nk, C = w.nk, w.C
        # NC + spatial layout, made on the host (outside the timing).
        xn = np.moveaxis(x_host.reshape(w.spatial + (C,)), -1, 0)[None]
        xn = np.ascontiguousarray(xn)
        wf = wl.full_weights(w)                                      # (bank, *kernel)
        wt = np.broadcast_to(wf[None], (C,) + wf.shape).reshape((C * w.bank, 1) + w.kernel)
        wt = torch.from_numpy(np.ascontiguousarray(wt)).to(device=be.dev, dtype=ft)
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nk]
        padding, prepad = p["padding"], p["prepad"]
        need_crop = w.mode == "same" and prepad is None and any(k % 2 == 0 for k in w.kernel)
        crop = (slice(None), slice(None)) + tuple(slice(0, n) for n in w.out_spatial)
        out_t = {"uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
                 "uint16": torch.int32, "float32": torch.float32, "float64": torch.float64}[w.out_dtype]
        info = np.iinfo(w.np_out_dtype) if w.out_is_int else None
        groups = C

        def pad(xf):
            if w.border == "constant":
                flat = []
                for lo, hi in reversed(prepad):
                    flat += [lo, hi]
                return F.pad(xf, flat, mode="constant", value=w.cval)
            for a, (lo, hi) in enumerate(prepad):
                n = xf.shape[2 + a]
                idx = wl.border_index(np.arange(-lo, n + hi, dtype=np.int64), n, w.border)
                xf = be.take(xf, idx, a)
            return xf

        def compute(x):
            xf = x.to(ft) if x.dtype != ft else x
            if prepad is not None:
                xf = pad(xf)
            y = conv(xf, wt, None, 1, padding, 1, groups)
            if need_crop:
                y = y[crop]
            if info is not None:
                y = torch.clamp(torch.round(y), info.min, info.max).to(out_t)
            elif y.dtype != out_t:
                y = y.to(out_t)
            return [y]
        return compute, be.to_device(xn), xn


def make_system(name):
    return {"cupy": CupyDirect, "cupy-separable": CupySeparable, "cupy-fft": CupyFFT,
            "cudnn": lambda: Cudnn(False), "cudnn-tf32": lambda: Cudnn(True)}[name]()


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def time_device(be, step, repeats, rounds, warmup):
    out = None
    for _ in range(max(warmup, 0)):
        for _ in range(rounds):
            out = step()
    be.sync()
    t = be.timer()
    times = []
    for _ in range(repeats):
        t.start()
        for _ in range(rounds):
            out = step()
        times.append(t.stop())
    return times, out


def run_system(sysobj, be, w, x_host, args):
    p = sysobj.plan(w)          # NotApplicable / Unsupported go up
    notes = list(p["notes"])
    compute, x_dev, x_src = sysobj.build(w, p, x_host, be)
    if not w.transfers:
        step = lambda: compute(x_dev)  # noqa: E731
    else:
        notes.append("each round: upload from pinned host memory, filter, download to pinned host memory")
        if sysobj.backend == "torch":
            x_pin = be.host_from_numpy(x_src)
        else:
            x_pin = be.pinned(x_src.shape, x_src.dtype)
            x_pin[...] = x_src
        probe = compute(x_dev)
        hosts = [be.pinned(o.shape, o.dtype) for o in probe]
        del probe

        def step():
            be.upload(x_dev, x_pin)
            outs = compute(x_dev)
            for o, h in zip(outs, hosts):
                be.download(o, h)
            return outs
    times, outs = time_device(be, step, args.repeats, w.rounds, args.warmup)
    cs = be.checksum(outs)
    if sysobj.backend == "torch" and not be.emulate:
        state = be.tf32_state()
        if state != sysobj.tf32:
            notes.append("warning: TF32 flag reads %s" % state)
    return wl.result(w, sysobj.name, be.device, sysobj.method, times, cs, notes)


def _is_oom(e, be):
    if isinstance(e, be.oom_types):
        return True
    s = str(e).lower()
    return "out of memory" in s or "cudaerrormemoryallocation" in s or "cufft_alloc_failed" in s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="?", default="-", help="workload JSON lines (default stdin)")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=2, help="untimed repeats first (default 2: cudnn.benchmark tunes on the first)")
    ap.add_argument("--systems", default="all", help="comma-separated subset of: " + ",".join(SYSTEMS))
    ap.add_argument("--dry-run", action="store_true", help="plan only; import neither CuPy nor torch")
    ap.add_argument("--emulate", action="store_true", help="run on the CPU with numpy/scipy/torch (checksum tests)")
    ap.add_argument("--device", default=None, help="device string for the result lines")
    args = ap.parse_args(argv)

    names = wl.select_systems(args.systems, SYSTEMS)
    work = wl.read_workloads(args.workloads)
    systems = {n: make_system(n) for n in names}

    if args.dry_run:
        device = args.device or "dry-run"
        for w in work:
            for n, s in systems.items():
                try:
                    w.check()
                    p = s.plan(w)
                    note = "; ".join(["dry run: would run"] + p["notes"])
                except wl.NotApplicable:
                    continue
                except wl.Unsupported as e:
                    note = str(e)
                wl.emit(wl.result(w, n, device, s.method, note=note))
        return 0

    backends = {}

    def backend(kind):
        if kind not in backends:
            try:
                backends[kind] = CupyBackend(args.emulate) if kind == "cupy" else TorchBackend(args.emulate)
            except Exception as e:  # ImportError, no device, ...
                wl.log("gpu_peers: %s backend unavailable: %s: %s" % (kind, type(e).__name__, e))
                backends[kind] = e
        return backends[kind]

    def device_of(be):
        if args.device:
            return args.device
        return "" if isinstance(be, Exception) else be.device

    for w in work:
        try:
            x_host = wl.make_input(w)
        except wl.Unsupported as e:
            x_host = e
        for n, s in systems.items():
            be = backend(s.backend)
            device = device_of(be)
            try:
                s.plan(w)
                if isinstance(x_host, Exception):
                    raise x_host
            except wl.NotApplicable:
                continue
            except wl.Unsupported as e:
                wl.emit(wl.result(w, n, device, s.method, note=str(e)))
                continue
            if isinstance(be, Exception):
                wl.emit(wl.result(w, n, device, s.method,
                                  note="%s unavailable: %s: %s" % (s.backend, type(be).__name__, be)))
                continue
            wl.log("gpu_peers: %s %s" % (n, w.describe()))
            try:
                r = run_system(s, be, w, x_host, args)
            except Exception as e:
                wl.log(traceback.format_exc())
                if _is_oom(e, be):
                    note = "out of memory on the device"
                else:
                    msg = str(e).strip().splitlines()
                    note = "error: %s: %s" % (type(e).__name__, msg[0][:300] if msg else "")
                r = wl.result(w, n, device, s.method, note=note)
            wl.emit(r)
            with contextlib.suppress(Exception):
                be.free()
        del x_host
    return 0


if __name__ == "__main__":
    sys.exit(main())
