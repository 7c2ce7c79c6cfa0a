#!/usr/bin/python3
"""CPU peers of `ndconv bench`: OpenCV and scipy.ndimage on the same workloads.

    /usr/bin/python3 bench/peers/cpu_peers.py [WORKLOADS.jsonl|-] [--repeats N]
        [--systems opencv,opencv-separable,scipy,scipy-separable] [--threads N]
        [--max-seconds S] > results.jsonl

Reads workload lines (bench/README.md) from the file or stdin, prints one
result line per workload and system on stdout (progress on stderr). Needs
Debian's python3-opencv and python3-scipy (use /usr/bin/python3).

Systems:
  opencv            cv2.filter2D (2-D; 1-D as a 1xN image; 3-D as a sum over
                    the kernel depth of per-slice filter2D calls)
  opencv-separable  cv2.sepFilter2D (separable workloads; 3-D adds a z pass
                    as one sepFilter2D over the (depth, rest) view)
  scipy             scipy.ndimage.correlate (single-threaded)
  scipy-separable   scipy.ndimage.correlate1d passes (separable workloads)
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402

SYSTEMS = ("opencv", "opencv-separable", "scipy", "scipy-separable")


# --------------------------------------------------------------------------
# OpenCV
# --------------------------------------------------------------------------

def _cv_border(cv2, border):
    return {
        "reflect": cv2.BORDER_REFLECT,        # d c b a | a b c d | d c b a
        "mirror": cv2.BORDER_REFLECT_101,     # d c b | a b c d | c b a
        "nearest": cv2.BORDER_REPLICATE,
        "constant": cv2.BORDER_CONSTANT,      # zeros only
    }.get(border)


def _cv_depth(cv2, dtype):
    return {"uint8": cv2.CV_8U, "uint16": cv2.CV_16U, "int16": cv2.CV_16S,
            "float32": cv2.CV_32F, "float64": cv2.CV_64F}.get(dtype)


# filter2D / sepFilter2D depth combinations (OpenCV's "filter_depths" table).
_CV_NATIVE = {("uint8", "uint8"), ("uint8", "int16"), ("uint8", "float32"), ("uint8", "float64"),
              ("uint16", "uint16"), ("uint16", "float32"), ("uint16", "float64"),
              ("int16", "int16"), ("int16", "float32"), ("int16", "float64"),
              ("float32", "float32"), ("float64", "float64")}


class OpenCV:
    method = "auto"

    def __init__(self, separable, threads):
        import cv2
        self.cv2 = cv2
        self.separable = separable
        self.name = "opencv-separable" if separable else "opencv"
        if separable:
            self.method = "separable"
        cv2.setNumThreads(threads)
        self.threads = cv2.getNumThreads()

    def prepare(self, w, x):
        cv2 = self.cv2
        self.method = "separable" if self.separable else "direct"
        if self.separable and not w.separable:
            raise wl.NotApplicable()
        if w.nk > 3:
            raise wl.Unsupported("OpenCV filters are 2-D; a %d-D kernel is not run" % w.nk)
        if w.C > 512:
            raise wl.Unsupported("OpenCV images hold at most 512 channels")
        notes = ["cv2.setNumThreads(%d)" % self.threads]
        fdt = w.float_dtype
        fdepth = cv2.CV_64F if fdt == np.float64 else cv2.CV_32F
        native = w.nk <= 2 and (w.dtype, w.out_dtype) in _CV_NATIVE
        ddepth = _cv_depth(cv2, w.out_dtype) if native else fdepth
        if not self.separable:
            # OpenCV's filter2D switches to its DFT-based path for large
            # kernels (dftFilter2D: area >= 130 for 8u->8u/16s and 32f->32f,
            # >= 50 for other depth pairs).
            area = w.kernel[-1] * (w.kernel[-2] if w.nk >= 2 else 1)
            pair = (w.dtype, w.out_dtype) if native else (w.dtype, fdt.name)
            limit = 130 if pair in {("uint8", "uint8"), ("uint8", "int16"), ("float32", "float32")} else 50
            if area >= limit:
                notes.append("filter2D takes its DFT path here (2-D kernel area %d >= %d)" % (area, limit))
                self.method = "fft"
            else:
                self.method = "direct"
        if not native and (w.out_dtype != fdt.name):
            if w.nk == 3:
                notes.append("3-D accumulated in %s, then converted to %s by numpy (round half even, saturate)" % (fdt.name, w.out_dtype))
            else:
                notes.append("%s->%s is no OpenCV depth pair: computed in %s, converted by numpy (round half even, saturate)"
                             % (w.dtype, w.out_dtype, fdt.name))
        elif native and w.out_is_int:
            notes.append("integer output by OpenCV's saturate_cast (round half even)")
        elif w.nk == 3:
            notes.append("3-D accumulated in %s" % fdt.name)

        # Borders. 'valid' reads no border; wrap and constant cval != 0 are
        # padded first (timed) and then run as 'valid'.
        prepad = None
        bt = _cv_border(cv2, w.border)
        if w.mode == "same":
            if w.border == "wrap" or (w.border == "constant" and w.cval != 0):
                prepad = w.same_pads()
                bt = cv2.BORDER_CONSTANT
                notes.append("%s border: input padded by numpy first (timed; filter2D has no %s), then 'valid'"
                             % (w.border if w.border == "wrap" else "constant cval=%g" % w.cval,
                                "BORDER_WRAP" if w.border == "wrap" else "border value"))
        else:
            bt = cv2.BORDER_CONSTANT
            notes.append("valid: computed over the whole image, cropped (view)")
        crop_valid = w.mode == "valid" or prepad is not None

        nk = w.nk
        C = w.C
        if self.separable:
            kern = wl.separable_factors(w)
        else:
            kern = wl.full_weights(w)
            if fdt == np.float64:
                kern = kern.astype(np.float64)
        out_dtype = w.out_dtype
        Ho = w.out_spatial

        def img2d(a):
            """(H, W, *chan) -> (H, W) or (H, W, C) contiguous view."""
            h, wd = a.shape[0], a.shape[1]
            return a.reshape((h, wd) if C == 1 else (h, wd, C))

        def conv2d(img, b, depth):
            """One 2-D filter of bank kernel b; output cropped to 'valid'
            when crop_valid. img is (H, W[, C])."""
            if self.separable:
                fy, fx = (np.ones(1), kern[b][0]) if nk == 1 else (kern[b][nk - 2], kern[b][nk - 1])
                ay, ax = len(fy) // 2, len(fx) // 2
                y = cv2.sepFilter2D(img, depth, fx, fy, anchor=(ax, ay), delta=0, borderType=bt)
            else:
                k2 = kern[b].reshape(1, -1) if nk == 1 else kern[b].reshape(kern[b].shape[-2:])
                ay, ax = k2.shape[0] // 2, k2.shape[1] // 2
                y = cv2.filter2D(img, depth, k2, anchor=(ax, ay), delta=0, borderType=bt)
            if crop_valid:
                oh = img.shape[0] - (1 if nk == 1 else w.kernel[nk - 2]) + 1
                ow = img.shape[1] - w.kernel[nk - 1] + 1
                y = y[ay:ay + oh, ax:ax + ow]
            return y

        if nk == 3 and not self.separable:
            kd = w.kernel[0]
            D = w.spatial[0]
            cz = kd // 2

            def run():
                xin = wl.pad_input(x, prepad, w.border, w.cval) if prepad else x
                outs = []
                for b in range(w.bank):
                    acc = np.zeros(Ho + ((C,) if C > 1 else ()), dtype=fdt)
                    for z in range(Ho[0]):
                        for dz in range(kd):
                            if crop_valid:
                                p = z + dz
                            else:
                                p = z + dz - cz
                                if p < 0 or p >= D:
                                    if w.border == "constant":
                                        continue  # cval 0 here (else prepadded)
                                    p = int(wl.border_index(np.array([p]), D, w.border)[0])
                            k2 = kern[b][dz]
                            ay, ax = k2.shape[0] // 2, k2.shape[1] // 2
                            s = img2d(xin[p])
                            y = cv2.filter2D(s, fdepth, k2, anchor=(ax, ay), delta=0, borderType=bt)
                            if crop_valid:
                                y = y[ay:ay + Ho[1], ax:ax + Ho[2]]
                            acc[z] += y
                    outs.append(wl.round_saturate(acc, out_dtype))
                return outs
            notes.append("3-D: sum over the kernel depth of per-slice filter2D calls")
            if w.bank > 1:
                notes.append("bank: one pass per kernel, bank-major output")
            return run, notes

        if nk == 3:  # separable 3-D
            kd = w.kernel[0]
            cz = kd // 2

            def run():
                xin = wl.pad_input(x, prepad, w.border, w.cval) if prepad else x
                outs = []
                for b in range(w.bank):
                    Dz = xin.shape[0]
                    t = None
                    for z in range(Dz):
                        y = conv2d(img2d(xin[z]), b, fdepth)
                        if t is None:
                            t = np.empty((Dz,) + y.shape, dtype=y.dtype)
                        t[z] = y
                    flat = t.reshape(Dz, -1)
                    fz = kern[b][0]
                    yz = cv2.sepFilter2D(flat, fdepth, np.ones(1), fz, anchor=(0, cz), delta=0, borderType=bt)
                    if crop_valid:
                        yz = yz[cz:cz + Ho[0]]
                    yz = yz.reshape((Ho[0],) + t.shape[1:])
                    outs.append(wl.round_saturate(yz, out_dtype))
                return outs
            notes.append("3-D: sepFilter2D per slice (%s), then the z pass as one sepFilter2D over the (depth, rest) view" % fdt.name)
            if w.bank > 1:
                notes.append("bank: one pass per kernel, bank-major output")
            return run, notes

        # 1-D and 2-D
        def run():
            xin = wl.pad_input(x, prepad, w.border, w.cval) if prepad else x
            if nk == 1:
                img = xin.reshape((1, xin.shape[0]) if C == 1 else (1, xin.shape[0], C))
            else:
                img = img2d(xin)
            outs = []
            for b in range(w.bank):
                y = conv2d(img, b, ddepth)
                if not native:
                    y = wl.round_saturate(y, out_dtype)
                outs.append(y)
            return outs
        if nk == 1:
            notes.append("1-D as a 1xN image")
        if w.bank > 1:
            notes.append("bank: one call per kernel, bank-major output")
        return run, notes


# --------------------------------------------------------------------------
# scipy
# --------------------------------------------------------------------------

class Scipy:
    def __init__(self, separable):
        import scipy
        import scipy.ndimage as ndi
        self.ndi = ndi
        self.version = scipy.__version__
        self.separable = separable
        self.name = "scipy-separable" if separable else "scipy"
        self.method = "separable" if separable else "direct"

    def prepare(self, w, x):
        ndi = self.ndi
        if self.separable and not w.separable:
            raise wl.NotApplicable()
        notes = ["single-threaded"]
        fdt = w.float_dtype
        # Integer outputs: scipy would truncate (C cast) into an integer
        # output array, so the last result is float and numpy rounds half to
        # even and saturates (timed).
        if w.out_is_int:
            last = np.float64 if not self.separable else fdt
            notes.append("integer output: scipy result in %s, rounded half even and saturated by numpy (scipy alone truncates)"
                         % np.dtype(last).name)
        else:
            last = w.np_out_dtype
        nchan = len(w.chan_shape)
        crop = tuple(slice(k // 2, k // 2 + o) for k, o in zip(w.kernel, w.out_spatial)) if w.mode == "valid" else None
        if w.mode == "valid":
            notes.append("valid: computed 'same' and cropped" + (" after each pass" if self.separable else ""))
        if w.bank > 1:
            notes.append("bank: one call per kernel, bank-major output")
        mode = w.border  # canonical name (ndconv's aliases mean the same for filters)
        cval = w.cval

        if not self.separable:
            ws = wl.full_weights(w).astype(np.float64)
            ws = [k.reshape(k.shape + (1,) * nchan) for k in ws]

            def run():
                outs = []
                for b in range(w.bank):
                    y = ndi.correlate(x, ws[b], output=last, mode=mode, cval=cval)
                    if crop is not None:
                        y = y[crop]
                    outs.append(wl.round_saturate(y, w.out_dtype))
                return outs
            return run, notes

        fs = wl.separable_factors(w)
        notes.append("%s intermediates" % fdt.name)
        if w.border == "constant" and cval != 0:
            notes.append("each pass pads with cval (equal to padding once, the factors summing to 1, up to rounding)")

        def run():
            outs = []
            for b in range(w.bank):
                y = x
                for a in range(w.nk):
                    dt = last if a == w.nk - 1 else fdt
                    y = ndi.correlate1d(y, fs[b][a], axis=a, output=dt, mode=mode, cval=cval)
                    if crop is not None:
                        sl = [slice(None)] * y.ndim
                        sl[a] = crop[a]
                        y = y[tuple(sl)]
                outs.append(wl.round_saturate(y, w.out_dtype))
            return outs
        return run, notes


# --------------------------------------------------------------------------

def run_one(sysobj, w, x, args, device):
    try:
        fn, notes = sysobj.prepare(w, x)
    except wl.NotApplicable:
        return None
    except wl.Unsupported as e:
        return wl.result(w, sysobj.name, device, sysobj.method, note=str(e))
    try:
        # warm-up run, timed to keep the whole within --max-seconds
        import time
        t0 = time.perf_counter()
        out = fn()
        t_warm = time.perf_counter() - t0
        repeats = args.repeats
        t_rep = t_warm * w.rounds
        if t_rep * (repeats + 1) > args.max_seconds:
            repeats = max(1, int(args.max_seconds // max(t_rep, 1e-9)) - 1)
            if t_rep > args.max_seconds and w.rounds == 1:
                notes.append("one run over the %gs budget: the warm-up run is the only timing" % args.max_seconds)
                times = [t_warm * 1e3]
                return wl.result(w, sysobj.name, device, sysobj.method, times, wl.checksum(out), notes)
            notes.append("repeats cut to %d (%gs budget)" % (repeats, args.max_seconds))
        times, out = wl.time_cpu(fn, repeats, rounds=w.rounds, warmup=0)
        return wl.result(w, sysobj.name, device, sysobj.method, times, wl.checksum(out), notes)
    except MemoryError:
        return wl.result(w, sysobj.name, device, sysobj.method, note="out of memory")
    except Exception as e:  # a system's failure must not stop the run
        import traceback
        wl.log(traceback.format_exc())
        return wl.result(w, sysobj.name, device, sysobj.method,
                         note="error: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300] if str(e) else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="?", default="-", help="workload JSON lines (default stdin)")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--systems", default="all", help="comma-separated subset of: " + ",".join(SYSTEMS))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="cv2.setNumThreads (default: all cores)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="time budget per system and workload, warm-up included; fewer repeats past it (default 60)")
    ap.add_argument("--device", default=None,
                    help="device string for the result lines (default: 'MODEL (N cores)', as ndconv bench names the CPU, "
                         "so that the report applies its roofline)")
    args = ap.parse_args(argv)

    names = wl.select_systems(args.systems, SYSTEMS)
    device = args.device or wl.cpu_device()
    systems = []
    for n in names:
        try:
            if n.startswith("opencv"):
                systems.append(OpenCV(n == "opencv-separable", args.threads))
            else:
                systems.append(Scipy(n == "scipy-separable"))
        except ImportError as e:
            wl.log("cpu_peers: %s unavailable: %s" % (n, e))
            systems.append(None)
    work = wl.read_workloads(args.workloads)
    for w in work:
        x = None
        try:
            x = wl.make_input(w)
        except wl.Unsupported as e:
            for n, s in zip(names, systems):
                if s is not None and s.separable and not w.separable:
                    continue
                wl.emit(wl.result(w, n, device, s.method if s else "direct", note=str(e)))
            continue
        for n, s in zip(names, systems):
            if s is None:
                wl.emit(wl.result(w, n, device, "direct", note="not installed on this machine"))
                continue
            wl.log("cpu_peers: %s %s" % (n, w.describe()))
            r = run_one(s, w, x, args, device)
            if r is not None:
                wl.emit(r)
        del x
    return 0


if __name__ == "__main__":
    sys.exit(main())
