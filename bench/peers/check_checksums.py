#!/usr/bin/env python3
"""Compare the checksums of result lines with the float64 reference.

    python3 bench/peers/check_checksums.py WORKLOADS.jsonl RESULTS.jsonl... [--max-work N]

For every workload small enough (output elements x taps x bank <= --max-work,
default 2e10) computes the checksum of the definition in float64 (scipy's
correlate when scipy is there, else workloads.reference), converted to
out_dtype, and prints one line per result: the relative difference and
'ok', 'DIFF' or 'null'. Float outputs pass within 1e-4 relative (TF32 and
FFT systems are flagged but expected to differ more); integer outputs within
one unit per 1000 elements. Exit status 1 if any direct system differs.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402

INEXACT = ("tf32", "fft")


def ref_checksum(w):
    x = wl.make_input(w)
    try:
        import scipy.ndimage as ndi
    except ImportError:
        return wl.checksum(wl.round_saturate(wl.reference(w, x), w.out_dtype))
    xf = x.astype(np.float64)
    total = 0.0
    crop = tuple(slice(k // 2, k // 2 + o) for k, o in zip(w.kernel, w.out_spatial))
    for k in wl.full_weights(w):
        k = k.astype(np.float64).reshape(w.kernel + (1,) * len(w.chan_shape))
        y = ndi.correlate(xf, k, mode=w.border if w.mode == "same" else "constant", cval=w.cval)
        if w.mode == "valid":
            y = y[crop]
        total += wl.checksum(wl.round_saturate(y, w.out_dtype))
    return total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--max-work", type=float, default=2e10)
    args = ap.parse_args(argv)
    ws = {w.id: w for w in wl.read_workloads(args.workloads)}
    refs = {}
    bad = 0
    print("%-16s %-34s %22s %22s %10s  %s" % ("system", "id", "checksum", "reference", "rel.diff", "verdict"))
    for path in args.results:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                d = json.loads(line)
                if d.get("kind") != "result" or d.get("id") not in ws:
                    continue
                w = ws[d["id"]]
                sysname = d.get("system", "?")
                if d.get("ms_median") is None or d.get("checksum") is None:
                    print("%-16s %-34s %22s %22s %10s  null: %s" % (sysname, w.id, "-", "-", "-", d.get("note", "")[:120]))
                    continue
                if w.out_elements * w.taps > args.max_work:
                    print("%-16s %-34s %22.10g %22s %10s  (too large to check)" % (sysname, w.id, d["checksum"], "-", "-"))
                    continue
                if w.id not in refs:
                    try:
                        refs[w.id] = ref_checksum(w)
                    except wl.Unsupported:
                        refs[w.id] = None
                ref = refs[w.id]
                if ref is None:
                    continue
                diff = abs(d["checksum"] - ref)
                rel = diff / max(1.0, abs(ref))
                if w.out_is_int:
                    ok = diff <= 1e-3 * w.out_elements + 1
                else:
                    ok = rel <= 1e-4
                inexact = any(s in sysname for s in INEXACT)
                verdict = "ok" if ok else ("differs (expected: %s)" % sysname if inexact else "DIFF")
                if not ok and not inexact:
                    bad += 1
                print("%-16s %-34s %22.10g %22.10g %10.2e  %s" % (sysname, w.id, d["checksum"], ref, rel, verdict))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
