"""Per-call cost of small filters through ndconv's Python face against
scipy.ndimage in the same process (warm: plans cached), and the share of
it that is the Python layer itself (--python: the same calls with the
library's execute replaced by a no-op).

    /usr/bin/python3 python/scipy_suite/overhead.py [--timer cpu|wall] [--rounds 9] [--number 200]
                     [--sizes 16,64] [--dtypes float32,float64,uint8] [--only sobel,laplace] [--python]

On a shared machine wall-clock times swing with the load: ndconv and scipy
are timed in alternating rounds (ours, scipy's, ours, …), each the best of
its rounds, and the ratio of the two is what to compare between runs. The
default timer is the process's CPU time (time.process_time), which time
spent waiting for a core does not inflate; --timer wall gives wall-clock
time. Small calls run on the calling thread (the C API's small-call path),
so the two measure the same work; a call that starts threads adds their
CPU time, as it should.
"""
import argparse
import sys
import time
import timeit

import numpy as np
import scipy.ndimage as ndi

import ndconv


def cases(x):
    w = np.ones((3, 3)) / 9
    w1 = [1.0, 2.0, 1.0]
    return [
        ("correlate 3x3", lambda: ndconv.correlate(x, w), lambda: ndi.correlate(x, w)),
        ("correlate1d 3", lambda: ndconv.correlate1d(x, w1), lambda: ndi.correlate1d(x, w1)),
        ("sobel", lambda: ndconv.sobel(x), lambda: ndi.sobel(x)),
        ("prewitt", lambda: ndconv.prewitt(x), lambda: ndi.prewitt(x)),
        ("laplace", lambda: ndconv.laplace(x), lambda: ndi.laplace(x)),
        ("gaussian_filter 1", lambda: ndconv.gaussian_filter(x, 1.0), lambda: ndi.gaussian_filter(x, 1.0)),
        ("uniform_filter 3", lambda: ndconv.uniform_filter(x, 3), lambda: ndi.uniform_filter(x, 3)),
        ("gaussian_gradient_magnitude 1", lambda: ndconv.gaussian_gradient_magnitude(x, 1.0),
         lambda: ndi.gaussian_gradient_magnitude(x, 1.0)),
        ("gaussian_laplace 1", lambda: ndconv.gaussian_laplace(x, 1.0), lambda: ndi.gaussian_laplace(x, 1.0)),
    ]


def interleaved(ours, theirs, timer, rounds, number):
    """Best µs per call of ours and of theirs, timed in alternating rounds."""
    ours()
    theirs()
    a, b = [], []
    for _ in range(rounds):
        a.append(timeit.timeit(ours, number=number, timer=timer))
        b.append(timeit.timeit(theirs, number=number, timer=timer))
    return min(a) / number * 1e6, min(b) / number * 1e6


def python_layer(f, timer, rounds, number):
    """Best µs per call of f with the library's execute a no-op."""
    real = ndconv._lib

    class NoExecute:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def ndconv_plan_execute(*args):
            return 0

    ndconv._lib = NoExecute()
    try:
        f()
        return min(timeit.repeat(f, number=number, repeat=rounds, timer=timer)) / number * 1e6
    finally:
        ndconv._lib = real


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timer", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--sizes", default="16,64")
    ap.add_argument("--dtypes", default="float32,float64,uint8")
    ap.add_argument("--only", default="", help="comma-separated name prefixes")
    ap.add_argument("--python", action="store_true", help="also time the Python layer alone")
    args = ap.parse_args(argv)
    timer = time.process_time if args.timer == "cpu" else time.perf_counter
    only = [s for s in args.only.split(",") if s]
    rng = np.random.default_rng(0)
    print("# ndconv %s, numpy %s, %s timer, best of %d rounds of %d calls" % (
        getattr(ndconv, "__version__", "?"), np.__version__, args.timer, args.rounds, args.number))
    print("%-44s %9s %9s %7s%s" % ("call", "ndconv us", "scipy us", "ratio", " python us" if args.python else ""))
    for n in (int(s) for s in args.sizes.split(",")):
        for dt in args.dtypes.split(","):
            x = (rng.standard_normal((n, n)) * 50 + 100).astype(dt)
            for name, ours, theirs in cases(x):
                if only and not any(name.startswith(o) for o in only):
                    continue
                with np.errstate(all="ignore"):
                    t, s = interleaved(ours, theirs, timer, args.rounds, args.number)
                    py = " %10.1f" % python_layer(ours, timer, args.rounds, args.number) if args.python else ""
                print("%-44s %9.1f %9.1f %7.2f%s" % ("%dx%d %s %s" % (n, n, dt, name), t, s, t / s, py))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
