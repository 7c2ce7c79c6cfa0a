#!/bin/bash
# stream-volume.sh: issue 16's volume targets on a GPU host — an N³ uint8
# volume (default 2048: 8.6 GB) correlated with a 7³ kernel through the CLI,
# streamed from a memory map chunk by chunk, on CUDA and on the CPU: the
# walls, the rate against the pinned PCIe bound, the peak resident memory,
# and whether the two outputs are the same bytes. With BUDGET (e.g. 4G) the
# GPU runs within that much device memory (--device-memory); N=3072 (29 GB)
# BUDGET=4G is the issue's second run. Binaries built here beforehand
# (CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv); needs python3 with
# numpy (else the input comes from /dev/urandom) and about 3·N³ bytes of disk in $WORK (default /tmp/vol).
#
#   N=2048 bash scripts/stream-volume.sh
#   N=3072 BUDGET=4G bash scripts/stream-volume.sh
#   N=96 GPU=opencl BUDGET=64K bash scripts/stream-volume.sh   # PoCL, here
set -euo pipefail
bin=$(realpath "${NDCONV:-.gpu/ndconv}")
n=${N:-2048}
work=${WORK:-/tmp/vol}
kernel=${KERNEL:-uniform:size=7}
mkdir -p "$work"
in=$work/in.raw
bytes=$((n * n * n))
if [ "$(stat -c %s "$in" 2>/dev/null || echo 0)" != "$bytes" ] && ! python3 -c 'import numpy' 2>/dev/null; then
	head -c "$bytes" /dev/urandom >"$in"
elif [ "$(stat -c %s "$in" 2>/dev/null || echo 0)" != "$bytes" ]; then
	python3 - "$in" "$n" <<'PY'
# Slabs of 64 planes written in parallel at their offsets: a 29 GB input
# in about the disk's write time instead of a minute of one core.
import multiprocessing, os, sys, numpy as np
from concurrent.futures import ProcessPoolExecutor
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    f.truncate(n * n * n)
def slab(z):
    rng = np.random.default_rng([1, z])
    data = rng.integers(0, 256, size=(min(64, n - z), n, n), dtype=np.uint8)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data.tobytes(), z * n * n)
    finally:
        os.close(fd)
with ProcessPoolExecutor(max(1, min(8, os.cpu_count() or 1)), mp_context=multiprocessing.get_context("fork")) as pool:
    list(pool.map(slab, range(0, n, 64)))
PY
fi
# The input's dirty pages reach the disk before the runs, so that their
# output writes do not share it with the input's (a run right after the
# input was written took twice as long).
sync
echo "input: $n³ uint8, $(numfmt --to=iec "$bytes")B; kernel $kernel"
run() { # run NAME DEVICE [flags]: the wall, peak RSS and summary line
	local name=$1 dev=$2
	shift 2
	local out=$work/$name.raw
	/usr/bin/time -f "%e %M" -o "$work/$name.time" "$bin" correlate -k "$kernel" --shape "$n,$n,$n" --input-dtype uint8 \
		--device "$dev" "$@" "$in" "$out" | tail -1
	read -r wall rss <"$work/$name.time"
	echo "$name: wall $wall s, peak resident $(numfmt --to=iec $((rss * 1024)))B, $(python3 -c "print(f'{2*$bytes/$wall/1e9:.1f}')") GB/s in and out"
	sha256sum "$out" | cut -c1-16 >"$work/$name.sum"
}
gpu=${GPU:-cuda}
run "$gpu" "$gpu" ${BUDGET:+--device-memory $BUDGET}
rm -f "$work/$gpu.raw" # room for the CPU's output
run cpu cpu
rm -f "$work/cpu.raw"
if cmp -s "$work/$gpu.sum" "$work/cpu.sum"; then
	echo "same bytes on $gpu and cpu (sha256 $(cat "$work/cpu.sum")…)"
else
	echo "DIFFERENT outputs: $gpu $(cat "$work/$gpu.sum"), cpu $(cat "$work/cpu.sum")"
	exit 1
fi
