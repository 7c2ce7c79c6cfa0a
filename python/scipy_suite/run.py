"""Runs scipy's own test_filters.py (the one of the installed scipy, e.g.
Debian's /usr/lib/python3/dist-packages/scipy/ndimage/tests) with ndconv's
functions swapped into scipy.ndimage's namespace, where the test file looks
them up (``ndimage.correlate(...)``), with integer='scipy' on. It reports
the tests that called a swapped function: how many passed, failed or were
skipped, and each failure's test id and first error line. The suite runs
in a child process, so an abort (a crash of the interpreter) is seen and
reported rather than ending the runner.

    /usr/bin/python3 python/scipy_suite/run.py [--json FILE] [-k EXPR]

With --cupy FILE (CuPy's tests/cupyx_tests/scipy_tests/ndimage_tests/
test_filters.py, which CuPy's wheels do not ship: a copy from CuPy's
sources), it runs that file on a CUDA machine instead, with ndconv's
functions that take device arrays swapped into cupyx.scipy.ndimage, so
that its CuPy side runs ndconv on CuPy arrays and is compared with scipy.

Exit status: 0 when no test aborted and at least --min-pass (default 97)
percent of the tests that called ndconv passed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# The functions swapped in (scipy.ndimage's names; ndconv has each).
SWAPPED = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter", "gaussian_filter1d",
           "gaussian_laplace", "gaussian_gradient_magnitude", "generic_laplace", "generic_gradient_magnitude",
           "uniform_filter", "uniform_filter1d", "sobel", "prewitt", "laplace"]
# Those that take integer= (the generic_* ones call what they are given).
SCIPY_INTEGER = set(SWAPPED) - {"generic_laplace", "generic_gradient_magnitude"}
# With --cupy: the functions that take CuPy arrays (every one).
DEVICE_SWAPPED = SWAPPED

PLUGIN = r'''
import functools, json, os, sys
import ndconv
%(target)s

SWAPPED = %(swapped)r
SCIPY_INTEGER = %(integer)r
state = {"called": False}


def swap(name):
    f = getattr(ndconv, name)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        state["called"] = True
        if name in SCIPY_INTEGER:
            kwargs.setdefault("integer", %(rule)r)
        return f(*args, **kwargs)
    return wrapper


for name in SWAPPED:
    setattr(ndimage, name, swap(name))


SHARD = os.environ.get("NDCONV_SUITE_SHARD")


class Recorder:
    def pytest_collection_modifyitems(self, config, items):
        # One of --shards N processes: every Nth test from the kth.
        if SHARD:
            k, n = (int(v) for v in SHARD.split("/"))
            items[:] = [it for i, it in enumerate(items) if i %% n == k]

    def pytest_runtest_setup(self, item):
        state["called"] = False

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            msg = ""
            if report.failed:
                text = str(report.longrepr)
                lines = [l for l in text.splitlines() if l.startswith("E ")]
                msg = (lines[0] if lines else text.splitlines()[-1] if text else "")[:300]
            # One line a test, written as it ends: a run stopped at its
            # time limit still reports the tests that ran.
            with open(%(out)r, "a") as f:
                f.write(json.dumps({"id": report.nodeid, "outcome": report.outcome, "ndconv": state["called"],
                                    "error": msg}) + "\n")
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write every test's outcome here")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument("--min-pass", type=float, default=97.0)
    ap.add_argument("--integer", default="scipy", choices=["scipy", "round"],
                    help="the integer rule the swapped functions get (default scipy's)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="stop the suite after this many seconds and report the tests that ran")
    ap.add_argument("--cupy", metavar="FILE", help="CuPy's ndimage test_filters.py, run against ndconv on CuPy arrays")
    ap.add_argument("--shards", type=int, default=1, help="run the suite as this many pytest processes at once")
    args = ap.parse_args()
    import scipy
    import scipy.ndimage
    src = os.path.join(os.path.dirname(scipy.ndimage.__file__), "tests")
    swapped, target, suite = SWAPPED, "from scipy import ndimage", "scipy %s" % scipy.__version__
    if args.cupy:
        import cupy
        swapped, target = DEVICE_SWAPPED, "import cupyx.scipy.ndimage as ndimage"
        suite = "CuPy %s's (scipy %s)" % (cupy.__version__, scipy.__version__)
        src = os.path.dirname(os.path.abspath(args.cupy))
        if os.path.basename(args.cupy) != "test_filters.py":
            sys.exit("--cupy takes CuPy's test_filters.py, not %s" % args.cupy)
    if not os.path.exists(os.path.join(src, "test_filters.py")):
        sys.exit("scipy %s has no ndimage/tests/test_filters.py here (%s)" % (scipy.__version__, src))
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "scipy_ndimage_tests")
        os.mkdir(pkg)
        for f in ["__init__.py", "test_filters.py"]:
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), pkg)
            else:
                open(os.path.join(pkg, f), "w").close()
        out = os.path.join(tmp, "results.json")
        with open(os.path.join(tmp, "ndconv_swap.py"), "w") as f:
            f.write(PLUGIN % {"swapped": swapped, "integer": sorted(SCIPY_INTEGER), "out": out, "rule": args.integer,
                              "target": target})
        with open(os.path.join(tmp, "conftest.py"), "w") as f:
            f.write("import ndconv_swap\n\ndef pytest_configure(config):\n"
                    "    config.pluginmanager.register(ndconv_swap.Recorder())\n")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
               os.path.join(pkg, "test_filters.py")]
        if args.k:
            cmd += ["-k", args.k]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp] + [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        stopped, aborts = False, []
        procs = []
        for k in range(args.shards):
            e = dict(env, NDCONV_SUITE_SHARD="%d/%d" % (k, args.shards)) if args.shards > 1 else env
            procs.append(subprocess.Popen(cmd, cwd=tmp, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                          text=True))
        deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
        for proc in procs:
            try:
                _, err = proc.communicate(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
                if proc.returncode < 0:
                    aborts.append((proc.returncode, err))
            except subprocess.TimeoutExpired:
                stopped = True
                proc.kill()
                proc.communicate()
        aborted = bool(aborts) or (not stopped and not os.path.exists(out))
        results = [json.loads(l) for l in open(out)] if os.path.exists(out) else []
    ours = [r for r in results if r["ndconv"]]
    count = {k: sum(r["outcome"] == k for r in ours) for k in ("passed", "failed", "skipped")}
    ran = count["passed"] + count["failed"]
    pct = 100.0 * count["passed"] / ran if ran else 0.0
    print("integer=%r: %s test_filters.py: %d tests, %d called ndconv's functions: %d passed, %d failed, %d skipped "
          "(%.1f%% of those that ran passed); %d aborts" % (
              args.integer, suite, len(results), len(ours), count["passed"], count["failed"], count["skipped"],
              pct, len(aborts) or int(aborted)))
    for r in ours:
        if r["outcome"] == "failed":
            print("FAILED %s: %s" % (r["id"].split("::", 1)[-1], r["error"]))
    if stopped:
        print("STOPPED at the %g s time limit: the counts are of the tests that ran" % args.time_limit)
    if aborted:
        for code, err in aborts or [(None, "no results written")]:
            print("ABORTED: pytest exited with %s\n%s" % (code, err[-3000:]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"suite": suite, "scipy": scipy.__version__, "counts": count, "percent": pct, "aborted": aborted, "stopped": stopped,
                       "tests": results}, f, indent=1)
    return 0 if not aborted and pct >= args.min_pass else 1


if __name__ == "__main__":
    sys.exit(main())
