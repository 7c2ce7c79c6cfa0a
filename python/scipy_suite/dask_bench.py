"""ndconv.dask on a dask.distributed LocalCluster against in-process ndconv
and against dask-image's way (map_overlap with scipy.ndimage.correlate per
block: dask-image is not packaged by Debian, so this is its stand-in), on
one float32 volume and kernel. Reports, asserts nothing:

    /usr/bin/python3 python/scipy_suite/dask_bench.py [--n 512] [--k 5] [--chunk 128] [--workers 4] [--repeat 2] [--scipy-repeat 1]

The input is made on the workers and persisted before any timing (no
transfer from the client is timed); each dask run persists its result on
the workers and waits for it. The in-process run filters the same array
(gathered once) with ndconv.correlate. Results are checked equal to the
in-process one (ndconv.dask: bit for bit)."""
import argparse
import json
import logging
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
import scipy.ndimage as ndi  # noqa: E402

import ndconv  # noqa: E402
import ndconv.dask as ndd  # noqa: E402


def timed(fn, repeat):
    """The times of repeat calls of fn, and the last call's result."""
    ts = []
    out = None
    for _ in range(repeat):
        out = None  # a persisted result from before is released first
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return ts, out


def _same(b):
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=128)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--mode", default="reflect")
    ap.add_argument("--scipy-repeat", type=int, default=1, help="runs of the map_overlap+scipy stand-in (0: none)")
    a = ap.parse_args()
    n, k, c = a.n, a.k, a.chunk
    w = np.random.default_rng(1).standard_normal((k, k, k))
    cluster = distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    res = {"n": n, "k": k, "chunk": c, "processes": a.workers, "mode": a.mode, "cores": os.cpu_count(),
           "load_before": os.getloadavg()[0]}
    x = da.random.RandomState(0).standard_normal((n, n, n), chunks=c).astype(np.float32).persist()
    distributed.wait(x)
    xl = x.compute()

    want = ndconv.correlate(xl, w, mode=a.mode)
    runs = [0]

    def fresh():
        """x under new keys (an identity task per block, no copy), so that
        no run finds the last one's result still on the workers."""
        runs[0] += 1
        return x.map_blocks(_same, dtype=x.dtype, name="input-%d" % runs[0])

    def run(make):
        y = make().persist()
        distributed.wait(y)
        return y

    # Every worker loads the library and makes its plans once, untimed.
    small = da.random.RandomState(1).standard_normal((2 * c, 2 * c, 2 * c), chunks=c).astype(np.float32)
    for wk in (0, 1):
        ndd.correlate(small, w, mode=a.mode, workers=wk).compute()
    small.map_overlap(ndi.correlate, depth=k // 2, boundary="none", weights=w, mode=a.mode).compute()

    # Rounds of in-process, ndconv.dask, ndconv.dask with workers=1, one
    # after the other: the machine's load changes less within a round, so
    # each round's ratio is the figure to read.
    for key in ("in_process_s", "ndconv_dask_s", "ndconv_dask_workers1_s", "ratio", "ratio_workers1"):
        res[key] = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        ndconv.correlate(xl, w, mode=a.mode)
        res["in_process_s"].append(time.perf_counter() - t)
        for label, kw in (("ndconv_dask_s", {}), ("ndconv_dask_workers1_s", {"workers": 1})):
            t = time.perf_counter()
            y = run(lambda: ndd.correlate(fresh(), w, mode=a.mode, **kw))
            res[label].append(time.perf_counter() - t)
            assert np.array_equal(y.compute().view(np.uint32), want.view(np.uint32)), label
            del y
        res["ratio"].append(res["ndconv_dask_s"][-1] / res["in_process_s"][-1])
        res["ratio_workers1"].append(res["ndconv_dask_workers1_s"][-1] / res["in_process_s"][-1])
    if a.scipy_repeat:
        # dask-image's correlate: map_overlap at the kernel's depth, the
        # mode passed to scipy for every block (boundary 'none').
        ts, y = timed(lambda: run(lambda: fresh().map_overlap(ndi.correlate, depth=k // 2, boundary="none", weights=w,
                                                          mode=a.mode)), a.scipy_repeat)
        res["map_overlap_scipy_s"] = ts
        d = np.abs(y.compute().astype(np.float64) - want).max()
        res["map_overlap_scipy_maxdiff"] = float(d)
        del y
    res["load_after"] = os.getloadavg()[0]
    print(json.dumps(res))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
