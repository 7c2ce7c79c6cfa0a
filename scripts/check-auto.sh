#!/bin/bash
# check-auto.sh: does `--device auto` pick the device where the whole CLI
# call is faster? (issue 16). For a few problems from files it times the
# call on the CPU and on CUDA (each twice: the second with the kernel cache
# warm) and runs auto, printing auto's estimates beside the measured walls.
# Run on a GPU host with a binary built here
# (CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv):
#
#   bash scripts/check-auto.sh [.gpu/ndconv]
#
# With TUNE=1 it first measures the machine's rates (ndconv tune --rates)
# into a fresh tuning cache, so auto uses them; otherwise the defaults.
# NDCONV_CACHE_DIR is a fresh directory: the first CUDA run compiles.
set -eu
bin=${1:-.gpu/ndconv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NDCONV_CACHE_DIR=$work/cache
export NDCONV_TUNING=$work/tuning.json
if [ "${TUNE:-0}" = 1 ]; then
	"$bin" tune --rates
fi
head -c $((512 * 512)) /dev/urandom >"$work/small.raw"
head -c $((8192 * 8192)) /dev/urandom >"$work/large.raw"
head -c $((256 * 256 * 256)) /dev/urandom >"$work/vol.raw"

# wall NAME ARGS...: runs the CLI once, prints its wall ms and summary line.
wall() {
	local name=$1
	shift
	local t0 t1 line
	t0=$(date +%s%N)
	line=$("$bin" "$@" 2>&1 | tail -1)
	t1=$(date +%s%N)
	printf '%-28s %8.1f ms  %s\n' "$name" "$(((t1 - t0) / 1000))e-3" "$line"
}

check() {
	local id=$1
	shift
	for dev in cpu cuda cuda auto; do
		wall "$id --device $dev" correlate "$@" --device "$dev" "$work/out.npy"
	done
	echo
}
check "512² uint8 3×3" -k uniform:size=3 --shape 512,512 --input-dtype uint8 "$work/small.raw"
check "8192² uint8 gaussian σ=2" -k gaussian:sigma=2 --shape 8192,8192 --input-dtype uint8 "$work/large.raw"
check "8192² →f32 31×31 direct" -k uniform:size=31 --method direct --exact --dtype float32 --shape 8192,8192 --input-dtype uint8 "$work/large.raw"
bank=()
for s in 1 2 3 4 5 6 7 8; do bank+=(-k "uniform:size=7"); done
check "256³ uint8 7³ bank of 8" "${bank[@]}" --shape 256,256,256 --input-dtype uint8 "$work/vol.raw"
