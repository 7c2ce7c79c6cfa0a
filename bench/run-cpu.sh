#!/bin/bash
# run-cpu.sh: on the development machine, time ndconv's CPU engine and the
# CPU peers (OpenCV, scipy) on the seed and anchor workloads, scaled down
# for a small machine (SEEDS_SCALE, default 0.5, and ANCHORS_SCALE, default
# 0.125, of every spatial axis), and write the table and charts.
#
#   bash bench/run-cpu.sh [OUTDIR]
#
# Needs Go and /usr/bin/python3 with python3-opencv and python3-scipy
# (Debian packages). ONLY (a regular expression) runs a subset; MAX_SECONDS
# (default 10) bounds each system's repeats of one workload.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
only=${ONLY:-.}
budget=${MAX_SECONDS:-10}
cores=$(nproc)
out=${1:-$here/results/$(date +%F)-cpu-${cores}core}
raw=$out/raw
mkdir -p "$raw"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/ndconv" ./cmd/ndconv
go build -o "$bin/report" ./bench/report

echo "{\"kind\":\"meta\",\"command\":\"bash bench/run-cpu.sh (ndconv bench --device cpu, seeds at scale ${SEEDS_SCALE:-0.5}, anchors at ${ANCHORS_SCALE:-0.125}; OpenCV and scipy)\",\"date\":\"$(date -u +%FT%TZ)\",\"host\":\"$(hostname)\"}" >"$raw/meta.jsonl"
: >"$raw/workloads.jsonl"
for set in seeds anchors; do
	if [ $set = seeds ]; then scale=${SEEDS_SCALE:-0.5}; else scale=${ANCHORS_SCALE:-0.125}; fi
	"$bin/ndconv" bench --workload $set --scale "$scale" --only "$only" --list >>"$raw/workloads.jsonl"
	echo "== ndconv, $set at scale $scale"
	"$bin/ndconv" bench --workload $set --scale "$scale" --only "$only" --json --device cpu \
		--max-seconds "$budget" >"$raw/ndconv-$set.jsonl"
done
echo "== OpenCV and scipy"
/usr/bin/python3 "$here/peers/cpu_peers.py" --max-seconds "$budget" "$raw/workloads.jsonl" >"$raw/cpu-peers.jsonl"
"$bin/report" -o "$out" "$raw"/ndconv-*.jsonl "$raw/cpu-peers.jsonl" "$raw/meta.jsonl"
echo "== written to $out"
