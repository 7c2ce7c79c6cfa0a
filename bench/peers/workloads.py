"""Shared part of the peer scripts: the bench/README.md contract in Python.

Reads workload lines, builds the input array and the kernel weights exactly by
the README's formulas, pads by ndconv's border rules, rounds like ndconv
(half to even, saturate), sums the checksum and writes result lines.

Every function that touches array data takes an array module ``xp`` (numpy by
default; cupy works the same), so the GPU peers build their data on the device
with the very same code.

Only numpy is needed to import this module (Python 3.9+, numpy 1.21+ or 2.x).
"""

import json
import math
import os
import statistics
import sys
import time

import numpy as np

# Border names ndconv accepts (nd.ParseBorder), mapped to the canonical five.
BORDERS = {
    "reflect": "reflect", "grid-mirror": "reflect",
    "mirror": "mirror",
    "nearest": "nearest",
    "wrap": "wrap", "grid-wrap": "wrap",
    "constant": "constant", "grid-constant": "constant",
}

DTYPES = {
    "uint8": np.uint8, "uint16": np.uint16, "int16": np.int16,
    "int32": np.int32, "float32": np.float32, "float64": np.float64,
}

# Input dtypes for which bench/README.md defines the data formula.
INPUT_DTYPES = ("uint8", "float32")

# Elements generated per chunk (bounds the int64 temporaries).
_CHUNK = 1 << 24


class Unsupported(Exception):
    """A workload this system cannot run; the message becomes the note."""


class NotApplicable(Exception):
    """A system that does not apply to this workload (e.g. a separable path
    for a non-separable kernel): no result line is printed."""


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------

class Workload:
    """One workload line, with the derived quantities every peer needs."""

    def __init__(self, d):
        if d.get("kind") != "workload":
            raise ValueError("not a workload line: kind=%r" % d.get("kind"))
        self.raw = d
        self.id = str(d["id"])
        self.set = d.get("set", "")
        self.shape = tuple(int(s) for s in d["shape"])
        self.dtype = str(d["dtype"])
        self.out_dtype = str(d.get("out_dtype") or d["dtype"])
        self.kernel = tuple(int(k) for k in d["kernel"])
        self.separable = bool(d.get("separable", False))
        self.bank = int(d.get("bank", 1) or 1)
        self.channels = int(d.get("channels", 1) or 1)
        self.mode = str(d.get("mode", "same"))
        border = str(d.get("border", "reflect")).strip().lower()
        if border not in BORDERS:
            raise ValueError("%s: unknown border %r" % (self.id, border))
        self.border = BORDERS[border]
        self.border_name = border
        self.cval = float(d.get("cval", 0) or 0)
        self.rounds = int(d.get("rounds", 1) or 1)
        self.transfers = bool(d.get("transfers", False))
        self.bytes = d.get("bytes")
        self.madds = d.get("madds")

        nk = len(self.kernel)
        if nk < 1 or nk > len(self.shape):
            raise ValueError("%s: kernel %s does not fit shape %s" % (self.id, self.kernel, self.shape))
        if self.mode not in ("same", "valid"):
            raise ValueError("%s: unknown mode %r" % (self.id, self.mode))
        for t in (self.dtype, self.out_dtype):
            if t not in DTYPES:
                raise ValueError("%s: unknown dtype %r" % (self.id, t))
        self.nk = nk
        self.spatial = self.shape[:nk]
        self.chan_shape = self.shape[nk:]
        self.C = int(np.prod(self.chan_shape, dtype=np.int64)) if self.chan_shape else 1
        if self.C != self.channels:
            # The README says the channel axis is the last one when channels > 1;
            # accept any trailing axes, but they must multiply to `channels`.
            raise ValueError("%s: trailing axes %s do not hold %d channels"
                             % (self.id, self.chan_shape, self.channels))
        if self.mode == "valid":
            self.out_spatial = tuple(n - k + 1 for n, k in zip(self.spatial, self.kernel))
        else:
            self.out_spatial = self.spatial
        # ndconv's layout: spatial..., channel axes..., then bank (if > 1).
        self.out_shape = self.out_spatial + self.chan_shape + ((self.bank,) if self.bank > 1 else ())
        self.out_elements = int(np.prod(self.out_shape, dtype=np.int64))
        self.in_elements = int(np.prod(self.shape, dtype=np.int64))
        self.taps = int(np.prod(self.kernel, dtype=np.int64))

    # dtype helpers
    @property
    def np_dtype(self):
        return np.dtype(DTYPES[self.dtype])

    @property
    def np_out_dtype(self):
        return np.dtype(DTYPES[self.out_dtype])

    @property
    def out_is_int(self):
        return self.np_out_dtype.kind in "iu"

    @property
    def float_dtype(self):
        """The float type a peer computes in: float64 only for float64 output
        or input, float32 otherwise (what ndconv and the GPU libraries use)."""
        if self.out_dtype == "float64" or self.dtype == "float64":
            return np.dtype(np.float64)
        return np.dtype(np.float32)

    @property
    def constant_zero(self):
        return self.border == "constant" and self.cval == 0.0

    def centre(self):
        """Kernel centre per kernel axis (k//2: scipy origin 0, OpenCV anchor)."""
        return tuple(k // 2 for k in self.kernel)

    def same_pads(self):
        """(lo, hi) padding per kernel axis that turns 'same' into 'valid'."""
        return tuple((k // 2, k - 1 - k // 2) for k in self.kernel)

    def check(self):
        """Raise Unsupported for workloads no peer can build."""
        if self.dtype not in INPUT_DTYPES:
            raise Unsupported("bench/README.md defines input data for uint8 and float32 only, not %s" % self.dtype)
        if any(n <= 0 for n in self.out_spatial):
            raise Unsupported("valid output is empty (kernel larger than the input)")

    def describe(self):
        return "%s %s %s->%s k=%s%s bank=%d ch=%d %s %s%s" % (
            self.id, "x".join(map(str, self.shape)), self.dtype, self.out_dtype,
            "x".join(map(str, self.kernel)), " sep" if self.separable else "",
            self.bank, self.channels, self.mode, self.border,
            " cval=%g" % self.cval if self.border == "constant" else "")


def parse_lines(lines, source="<input>"):
    """Workloads from an iterable of JSON lines; other kinds and blank or '#'
    lines are skipped."""
    out = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise ValueError("%s:%d: not JSON: %s" % (source, n, e))
        if not isinstance(d, dict) or d.get("kind") != "workload":
            continue
        out.append(Workload(d))
    return out


def read_workloads(path=None):
    """Workloads from a file path, '-' or None (stdin)."""
    if path in (None, "-"):
        return parse_lines(sys.stdin, "<stdin>")
    with open(path) as f:
        return parse_lines(f, path)


# --------------------------------------------------------------------------
# Data (bench/README.md "Data")
# --------------------------------------------------------------------------

def make_input(w, xp=np):
    """The input array of workload w, C order, by the README formula:
    uint8: (i*7919) % 251; float32: float32(((i*7919) % 1009) / 1009.0),
    i the flat int64 index."""
    w.check()
    n = w.in_elements
    out = xp.empty(n, dtype=w.np_dtype)
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        i = xp.arange(s, e, dtype=xp.int64)
        if w.dtype == "uint8":
            out[s:e] = ((i * 7919) % 251).astype(xp.uint8)
        else:  # float32: divide in float64, then round once to float32
            out[s:e] = (((i * 7919) % 1009).astype(xp.float64) / 1009.0).astype(xp.float32)
    return out.reshape(w.shape)


def full_weights(w):
    """Full kernels, float32, shape (bank, *kernel).

    Non-separable: r = ((j*31 + b*17) % 23) + 1 over the flat tap index j,
    w = float32(r / sum r). Separable: the float64 outer product of the
    factors, rounded to float32 once."""
    if w.separable:
        out = np.empty((w.bank,) + w.kernel, dtype=np.float32)
        for b, fs in enumerate(separable_factors(w)):
            k = fs[0]
            for f in fs[1:]:
                k = np.multiply.outer(k, f)
            out[b] = np.asarray(k, dtype=np.float64).reshape(w.kernel).astype(np.float32)
        return out
    j = np.arange(w.taps, dtype=np.int64)
    out = np.empty((w.bank, w.taps), dtype=np.float32)
    for b in range(w.bank):
        r = ((j * 31 + b * 17) % 23) + 1
        out[b] = (r.astype(np.float64) / float(r.sum())).astype(np.float32)
    return out.reshape((w.bank,) + w.kernel)


def separable_factors(w):
    """factors[b][a]: float64 1-D factor of bank kernel b along kernel axis a:
    r = ((j*31 + a*17 + b*5) % 23) + 1, f = r / sum r."""
    fs = []
    for b in range(w.bank):
        row = []
        for a, k in enumerate(w.kernel):
            j = np.arange(k, dtype=np.int64)
            r = ((j * 31 + a * 17 + b * 5) % 23) + 1
            row.append(r.astype(np.float64) / float(r.sum()))
        fs.append(row)
    return fs


# --------------------------------------------------------------------------
# Borders, rounding, checksums
# --------------------------------------------------------------------------

def border_index(p, n, border):
    """Vectorised nd.Border.Index: the source index for positions p (int64
    numpy array) on an axis of length n; -1 where the constant is read."""
    p = np.asarray(p, dtype=np.int64)
    if border == "reflect":
        q = np.mod(p, 2 * n)
        return np.where(q >= n, 2 * n - 1 - q, q)
    if border == "mirror":
        if n == 1:
            return np.zeros_like(p)
        q = np.mod(p, 2 * n - 2)
        return np.where(q >= n, 2 * n - 2 - q, q)
    if border == "nearest":
        return np.clip(p, 0, n - 1)
    if border == "wrap":
        return np.mod(p, n)
    if border == "constant":
        return np.where((p >= 0) & (p < n), p, -1)
    raise ValueError("unknown border %r" % border)


def pad_input(x, pads, border, cval=0.0, xp=np, take=None):
    """Pad the leading len(pads) axes of x by ((lo, hi), ...) with the border
    rule (exact at any distance, like ndconv). `take(x, idx, axis)` gathers;
    the default is xp.take with an index array on xp."""
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    if border == "constant":
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            if cval != math.floor(cval) or not (info.min <= cval <= info.max):
                x = x.astype(np.float32)  # cval is not a value of x's type
        full = [(int(lo), int(hi)) for lo, hi in pads] + [(0, 0)] * (x.ndim - len(pads))
        return xp.pad(x, full, mode="constant", constant_values=cval)
    for a, (lo, hi) in enumerate(pads):
        if lo == 0 and hi == 0:
            continue
        n = x.shape[a]
        idx = border_index(np.arange(-lo, n + hi, dtype=np.int64), n, border)
        if take is not None:
            x = take(x, idx, a)
        else:
            x = xp.take(x, xp.asarray(idx), axis=a)
    return x


def round_saturate(y, out_dtype, xp=np):
    """y (float array) converted to out_dtype by ndconv's rule: integers round
    half to even and saturate; floats are cast. (No NaN handling: the bench
    data are finite.)"""
    dt = np.dtype(DTYPES[out_dtype] if isinstance(out_dtype, str) else out_dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        r = xp.rint(y)
        r = xp.clip(r, info.min, info.max)
        return r.astype(dt)
    if y.dtype == dt:
        return y
    return y.astype(dt)


def checksum(arrays, xp=np):
    """float64 sum of every element of one array or a list of arrays."""
    if not isinstance(arrays, (list, tuple)):
        arrays = [arrays]
    total = 0.0
    for a in arrays:
        total += float(xp.sum(a, dtype=xp.float64))
    return total


def reference(w, x=None):
    """The float64 oracle: the definition (correlation, kernel centre k//2,
    border per ndconv), by a direct loop over the taps on the padded input.
    Returns float64 in ndconv's layout, before conversion to out_dtype.
    For tests on small shapes only."""
    if x is None:
        x = make_input(w)
    xf = x.astype(np.float64)
    pads = w.same_pads() if w.mode == "same" else tuple((0, 0) for _ in w.kernel)
    xp_ = pad_input(xf, pads, w.border, w.cval)
    ws = full_weights(w).astype(np.float64)
    out = np.zeros(w.out_spatial + w.chan_shape + (w.bank,), dtype=np.float64)
    for b in range(w.bank):
        acc = np.zeros(w.out_spatial + w.chan_shape, dtype=np.float64)
        for t in np.ndindex(*w.kernel):
            sl = tuple(slice(t[a], t[a] + w.out_spatial[a]) for a in range(w.nk))
            acc += ws[b][t] * xp_[sl]
        out[..., b] = acc
    if w.bank == 1:
        out = out[..., 0]
    return out


# --------------------------------------------------------------------------
# Timing and result lines
# --------------------------------------------------------------------------

def summarize(times_ms):
    return float(statistics.median(times_ms)), float(min(times_ms))


def time_cpu(fn, repeats, rounds=1, warmup=1):
    """Run fn() `warmup` times, then `repeats` timed repeats of `rounds`
    calls each, on the monotonic clock. Returns (times_ms, last result)."""
    out = None
    for _ in range(warmup):
        for _ in range(rounds):
            out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(rounds):
            out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, out


def _num(v):
    if v is None:
        return None
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return None
    return v


def result(w, system, device, method, times_ms=None, checksum_value=None, note="", extra=None):
    """A result line (dict). times_ms None gives ms_median null."""
    notes = [n for n in (note if isinstance(note, (list, tuple)) else [note]) if n]
    d = {"kind": "result", "system": system, "device": device, "id": w.id, "method": method}
    if times_ms:
        med, mn = summarize(times_ms)
        d.update(ms_median=med, ms_min=mn, repeats=len(times_ms))
    else:
        d.update(ms_median=None, ms_min=None, repeats=0)
    d["checksum"] = _num(checksum_value)
    d["note"] = "; ".join(notes)
    if extra:
        d.update(extra)
    return d


def emit(d, out=None):
    out = out or sys.stdout
    out.write(json.dumps(d, separators=(",", ":")) + "\n")
    out.flush()


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def cpu_model():
    """The CPU's model name as ndconv devices prints it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    return v.strip()
    except OSError:
        pass
    return os.uname().machine


def cpu_device():
    """'MODEL (N cores)': ndconv bench's name of the CPU with all its cores
    (bench.CPUName), so that peer lines meet ndconv's roofline line."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return "%s (%d cores)" % (cpu_model(), n)


def select_systems(arg, known):
    """--systems a,b,c (or 'all') checked against the known list."""
    if not arg or arg == "all":
        return list(known)
    names = [s.strip() for s in arg.split(",") if s.strip()]
    bad = [s for s in names if s not in known]
    if bad:
        raise SystemExit("unknown system(s) %s; known: %s" % (", ".join(bad), ", ".join(known)))
    return names
