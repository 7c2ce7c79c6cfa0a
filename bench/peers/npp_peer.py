#!/usr/bin/env python3
"""NVIDIA NPP peer of `ndconv bench`: reads workload lines, runs each 2-D
workload through the compiled npp_peer (npp_peer.cu) and prints result lines.

    python3 bench/peers/npp_peer.py [WORKLOADS.jsonl|-] [--repeats N]
        [--systems npp,npp-separable] [--binary PATH] [--build] [--verify]
        [--dry-run] > results.jsonl

Systems:
  npp            nppiFilter_32f_CnR / nppiFilter32f_8u_CnR, full kernels
  npp-separable  nppiFilterRow_32f_CnR + nppiFilterColumn_32f_CnR (separable
                 workloads)

NPP's plain filters have no border rule (they read outside the ROI), so the
source is padded here on the host by the workload's border rule (exactly
ndconv's) and NPP computes the 'valid' correlation of the padded image; the
padding is not timed. NPP runs over the whole padded image and the outputs
whose window leaves it are dropped (NPP 13's 3x3/5x5 one-channel filters
were seen to differ from the generic ones past the ROI). Before timing, the
binary checks its configuration (function, channels, mask size) against a
CPU correlation on a small image to learn NPP's kernel order and window
offset (`npp_peer selftest` prints them for a spread of configurations).

The binary is built on first use when missing (or with --build):
    nvcc -O3 -std=c++17 -o bench/peers/npp_peer bench/peers/npp_peer.cu -lnppif -lnppc
--verify also dumps the output of workloads up to 16M output elements and
compares it with scipy.ndimage.correlate in float64 (needs scipy).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workloads as wl  # noqa: E402

SYSTEMS = ("npp", "npp-separable")
SOURCE = os.path.join(HERE, "npp_peer.cu")
DEFAULT_BINARY = os.path.join(HERE, "npp_peer")


def build_command(binary):
    cmd = ["nvcc", "-O3", "-std=c++17", "-o", binary, SOURCE, "-lnppif", "-lnppc"]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    if os.path.isdir(os.path.join(home, "include")):
        cmd[1:1] = ["-I" + os.path.join(home, "include")]
    for lib in ("lib64", "lib"):
        if os.path.isdir(os.path.join(home, lib)):
            cmd.append("-L" + os.path.join(home, lib))
            break
    return cmd


def build(binary):
    """Compile npp_peer; returns None or an error message."""
    if shutil.which("nvcc") is None:
        return "nvcc not found on PATH"
    cmd = build_command(binary)
    wl.log("npp_peer: " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        tail = p.stdout.strip().splitlines()[-5:]
        return "build failed: " + " | ".join(tail)
    return None


class Plan:
    """What npp_peer will be asked to run."""


def plan(w, system):
    """What the binary will be asked to do, and the notes; raises
    NotApplicable / Unsupported."""
    sep = system == "npp-separable"
    if sep and not w.separable:
        raise wl.NotApplicable()
    if w.nk > 2:
        raise wl.Unsupported("NPP filters are 2-D; a %d-D kernel is not run" % w.nk)
    if w.C not in (1, 3, 4):
        raise wl.Unsupported("NPP filters take 1, 3 or 4 channels, not %d" % w.C)
    if w.dtype not in ("uint8", "float32") or w.out_dtype not in ("uint8", "float32"):
        raise wl.Unsupported("NPP peer runs uint8/float32 in and out only, not %s->%s" % (w.dtype, w.out_dtype))
    p = Plan()
    p.sep = sep
    p.notes = []
    if w.mode == "same":
        p.pads = w.same_pads()
        p.notes.append("%s border: source padded on the host by the border rule, not timed (NPP's plain filters have no border rule)"
                       % (w.border if w.border != "constant" else "constant cval=%g" % w.cval))
    else:
        p.pads = tuple((0, 0) for _ in w.kernel)
    # A uint8 image padded with a non-integer (or out-of-range) cval must be float.
    p.in_dtype = w.dtype
    if w.dtype == "uint8" and w.mode == "same" and w.border == "constant" and (w.cval != int(w.cval) or not 0 <= w.cval <= 255):
        p.in_dtype = "float32"
        p.notes.append("cval not a uint8 value: the padded source is float32")
    if w.nk == 1:
        p.notes.append("1-D as a 1xN image")
    if w.bank > 1:
        p.notes.append("bank: one call per kernel, bank-major output")
    if sep:
        p.notes.append("factors rounded to float32 (NPP takes Npp32f kernels)")
    if w.transfers:
        p.notes.append("each round: upload of the padded source and download, pinned host memory")
    return p


def write_inputs(w, p, tmpdir):
    x = wl.make_input(w)
    P = wl.pad_input(x, p.pads, w.border, w.cval) if w.mode == "same" else x
    P = np.ascontiguousarray(P, dtype=np.dtype(p.in_dtype))
    if w.nk == 1:
        P = P.reshape((1,) + P.shape)
        kh, kw = 1, w.kernel[0]
    else:
        kh, kw = w.kernel
    hp, wp = P.shape[0], P.shape[1]
    src = os.path.join(tmpdir, "src.raw")
    P.tofile(src)
    if p.sep:
        ks = []
        for row in wl.separable_factors(w):
            col, rowf = (np.ones(1), row[0]) if w.nk == 1 else (row[0], row[1])
            ks.append(np.concatenate([col, rowf]).astype(np.float32))
        K = np.concatenate(ks)
    else:
        K = wl.full_weights(w).astype(np.float32).reshape(-1)
    kfile = os.path.join(tmpdir, "k.raw")
    K.tofile(kfile)
    return src, kfile, P, hp, wp, kh, kw


def verify(w, P, dump, kh, kw):
    """Compare the dumped output with scipy in float64; returns a note."""
    try:
        import scipy.ndimage as ndi
    except ImportError:
        return "verify skipped: no scipy"
    oh, ow = P.shape[0] - kh + 1, P.shape[1] - kw + 1
    C = w.C
    got = np.fromfile(dump, dtype=w.np_out_dtype).reshape(w.bank, oh, ow, C)
    P2 = P.reshape(P.shape[0], P.shape[1], C).astype(np.float64)
    worst, bias, n = 0.0, 0.0, 0
    for b, k in enumerate(wl.full_weights(w)):
        k2 = k.astype(np.float64).reshape(kh, kw, 1)
        ref = ndi.correlate(P2, k2, mode="constant")[kh // 2:kh // 2 + oh, kw // 2:kw // 2 + ow]
        ref = wl.round_saturate(ref, w.out_dtype).astype(np.float64)
        d = got[b].astype(np.float64) - ref
        worst = max(worst, float(np.abs(d).max()))
        bias += float(d.sum())
        n += d.size
    tol = 1.0 if w.out_is_int else 1e-4 * max(1.0, float(np.abs(P2).max()))
    what = "verified against scipy" if worst <= tol else "MISMATCH vs scipy:"
    return "%s (max |diff| %.3g, mean diff %.3g)" % (what, worst, bias / max(n, 1))


def _tmpdir(need):
    """/dev/shm when it has room for the files, else the default temp dir."""
    try:
        if shutil.disk_usage("/dev/shm").free > 3 * need + (64 << 20):
            return "/dev/shm"
    except OSError:
        pass
    return None


def run(w, system, p, args, binary):
    need = w.in_elements * 4 * 2 + (w.out_elements * 4 if args.verify else 0)
    with tempfile.TemporaryDirectory(dir=_tmpdir(need)) as tmp:
        src, kfile, P, hp, wp, kh, kw = write_inputs(w, p, tmp)
        cmd = [binary, "in=" + src, "kernels=" + kfile,
               "dtype=" + ("u8" if p.in_dtype == "uint8" else "f32"),
               "out=" + ("u8" if w.out_dtype == "uint8" else "f32"),
               "hp=%d" % hp, "wp=%d" % wp, "c=%d" % w.C, "kh=%d" % kh, "kw=%d" % kw,
               "bank=%d" % w.bank, "sep=%d" % int(p.sep), "repeats=%d" % args.repeats,
               "warmup=%d" % args.warmup, "rounds=%d" % w.rounds, "transfers=%d" % int(w.transfers)]
        dump = None
        if args.verify and w.out_elements <= (16 << 20):
            dump = os.path.join(tmp, "out.raw")
            cmd.append("dump=" + dump)
        try:
            pr = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return wl.result(w, system, args.device or "", _method(system), note="timed out after %ds" % args.timeout)
        line = (pr.stdout.strip().splitlines() or [""])[-1]
        try:
            d = json.loads(line)
        except ValueError:
            err = (pr.stderr.strip().splitlines() or ["no output"])[-1]
            return wl.result(w, system, args.device or "", _method(system),
                             note="npp_peer failed (exit %d): %s" % (pr.returncode, err[:300]))
        device = args.device or d.get("device", "")
        if not d.get("ok"):
            return wl.result(w, system, device, _method(system), note=d.get("error", "npp_peer failed"))
        notes = p.notes + [d.get("note", "")]
        if dump:
            notes.append(verify(w, P, dump, kh, kw))
        return wl.result(w, system, device, _method(system), d["times_ms"], d["checksum"], notes)


def _method(system):
    return "separable" if system == "npp-separable" else "direct"


def gpu_name():
    """The first GPU's name as nvidia-smi gives it, so that results the
    program never ran (null lines) still name the device."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, universal_newlines=True, timeout=30).stdout
        return out.splitlines()[0].strip() if out.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="?", default="-", help="workload JSON lines (default stdin)")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--systems", default="all", help="comma-separated subset of: " + ",".join(SYSTEMS))
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--build", action="store_true", help="(re)build the binary first")
    ap.add_argument("--verify", action="store_true", help="compare outputs with scipy (workloads up to 16M outputs)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per binary call")
    ap.add_argument("--dry-run", action="store_true", help="plan only, run nothing")
    ap.add_argument("--device", default=None, help="device name for the result lines (default: nvidia-smi's first GPU)")
    args = ap.parse_args(argv)
    if args.device is None and not args.dry_run:
        args.device = gpu_name()

    names = wl.select_systems(args.systems, SYSTEMS)
    work = wl.read_workloads(args.workloads)
    problem = None
    if not args.dry_run:
        if args.build or not os.path.exists(args.binary):
            problem = build(args.binary)
        if problem is None:
            st = subprocess.run([args.binary, "selftest"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)
            wl.log("npp_peer selftest: " + (st.stdout.strip() or st.stderr.strip()))
            try:
                d = json.loads(st.stdout.strip().splitlines()[-1])
                if not d.get("ok"):
                    problem = "NPP self-test failed: " + d.get("error", st.stdout.strip())
            except (ValueError, IndexError):
                problem = "npp_peer selftest failed: " + (st.stderr.strip()[-300:] or "no output")
    for w in work:
        for system in names:
            try:
                w.check()
                p = plan(w, system)
            except wl.NotApplicable:
                continue
            except wl.Unsupported as e:
                wl.emit(wl.result(w, system, args.device or "", _method(system), note=str(e)))
                continue
            if args.dry_run:
                wl.emit(wl.result(w, system, args.device or "dry-run", _method(system),
                                  note="; ".join(["dry run: would run"] + p.notes)))
                continue
            if problem:
                wl.emit(wl.result(w, system, args.device or "", _method(system), note=problem))
                continue
            wl.log("npp_peer: %s %s" % (system, w.describe()))
            wl.emit(run(w, system, p, args, args.binary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
