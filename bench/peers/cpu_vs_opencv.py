#!/usr/bin/python3
"""ndconv's CPU engine against OpenCV, interleaved in one run, with the roofline.

    /usr/bin/python3 bench/peers/cpu_vs_opencv.py [--ndconv PATH] [--scale 0.25]
        [--only REGEX] [--rounds 3] [--repeats 7] [--threads N] [--method auto]
        [--baseline PATH] [--json]

For each 2-D anchor of `ndconv bench --device cpu --workload anchors` (the
`--only` default picks them: A-2d-*, A-rgba-*), every round runs
`ndconv bench --device cpu --only ^ID$ --json` (a child process: its own
warm-up, --repeats timed runs, and the copy bandwidth and FMA peak it
measures) and then the same workload through OpenCV in this process
(cv2.filter2D, or cv2.sepFilter2D for the separable anchors, with the same
border, dtype, shape and thread count: cv2.setNumThreads(--threads), and
`ndconv bench --workers --threads`). The order alternates between rounds,
so both sides see the same machine load. --baseline names a second ndconv
binary (an earlier build) timed the same way in the same rounds, for a
before/after in one run. Each side's figure is its best
(minimum) time over all rounds; the roofline is the highest copy bandwidth
and FMA peak measured in the run (the most demanding reference).

Prints a table: ndconv ms, OpenCV ms, ndconv ÷ OpenCV, ndconv's % of the
FMA peak (2·madds ÷ peak ÷ time) and % of the copy bandwidth (bytes read
and written ÷ bandwidth ÷ time). --json prints one line per anchor instead.
Needs Debian's python3-opencv (use /usr/bin/python3).
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402
import cpu_peers  # noqa: E402


def ndconv_lines(args, extra, binary=None):
    cmd = [binary or args.ndconv, "bench", "--device", "cpu", "--workload", "anchors",
           "--scale", str(args.scale), "--workers", str(args.threads)] + extra
    p = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return [json.loads(s) for s in p.stdout.splitlines() if s.startswith("{")]


def run_ndconv(args, wid, binary=None):
    lines = ndconv_lines(args, ["--only", "^%s$" % wid, "--json", "--method", args.method,
                                "--repeat", str(args.repeats), "--max-seconds", str(args.max_seconds)], binary)
    roof = next(d for d in lines if d["kind"] == "roofline")
    res = next(d for d in lines if d["kind"] == "result")
    return res, roof


def run_opencv(cv, w, x, repeats):
    fn, _ = cv.prepare(w, x)
    times, _ = wl.time_cpu(fn, repeats, warmup=1)
    return min(times), cv.method


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndconv", default="ndconv", help="the ndconv binary (default: ndconv on PATH)")
    ap.add_argument("--scale", type=float, default=0.25, help="ndconv bench --scale (0.25: 2048² images)")
    ap.add_argument("--only", default="^A-(2d|rgba)-", help="anchor ids (regular expression)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best of all)")
    ap.add_argument("--repeats", type=int, default=7, help="timed runs per side and round")
    ap.add_argument("--max-seconds", type=float, default=5.0, help="ndconv bench --max-seconds")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="cv2.setNumThreads and ndconv bench --workers (default: all cores)")
    ap.add_argument("--method", default="auto", help="ndconv bench --method")
    ap.add_argument("--baseline", default=None, help="a second ndconv binary timed in the same rounds")
    ap.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    args = ap.parse_args(argv)

    import re
    work = [wl.parse_lines([json.dumps(d)])[0] for d in ndconv_lines(args, ["--list"])
            if d.get("kind") == "workload" and re.search(args.only, d["id"])]
    if not work:
        wl.log("cpu_vs_opencv: no anchor matches %r" % args.only)
        return 1
    inputs = {w.id: wl.make_input(w) for w in work}
    cvs = {False: cpu_peers.OpenCV(False, args.threads), True: cpu_peers.OpenCV(True, args.threads)}

    best = {w.id: {"nd": None, "cv": None, "base": None} for w in work}
    peak = {"fma_gflops": 0.0, "copy_gbps": 0.0}
    for r in range(args.rounds):
        for w in work:
            b = best[w.id]
            sides = ("nd", "cv", "base") if (r % 2 == 0) else ("base", "cv", "nd")
            for side in sides:
                if side == "base":
                    if args.baseline:
                        res, _ = run_ndconv(args, w.id, args.baseline)
                        if b["base"] is None or res["ms_min"] < b["base"]:
                            b["base"] = res["ms_min"]
                        b["base_method"] = res.get("method")
                elif side == "nd":
                    res, roof = run_ndconv(args, w.id)
                    peak["fma_gflops"] = max(peak["fma_gflops"], roof["fma_gflops"])
                    peak["copy_gbps"] = max(peak["copy_gbps"], roof["copy_gbps"])
                    if b["nd"] is None or res["ms_min"] < b["nd"]:
                        b["nd"] = res["ms_min"]
                    b["nd_method"] = res.get("method")
                else:
                    ms, method = run_opencv(cvs[w.separable], w, inputs[w.id], args.repeats)
                    if b["cv"] is None or ms < b["cv"]:
                        b["cv"] = ms
                    b["cv_method"] = method
            wl.log("cpu_vs_opencv: round %d %s ndconv %.3f ms, OpenCV %.3f ms, baseline %s ms"
                   % (r + 1, w.id, b["nd"], b["cv"], b["base"]))

    rows = []
    for w in work:
        b = best[w.id]
        s = b["nd"] / 1e3
        rows.append({
            "id": w.id, "ndconv_ms": b["nd"], "ndconv_method": b["nd_method"],
            "opencv_ms": b["cv"], "opencv_method": b["cv_method"], "ratio": b["nd"] / b["cv"],
            "pct_fma_peak": 100 * 2 * w.raw["madds"] / (peak["fma_gflops"] * 1e9) / s,
            "pct_copy_bw": 100 * w.raw["bytes"] / (peak["copy_gbps"] * 1e9) / s,
        })
        if args.baseline:
            rows[-1].update(baseline_ms=b["base"], baseline_method=b["base_method"], baseline_ratio=b["base"] / b["cv"])
    if args.json:
        for row in rows:
            print(json.dumps(dict(row, **peak)))
        return 0
    print("# %s, %s, ndconv bench --scale %g, %d threads, best of %d rounds × %d runs, interleaved"
          % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), wl.cpu_device(), args.scale,
             args.threads, args.rounds, args.repeats))
    print("# roofline (highest in the run): FMA peak %.1f GFLOP/s, copy %.1f GB/s"
          % (peak["fma_gflops"], peak["copy_gbps"]))
    if args.baseline:
        print("# baseline: %s" % args.baseline)
        print("| anchor | baseline ms (method) | ndconv ms (method) | OpenCV ms (method) "
              "| baseline ÷ OpenCV | ndconv ÷ OpenCV | % FMA peak | % copy bw |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("| anchor | ndconv ms (method) | OpenCV ms (method) | ndconv ÷ OpenCV | % FMA peak | % copy bw |")
        print("|---|---|---|---|---|---|")
    for row in rows:
        base = ""
        if args.baseline:
            base = "%.3f (%s) | " % (row["baseline_ms"], row["baseline_method"])
        print("| %s | %s%.3f (%s) | %.3f (%s) | %s%.2f | %.0f | %.0f |"
              % (row["id"], base, row["ndconv_ms"], row["ndconv_method"], row["opencv_ms"], row["opencv_method"],
                 "%.2f | " % row["baseline_ratio"] if args.baseline else "",
                 row["ratio"], row["pct_fma_peak"], row["pct_copy_bw"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
