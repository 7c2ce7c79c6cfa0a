#!/bin/bash
# run-gpu.sh: on a GPU host, time ndconv and the GPU peers on the seed and
# anchor workloads in one run and write the table and charts.
#
#   bash bench/run-gpu.sh NDCONV REPORT [OUTDIR]
#
# NDCONV and REPORT are prebuilt binaries (the GPU host has no Go):
#   CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv
#   CGO_ENABLED=0 go build -o .gpu/report ./bench/report
# OUTDIR defaults to bench/results/<date>-<gpu>. Needs python3 with CuPy and
# torch, and nvcc with NPP (CUDA 12 or 13). Set ONLY to a regular expression
# to run a subset of the workloads, SETS to "seeds" or "anchors" for one set,
# STEPS to a subset of "ndconv gpu npp report" (default all four) to split
# the run over several calls.
set -euo pipefail
ndconv=$(realpath "$1")
report=$(realpath "$2" 2>/dev/null || echo "$2")
here=$(cd "$(dirname "$0")" && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
out=${3:-$here/results/$(date +%F)-$gpu}
mkdir -p "$out"
raw=$out/raw
mkdir -p "$raw"
sets=${SETS:-all}
only=${ONLY:-.}
steps=${STEPS:-ndconv gpu npp report}
export PATH=$PATH:/usr/local/cuda/bin
step() { [[ " $steps " == *" $1 "* ]]; }

step ndconv && echo "{\"kind\":\"meta\",\"command\":\"bash bench/run-gpu.sh (ndconv bench --workload $sets --only '$only' --json; peers)\",\"date\":\"$(date -u +%FT%TZ)\",\"host\":\"$(hostname)\"}" >"$raw/meta.jsonl"
"$ndconv" bench --workload "$sets" --only "$only" --list >"$raw/workloads.jsonl"
if step ndconv; then
	echo "== ndconv ($(wc -l <"$raw/workloads.jsonl") workloads)"
	"$ndconv" bench --workload "$sets" --only "$only" --json --device cuda >"$raw/ndconv.jsonl"
	# S000's banks by the tensor cores too (auto never takes gemm): a
	# column "ndconv-gemm" of the same run's table.
	if grep -q '"id":"S000-bank' "$raw/workloads.jsonl"; then
		echo "== ndconv, S000's banks by gemm"
		"$ndconv" bench --workload seeds --only '^S000-bank' --method gemm --json --device cuda >"$raw/ndconv-gemm.jsonl" ||
			echo "ndconv --method gemm failed: $?"
	fi
fi
if step gpu; then
	echo "== CuPy and cuDNN"
	python3 "$here/peers/gpu_peers.py" "$raw/workloads.jsonl" >"$raw/gpu-peers.jsonl" || echo "gpu_peers.py failed: $?"
fi
if step npp; then
	echo "== NPP"
	python3 "$here/peers/npp_peer.py" "$raw/workloads.jsonl" >"$raw/npp.jsonl" || echo "npp_peer.py failed: $?"
fi
step report || exit 0
# workloads.jsonl repeats the workload lines ndconv.jsonl already holds.
"$report" -o "$out" $(ls "$raw"/*.jsonl | grep -v /workloads.jsonl)
echo "== written to $out"
