#!/bin/bash
# e2e-run.sh: issue 16's target figures from one device call, on binaries
# built here (CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv):
#
#   1. S002 (100 rounds with transfers) with its timeline: % of the pinned
#      PCIe rate and each chunk's copy-in, kernels and copy-out (CUDA events);
#   2. the CLI on 8192² float32 7×7 .npy → .npy, three times each on cpu
#      and cuda with NDCONV_TRACE=1, beside the disk's rates for the same
#      bytes (dd) and the fixed cost of a CUDA call (a 16×16 input);
#   3. scripts/stream-volume.sh: 2048³ uint8 7³, then 3072³ under
#      --device-memory 4G (skipped with VOLUMES=0).
#
# Everything is logged under $OUT as it happens:
#
#   OUT=/tmp/e2e bash scripts/e2e-run.sh
set -u
out=${OUT:-/tmp/e2e}
mkdir -p "$out"
exec > >(tee -a "$out/e2e.log") 2>&1
bin=$(realpath "${NDCONV:-.gpu/ndconv}")
work=${WORK:-/tmp/e2e-work}
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
nproc

echo "== 1. S002 with its timeline"
"$bin" bench --workload seeds --only '^S002$' --device cuda --timeline --json >"$out/s002.jsonl" 2>"$out/s002.err"
python3 - "$out/s002.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("kind") == "result":
        print(f"{d['id']} {d['ms_median']:.2f} ms per 100 rounds; {d.get('pct_pcie', 0):.1f}% of the pinned PCIe rate; "
              f"{d.get('chunks', 0)} chunks; copies and kernels overlapping {d.get('overlap_ms', 0):.3f} ms; {d.get('impl', '')}")
    if d.get("kind") == "span":
        print(f"  chunk {d['chunk']} {d['stage']:8s} {d['start_ms']:.3f}-{d['end_ms']:.3f} ms")
PY

echo "== 2. CLI, 8192² float32 7×7 .npy → .npy"
python3 - "$work/in.npy" <<'PY'
import sys, numpy as np
np.save(sys.argv[1], np.random.default_rng(2).random((8192, 8192), dtype=np.float32))
np.save(sys.argv[1].replace("in.npy", "tiny.npy"), np.ones((16, 16), np.float32))
PY
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
t=$(date +%s%N); cat "$work/in.npy" >/dev/null; echo "read 256 MiB (page cache): $(ms "$t") ms"
t=$(date +%s%N); dd if=/dev/zero of="$work/dd.out" bs=16M count=16 status=none; echo "write 256 MiB (dd, no sync): $(ms "$t") ms"
t=$(date +%s%N); dd if=/dev/zero of="$work/dd.out" bs=16M count=16 conv=fdatasync status=none; echo "write 256 MiB (dd, fdatasync): $(ms "$t") ms"
rm -f "$work/dd.out"
for round in 1 2 3; do
	for dev in cpu cuda; do
		rm -f "$work/out-$dev.npy"
		t=$(date +%s%N)
		NDCONV_TRACE=1 "$bin" correlate -k uniform:size=7 --device "$dev" "$work/in.npy" "$work/out-$dev.npy" >"$out/cli-$dev-$round.txt" 2>&1
		echo "round $round $dev: shell wall $(ms "$t") ms — $(grep -E 'streamed|->' "$out/cli-$dev-$round.txt" | tail -1)"
	done
	cmp -s "$work/out-cpu.npy" "$work/out-cuda.npy" && echo "  same bytes on cpu and cuda" || echo "  DIFFERENT outputs"
done
for round in 1 2 3; do
	t=$(date +%s%N)
	NDCONV_TRACE=1 "$bin" correlate -k uniform:size=7 --device cuda "$work/tiny.npy" "$work/tiny-out.npy" >"$out/cli-tiny-$round.txt" 2>&1
	echo "tiny (16×16) on cuda, round $round: shell wall $(ms "$t") ms"
done
rm -f "$work"/*.npy

if [ "${VOLUMES:-1}" = 1 ]; then
	echo "== 3. volumes"
	df -h "$work" | tail -1
	N=2048 WORK=$work/vol NDCONV=$bin bash scripts/stream-volume.sh
	rm -rf "$work/vol"
	N=3072 BUDGET=4G WORK=$work/vol NDCONV=$bin bash scripts/stream-volume.sh
	rm -rf "$work/vol"
fi
