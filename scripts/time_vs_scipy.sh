#!/usr/bin/env bash
# Times `ndconv correlate` and scipy.ndimage.correlate on the same input in
# one run: SHAPE (default 2048,2048) float32 with a random KxK kernel
# (default 7), reflect border, REPEAT runs each, medians of the compute time
# (ndconv's own report; scipy timed around the call). Needs Debian's
# python3-scipy. Until `ndconv bench` exists, this is the CPU peer figure.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${SHAPE:-2048,2048}; k=${K:-7}; repeat=${REPEAT:-7}; dtype=${DTYPE:-float32}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/ndconv" ./cmd/ndconv
/usr/bin/python3 - "$tmp" "$shape" "$k" "$repeat" "$dtype" <<'PY'
import subprocess, sys, time, re
import numpy as np, scipy, scipy.ndimage as ndi
tmp, shape, k, repeat, dtype = sys.argv[1], tuple(int(s) for s in sys.argv[2].split(",")), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(1)
x = (rng.random(shape) * 255).astype(dtype)
w = rng.random((k,) * len(shape))
np.save(f"{tmp}/x.npy", x); np.save(f"{tmp}/k.npy", w)
ours = []
for _ in range(repeat):
    out = subprocess.run([f"{tmp}/ndconv", "correlate", "-k", f"{tmp}/k.npy", f"{tmp}/x.npy", f"{tmp}/y.npy"], check=True, capture_output=True, text=True).stdout
    ours.append(float(re.search(r", ([0-9.]+) ms \(read", out).group(1)))
theirs = []
for _ in range(repeat):
    t = time.perf_counter(); ref = ndi.correlate(x, w); theirs.append((time.perf_counter() - t) * 1e3)
# Compare with scipy's float64 result under ndconv's output rule (round half
# to even, saturate), since scipy's integer output wraps instead.
exact = ndi.correlate(x.astype(np.float64), w)
if np.issubdtype(x.dtype, np.integer):
    info = np.iinfo(x.dtype)
    exact = np.clip(np.rint(exact), info.min, info.max)
y = np.load(f"{tmp}/y.npy")
err = np.abs(y.astype(np.float64) - exact).max() / max(1e-30, np.abs(exact).max())
print(f"{dtype} {shape} {k}^{len(shape)} kernel, reflect, median of {repeat}:")
print(f"  ndconv correlate        {np.median(ours):8.1f} ms (min {min(ours):.1f})   [{out.split(': ')[1].split(',')[0]}]")
print(f"  scipy {scipy.__version__} correlate {np.median(theirs):8.1f} ms (min {min(theirs):.1f})")
print(f"  speed-up {np.median(theirs)/np.median(ours):.2f}x; max |difference| / max |scipy| = {err:.2e}")
PY
