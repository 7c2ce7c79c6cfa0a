"""Per-call cost of small filters through ndconv's Python face against
scipy.ndimage in the same process (warm: plans cached), and the share of
it that is the Python layer itself (the same calls with the library's
execute replaced by a no-op).

    /usr/bin/python3 python/scipy_suite/overhead.py
"""
import timeit

import numpy as np
import scipy.ndimage as ndi

import ndconv


def best(f, number=2000, repeat=7):
    f()
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6


def main():
    rng = np.random.default_rng(0)
    w = np.ones((3, 3)) / 9
    real = ndconv._lib

    class NoExecute:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def ndconv_plan_execute(*args):
            return 0

    print("%-34s %10s %10s %10s" % ("call (float32)", "ndconv us", "python us", "scipy us"))
    for n in (16, 64):
        x = rng.standard_normal((n, n)).astype(np.float32)
        for name, ours, theirs in [
                ("correlate 3x3", lambda: ndconv.correlate(x, w), lambda: ndi.correlate(x, w)),
                ("correlate 3x3 workers=1", lambda: ndconv.correlate(x, w, workers=1), lambda: ndi.correlate(x, w)),
                ("sobel", lambda: ndconv.sobel(x), lambda: ndi.sobel(x)),
                ("sobel workers=1", lambda: ndconv.sobel(x, workers=1), lambda: ndi.sobel(x)),
                ("gaussian_filter 1.0 workers=1", lambda: ndconv.gaussian_filter(x, 1.0, workers=1),
                 lambda: ndi.gaussian_filter(x, 1.0))]:
            t = best(ours)
            ndconv._lib = NoExecute()
            try:
                py = best(ours)
            finally:
                ndconv._lib = real
            print("%-34s %10.1f %10.1f %10.1f" % ("%dx%d %s" % (n, n, name), t, py, best(theirs)))


if __name__ == "__main__":
    main()
